//! Table-driven referee tests with a fake time source; each cites the rule it checks.

use weiqi_game::*;
use weiqi_rules::{Color, Illegal, Move, Point, Preset};

const S: Ms = 1000;

fn p(gtp: &str, size: u8) -> Point {
    Point::from_gtp(gtp, size).unwrap()
}

struct T {
    g: Game,
    log: Vec<Event>,
}

impl T {
    fn new(settings: Settings) -> T {
        T::with_commitment(settings, None)
    }
    fn with_commitment(settings: Settings, c: Option<String>) -> T {
        let mut t = T {
            g: Game::new(),
            log: Vec::new(),
        };
        t.ok(
            Actor::Host,
            Command::Create {
                settings,
                nigiri_commitment: c,
            },
            0,
        );
        t
    }
    fn run(&mut self, by: Actor, cmd: Command, now: Ms) -> Result<Vec<Event>, Rejection> {
        // The server decides in place: it must decide the same, leave the game as it was
        // on a refusal, and otherwise end where applying the events leads.
        let mut in_place = self.g.clone();
        let r = self.g.decide(by, &cmd, now);
        assert_eq!(in_place.decide_in_place(by, &cmd, now), r, "decided alike in place");
        if let Ok(events) = &r {
            for e in events {
                self.g.apply(e).unwrap();
                self.log.push(e.clone());
            }
            // The fold of the whole log equals the game.
            assert_eq!(Game::from_events(&self.log).unwrap(), self.g);
        }
        assert_eq!(in_place, self.g, "a refusal changes nothing; events lead where applied");
        r
    }
    fn ok(&mut self, by: Actor, cmd: Command, now: Ms) -> Vec<Event> {
        self.run(by, cmd.clone(), now)
            .unwrap_or_else(|e| panic!("{cmd:?} at {now}: {e}"))
    }
    fn err(&mut self, by: Actor, cmd: Command, now: Ms) -> Rejection {
        let before = self.g.clone();
        let e = self
            .run(by, cmd.clone(), now)
            .expect_err(&format!("{cmd:?} should be refused"));
        assert_eq!(self.g, before, "a refusal changes nothing");
        e
    }
    fn play(&mut self, by: Actor, gtp: &str, now: Ms) -> Vec<Event> {
        let size = self.g.settings().unwrap().size;
        self.ok(
            by,
            Command::Play {
                point: p(gtp, size),
                lag_ms: 0,
            },
            now,
        )
    }
    fn kinds(events: &[Event]) -> Vec<String> {
        events
            .iter()
            .map(|e| {
                serde_json::to_value(&e.kind).unwrap()["type"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    }
}

fn casual(size: u8) -> Settings {
    let mut s = Settings::casual(size);
    s.lag = LagComp::OFF;
    s.rules = Preset::Chinese.rules().with_komi(0.5);
    s
}

use Actor::{Guest, Host};

/// A 5x5 game in which Black played C3 and both players then passed (times 0..=3): the
/// scoring phase.
fn scoring_after_one_stone() -> T {
    let mut t = T::new(casual(5));
    t.ok(
        Guest,
        Command::Join {
            nigiri_guess: None,
            entropy: 0,
        },
        0,
    );
    t.play(Host, "C3", 1);
    t.ok(Guest, Command::Pass { lag_ms: 0 }, 2);
    t.ok(Host, Command::Pass { lag_ms: 0 }, 3);
    assert_eq!(t.g.phase(), Phase::Scoring);
    t
}

/// C6, R8: a full game from creation to an agreed score.
#[test]
fn full_game_to_agreed_score_c6() {
    let mut t = T::new(casual(5));
    let ev = t.ok(
        Guest,
        Command::Join {
            nigiri_guess: None,
            entropy: 0,
        },
        10,
    );
    assert_eq!(T::kinds(&ev), ["joined", "colors_assigned", "play_started"]);
    assert_eq!(t.g.color_of(Seat::Host), Some(Color::Black));
    t.play(Host, "C3", 20);
    t.play(Guest, "C4", 30);
    t.play(Host, "B3", 40);
    t.play(Guest, "D3", 50);
    t.ok(Host, Command::Pass { lag_ms: 0 }, 60);
    let ev = t.ok(Guest, Command::DeclareEnd, 70);
    assert_eq!(T::kinds(&ev), ["passed", "scoring_started"]);
    assert_eq!(t.g.phase(), Phase::Scoring);
    t.ok(Host, Command::AcceptScore, 80);
    assert_eq!(t.g.phase(), Phase::Scoring, "one acceptance is not enough");
    let ev = t.ok(Guest, Command::AcceptScore, 90);
    let EventKind::GameEnded { result } = &ev.last().unwrap().kind else {
        panic!()
    };
    assert_eq!(result.reason, EndReason::Score);
    let score = result.score.as_ref().unwrap();
    assert_eq!(score.black + score.white, 25.0);
    assert_eq!(t.g.phase(), Phase::Finished);
    // Every event carries its sequence number, time and both clocks.
    assert!(t.log.iter().enumerate().all(|(i, e)| e.seq == i as u64 + 1));
    assert_eq!(
        t.err(Host, Command::Pass { lag_ms: 0 }, 100),
        Rejection::WrongPhase(Phase::Finished)
    );
}

/// C2: a player flags exactly at the deadline and not a millisecond before, with no
/// command from anyone but the server's tick.
#[test]
fn flag_exactly_at_deadline_c2() {
    let mut s = casual(9);
    s.time = TimeControl::Absolute { main_ms: 10 * S };
    let mut t = T::new(s);
    t.ok(
        Guest,
        Command::Join {
            nigiri_guess: None,
            entropy: 0,
        },
        1_000,
    );
    assert_eq!(t.g.deadline(), Some(11_000));
    assert_eq!(t.g.next_wakeup(), Some(11_000));
    assert!(t.ok(Actor::Server, Command::Tick, 10_999).is_empty());
    let ev = t.ok(Actor::Server, Command::Tick, 11_000);
    let EventKind::GameEnded { result } = &ev[0].kind else {
        panic!("{ev:?}")
    };
    assert_eq!((result.winner, result.reason), (Some(Color::White), EndReason::Time));
    assert!(ev[0].clocks[0].flagged);
}

/// C2: a move that arrives after the deadline loses on time instead of being played.
#[test]
fn late_move_loses_c2() {
    let mut s = casual(9);
    s.time = TimeControl::Absolute { main_ms: 10 * S };
    let mut t = T::new(s);
    t.ok(
        Guest,
        Command::Join {
            nigiri_guess: None,
            entropy: 0,
        },
        0,
    );
    let ev = t.play(Host, "E5", 10 * S);
    assert_eq!(T::kinds(&ev), ["game_ended"]);
    assert_eq!(t.g.move_number(), 0);
}

/// C2: the seed's example through the referee: 5 units of 60 s, a 59 s move keeps 5 units,
/// a 61 s move leaves 4.
#[test]
fn chinese_byo_yomi_example_c2() {
    let mut s = casual(19);
    s.time = TimeControl::chinese(0, 5);
    let mut t = T::new(s);
    t.ok(
        Guest,
        Command::Join {
            nigiri_guess: None,
            entropy: 0,
        },
        0,
    );
    let ev = t.play(Host, "D4", 59 * S);
    assert_eq!(ev[0].clocks[0].periods, 5);
    t.play(Guest, "Q16", 60 * S);
    let ev = t.play(Host, "Q4", 121 * S);
    assert_eq!(ev[0].clocks[0].periods, 4);
}

/// C2: the referee's calls arrive as events: 30, 40, 50, 55, 58 s.
#[test]
fn byo_yomi_announcements_c2() {
    let mut s = casual(9);
    s.time = TimeControl::chinese(0, 3);
    let mut t = T::new(s);
    t.ok(
        Guest,
        Command::Join {
            nigiri_guess: None,
            entropy: 0,
        },
        0,
    );
    assert_eq!(t.g.next_wakeup(), Some(30 * S));
    let ev = t.ok(Actor::Server, Command::Tick, 56 * S);
    let secs: Vec<u32> = ev
        .iter()
        .map(|e| match e.kind {
            EventKind::Announcement { seconds, .. } => seconds,
            _ => panic!(),
        })
        .collect();
    assert_eq!(secs, [30, 40, 50, 55]);
    assert!(t.ok(Actor::Server, Command::Tick, 57 * S).is_empty());
    assert_eq!(t.ok(Actor::Server, Command::Tick, 58 * S).len(), 1);
}

/// C3: the sealed move is hidden, committed, revealed on resume and played; time before
/// sealing is charged, the adjournment is not.
#[test]
fn sealed_move_revealed_on_resume_c3() {
    let mut s = casual(9);
    s.time = TimeControl::Absolute { main_ms: 600 * S };
    let mut t = T::new(s);
    t.ok(
        Guest,
        Command::Join {
            nigiri_guess: None,
            entropy: 0,
        },
        0,
    );
    t.play(Host, "E5", 10 * S);
    let mv = Move::Place(p("C3", 9));
    let ev = t.ok(
        Guest,
        Command::Seal {
            mv,
            nonce: "n0nce-123".into(),
        },
        70 * S,
    );
    let EventKind::MoveSealed { commitment, .. } = &ev[0].kind else {
        panic!()
    };
    assert_eq!(commitment, &seal_commitment(mv, "n0nce-123"));
    assert_eq!(t.g.phase(), Phase::Adjourned);
    // Hidden from the opponent and spectators, visible to the sealer.
    assert!(matches!(
        ev[0].redacted_for(Some(Color::Black)).kind,
        EventKind::MoveSealed { sealed: None, .. }
    ));
    assert!(matches!(
        ev[0].redacted_for(None).kind,
        EventKind::MoveSealed { sealed: None, .. }
    ));
    assert!(matches!(
        ev[0].redacted_for(Some(Color::White)).kind,
        EventKind::MoveSealed { sealed: Some(_), .. }
    ));
    // White used 60 s before sealing; a day of adjournment costs nothing.
    assert_eq!(ev[0].clocks[1].main_ms, 540 * S);
    assert_eq!(t.g.deadline(), None);
    assert_eq!(
        t.err(
            Host,
            Command::Play {
                point: p("D4", 9),
                lag_ms: 0
            },
            80 * S
        ),
        Rejection::WrongPhase(Phase::Adjourned)
    );
    let day = 86_400 * S;
    let ev = t.ok(Host, Command::Resume, day);
    assert_eq!(T::kinds(&ev), ["resumed", "move_played"]);
    assert_eq!(ev[1].clocks[1].main_ms, 540 * S);
    assert_eq!(t.g.state().unwrap().board().get(p("C3", 9)), Some(Color::White));
    assert_eq!(t.g.deadline(), Some(day + 590 * S), "Black's clock runs again");
}

/// C3: a sealed move that is illegal at resumption counts as a pass.
#[test]
fn illegal_sealed_move_is_a_pass_c3() {
    let mut t = T::new(casual(9));
    t.ok(
        Guest,
        Command::Join {
            nigiri_guess: None,
            entropy: 0,
        },
        0,
    );
    t.play(Host, "E5", 1);
    t.ok(
        Guest,
        Command::Seal {
            mv: Move::Place(p("E5", 9)),
            nonce: "abcdefgh".into(),
        },
        2,
    );
    let ev = t.ok(Actor::Server, Command::Resume, 3);
    assert_eq!(T::kinds(&ev), ["resumed", "move_voided"]);
    let EventKind::MoveVoided { reason, .. } = ev[1].kind else {
        panic!()
    };
    assert_eq!(reason, Illegal::Occupied);
    assert_eq!(t.g.to_move(), Some(Color::Black));
}

/// C6: a dispute returns to play; two more passes start scoring again.
#[test]
fn dispute_returns_to_play_c6() {
    let mut t = scoring_after_one_stone();
    t.ok(
        Host,
        Command::ProposeDead {
            stones: vec![p("C3", 5)],
        },
        4,
    );
    t.ok(Guest, Command::DisputeScore, 5);
    assert_eq!(t.g.phase(), Phase::Playing);
    assert_eq!(t.g.to_move(), Some(Color::White));
    t.play(Guest, "B2", 6);
    t.ok(Host, Command::Pass { lag_ms: 0 }, 7);
    t.ok(Guest, Command::Pass { lag_ms: 0 }, 8);
    assert_eq!(t.g.phase(), Phase::Scoring);
    t.ok(Host, Command::AcceptScore, 9);
    t.ok(Guest, Command::AcceptScore, 10);
    assert_eq!(t.g.result().unwrap().reason, EndReason::Score);
}

/// C6, C8: taking back the first move played after a dispute does not end play again
/// (the board is replayed from its moves, two passes last): the game goes on. Found by
/// the random-command property test, which panicked on the next pass.
#[test]
fn undo_after_dispute_keeps_playing_c6() {
    let mut t = scoring_after_one_stone();
    t.ok(Guest, Command::DisputeScore, 4);
    t.play(Guest, "B2", 5);
    t.ok(Guest, Command::RequestUndo, 6);
    t.ok(Host, Command::AnswerUndo { accept: true }, 7);
    assert_eq!(t.g.phase(), Phase::Playing);
    assert_eq!(t.g.to_move(), Some(Color::White));
    // White plays on: a pass is one pass, not the end of a game already over.
    t.ok(Guest, Command::Pass { lag_ms: 0 }, 8);
    assert_eq!(t.g.phase(), Phase::Playing);
    t.ok(Host, Command::Pass { lag_ms: 0 }, 9);
    assert_eq!(t.g.phase(), Phase::Scoring);
}

/// C8: undo needs the opponent's consent in casual games and is refused in tournaments.
#[test]
fn undo_casual_only_c8() {
    let mut t = T::new(casual(9));
    t.ok(
        Guest,
        Command::Join {
            nigiri_guess: None,
            entropy: 0,
        },
        0,
    );
    t.play(Host, "E5", 1);
    assert!(matches!(
        t.err(Guest, Command::RequestUndo, 2),
        Rejection::NotPermitted(_)
    ));
    t.ok(Host, Command::RequestUndo, 2);
    assert!(matches!(
        t.err(Host, Command::AnswerUndo { accept: true }, 3),
        Rejection::NothingPending(_)
    ));
    t.ok(Guest, Command::AnswerUndo { accept: true }, 3);
    assert_eq!(t.g.move_number(), 0);
    assert_eq!(t.g.to_move(), Some(Color::Black));

    let mut s = casual(9);
    s.mode = RefereeMode::Tournament;
    let mut t = T::new(s);
    t.ok(
        Guest,
        Command::Join {
            nigiri_guess: None,
            entropy: 0,
        },
        0,
    );
    t.play(Host, "E5", 1);
    assert!(matches!(t.err(Host, Command::RequestUndo, 2), Rejection::UndoNotAllowed(m) if m.contains("tournament")));
}

fn ko_setup(mode: RefereeMode) -> T {
    let mut s = casual(5);
    s.mode = mode;
    let mut t = T::new(s);
    t.ok(
        Guest,
        Command::Join {
            nigiri_guess: None,
            entropy: 0,
        },
        0,
    );
    // A ko at B4/C4 (GTP on 5x5): Black captures at C4... build it move by move.
    for (i, (by, v)) in [
        (Host, "B5"),
        (Guest, "C5"),
        (Host, "A4"),
        (Guest, "D4"),
        (Host, "B3"),
        (Guest, "C3"),
        (Host, "C4"),
        (Guest, "B4"),
    ]
    .iter()
    .enumerate()
    {
        t.play(*by, v, 10 + i as Ms);
    }
    // White's B4 captured C4: Black may not retake at once.
    t
}

/// C5: in casual mode an illegal move is rejected and the player is still to move.
#[test]
fn casual_illegal_rejected_c5() {
    let mut t = ko_setup(RefereeMode::Casual);
    assert_eq!(
        t.err(
            Host,
            Command::Play {
                point: p("C4", 5),
                lag_ms: 0
            },
            100
        ),
        Rejection::Illegal(Illegal::Ko)
    );
    assert_eq!(t.g.to_move(), Some(Color::Black));
}

/// C5: in tournament mode it is void, counts as a pass, and the second warning loses.
#[test]
fn tournament_illegal_void_and_penalty_c5() {
    let mut t = ko_setup(RefereeMode::Tournament);
    let ev = t.play(Host, "C4", 100);
    assert_eq!(T::kinds(&ev), ["move_voided", "warning"]);
    assert_eq!(t.g.to_move(), Some(Color::White));
    t.play(Guest, "E1", 101);
    // The ko is open again; Black retakes, White may not.
    t.play(Host, "C4", 102);
    let ev = t.play(Guest, "B4", 103);
    assert_eq!(T::kinds(&ev), ["move_voided", "warning"]);
    t.play(Host, "E2", 104);
    // A5 is suicide for White: the second irregularity loses by penalty.
    let ev = t.play(Guest, "A5", 105);
    let last = &ev.last().unwrap().kind;
    let EventKind::GameEnded { result } = last else {
        panic!("{ev:?}")
    };
    assert_eq!((result.winner, result.reason), (Some(Color::Black), EndReason::Penalty));
}

/// Moving out of turn never changes the game; spectators (the server) cannot play.
#[test]
fn out_of_turn_changes_nothing() {
    let mut t = T::new(casual(9));
    t.ok(
        Guest,
        Command::Join {
            nigiri_guess: None,
            entropy: 0,
        },
        0,
    );
    assert_eq!(
        t.err(
            Guest,
            Command::Play {
                point: p("E5", 9),
                lag_ms: 0
            },
            1
        ),
        Rejection::NotYourTurn
    );
    assert!(matches!(
        t.err(
            Actor::Server,
            Command::Play {
                point: p("E5", 9),
                lag_ms: 0
            },
            1
        ),
        Rejection::NotPermitted(_)
    ));
    assert!(matches!(
        t.err(
            Host,
            Command::Play {
                point: Point::new(9, 9),
                lag_ms: 0
            },
            1
        ),
        Rejection::InvalidArgument(_)
    ));
}

/// C1: nigiri with commit-reveal. The host cannot change the handful after the guess, and
/// withholding the reveal forfeits, so the second revealer cannot bias the draw.
#[test]
fn nigiri_commit_reveal_c1() {
    let mut s = casual(19);
    s.colors = ColorChoice::Nigiri;
    let c = nigiri_commitment(7, "salt-salt");
    // Without a commitment, creating a nigiri game is refused.
    assert!(matches!(
        Game::new().decide(
            Host,
            &Command::Create {
                settings: s.clone(),
                nigiri_commitment: None
            },
            0
        ),
        Err(Rejection::BadSetting {
            field: weiqi_game::SettingField::NigiriCommitment,
            ..
        })
    ));
    let mut t = T::with_commitment(s.clone(), Some(c.clone()));
    t.ok(
        Guest,
        Command::Join {
            nigiri_guess: Some(Parity::Even),
            entropy: 0,
        },
        1,
    );
    assert_eq!(t.g.phase(), Phase::Nigiri);
    // Revealing 8 (even, which would favour the host's... anything) does not match.
    assert_eq!(
        t.err(
            Host,
            Command::RevealNigiri {
                stones: 8,
                nonce: "salt-salt".into()
            },
            2
        ),
        Rejection::CommitmentMismatch
    );
    assert!(matches!(
        t.err(
            Guest,
            Command::RevealNigiri {
                stones: 7,
                nonce: "salt-salt".into()
            },
            2
        ),
        Rejection::NotPermitted(_)
    ));
    t.ok(
        Host,
        Command::RevealNigiri {
            stones: 7,
            nonce: "salt-salt".into(),
        },
        3,
    );
    // 7 is odd, the guess was even: the host takes Black.
    assert_eq!(t.g.color_of(Seat::Host), Some(Color::Black));
    assert_eq!(t.g.phase(), Phase::Playing);

    let mut t = T::with_commitment(s, Some(c));
    t.ok(
        Guest,
        Command::Join {
            nigiri_guess: Some(Parity::Odd),
            entropy: 0,
        },
        1,
    );
    let ev = t.ok(Actor::Server, Command::Tick, 1 + 300 * S);
    let EventKind::GameEnded { result } = &ev.last().unwrap().kind else {
        panic!()
    };
    assert_eq!(result.reason, EndReason::Forfeit);
    assert_eq!(t.g.color_of(Seat::Guest), result.winner);
}

/// C1: random colours come from the server's entropy.
#[test]
fn random_colors_c1() {
    for (entropy, black) in [(0, Seat::Host), (1, Seat::Guest)] {
        let mut s = casual(9);
        s.colors = ColorChoice::Random;
        let mut t = T::new(s);
        t.ok(
            Guest,
            Command::Join {
                nigiri_guess: None,
                entropy,
            },
            0,
        );
        assert_eq!(t.g.seat_of(Color::Black), Some(black));
    }
}

/// C4: lateness within the allowance is deducted; beyond it forfeits; both late: both lose.
#[test]
fn lateness_c4() {
    let mut s = casual(19);
    s.time = TimeControl::Absolute { main_ms: 3600 * S };
    s.scheduled_start = Some(1000 * S);
    s.max_lateness_ms = 900 * S;
    let mut t = T::new(s.clone());
    t.ok(
        Guest,
        Command::Join {
            nigiri_guess: None,
            entropy: 0,
        },
        0,
    );
    assert_eq!(t.g.phase(), Phase::Scheduled);
    t.ok(Host, Command::CheckIn, 990 * S);
    let ev = t.ok(Guest, Command::CheckIn, 1120 * S);
    assert_eq!(T::kinds(&ev), ["checked_in", "play_started"]);
    assert_eq!(ev[0].clocks[1].main_ms, 3480 * S, "two minutes late");
    assert_eq!(ev[1].clocks[0].main_ms, 3600 * S);

    let mut t = T::new(s.clone());
    t.ok(
        Guest,
        Command::Join {
            nigiri_guess: None,
            entropy: 0,
        },
        0,
    );
    t.ok(Host, Command::CheckIn, 1000 * S);
    assert!(t.ok(Actor::Server, Command::Tick, 1900 * S).is_empty());
    let ev = t.ok(Actor::Server, Command::Tick, 1900 * S + 1);
    let EventKind::GameEnded { result } = &ev[0].kind else {
        panic!()
    };
    assert_eq!((result.winner, result.reason), (Some(Color::Black), EndReason::Forfeit));

    let mut t = T::new(s);
    t.ok(
        Guest,
        Command::Join {
            nigiri_guess: None,
            entropy: 0,
        },
        0,
    );
    let ev = t.ok(Actor::Server, Command::Tick, 2000 * S);
    let EventKind::GameEnded { result } = &ev[0].kind else {
        panic!()
    };
    assert_eq!((result.winner, result.reason), (None, EndReason::DoubleForfeit));
}

/// C7: draw by agreement; resignation.
#[test]
fn draw_and_resignation_c7() {
    let mut t = T::new(casual(9));
    t.ok(
        Guest,
        Command::Join {
            nigiri_guess: None,
            entropy: 0,
        },
        0,
    );
    t.ok(Host, Command::OfferDraw, 1);
    assert!(matches!(
        t.err(Host, Command::AnswerDraw { accept: true }, 2),
        Rejection::NothingPending(_)
    ));
    t.ok(Guest, Command::AnswerDraw { accept: true }, 2);
    assert_eq!(t.g.result().unwrap().reason, EndReason::DrawByAgreement);

    let mut t = T::new(casual(9));
    t.ok(
        Guest,
        Command::Join {
            nigiri_guess: None,
            entropy: 0,
        },
        0,
    );
    t.ok(Guest, Command::Resign, 1);
    let r = t.g.result().unwrap();
    assert_eq!(
        (r.winner, r.reason, r.sgf()),
        (Some(Color::Black), EndReason::Resignation, "B+R".to_string())
    );
}

/// R9 through the referee: free handicap placement, then White moves.
#[test]
fn free_handicap_r9() {
    let mut s = casual(9);
    s.handicap = 2;
    s.free_handicap = true;
    let mut t = T::new(s);
    t.ok(
        Guest,
        Command::Join {
            nigiri_guess: None,
            entropy: 0,
        },
        0,
    );
    assert_eq!(t.g.phase(), Phase::PlacingHandicap);
    assert!(matches!(
        t.err(
            Host,
            Command::PlaceHandicap {
                points: vec![p("A1", 9)]
            },
            1
        ),
        Rejection::InvalidArgument(_)
    ));
    t.ok(
        Host,
        Command::PlaceHandicap {
            points: vec![p("A1", 9), p("J9", 9)],
        },
        1,
    );
    assert_eq!(t.g.to_move(), Some(Color::White));
}

/// R9, C2: the placement is on Black's clock. Placed within the lag allowance but after
/// the clock's own time, it loses on time as a move would (it once failed to apply);
/// left unplaced, the server's tick ends the game at the deadline.
#[test]
fn free_handicap_is_placed_on_the_clock() {
    let setup = || {
        let mut s = casual(9);
        s.handicap = 2;
        s.free_handicap = true;
        s.time = TimeControl::Absolute { main_ms: 10 * S };
        s.lag = LagComp::default();
        let mut t = T::new(s);
        let join = Command::Join {
            nigiri_guess: None,
            entropy: 0,
        };
        t.ok(Guest, join, 0);
        assert_eq!(t.g.deadline(), Some(11 * S), "main time and the 1 s lag allowance");
        t
    };
    let stones = || Command::PlaceHandicap {
        points: vec![p("C3", 9), p("G7", 9)],
    };
    let mut t = setup();
    let ev = t.ok(Host, stones(), 10 * S + 500);
    assert!(
        matches!(&ev[..], [e] if matches!(&e.kind, EventKind::GameEnded { result } if result.reason == EndReason::Time && result.winner == Some(Color::White)))
    );
    let mut t = setup();
    let ev = t.ok(Actor::Server, Command::Tick, 12 * S);
    assert_eq!(ev.last().unwrap().at, 11 * S, "stamped with the deadline");
    assert_eq!(t.g.result().unwrap().reason, EndReason::Time);
    let mut t = setup();
    t.ok(Host, stones(), 4 * S);
    assert_eq!(t.g.clocks(4 * S)[0].main_ms, 6 * S, "the placement took Black's time");
}

/// Time the service was down is not charged (the server credits it on restart).
#[test]
fn downtime_is_credited() {
    let mut s = casual(9);
    s.time = TimeControl::Absolute { main_ms: 10 * S };
    let mut t = T::new(s);
    t.ok(
        Guest,
        Command::Join {
            nigiri_guess: None,
            entropy: 0,
        },
        0,
    );
    assert!(matches!(
        t.err(Host, Command::CreditTime { ms: 5 * S }, 1),
        Rejection::NotPermitted(_)
    ));
    t.ok(Actor::Server, Command::CreditTime { ms: 5 * S }, 3 * S);
    assert_eq!(t.g.deadline(), Some(15 * S));
    // Even when the outage outlasted the deadline, nobody flags while it is credited.
    let mut t2 = T::new({
        let mut s = casual(9);
        s.time = TimeControl::Absolute { main_ms: 10 * S };
        s
    });
    t2.ok(
        Guest,
        Command::Join {
            nigiri_guess: None,
            entropy: 0,
        },
        0,
    );
    let ev = t2.ok(Actor::Server, Command::CreditTime { ms: 60 * S }, 61 * S);
    assert_eq!(T::kinds(&ev), ["time_credited"]);
    assert_eq!(t2.g.phase(), Phase::Playing);
}

/// R11: the record carries rules, komi, result, time settings and clock after each move.
#[test]
fn sgf_export_r11() {
    let mut s = casual(9);
    s.time = TimeControl::chinese(60 * S, 3);
    let mut t = T::new(s);
    t.ok(
        Guest,
        Command::Join {
            nigiri_guess: None,
            entropy: 0,
        },
        0,
    );
    t.play(Host, "E5", 10 * S);
    t.play(Guest, "C3", 20 * S);
    t.ok(Host, Command::Resign, 30 * S);
    let sgf = t.g.to_sgf().unwrap();
    for needle in [
        "RU[chinese]",
        "KM[0.5]",
        "RE[W+R]",
        "TM[60]",
        "OT[3x60 byo-yomi]",
        "BL[50]",
        "WL[50]",
    ] {
        assert!(sgf.contains(needle), "{needle} in {sgf}");
    }
    let rec = weiqi_rules::sgf::GameRecord::parse(&sgf).unwrap();
    assert!(rec.replay(rec.named_rules().unwrap()).unwrap().first_illegal.is_none());
}

/// Stored events omit zero clock fields, and the full form written before still reads (C2:
/// the clocks an event carries are what recovery resumes from).
#[test]
fn event_clocks_compact_and_full_forms_read() {
    let full = r#"{"seq":10,"at":5,"clocks":[{"main_ms":0,"periods":3,"period_ms":0,"stones":0,"lag_quota_ms":300,"running":true,"flagged":false},{"main_ms":0,"periods":0,"period_ms":0,"stones":0,"lag_quota_ms":0,"running":false,"flagged":true}],"kind":{"type":"passed","color":"white","declared_end":false,"lag_ms":0}}"#;
    let e: Event = serde_json::from_str(full).unwrap();
    assert_eq!(e.clocks[0].periods, 3);
    assert_eq!(e.clocks[0].lag_quota_ms, 300);
    assert!(e.clocks[0].running && !e.clocks[0].flagged);
    assert!(e.clocks[1].flagged && !e.clocks[1].running);
    let compact = serde_json::to_string(&e).unwrap();
    assert!(
        compact.contains(r#""clocks":[{"periods":3,"lag_quota_ms":300,"running":true},{"flagged":true}]"#),
        "{compact}"
    );
    assert!(compact.len() * 3 < full.len() * 2, "{compact}");
    assert_eq!(serde_json::from_str::<Event>(&compact).unwrap(), e);
}

#[test]
fn a_casual_game_in_play_waits_for_blacks_first_move_from_the_host() {
    let g = Game::casual_in_play(9).unwrap();
    assert_eq!(g.phase(), Phase::Playing);
    assert_eq!(g.move_number(), 0);
    assert_eq!(g.seat_of(Color::Black), Some(Seat::Host));
    assert_eq!(g.settings().map(|s| s.size), Some(9));
    assert!(Game::casual_in_play(1).is_err(), "a size out of range is refused");
}

#[test]
fn a_move_is_a_play_or_a_pass_command() {
    let at = Point::new(3, 4);
    assert_eq!(
        Command::of_move(Move::Place(at), 7),
        Command::Play { point: at, lag_ms: 7 }
    );
    assert_eq!(Command::of_move(Move::Pass, 7), Command::Pass { lag_ms: 7 });
}

/// An open game can be withdrawn by its host (or the server) before anyone joins, and
/// then by nobody: it ends with no result (SGF `Void`).
#[test]
fn open_game_cancelled_before_join() {
    let mut t = T::new(casual(9));
    assert!(matches!(
        t.err(Actor::Guest, Command::Cancel, S),
        Rejection::NotPermitted(_)
    ));
    t.ok(Actor::Host, Command::Cancel, S);
    assert_eq!(t.g.phase(), Phase::Finished);
    let r = t.g.result().unwrap();
    assert_eq!(
        (r.winner, r.reason, r.sgf()),
        (None, EndReason::Cancelled, "Void".to_string())
    );
    // Finished: nobody joins it any more.
    t.err(
        Actor::Guest,
        Command::Join {
            nigiri_guess: None,
            entropy: 0,
        },
        2 * S,
    );
    // The server may cancel an open game too; nobody may cancel one in play.
    let mut t = T::new(casual(9));
    t.ok(Actor::Server, Command::Cancel, S);
    let mut t = T::new(casual(9));
    t.ok(
        Actor::Guest,
        Command::Join {
            nigiri_guess: None,
            entropy: 0,
        },
        S,
    );
    assert!(matches!(
        t.err(Actor::Host, Command::Cancel, 2 * S),
        Rejection::WrongPhase(_)
    ));
}
