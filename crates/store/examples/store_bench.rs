//! Appends per second through the group-committing SQLite writer, with N concurrent
//! writers each appending one move event at a time (what the server does).
//! `cargo run --release -p weiqi-store --example store_bench -- 1000 5`
use std::time::{Duration, Instant};

use rand::SeedableRng;
use weiqi_game::{Actor, Command, Game, Settings};
use weiqi_rules::Policy;
use weiqi_store::{Append, EventLog, SqliteStore, Summary};

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let writers: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let secs: f64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(5.0);
    let dir = std::env::temp_dir().join(format!("weiqi-store-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let store = SqliteStore::open(&dir.join("db.sqlite3")).await.unwrap();
    let summary = Summary {
        phase: weiqi_game::Phase::Playing,
        board_size: 9,
        move_number: 1,
        rules: "chinese".into(),
        finished: false,
    };
    let start = Instant::now();
    let mut tasks = Vec::new();
    for w in 0..writers {
        let store = store.clone();
        let summary = summary.clone();
        tasks.push(tokio::spawn(async move {
            let mut n = 0u64;
            let mut round = 0;
            let mut rng = rand::rngs::SmallRng::seed_from_u64(w as u64);
            while start.elapsed() < Duration::from_secs_f64(secs) {
                // A fresh game: create, join, then random legal moves until it ends.
                let id = format!("g{w}-{round}");
                round += 1;
                let mut g = Game::new();
                let mut seq = 0;
                for (actor, cmd) in [
                    (
                        Actor::Host,
                        Command::Create {
                            host: None,
                            settings: Settings::casual(9),
                            nigiri_commitment: None,
                        },
                    ),
                    (
                        Actor::Guest,
                        Command::Join {
                            player: None,
                            nigiri_guess: None,
                            entropy: 0,
                        },
                    ),
                ] {
                    let ev = g.decide(actor, &cmd, 0).unwrap();
                    for e in &ev {
                        g.apply(e).unwrap();
                    }
                    let a = Append {
                        game_id: id.clone(),
                        expected_seq: seq,
                        events: ev,
                        host_token_hash: None,
                        guest_token_hash: None,
                        request_id: None,
                        summary: Some(summary.clone()),
                        move_number: g.move_number() as u32,
                        wake_ms: None,
                        now_ms: 0,
                    };
                    store.append(a).await.unwrap();
                    seq = g.seq();
                }
                while g.phase() == weiqi_game::Phase::Playing && start.elapsed() < Duration::from_secs_f64(secs) {
                    let c = if g.to_move() == Some(weiqi_rules::Color::Black) {
                        Actor::Host
                    } else {
                        Actor::Guest
                    };
                    let cmd = Command::of_move(g.state().unwrap().clone().choose_random(Policy::Light, &mut rng), 0);
                    let ev = g.decide(c, &cmd, 0).unwrap();
                    for e in &ev {
                        g.apply(e).unwrap();
                    }
                    let a = Append {
                        game_id: id.clone(),
                        expected_seq: seq,
                        events: ev,
                        host_token_hash: None,
                        guest_token_hash: None,
                        request_id: Some(format!("r{n}")),
                        summary: Some(summary.clone()),
                        move_number: g.move_number() as u32,
                        wake_ms: None,
                        now_ms: 0,
                    };
                    store.append(a).await.unwrap();
                    seq = g.seq();
                    n += 1;
                }
            }
            n
        }));
    }
    let mut total = 0;
    for t in tasks {
        total += t.await.unwrap();
    }
    let dt = start.elapsed().as_secs_f64();
    println!(
        "{writers} writers: {total} appends in {dt:.2} s = {:.0} appends/s",
        total as f64 / dt
    );
}
