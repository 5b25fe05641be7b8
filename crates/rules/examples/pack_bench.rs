//! Times packing a state at rest and unpacking it (what the server does around a command
//! on a game at a human pace), beside playing one move on it, on random 19x19 positions
//! after 50, 150 and 250 moves, on a fresh board and on one a state before gave back:
//! `cargo run --release -p weiqi-rules --example pack_bench`.
use std::hint::black_box;
use std::time::Instant;

use rand::SeedableRng;
use rand::rngs::SmallRng;

use weiqi_rules::{Move, Policy, Rules, State};

fn main() {
    let size: u8 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(19);
    let mut rng = SmallRng::seed_from_u64(7);
    for plies in [50, 150, 250] {
        let states: Vec<State> = (0..200)
            .map(|_| {
                let mut s = State::new(size, Rules::default()).unwrap();
                s.play_random_game(Policy::Light, &mut rng, plies);
                s
            })
            .collect();
        let n = states.len() as f64;
        let packed: Vec<_> = states.iter().map(|s| s.clone().pack()).collect();
        // As a server does: each state unpacked, used and packed again, one at a time (the
        // memory freed by one is reused by the next), timed over a few rounds.
        let rounds = 20;
        let per = |t: Instant| t.elapsed().as_secs_f64() * 1e6 / n / rounds as f64;
        let t = Instant::now();
        for _ in 0..rounds {
            for p in &packed {
                black_box(p.clone().unpack().pack());
            }
        }
        let round_trip = per(t);
        // The same, each state rebuilt in the board the one before gave back (as the
        // server's spare boards do).
        // (The packed states are copied before the clock starts: the server unpacks its own
        // by value.)
        let mut spare = Some(states[0].clone().pack_keeping_board().1);
        let mut reused = 0.0;
        for _ in 0..rounds {
            let batch = packed.clone();
            let t = Instant::now();
            for p in batch {
                let s = p.unpack_on(spare.take().expect("given back"));
                let (p, board) = black_box(s.pack_keeping_board());
                black_box(p);
                spare = Some(board);
            }
            reused += per(t);
        }
        let t = Instant::now();
        for _ in 0..rounds {
            for s in &states {
                black_box(s.clone());
            }
        }
        let clone = per(t);
        let t = Instant::now();
        for _ in 0..rounds {
            for s in &states {
                let mut s = s.clone();
                let m = s.legal_moves().first().copied().unwrap_or(Move::Pass);
                black_box(s.play(m).ok());
            }
        }
        let play = per(t) - clone;
        let bytes: usize = packed.iter().map(|p| p.heap_bytes()).sum();
        println!(
            "{size}x{size} after {plies} plies: unpack and pack again {round_trip:.1} us, on a used board {reused:.1} us (a clone {clone:.1} us; legal moves and a move {play:.1} us); packed {:.0} bytes",
            bytes as f64 / n
        );
    }
}
