//! Times `weiqi review` (`weiqi_gtp::review`) on one core: a 60-move 9x9 game and a
//! 250-move 19x19 game (played by the heavy playout policy, so that they look like games),
//! at the default 1000 simulations a position. `taskset -c 0 cargo run --release -p
//! weiqi-gtp --example review_bench [VISITS]`.
use std::time::Instant;

use rand::SeedableRng;
use rand::rngs::SmallRng;
use weiqi_gtp::{MctsPlayer, MctsSettings, mistakes, review};
use weiqi_rules::{Policy, Preset, State};

fn main() {
    let visits: u32 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let mut rng = SmallRng::seed_from_u64(5);
    for (size, moves) in [(9u8, 60usize), (19, 250)] {
        let mut game = State::new(size, Preset::Chinese.rules()).unwrap();
        game.play_random_game(Policy::Heavy, &mut rng, moves);
        let mut player = MctsPlayer::new(MctsSettings {
            playouts: visits,
            threads: 1,
            seed: 1,
            policy: Policy::Heavy,
            resign_below: 0.0,
            shape_prior: weiqi_gtp::DEFAULT_SHAPE_PRIOR,
        });
        let t = Instant::now();
        let reviewed = review(&game, &mut player, |_, _| {});
        let secs = t.elapsed().as_secs_f64();
        println!(
            "{size}x{size}, {} moves, {visits} simulations a position: {secs:.1} s on one core ({} mistakes of 10% or more)",
            reviewed.len(),
            mistakes(&reviewed, usize::MAX, 0.1).len()
        );
    }
}
