//! Random command sequences through the hub and the service: two seats and a spectator,
//! under a byo-yomi clock whose timers fire as (paused) time passes. Invariants: a player
//! moves only for their own colour, clocks stay within their settings, there is one event
//! per sequence number and the spectator sees each once and in order, the stored log is
//! the game's, and the game is the fold of its log. Also the fuzz driver (the service on
//! arbitrary bytes), on random inputs.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use proptest::prelude::*;
use tokio::sync::watch;
use tonic::Request;
use weiqi_game::{Actor, Command, EventKind, Game, Settings, TimeControl};
use weiqi_proto::v1 as pb;
use weiqi_proto::v1::game_service_server::GameService;
use weiqi_rules::Point;
use weiqi_server::hub::{Hub, Mutation};
use weiqi_server::metrics::Metrics;
use weiqi_server::service::GameSvc;
use weiqi_store::{EventLog, MemoryStore};

fn command(op: u8, a: u8, b: u8) -> Command {
    match op % 40 {
        0..=27 => Command::Play {
            point: Point::new(a % 6, b % 6),
            lag_ms: (b as u64) * 10,
        },
        28..=30 => Command::Pass { lag_ms: 0 },
        31 => Command::RequestUndo,
        32 => Command::AnswerUndo {
            accept: a.is_multiple_of(2),
        },
        33 => Command::OfferDraw,
        34 => Command::AnswerDraw {
            accept: a.is_multiple_of(7),
        },
        35 => Command::AcceptScore,
        36 => Command::DeclareEnd,
        37 => Command::DisputeScore,
        38 => Command::ProposeDead {
            stones: vec![Point::new(a % 6, b % 6)],
        },
        _ => Command::Resign,
    }
}

async fn sequence(ops: Vec<(u8, u8, u8, u8, u16)>) {
    let (_stop, rx) = watch::channel(false);
    let store = MemoryStore::new();
    // Every game packed at rest after each command: unpacked by the next one.
    let hub = Arc::new(Hub::new(store.clone(), vec![3; 32], Metrics::new(), rx).with_park_after(0));
    let svc = GameSvc::new(hub.clone(), 1000);
    let mut settings = Settings::casual(6);
    let control = TimeControl::ByoYomi {
        main_ms: 20_000,
        periods: 3,
        period_ms: 10_000,
    };
    settings.time = control;
    let id = hub.create(settings, None, None, "").await.unwrap().game_id;
    hub.join(&id, None, None, "").await.unwrap();
    let mut spectator = svc
        .watch_game(Request::new(pb::WatchGameRequest {
            game_id: id.clone(),
            since_seq: 0,
        }))
        .await
        .unwrap()
        .into_inner();
    for (who, op, a, b, wait) in ops {
        tokio::time::sleep(Duration::from_millis(wait as u64 * 10)).await;
        // Mostly the player to move (a random seat is refused half the time).
        let to_move = {
            let mut e = hub.lock(&id).await.unwrap();
            let g = e.game.get();
            g.to_move().and_then(|c| g.seat_of(c)).map(Actor::from)
        };
        let actor = match to_move {
            Some(a) if who % 4 != 0 => a,
            _ => [Actor::Host, Actor::Guest][who as usize % 2],
        };
        let cmd = command(op, a, b);
        // Some with request ids from a small set: retries answered again (from the store
        // when the game is packed), ids reused for other commands refused.
        let m = Mutation {
            request_id: if b % 4 == 0 {
                format!("r{}", a % 3)
            } else {
                String::new()
            },
            expected_move_number: None,
        };
        let Ok(done) = hub.run(&id, actor, cmd, m).await else {
            continue;
        };
        // The answer in either view (a mutation's `view`): the basic one leaves out the
        // board and the settings; the full one's board is the game's after the command (a
        // retry answers as the first call did, from an earlier move).
        let view = if a % 2 == 0 {
            pb::StateView::Basic
        } else {
            pb::StateView::Full
        };
        let done = weiqi_server::convert::outcome_to(done, view);
        let game = hub.lock(&id).await.unwrap().game.get().clone();
        let state = done.state.as_ref().expect("an answer carries the state");
        if view == pb::StateView::Basic {
            assert!(
                state.board.is_empty() && state.settings.is_none(),
                "a basic view: {state:?}"
            );
        } else {
            assert!(state.settings.is_some());
            assert_eq!(state.board.len(), 6, "{state:?}");
            if state.seq == game.seq() {
                let rows = game.state().map(|s| s.board().rows()).unwrap_or_default();
                assert_eq!(state.board, rows, "the full view's board is the game's");
            }
        }
        let mover = actor.seat().and_then(|s| game.color_of(s));
        for e in &done.events {
            if matches!(e.kind.as_str(), "move_played" | "passed") {
                assert_eq!(
                    e.color,
                    weiqi_server::convert::color_to(mover),
                    "moved for the other colour"
                );
            }
            for c in [&e.black_clock, &e.white_clock].into_iter().flatten() {
                assert!(
                    c.main_ms <= 20_000 && c.periods <= 3,
                    "a clock beyond its settings: {c:?}"
                );
            }
        }
    }
    let mut entry = hub.lock(&id).await.unwrap();
    let game = entry.game.get().clone();
    // Watched (the spectator below): a game in play keeps its log in memory (a finished
    // one left memory and was loaded again from the store).
    let log = match entry.watched_log() {
        Some(log) => log.to_vec(),
        None => {
            assert_eq!(
                game.phase(),
                weiqi_game::Phase::Finished,
                "a watched game keeps its log"
            );
            store.load(&id).await.unwrap().unwrap().events
        }
    };
    drop(entry);
    for (i, e) in log.iter().enumerate() {
        assert_eq!(e.seq, i as u64 + 1, "one event per sequence number");
        for c in &e.clocks {
            assert!(c.main_ms <= 20_000 && c.periods <= 3);
        }
        if let EventKind::MovePlayed { .. } = e.kind {
            assert!(e.at >= log[..i].last().map_or(0, |p| p.at), "time runs forward");
        }
    }
    assert_eq!(
        Game::from_events(&log).unwrap(),
        game,
        "the game is the fold of its log"
    );
    let stored = store.load(&id).await.unwrap().unwrap();
    assert_eq!(stored.events, log, "the store holds what the hub acknowledged");
    // The spectator saw every event once, in order, each with the state after it.
    let mut seen = 0;
    while seen < log.len() {
        let msg = tokio::time::timeout(Duration::from_secs(5), spectator.next())
            .await
            .expect("the spectator gets every event")
            .unwrap()
            .unwrap();
        // (Items without an event tell of a seat's presence.)
        let Some(e) = msg.event else { continue };
        assert_eq!(e.seq, seen as u64 + 1);
        assert_eq!(msg.state.unwrap().seq, e.seq);
        seen += 1;
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_commands_from_two_seats_and_a_spectator(ops in proptest::collection::vec((any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>(), 0u16..400), 0..80)) {
        runtime().block_on(sequence(ops));
    }

    /// The fuzz target's driver on random inputs (`cargo fuzz run service` explores far
    /// more): no panic, refused calls change nothing.
    #[test]
    fn the_service_survives_arbitrary_requests(data in proptest::collection::vec(any::<u8>(), 0..600)) {
        weiqi_server::fuzzing::drive(&data);
    }
}

/// A retry is answered with its own command's events, even when the next command came in
/// the same millisecond (time is paused here: every command has the same time), and after
/// the game is loaded back from the store; an id reused for another command is refused.
/// With the game live between commands (quick play) and packed after each.
#[tokio::test(start_paused = true)]
async fn retries_in_the_same_millisecond_get_their_own_answer() {
    for park_after_ms in [1000, 0] {
        retries_get_their_own_answer(park_after_ms).await;
    }
}

async fn retries_get_their_own_answer(park_after_ms: u64) {
    let (_stop, rx) = watch::channel(false);
    let store = MemoryStore::new();
    let hub = Arc::new(Hub::new(store.clone(), vec![3; 32], Metrics::new(), rx).with_park_after(park_after_ms));
    let id = hub.create(Settings::casual(9), None, None, "").await.unwrap().game_id;
    hub.join(&id, None, None, "").await.unwrap();
    let m = || Mutation {
        request_id: "X".into(),
        expected_move_number: None,
    };
    let play = Command::Play {
        point: Point::new(2, 2),
        lag_ms: 0,
    };
    let first = hub.run(&id, Actor::Host, play.clone(), m()).await.unwrap();
    hub.run(&id, Actor::Guest, Command::Pass { lag_ms: 0 }, m())
        .await
        .unwrap();
    let again = hub.run(&id, Actor::Host, play.clone(), m()).await.unwrap();
    assert_eq!((again.game.move_number, again.events.len()), (1, 1));
    assert_eq!(again.game, first.game);
    let reused = hub.run(&id, Actor::Host, Command::Resign, m()).await;
    assert!(
        matches!(reused, Err(weiqi_server::hub::HubError::RequestIdReused { .. })),
        "{reused:?}"
    );
    // The guest's id of the same name is its own: its pass, answered again.
    let other = hub
        .run(&id, Actor::Guest, Command::Pass { lag_ms: 0 }, m())
        .await
        .unwrap();
    assert_eq!(other.game.move_number, 2);
    // The same from a hub that loads the game from the store.
    let (_stop2, rx2) = watch::channel(false);
    let fresh = Arc::new(Hub::new(store, vec![3; 32], Metrics::new(), rx2));
    let reloaded = fresh.run(&id, Actor::Host, play, m()).await.unwrap();
    assert_eq!((reloaded.game.move_number, reloaded.events.len()), (1, 1));
}
