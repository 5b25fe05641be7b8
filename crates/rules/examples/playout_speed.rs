//! Quick playout throughput per policy, size and ko check (the CLI's `bench playouts` in
//! small): `cargo run --release -p weiqi-rules --example playout_speed`.

use std::time::Instant;

use rand::SeedableRng;
use rand::rngs::SmallRng;
use weiqi_rules::{KoCheck, Playout, PlayoutOptions, Policy, Rules, State};

fn main() {
    // Optional filter: SIZE POLICY KO (e.g. `19 light simple`).
    let args: Vec<String> = std::env::args().skip(1).collect();
    let want = |k: usize, v: String| args.get(k).is_none_or(|a| *a == v);
    for size in [9u8, 19] {
        for policy in [Policy::Light, Policy::Heavy] {
            for ko in [KoCheck::Exact, KoCheck::Simple] {
                let name = format!("{policy:?}").to_lowercase();
                if !(want(0, size.to_string()) && want(1, name) && want(2, ko.to_string())) {
                    continue;
                }
                let from = State::new(size, Rules::default()).unwrap();
                let opts = PlayoutOptions {
                    policy,
                    ko,
                    max_moves: 20 * size as usize * size as usize,
                    record: false,
                };
                let mut p = Playout::new(opts);
                let mut rng = SmallRng::seed_from_u64(1);
                let t = Instant::now();
                let (mut games, mut moves) = (0u64, 0u64);
                while t.elapsed().as_secs_f64() < 1.5 {
                    moves += p.run(&from, &mut rng) as u64;
                    games += 1;
                }
                let s = t.elapsed().as_secs_f64();
                println!(
                    "{size}x{size} {policy:?} {ko}: {:.2}M moves/s, {:.0} games/s, mean {:.0}",
                    moves as f64 / s / 1e6,
                    games as f64 / s,
                    moves as f64 / games as f64
                );
            }
        }
    }
}
