//! Table-driven referee tests of seating, handicap and adjournment (C1, C3, R9), with a
//! fake time source; each cites the rule it checks.

mod harness;

use Actor::{Guest, Host};
use harness::*;
use weiqi_game::*;
use weiqi_rules::{Color, Illegal, Move};

/// C3: the sealed move is hidden, committed, revealed on resume and played; time before
/// sealing is charged, the adjournment is not.
#[test]
fn sealed_move_revealed_on_resume_c3() {
    let mut s = casual(9);
    s.time = TimeControl::Absolute { main_ms: 600 * S };
    let mut t = T::new(s);
    join(&mut t);
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
    join(&mut t);
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
                host: None,
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
            player: None,
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
            player: None,
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
                player: None,
                nigiri_guess: None,
                entropy,
            },
            0,
        );
        assert_eq!(t.g.seat_of(Color::Black), Some(black));
    }
}

/// R9 through the referee: free handicap placement, then White moves.
#[test]
fn free_handicap_r9() {
    let mut s = casual(9);
    s.handicap = 2;
    s.free_handicap = true;
    let mut t = T::new(s);
    join(&mut t);
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
            player: None,
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
            player: None,
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

/// Games the server pairs (challenges, automatch) keep the guest seat for the paired
/// player: anyone else, signed in or not, is refused, and the game still waits for them.
#[test]
fn a_reserved_guest_seat_takes_only_its_player() {
    let mut s = casual(9);
    s.reserved_guest = Some("p2".into());
    let mut t = T::new(s);
    let who = |id: &str| PlayerRef {
        id: id.into(),
        name: id.into(),
        bot: false,
    };
    for player in [None, Some(who("p3"))] {
        let join = Command::Join {
            player,
            nigiri_guess: None,
            entropy: 0,
        };
        assert!(matches!(t.run(Guest, join, 0), Err(Rejection::NotPermitted(_))));
    }
    assert_eq!(t.g.phase(), Phase::WaitingForOpponent);
    let join = Command::Join {
        player: Some(who("p2")),
        nigiri_guess: None,
        entropy: 0,
    };
    t.ok(Guest, join, 0);
    assert_eq!(t.g.player(Seat::Guest).map(|p| p.id.as_str()), Some("p2"));
}
