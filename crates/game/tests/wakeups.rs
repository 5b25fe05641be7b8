//! The server's timer sleeps until `next_wakeup` and then sends `Tick`. If the two ever
//! disagreed, a tick would find nothing to do and the game would wait for a command that
//! never comes (issue 43: scheduled games whose absent players never forfeited, because
//! the wake-up was the last allowed millisecond of lateness, not the first late one). So,
//! over random games of every kind that has a timer (clocks, byo-yomi, scheduled starts,
//! nigiri, the variant's steps): a tick at the wake-up, or any time after it, always
//! emits an event, and a tick a millisecond before it never does.

use proptest::prelude::*;
use weiqi_game::*;
use weiqi_rules::Point;

/// 300 cases; saved failures are replayed first.
fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 300,
        failure_persistence: Some(Box::new(proptest::test_runner::FileFailurePersistence::Direct(
            "tests/wakeups.proptest-regressions",
        ))),
        ..ProptestConfig::default()
    }
}

/// The kinds of game with a timer: `k` picks the opening and the clock.
fn settings(k: u8, start: Ms, lateness: Ms, timeout: Ms) -> Settings {
    let mut s = Settings::casual(5);
    s.nigiri_timeout_ms = timeout;
    s.time = match k % 4 {
        0 => TimeControl::None,
        1 => TimeControl::chinese(2_000, 2),
        2 => TimeControl::Absolute { main_ms: 3_000 },
        _ => TimeControl::Canadian {
            main_ms: 1_000,
            stones: 2,
            period_ms: 3_000,
        },
    };
    match (k / 4) % 4 {
        0 => {
            s.scheduled_start = Some(start);
            s.max_lateness_ms = lateness;
        }
        1 => s.colors = ColorChoice::Nigiri,
        2 => {
            s.variant = Variant::FreeSeats {
                no_first_line: false,
                half_point_bids: false,
            }
        }
        _ => {}
    }
    s
}

fn command(op: u8, a: u8, b: u8) -> Command {
    let point = Point::new(a % 5, b % 5);
    match op % 10 {
        0 => Command::CheckIn,
        1 => Command::PlaceSeatStone { point },
        2 => Command::CommitBid {
            commitment: bid_commitment((a % 4) as i64, "n"),
        },
        3 => Command::RevealBid {
            komi: (a % 4) as f64 / 2.0,
            nonce: "n".into(),
        },
        4 => Command::RevealNigiri {
            stones: 3,
            nonce: "n".into(),
        },
        5 | 6 => Command::Play { point, lag_ms: 0 },
        7 => Command::Pass { lag_ms: 0 },
        _ => Command::Tick,
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn a_wakeup_always_finds_something_due_and_never_comes_late(
        k in 0u8..16,
        start in 0u64..4_000,
        lateness in 0u64..3_000,
        timeout in 1_000u64..4_000,
        ops in proptest::collection::vec((0u8..3, any::<u8>(), any::<u8>(), any::<u8>(), 0u64..1_500), 0..40),
    ) {
        let mut g = Game::new();
        let settings = settings(k, start, lateness, timeout);
        let nigiri = settings.colors == ColorChoice::Nigiri;
        let create = Command::Create {
            host: None,
            settings,
            nigiri_commitment: nigiri.then(|| nigiri_commitment(3, "n")),
        };
        g.decide_in_place(Actor::Host, &create, 0).unwrap();
        let join = Command::Join { player: None, nigiri_guess: Some(Parity::Odd), entropy: k as u64 };
        g.decide_in_place(Actor::Guest, &join, 0).unwrap();
        let mut now = 0;
        for (who, op, a, b, dt) in ops {
            // The wake-up as the game stands, checked before the next command.
            if let Some(wake) = g.next_wakeup() {
                let last = g.last_event_at().unwrap();
                prop_assert!(
                    !g.decide(Actor::Server, &Command::Tick, wake.max(last)).unwrap().is_empty(),
                    "a tick at the wake-up {} ({:?}) found nothing due", wake, g.phase()
                );
                prop_assert!(!g.decide(Actor::Server, &Command::Tick, wake.max(last) + dt).unwrap().is_empty());
                if wake > last {
                    prop_assert!(
                        g.decide(Actor::Server, &Command::Tick, wake - 1).unwrap().is_empty(),
                        "a tick before the wake-up {} ({:?}) changed the game", wake, g.phase()
                    );
                }
            } else if g.phase() != Phase::Finished {
                // Nothing is due: no tick, however late, changes the game.
                prop_assert!(g.decide(Actor::Server, &Command::Tick, now + 86_400_000).unwrap().is_empty());
            }
            now += dt;
            let actor = [Actor::Host, Actor::Guest, Actor::Server][who as usize];
            let _ = g.decide_in_place(actor, &command(op, a, b), now);
            if g.phase() == Phase::Finished {
                prop_assert_eq!(g.next_wakeup(), None);
                break;
            }
        }
    }
}
