//! What the referee costs per move on random 9x9 games, in one process: `decide_next`
//! (which copies the game), the copy alone, a bare `State::play`, and the dead-stone
//! proposal made once per game when both players pass. Then 19x19 games in byo-yomi at a
//! human pace (a call due before every move): `decide_in_place` against `decide_next`.
//!
//! `cargo run --release -p weiqi-game --example decide_bench`

use std::time::Instant;

use rand::SeedableRng;
use weiqi_game::{Actor, ColorChoice, Command, Game, Phase, Seat, Settings, TimeControl};
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
    byo_yomi(&mut rng);
}

/// 19x19 games in byo-yomi (30 s periods), each move 12 s after the last: a call ("10
/// seconds") is due before every move, folded first. Both ways decide every move of the
/// same games, each going first on every other move (the second finds the game in cache).
fn byo_yomi(rng: &mut rand::rngs::SmallRng) {
    let (games, mut moves) = (40, 0u64);
    let (mut in_place, mut on_copy) = (0f64, 0f64);
    for _ in 0..games {
        let mut g = byo_yomi_game();
        let mut s = g.state().expect("board").clone();
        let mut now = 1_000;
        // (The first 250 moves: random play goes on far longer than a game.)
        for _ in 0..250 {
            if s.is_over() {
                break;
            }
            let mv = s.choose_random(Policy::Light, rng);
            let actor = match g.seat_of(s.to_move()) {
                Some(Seat::Host) => Actor::Host,
                _ => Actor::Guest,
            };
            let cmd = Command::of_move(mv, 0);
            now += 12_000;
            let before = g.clone();
            let copy_first = moves % 2 == 0;
            let mut on_a_copy = || {
                let t = Instant::now();
                let decided = before.decide_next(actor, &cmd, now).expect("a legal move");
                on_copy += t.elapsed().as_secs_f64();
                decided
            };
            let early = copy_first.then(&mut on_a_copy);
            let t = Instant::now();
            let events = g.decide_in_place(actor, &cmd, now).expect("a legal move");
            in_place += t.elapsed().as_secs_f64();
            let (copied, next) = early.unwrap_or_else(on_a_copy);
            assert_eq!((events, &g), (copied, &next), "decided alike");
            s.play(mv).expect("legal");
            moves += 1;
        }
    }
    let us = |t: f64| t / moves as f64 * 1e6;
    println!("19x19 byo-yomi, a call due before each move: {moves} moves");
    println!("decide_in_place per move:   {:>7.2} us", us(in_place));
    println!("decide_next per move:       {:>7.2} us", us(on_copy));
}

/// A 19x19 game in play with no main time and five 30-second periods.
fn byo_yomi_game() -> Game {
    let mut settings = Settings::casual(19);
    settings.colors = ColorChoice::HostBlack;
    settings.time = TimeControl::ByoYomi {
        main_ms: 0,
        periods: 5,
        period_ms: 30_000,
    };
    let mut g = Game::new();
    let create = Command::Create {
        host: None,
        settings,
        nigiri_commitment: None,
    };
    g.decide_in_place(Actor::Host, &create, 0).expect("created");
    let join = Command::Join {
        player: None,
        nigiri_guess: None,
        entropy: 0,
    };
    g.decide_in_place(Actor::Guest, &join, 0).expect("joined");
    g
}
