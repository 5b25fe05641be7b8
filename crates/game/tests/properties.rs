//! Random command sequences: never a panic, never a move for the wrong colour, and the
//! fold of the emitted events always equals the decided state (timeouts and adjournments
//! included).

use proptest::prelude::*;
use weiqi_game::*;
use weiqi_rules::{Color, KoRule, Move, Point, Preset};

/// 300 cases, after the saved failures in `properties.proptest-regressions`. (proptest
/// looks for that file beside a `lib.rs` or `main.rs`, which `tests/` has not: named
/// directly, the saved cases are replayed first, and new failures are added to it.)
fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 300,
        failure_persistence: Some(Box::new(proptest::test_runner::FileFailurePersistence::Direct(
            "tests/properties.proptest-regressions",
        ))),
        ..ProptestConfig::default()
    }
}

fn settings(k: u8, size: u8) -> Settings {
    let mut s = Settings::casual(size);
    s.mode = if k & 1 == 0 {
        RefereeMode::Casual
    } else {
        RefereeMode::Tournament
    };
    s.time = match k % 4 {
        0 => TimeControl::None,
        1 => TimeControl::chinese(2_000, 2),
        2 => TimeControl::Fischer {
            main_ms: 5_000,
            increment_ms: 1_000,
            cap_ms: None,
        },
        _ => TimeControl::Canadian {
            main_ms: 1_000,
            stones: 2,
            period_ms: 3_000,
        },
    };
    s.rules = Preset::Chinese
        .rules()
        .with_ko(if k & 4 == 0 { KoRule::Positional } else { KoRule::Simple });
    s.colors = if k & 8 == 0 {
        ColorChoice::HostBlack
    } else {
        ColorChoice::Random
    };
    s
}

fn command(op: u8, a: u8, b: u8) -> Command {
    let point = Point::new(a % 6, b % 6);
    match op % 16 {
        0..=5 => Command::Play {
            point,
            lag_ms: (a as Ms) * 10,
        },
        6 => Command::Pass { lag_ms: 0 },
        7 => Command::DeclareEnd,
        8 => Command::AcceptScore,
        9 => Command::DisputeScore,
        10 => Command::ProposeDead { stones: vec![point] },
        11 => {
            if a & 1 == 0 {
                Command::RequestUndo
            } else {
                Command::AnswerUndo { accept: b & 1 == 0 }
            }
        }
        12 => {
            if a & 1 == 0 {
                Command::OfferDraw
            } else {
                Command::AnswerDraw {
                    accept: b.is_multiple_of(4),
                }
            }
        }
        13 => Command::Seal {
            mv: if b.is_multiple_of(5) {
                Move::Pass
            } else {
                Move::Place(point)
            },
            nonce: "12345678".into(),
        },
        14 => Command::Resume,
        _ => {
            if a.is_multiple_of(8) {
                Command::Resign
            } else if a.is_multiple_of(13) {
                Command::ClaimAbandoned { draw: b & 1 == 0 }
            } else {
                Command::Tick
            }
        }
    }
}

/// A game created with settings `k` and joined at time 0, decided in place.
fn joined(k: u8, size: u8) -> Game {
    let mut g = Game::new();
    let create = Command::Create {
        host: None,
        settings: settings(k, size),
        nigiri_commitment: None,
    };
    g.decide_in_place(Actor::Host, &create, 0).unwrap();
    g.decide_in_place(
        Actor::Guest,
        &Command::Join {
            player: None,
            nigiri_guess: None,
            entropy: k as u64,
        },
        0,
    )
    .unwrap();
    g
}

/// Generated operations as commands: who sends what, and when (times add up).
fn timed(ops: Vec<(u8, u8, u8, u8, u64)>) -> impl Iterator<Item = (Actor, Command, u64)> {
    let mut now = 0;
    ops.into_iter().map(move |(who, op, a, b, dt)| {
        now += dt;
        (
            [Actor::Host, Actor::Guest, Actor::Server][who as usize],
            command(op, a, b),
            now,
        )
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn random_commands(k in 0u8..16, size in 3u8..7, ops in proptest::collection::vec((0u8..3, any::<u8>(), any::<u8>(), any::<u8>(), 0u64..1500), 0..120)) {
        let mut g = Game::new();
        let mut log: Vec<Event> = Vec::new();
        let create = Command::Create { host: None, settings: settings(k, size), nigiri_commitment: None };
        let mut now = 0;
        for e in g.decide(Actor::Host, &create, now).unwrap() { g.apply(&e).unwrap(); log.push(e); }
        for e in g.decide(Actor::Guest, &Command::Join { player: None, nigiri_guess: None, entropy: k as u64 }, now).unwrap() { g.apply(&e).unwrap(); log.push(e); }
        for (who, op, a, b, dt) in ops {
            now += dt;
            let actor = [Actor::Host, Actor::Guest, Actor::Server][who as usize];
            let cmd = command(op, a, b);
            // Decided in place too (as the server does): alike, and a refusal leaves that
            // copy as it was (checked against the game, which `decide` cannot change).
            let mut in_place = g.clone();
            let decided = g.decide(actor, &cmd, now);
            prop_assert_eq!(&in_place.decide_in_place(actor, &cmd, now), &decided);
            match decided {
                Err(_) => prop_assert_eq!(&in_place, &g),
                Ok(events) => {
                    for e in &events {
                        // Nobody moves for the other colour.
                        if let EventKind::MovePlayed { color, .. } | EventKind::Passed { color, .. } = &e.kind
                            && !matches!(cmd, Command::Resume)
                        {
                            let seat = actor.seat().expect("the server never moves");
                            prop_assert_eq!(g.color_of(seat), Some(*color));
                        }
                        prop_assert_eq!(e.seq, g.seq() + 1);
                        g.apply(e).unwrap();
                        log.push(e.clone());
                        // The parts of the game agree after every event, and its seq is
                        // its log's length.
                        prop_assert_eq!(g.check_invariants(), Ok(()));
                        prop_assert_eq!(g.seq(), log.len() as u64);
                    }
                    prop_assert_eq!(&in_place, &g);
                }
            }
        }
        let folded = Game::from_events(&log).unwrap();
        prop_assert_eq!(&folded, &g);
        // Events survive JSON (what the store and the stream carry).
        let json = serde_json::to_string(&log).unwrap();
        let back: Vec<Event> = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(&Game::from_events(&back).unwrap(), &g);
        if let Some(r) = g.result() {
            prop_assert_eq!(g.phase(), Phase::Finished);
            if r.reason == EndReason::Time { prop_assert!(r.winner.is_some()); }
        }
    }
}

proptest! {
    #![proptest_config(config())]

    /// Deciding in place (no copy for a move or pass) gives the same events and the same
    /// game as deciding on a copy, and a refused command leaves the game as it was: clocks,
    /// byo-yomi calls and flags due (C2), ko rules (C7) and referee modes (C5) included.
    #[test]
    fn deciding_in_place_equals_deciding_on_a_copy(k in 0u8..16, size in 3u8..7, ops in proptest::collection::vec((0u8..3, any::<u8>(), any::<u8>(), any::<u8>(), 0u64..1500), 0..120)) {
        let mut g = joined(k, size);
        for (actor, cmd, now) in timed(ops) {
            let mut h = g.clone();
            let in_place = h.decide_in_place(actor, &cmd, now);
            match g.decide_next(actor, &cmd, now) {
                Ok((events, next)) => {
                    prop_assert_eq!(in_place, Ok(events));
                    prop_assert_eq!(&h, &next);
                    g = next;
                }
                Err(refused) => {
                    prop_assert_eq!(in_place, Err(refused));
                    prop_assert_eq!(&h, &g);
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(config())]

    /// A game parked between any two commands (as the server keeps games at rest) and
    /// unparked is the same game: equal, and deciding every command alike after (ko and
    /// superko history, clocks and referee state included). Every other rest unpacks
    /// on a used board, as the server does: first a 19x19 board with stones on it, then
    /// the board the game gave back two rests before.
    #[test]
    fn a_parked_game_decides_as_the_live_one(k in 0u8..16, size in 3u8..7, ops in proptest::collection::vec((0u8..3, any::<u8>(), any::<u8>(), any::<u8>(), 0u64..1500), 0..120)) {
        prop_assert_eq!(&Game::new().park().unpark(), &Game::new());
        let mut g = joined(k, size);
        let mut spare = {
            let mut s = weiqi_rules::State::new(19, weiqi_rules::Rules::default()).unwrap();
            for m in s.legal_moves().into_iter().step_by(5).take(60) {
                let _ = s.play(m);
            }
            Some(s.pack_keeping_board().1)
        };
        for (n, (actor, cmd, now)) in timed(ops).enumerate() {
            let mut rested = if n % 2 == 0 {
                let (parked, board) = g.clone().park_keeping_board();
                let rested = parked.unpark_on(spare.take());
                spare = board;
                rested
            } else {
                g.clone().park().unpark()
            };
            prop_assert_eq!(&rested, &g);
            prop_assert_eq!(rested.decide_in_place(actor, &cmd, now), g.decide_in_place(actor, &cmd, now));
            prop_assert_eq!(&rested, &g);
        }
    }
}

/// C7: under simple ko, random play on a tiny board reaches a repeated position three
/// times, and the referee ends the game with no result.
#[test]
fn simple_ko_cycles_end_without_result_c7() {
    let mut found = 0;
    for seed in 0..400u64 {
        let mut s = Settings::casual(2);
        s.rules = Preset::Chinese.rules().with_ko(KoRule::Simple);
        let mut g = Game::new();
        for (by, cmd) in [
            (
                Actor::Host,
                Command::Create {
                    host: None,
                    settings: s,
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
            for e in g.decide(by, &cmd, 0).unwrap() {
                g.apply(&e).unwrap();
            }
        }
        let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        for t in 1..200 {
            if g.phase() != Phase::Playing {
                break;
            }
            let c = g.to_move().unwrap();
            let by = if c == Color::Black { Actor::Host } else { Actor::Guest };
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let point = Point::new(((x >> 33) % 2) as u8, ((x >> 40) % 2) as u8);
            let cmd = if (x >> 50) % 9 == 0 {
                Command::Pass { lag_ms: 0 }
            } else {
                Command::Play { point, lag_ms: 0 }
            };
            if let Ok(events) = g.decide(by, &cmd, t) {
                for e in events {
                    g.apply(&e).unwrap();
                }
            }
        }
        if g.result().is_some_and(|r| r.reason == EndReason::NoResult) {
            found += 1;
        }
    }
    assert!(found > 0, "no cycle found in 400 random games");
}
