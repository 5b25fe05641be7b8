//! Uniform random playouts with the `goban` crate (Chinese rules: ko, superko, no suicide):
//! each turn picks uniformly among goban's legal moves plus pass, until two passes.
//! Usage: goban-playouts SIZE SECONDS  -> prints one JSON line.
use goban::rules::game::Game;
use goban::rules::{GobanSizes, Move, CHINESE};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let size: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(9);
    let seconds: f64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(5.0);
    let cap = size * size * 20;
    let mut rng = SmallRng::seed_from_u64(1);
    let (mut games, mut moves) = (0u64, 0u64);
    let cpu0 = cpu_time::ProcessTime::now();
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs_f64(seconds) {
        let mut g = Game::new(GobanSizes::Custom(size, size), CHINESE);
        let mut n = 0;
        while !g.is_over() && n < cap {
            let legals: Vec<_> = g.legals().collect();
            let k = rng.random_range(0..=legals.len());
            if k == legals.len() {
                g.play(Move::Pass);
            } else {
                let (x, y) = legals[k];
                g.play(Move::Play(x, y));
            }
            n += 1;
        }
        games += 1;
        moves += n as u64;
    }
    let wall = t0.elapsed().as_secs_f64();
    let cpu = cpu0.elapsed().as_secs_f64();
    println!(
        "{{\"engine\":\"goban\",\"size\":{size},\"games\":{games},\"moves\":{moves},\"wall_s\":{wall},\"cpu_s\":{cpu},\"moves_per_cpu_s\":{},\"games_per_cpu_s\":{}}}",
        moves as f64 / cpu,
        games as f64 / cpu
    );
}
