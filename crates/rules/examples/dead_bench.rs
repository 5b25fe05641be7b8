//! Times `estimate_dead` on the final positions of random 9x9 games (what the server runs
//! when a game's second pass starts scoring): `cargo run --release -p weiqi-rules --example dead_bench`.
use std::time::Instant;

use weiqi_rules::{Color, Policy, Rules, State, benson, estimate_dead};

struct Rng(u64);
impl rand_core::RngCore for Rng {
    fn next_u32(&mut self) -> u32 {
        self.next_u64() as u32
    }
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        rand_core::impls::fill_bytes_via_next(self, dst)
    }
}

fn main() {
    let size: u8 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(9);
    let mut rng = Rng(1);
    let finals: Vec<State> = (0..300)
        .map(|_| {
            let mut s = State::new(size, Rules::default()).unwrap();
            s.play_random_game(Policy::Light, &mut rng, 4 * size as usize * size as usize);
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
        n += estimate_dead(s, 64, 0.9).len();
    }
    let per = t.elapsed().as_secs_f64() * 1e6 / finals.len() as f64;
    println!(
        "{size}x{size}: {per:.1} us per estimate ({n} dead stones in {} games, {:.0} moves per game, {decided} settled by Benson alone)",
        finals.len(),
        moves as f64 / finals.len() as f64
    );
}
