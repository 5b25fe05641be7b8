//! Times `estimate_dead` on the final positions of random 9x9 games (what the server runs
//! when a game's second pass starts scoring): `cargo run --release -p weiqi-rules --example dead_bench`.
use std::time::Instant;

use rand::SeedableRng;
use rand::rngs::SmallRng;

use weiqi_rules::{Color, DeadEstimate, Policy, Rules, State, benson};

fn main() {
    let size: u8 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(9);
    let mut rng = SmallRng::seed_from_u64(1);
    let finals: Vec<State> = (0..300)
        .map(|_| {
            let mut s = State::new(size, Rules::default()).unwrap();
            s.play_random_game(Policy::Light, &mut rng, weiqi_rules::move_cap(size));
            s
        })
        .collect();
    let moves: usize = finals.iter().map(|s| s.move_number()).sum();
    let decided = finals
        .iter()
        .filter(|s| {
            let b = s.board();
            let alive = [Color::Black, Color::White].map(|c| benson::pass_alive(b, c).stones.len());
            let stones = b.points().filter(|p| b.get(*p).is_some()).count();
            alive[0] + alive[1] + benson::unconditionally_dead(b).len() == stones
        })
        .count();
    let t = Instant::now();
    let mut n = 0;
    for s in &finals {
        n += DeadEstimate::default().estimate(s).len();
    }
    let per = t.elapsed().as_secs_f64() * 1e6 / finals.len() as f64;
    println!(
        "{size}x{size}: {per:.1} us per estimate ({n} dead stones in {} games, {:.0} moves per game, {decided} settled by Benson alone)",
        finals.len(),
        moves as f64 / finals.len() as f64
    );
}
