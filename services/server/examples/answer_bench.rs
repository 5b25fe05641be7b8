//! What a move's answer and stored row cost per move on random 9x9 games, in one process:
//! deciding in place, building the answer (the game's view and events, then protobuf), encoding it, decoding it
//! (the client's side), and the events' JSON for the store.
//!
//! `cargo run --release -p weiqi-server --example answer_bench`

use std::time::Instant;

use prost::Message;
use rand::SeedableRng;
use weiqi_game::{Actor, Command, Game, Seat};
use weiqi_proto::v1 as pb;
use weiqi_rules::Policy;
use weiqi_server::convert;
use weiqi_server::hub::{GameView, Outcome};

fn main() {
    let games = 300;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
    let mut t = [0f64; 5];
    let mut moves = 0u64;
    let mut bytes = 0usize;
    for _ in 0..games {
        // A random game's moves first; then each is refereed and answered, timed.
        let mut record = weiqi_rules::State::new(9, weiqi_rules::Rules::default()).expect("9x9");
        let mut moves_of_game = Vec::new();
        while !record.is_over() {
            moves_of_game.push(record.play_random(Policy::Light, &mut rng));
        }
        let mut g = Game::casual_in_play(9).expect("a casual game");
        for (now, mv) in (1..).zip(moves_of_game) {
            let to_move = g.state().expect("board").to_move();
            let actor = match g.seat_of(to_move) {
                Some(Seat::Host) => Actor::Host,
                _ => Actor::Guest,
            };
            let cmd = Command::of_move(mv, 0);
            let t0 = Instant::now();
            let events = g.decide_in_place(actor, &cmd, now).expect("a legal move");
            let t1 = Instant::now();
            let answer = pb::PlayResponse {
                result: Some(convert::outcome_to(Outcome {
                    game: GameView::of("0123456789abcdef", &g, now),
                    // (Cloned as the hub does: each event redacted for its caller.)
                    events: events.clone(),
                })),
            };
            let t2 = Instant::now();
            let wire = answer.encode_to_vec();
            let t3 = Instant::now();
            let back = pb::PlayResponse::decode(wire.as_slice()).expect("decodes");
            let t4 = Instant::now();
            let json: Vec<String> = events.iter().map(|e| serde_json::to_string(e).unwrap()).collect();
            let t5 = Instant::now();
            std::hint::black_box((back, json));
            bytes += wire.len();
            for (k, d) in [t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4].into_iter().enumerate() {
                t[k] += d.as_secs_f64();
            }
            moves += 1;
        }
    }
    let us = |x: f64| x / moves as f64 * 1e6;
    println!(
        "{games} games, {moves} moves, {} bytes per answer",
        bytes / moves as usize
    );
    for (name, x) in ["decide in place", "build answer", "encode", "decode", "events as JSON"]
        .iter()
        .zip(t)
    {
        println!("{name:>16}: {:6.2} us per move", us(x));
    }
}
