//! A game stored by an older version, before settings had bounds, with byo-yomi values
//! no request may set today (4 billion periods of 10^12 ms): recovering it on start and
//! playing on it cost constant work per call. (Walking the periods, as the clock once did,
//! would not finish.)

use std::sync::Arc;

use tokio::sync::watch;
use weiqi_game::{Actor, Command, EventKind, Game, Settings, TimeControl};
use weiqi_rules::Point;
use weiqi_server::hub::{Hub, Mutation};
use weiqi_server::metrics::Metrics;
use weiqi_store::{Append, EventLog, MemoryStore, Summary};

#[tokio::test]
async fn a_stored_game_with_extreme_settings_recovers_and_plays_at_once() {
    // Decided with playable settings, then the stored settings made extreme: the fold
    // (`apply`) takes whatever the log holds.
    let mut settings = Settings::casual(9);
    settings.time = TimeControl::chinese(0, 3);
    let mut g = Game::new();
    let mut log = Vec::new();
    for (actor, cmd) in [
        (
            Actor::Host,
            Command::Create {
                host: None,
                settings,
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
        let now = weiqi_server::hub::TimeSource::new().now_ms();
        for e in g.decide(actor, &cmd, now).unwrap() {
            g.apply(&e).unwrap();
            log.push(e);
        }
    }
    if let EventKind::Created { settings, .. } = &mut log[0].kind {
        settings.time = TimeControl::ByoYomi {
            main_ms: 0,
            periods: u32::MAX,
            period_ms: 1_000_000_000_000,
        };
    }
    let g = Game::from_events(&log).unwrap();
    let store = MemoryStore::new();
    store
        .append(Append {
            game_id: "old".into(),
            expected_seq: 0,
            events: log.clone(),
            host_token_hash: None,
            guest_token_hash: None,
            request_id: None,
            summary: Some(Summary {
                phase: weiqi_game::Phase::Playing,
                board_size: 9,
                move_number: 0,
                rules: "chinese".into(),
                finished: false,
            }),
            move_number: 0,
            wake_ms: g.next_wakeup(),
            now_ms: log[1].at,
        })
        .await
        .unwrap();
    let (_stop, rx) = watch::channel(false);
    let hub = Arc::new(Hub::new(store, vec![5; 32], Metrics::new(), rx));
    assert_eq!(hub.recover(0).await.unwrap(), 1);
    let black = Actor::from(g.seat_of(weiqi_rules::Color::Black).unwrap());
    let white = Actor::from(g.seat_of(weiqi_rules::Color::White).unwrap());
    for (actor, (x, y)) in [(black, (2, 2)), (white, (6, 6)), (black, (2, 6))] {
        let play = Command::Play {
            point: Point::new(x, y),
            lag_ms: 0,
        };
        hub.run("old", actor, play, Mutation::default()).await.unwrap();
    }
    let mut e = hub.lock("old").await.unwrap();
    assert_eq!(e.game.get().move_number(), 3);
    assert!(e.game.get().next_wakeup().is_some());
}
