//! What the referee costs per move on random 9x9 games, in one process: `decide_next`
//! (which copies the game), the copy alone, a bare `State::play`, and the dead-stone
//! proposal made once per game when both players pass.
//!
//! `cargo run --release -p weiqi-game --example decide_bench`

use std::time::Instant;

use rand::SeedableRng;
use weiqi_game::{Actor, Command, Game, Phase, Seat};
use weiqi_rules::Policy;

fn main() {
    let games = 300;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
    let (mut decide, mut copy, mut play, mut end, mut moves) = (0f64, 0f64, 0f64, 0f64, 0u64);
    for _ in 0..games {
        let mut g = Game::casual_in_play(9).expect("a casual game");
        let mut s = g.state().expect("board").clone();
        let mut now = 1;
        while !s.is_over() {
            let mv = s.choose_random(Policy::Light, &mut rng);
            let actor = match g.seat_of(s.to_move()) {
                Some(Seat::Host) => Actor::Host,
                _ => Actor::Guest,
            };
            let cmd = Command::of_move(mv, 0);
            let t = Instant::now();
            drop(std::hint::black_box(g.clone()));
            copy += t.elapsed().as_secs_f64();
            let t = Instant::now();
            let (_, next) = g.decide_next(actor, &cmd, now).expect("a legal move");
            let dt = t.elapsed().as_secs_f64();
            if next.phase() == Phase::Playing {
                decide += dt;
            } else {
                end += dt;
            }
            let t = Instant::now();
            s.play(mv).expect("legal");
            play += t.elapsed().as_secs_f64();
            g = next;
            now += 1;
            moves += 1;
        }
    }
    let us = |t: f64, n: u64| t / n as f64 * 1e6;
    println!("{games} games, {moves} moves");
    println!("decide_next per move:       {:>7.2} us", us(decide, moves));
    println!("copying the game alone:     {:>7.2} us", us(copy, moves));
    println!("State::play per move:       {:>7.2} us", us(play, moves));
    println!(
        "end of game (dead stones):  {:>7.0} us per game, {:.2} us per move",
        us(end, games),
        us(end, moves)
    );
}
