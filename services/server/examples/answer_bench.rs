//! What a move's answer and stored row cost per move on random games, in one process:
//! deciding in place, building the answer (the game's view and events, then protobuf),
//! encoding it, decoding it (the client's side), in the full and the basic view (a
//! mutation's `view`), and the events' JSON for the store.
//!
//! `cargo run --release -p weiqi-server --example answer_bench [-- SIZE]` (default 9)

use std::time::Instant;

use prost::Message;
use rand::SeedableRng;
use weiqi_game::{Actor, Command, Game, Seat};
use weiqi_proto::v1 as pb;
use weiqi_rules::Policy;
use weiqi_server::convert;
use weiqi_server::hub::{Applied, GameView};

const VIEWS: [pb::StateView; 2] = [pb::StateView::Full, pb::StateView::Basic];

fn main() {
    let size: u8 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(9);
    let games = if size > 13 { 60 } else { 300 };
    let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
    // Deciding and the JSON; then build, encode and decode per view.
    let (mut decide, mut json) = (0f64, 0f64);
    let mut per_view = [[0f64; 3]; 2];
    let mut bytes = [0usize; 2];
    let mut moves = 0u64;
    for _ in 0..games {
        // A random game's moves first; then each is refereed and answered, timed.
        let mut record = weiqi_rules::State::new(size, weiqi_rules::Rules::default()).expect("a board size");
        let mut moves_of_game = Vec::new();
        while !record.is_over() {
            moves_of_game.push(record.play_random(Policy::Light, &mut rng));
        }
        let mut g = Game::casual_in_play(size).expect("a casual game");
        for (now, mv) in (1..).zip(moves_of_game) {
            let to_move = g.state().expect("board").to_move();
            let actor = match g.seat_of(to_move) {
                Some(Seat::Host) => Actor::Host,
                _ => Actor::Guest,
            };
            let cmd = Command::of_move(mv, 0);
            let t0 = Instant::now();
            let events = g.decide_in_place(actor, &cmd, now).expect("a legal move");
            decide += t0.elapsed().as_secs_f64();
            for (k, view) in VIEWS.into_iter().enumerate() {
                let t1 = Instant::now();
                let answer = pb::PlayResponse {
                    result: Some(convert::outcome_to(
                        Applied {
                            game: GameView::of("0123456789abcdef", &g, now),
                            // (Cloned as the hub does: each event redacted for its caller.)
                            events: events.clone(),
                        },
                        view,
                    )),
                };
                let t2 = Instant::now();
                let wire = answer.encode_to_vec();
                let t3 = Instant::now();
                let back = pb::PlayResponse::decode(wire.as_slice()).expect("decodes");
                let t4 = Instant::now();
                std::hint::black_box(back);
                bytes[k] += wire.len();
                for (j, d) in [t2 - t1, t3 - t2, t4 - t3].into_iter().enumerate() {
                    per_view[k][j] += d.as_secs_f64();
                }
            }
            let t5 = Instant::now();
            let rows: Vec<String> = events.iter().map(|e| serde_json::to_string(e).unwrap()).collect();
            json += t5.elapsed().as_secs_f64();
            std::hint::black_box(rows);
            moves += 1;
        }
    }
    let us = |x: f64| x / moves as f64 * 1e6;
    println!("{games} games on {size}x{size}, {moves} moves");
    println!("{:>16}: {:6.2} us per move", "decide in place", us(decide));
    println!("{:>16}: {:6.2} us per move", "events as JSON", us(json));
    for (k, view) in VIEWS.into_iter().enumerate() {
        let [build, encode, decode] = per_view[k].map(us);
        println!(
            "{:>16}: build {build:5.2} + encode {encode:5.2} + decode {decode:5.2} = {:5.2} us per move, {} bytes",
            format!("{view:?} view"),
            build + encode + decode,
            bytes[k] / moves as usize
        );
    }
}
