//! Times the score estimate a player asks for during a game (`weiqi_rules::estimate`) on
//! positions in the middle of random games of each size, in one thread: `taskset -c 0
//! cargo run --release -p weiqi-rules --example estimate_bench`. The figure per size is
//! the cost of one `EstimateScore` call on one core.
use std::time::Instant;

use rand::SeedableRng;
use rand::rngs::SmallRng;

use weiqi_rules::estimate::{estimate, estimate_playouts};
use weiqi_rules::{Policy, Rules, State};

fn main() {
    let mut rng = SmallRng::seed_from_u64(1);
    for size in [9u8, 13, 19, 25] {
        let positions: Vec<State> = (0..40)
            .map(|_| {
                let mut s = State::new(size, Rules::default()).unwrap();
                // About the middle of a game: a third of the move cap, at random.
                s.play_random_game(Policy::Light, &mut rng, weiqi_rules::move_cap(size) / 3);
                s
            })
            .collect();
        let t = Instant::now();
        let mut dead = 0;
        for s in &positions {
            dead += estimate(s).unwrap().dead.len();
        }
        let per = t.elapsed().as_secs_f64() * 1e3 / positions.len() as f64;
        println!(
            "{size}x{size}: {per:.1} ms per estimate ({} playouts, {:.1} dead stones on average)",
            estimate_playouts(size as u32 * size as u32),
            dead as f64 / positions.len() as f64
        );
    }
}
