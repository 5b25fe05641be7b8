//! The most a single call can cost: the service's worst cases, each timed in one process
//! (hub and service on the in-memory store, no transport), as microseconds per call. The
//! aim is about a millisecond at most whatever the request (docs/service.md, "Limits and hostile
//! clients").
//!
//! `cargo run --release -p weiqi-server --example hostile_bench`

use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use tokio::sync::watch;
use tonic::Request;
use weiqi_game::{Actor, Command, Settings, TimeControl, clock_limits};
use weiqi_proto::v1 as pb;
use weiqi_proto::v1::game_service_server::GameService;
use weiqi_rules::Point;
use weiqi_server::hub::{Hub, Mutation};
use weiqi_server::metrics::Metrics;
use weiqi_server::service::GameSvc;
use weiqi_store::MemoryStore;

fn report(name: &str, runs: u32, t0: Instant) {
    println!("{name:<58} {:>9.1} µs", t0.elapsed().as_secs_f64() * 1e6 / runs as f64);
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let (_stop, rx) = watch::channel(false);
    let hub = Arc::new(Hub::new(MemoryStore::new(), vec![9; 32], Metrics::new(), rx));
    let svc = GameSvc::new(hub.clone(), 1000);

    // Creating and joining at the largest bounds (100 periods of a day).
    let runs = 200;
    let mut settings = Settings::casual(25);
    settings.time = TimeControl::ByoYomi {
        main_ms: 0,
        periods: clock_limits::MAX_PERIODS,
        period_ms: clock_limits::MAX_PERIOD_MS,
    };
    let t0 = Instant::now();
    let mut ids = Vec::new();
    for _ in 0..runs {
        let id = hub.create(settings.clone(), None, None, "").await.unwrap().game_id;
        hub.join(&id, None, None, "").await.unwrap();
        ids.push(id);
    }
    report("create + join, 25x25, 100 byo-yomi periods of a day", runs, t0);

    // A long game: 300 moves of 25x25 (rows of Black and White never touching).
    let id = ids[0].clone();
    let seat = |c| {
        let hub = hub.clone();
        let id = id.clone();
        async move { Actor::from(hub.lock(&id).await.unwrap().game.get().seat_of(c).unwrap()) }
    };
    let black = seat(weiqi_rules::Color::Black).await;
    let white = seat(weiqi_rules::Color::White).await;
    let t0 = Instant::now();
    for i in 0..300u16 {
        let actor = if i % 2 == 0 { black } else { white };
        let row = (i % 2) as u8 * 2 + 4 * ((i / 2) / 25) as u8;
        let point = Point::new(((i / 2) % 25) as u8, row);
        let m = Mutation {
            request_id: format!("r{i}"),
            expected_move_number: None,
        };
        hub.run(&id, actor, Command::Play { point, lag_ms: 0 }, m)
            .await
            .unwrap();
    }
    report("a move in a game of up to 300 moves", 300, t0);

    // A retry of the game's first request: its answer is rebuilt from the log.
    let t0 = Instant::now();
    for _ in 0..runs {
        let m = Mutation {
            request_id: "r0".into(),
            expected_move_number: None,
        };
        let point = Point::new(0, 0);
        hub.run(&id, black, Command::Play { point, lag_ms: 0 }, m)
            .await
            .unwrap();
    }
    report("a retry answered from a 300-move log", runs, t0);

    // A dead-stone proposal of every point of the board (refused: not in scoring).
    let stones: Vec<pb::Point> = (0..25).flat_map(|x| (0..25).map(move |y| pb::Point { x, y })).collect();
    let t0 = Instant::now();
    for _ in 0..runs {
        let _ = svc
            .propose_dead_stones(Request::new(pb::ProposeDeadStonesRequest {
                mutation: Some(pb::Mutation {
                    game_id: id.clone(),
                    ..Default::default()
                }),
                stones: stones.clone(),
            }))
            .await;
    }
    report("ProposeDeadStones with 625 points", runs, t0);

    // A watcher replaying the whole 300-move game.
    let t0 = Instant::now();
    let replays = 20;
    for _ in 0..replays {
        let mut stream = svc
            .watch_game(Request::new(pb::WatchGameRequest {
                game_id: id.clone(),
                since_seq: 0,
            }))
            .await
            .unwrap()
            .into_inner();
        let mut n = 0;
        while n < 300 {
            if let Some(Ok(msg)) = stream.next().await
                && msg.event.is_some_and(|e| e.kind == "move_played")
            {
                n += 1;
            }
        }
    }
    report("WatchGame replaying 300 moves (whole stream)", replays, t0);

    // Late ticks: a game whose player is deep in byo-yomi, ticked long after its calls.
    let t0 = Instant::now();
    for id in &ids[1..] {
        hub.run(id, Actor::Server, Command::Tick, Mutation::default())
            .await
            .unwrap();
    }
    report("a tick of a game under 100 periods of a day", runs - 1, t0);
}
