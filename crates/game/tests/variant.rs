//! The variant of seed 002 (`../shared/seeds/002_*`; issue 18): free seat stones (开局阶段的
//! 自由座子) and an agreed komi by sealed bids (预判阶段的协定胜负).

mod harness;

use Actor::{Guest, Host};
use harness::*;
use weiqi_game::*;
use weiqi_rules::{Color, Illegal};

fn variant(no_first_line: bool, half_point_bids: bool) -> Settings {
    let mut s = casual(9);
    s.variant = Variant::FreeSeats {
        no_first_line,
        half_point_bids,
    };
    s
}

fn stone(t: &mut T, by: Actor, gtp: &str, now: Ms) -> Result<Vec<Event>, Rejection> {
    t.run(by, Command::PlaceSeatStone { point: p(gtp, 9) }, now)
}

/// Joined and the four seat stones placed: Black C3 and G7 (the host), White G3 and C7.
fn seated(no_first_line: bool, half_point_bids: bool) -> T {
    let mut t = T::new(variant(no_first_line, half_point_bids));
    join(&mut t);
    for (by, at) in [(Host, "C3"), (Guest, "G3"), (Host, "G7"), (Guest, "C7")] {
        stone(&mut t, by, at, S).unwrap();
    }
    t
}

fn halves(komi: f64) -> i64 {
    (komi * 2.0) as i64
}

fn commit(t: &mut T, by: Actor, komi: f64, nonce: &str, now: Ms) {
    t.ok(
        by,
        Command::CommitBid {
            commitment: bid_commitment(halves(komi), nonce),
        },
        now,
    );
}

fn reveal(t: &mut T, by: Actor, komi: f64, nonce: &str, now: Ms) -> Result<Vec<Event>, Rejection> {
    t.run(
        by,
        Command::RevealBid {
            komi,
            nonce: nonce.into(),
        },
        now,
    )
}

/// Seat stones: Black, White, Black, White, the host placing Black's and the guest
/// White's; on any empty point, off the first line when the game says so; setup, not
/// moves.
#[test]
fn seat_stones_are_placed_in_turn_on_empty_points() {
    let mut t = T::new(variant(true, true));
    join(&mut t);
    assert_eq!(t.g.phase(), Phase::SeatStones);
    assert_eq!(
        stone(&mut t, Guest, "E5", S),
        Err(Rejection::NotYourTurn),
        "Black's first"
    );
    assert_eq!(
        stone(&mut t, Host, "A1", S),
        Err(Rejection::FirstLine(p("A1", 9))),
        "no first line in this game"
    );
    assert_eq!(stone(&mut t, Host, "J5", S), Err(Rejection::FirstLine(p("J5", 9))));
    stone(&mut t, Host, "E5", S).unwrap();
    assert_eq!(
        stone(&mut t, Host, "D4", S),
        Err(Rejection::NotYourTurn),
        "White's turn"
    );
    assert_eq!(
        stone(&mut t, Guest, "E5", S),
        Err(Rejection::Illegal(Illegal::Occupied))
    );
    stone(&mut t, Guest, "D4", S).unwrap();
    stone(&mut t, Host, "F6", S).unwrap();
    assert_eq!(
        t.err(
            Host,
            Command::Play {
                point: p("B2", 9),
                lag_ms: 0
            },
            S
        ),
        Rejection::WrongPhase(Phase::SeatStones)
    );
    stone(&mut t, Guest, "D6", S).unwrap();
    assert_eq!(t.g.phase(), Phase::Bidding);
    let state = t.g.state().unwrap();
    assert_eq!(state.moves().len(), 0, "setup, not moves");
    assert_eq!(state.to_move(), Color::Black);
    assert_eq!(state.board().get(p("D6", 9)), Some(Color::White));

    // Without the option, the first line is open.
    let mut t = T::new(variant(false, true));
    join(&mut t);
    stone(&mut t, Host, "A1", S).unwrap();
}

/// The bid protocol: sealed, revealed once both are sealed, checked against the seal;
/// the higher bid plays Black and gives that komi.
#[test]
fn the_higher_bid_plays_black_and_gives_its_komi() {
    let mut t = seated(false, true);
    // A seal the guest could never reveal (a whole-number bid under half-point bids) is
    // replaced while the host has not sealed: the guest is not bound to forfeit.
    commit(&mut t, Guest, 6.0, "guest-nonce", 2 * S);
    commit(&mut t, Guest, 5.5, "guest-nonce", 2 * S);
    assert_eq!(
        reveal(&mut t, Guest, 5.5, "guest-nonce", 2 * S),
        Err(Rejection::BidsNotSealed)
    );
    assert!(matches!(
        reveal(&mut t, Host, 7.5, "host-nonce", 2 * S),
        Err(Rejection::NothingPending(_))
    ));
    assert!(matches!(
        t.err(
            Host,
            Command::CommitBid {
                commitment: "not a digest".into()
            },
            2 * S
        ),
        Rejection::InvalidArgument(_)
    ));
    commit(&mut t, Host, 7.5, "host-nonce", 3 * S);
    // Both sealed: neither may change.
    for by in [Host, Guest] {
        assert!(matches!(
            t.err(
                by,
                Command::CommitBid {
                    commitment: bid_commitment(13, "again")
                },
                3 * S
            ),
            Rejection::NotPermitted(_)
        ));
    }
    // A reveal that does not match the seal, and bids that are not bids.
    assert_eq!(
        reveal(&mut t, Host, 6.5, "host-nonce", 3 * S),
        Err(Rejection::CommitmentMismatch)
    );
    assert_eq!(
        reveal(&mut t, Host, 7.5, "other-nonce", 3 * S),
        Err(Rejection::CommitmentMismatch)
    );
    for bad in [f64::NAN, f64::INFINITY, 1000.5, 7.25, 7.0] {
        assert!(
            matches!(
                reveal(&mut t, Host, bad, "host-nonce", 3 * S),
                Err(Rejection::InvalidArgument(_))
            ),
            "{bad}"
        );
    }
    reveal(&mut t, Guest, 5.5, "guest-nonce", 4 * S).unwrap();
    let ev = reveal(&mut t, Host, 7.5, "host-nonce", 4 * S).unwrap();
    assert_eq!(
        T::kinds(&ev),
        ["bid_revealed", "komi_agreed", "colors_assigned", "play_started"]
    );
    assert!(matches!(
        ev[1].kind,
        EventKind::KomiAgreed {
            komi: 7.5,
            black: Seat::Host,
            by_lot: false
        }
    ));
    assert_eq!(t.g.phase(), Phase::Playing);
    assert_eq!(t.g.settings().unwrap().rules.komi, 7.5);
    assert_eq!(t.g.color_of(Seat::Host), Some(Color::Black));
    t.play(Host, "E5", 5 * S);

    // The record: seat stones as setup, the agreed komi, the bids in the root comment.
    let sgf = t.g.to_sgf().unwrap();
    assert!(sgf.contains("KM[7.5]"), "{sgf}");
    assert!(sgf.contains("AB[gc][cg]") && sgf.contains("AW[cc][gg]"), "{sgf}");
    assert!(sgf.contains("Bids: host 7.5, guest 5.5"), "{sgf}");
}

/// Equal bids go by lot, drawn from both nonces (the author's weak spot, settled like
/// nigiri).
#[test]
fn equal_bids_go_by_lot() {
    let mut black_seats = Vec::new();
    for k in 0..16 {
        let mut t = seated(false, true);
        let guest_nonce = format!("guest-{k}");
        commit(&mut t, Host, 6.5, "host", 2 * S);
        commit(&mut t, Guest, 6.5, &guest_nonce, 2 * S);
        reveal(&mut t, Host, 6.5, "host", 3 * S).unwrap();
        let ev = reveal(&mut t, Guest, 6.5, &guest_nonce, 3 * S).unwrap();
        let EventKind::KomiAgreed { komi, black, by_lot } = ev[1].kind else {
            panic!()
        };
        assert_eq!((komi, by_lot), (6.5, true));
        assert_eq!(black, variant::lot("host", &guest_nonce));
        black_seats.push(black);
    }
    assert!(black_seats.contains(&Seat::Host) && black_seats.contains(&Seat::Guest));
}

/// Withholding: a player who holds up a step past the game's timeout forfeits, as a
/// withheld nigiri does; both: a double forfeit.
#[test]
fn withholding_a_step_forfeits() {
    let timeout = casual(9).nigiri_timeout_ms;
    // The reveal withheld by the host.
    let mut t = seated(false, true);
    commit(&mut t, Host, 7.5, "h", 2 * S);
    commit(&mut t, Guest, 6.5, "g", 3 * S);
    reveal(&mut t, Guest, 6.5, "g", 4 * S).unwrap();
    assert_eq!(t.g.next_wakeup(), Some(3 * S + timeout));
    t.ok(Actor::Server, Command::Tick, 3 * S + timeout);
    let r = t.g.result().unwrap();
    assert_eq!(
        (r.reason, t.g.color_of(Seat::Guest), r.winner),
        (EndReason::Forfeit, Some(Color::Black), Some(Color::Black))
    );
    // Neither sealed a bid.
    let mut t = seated(false, true);
    t.ok(Actor::Server, Command::Tick, S + timeout);
    assert_eq!(t.g.result().unwrap().reason, EndReason::DoubleForfeit);
    // A seat stone withheld by the guest.
    let mut t = T::new(variant(false, false));
    join(&mut t);
    stone(&mut t, Host, "E5", 10 * S).unwrap();
    t.ok(Actor::Server, Command::Tick, 10 * S + timeout);
    let r = t.g.result().unwrap();
    assert_eq!(
        (r.reason, t.g.seat_of(Color::Black)),
        (EndReason::Forfeit, Some(Seat::Host))
    );
}

/// Scoring uses the agreed komi; with half-point bids no draw is possible, with whole
/// points one can happen.
#[test]
fn scoring_uses_the_agreed_komi_and_half_points_rule_out_draws() {
    let finish = |t: &mut T| {
        for (by, at) in [(Host, 10), (Guest, 11)] {
            t.ok(by, Command::Pass { lag_ms: 0 }, at * S);
        }
        t.ok(Host, Command::AcceptScore, 12 * S);
        t.ok(Guest, Command::AcceptScore, 12 * S);
        t.g.result().unwrap().clone()
    };
    // Two stones each and no territory: White wins by the komi.
    let mut t = seated(false, true);
    commit(&mut t, Host, 4.5, "h", 2 * S);
    commit(&mut t, Guest, 3.5, "g", 2 * S);
    reveal(&mut t, Host, 4.5, "h", 3 * S).unwrap();
    reveal(&mut t, Guest, 3.5, "g", 3 * S).unwrap();
    let r = finish(&mut t);
    assert_eq!(
        (r.winner, r.score.unwrap().white_minus_black),
        (Some(Color::White), 4.5)
    );
    // Whole-point bids (allowed when a draw may happen): komi 0 on an even board draws.
    let mut t = seated(false, false);
    commit(&mut t, Host, 0.0, "h", 2 * S);
    commit(&mut t, Guest, -1.0, "g", 2 * S);
    reveal(&mut t, Host, 0.0, "h", 3 * S).unwrap();
    reveal(&mut t, Guest, -1.0, "g", 3 * S).unwrap();
    let r = finish(&mut t);
    assert_eq!((r.winner, r.sgf().as_str()), (None, "0"));
    // The same bid is refused where the game must produce a winner.
    let mut t = seated(false, true);
    commit(&mut t, Host, 0.0, "h", 2 * S);
    commit(&mut t, Guest, 1.5, "g", 2 * S);
    assert!(matches!(
        reveal(&mut t, Host, 0.0, "h", 3 * S),
        Err(Rejection::InvalidArgument(_))
    ));
}

/// The variant rules out handicap, a scheduled start and nigiri: a typed refusal naming
/// the setting.
#[test]
fn the_variant_refuses_settings_it_replaces() {
    for change in [
        |s: &mut Settings| s.handicap = 2,
        |s: &mut Settings| s.scheduled_start = Some(1),
        |s: &mut Settings| s.colors = ColorChoice::Nigiri,
    ] {
        let mut s = variant(false, true);
        change(&mut s);
        let r = Game::new().decide(
            Host,
            &Command::Create {
                host: None,
                settings: s,
                nigiri_commitment: Some("0".repeat(64)),
            },
            0,
        );
        assert!(
            matches!(
                r,
                Err(Rejection::BadSetting {
                    field: SettingField::Variant,
                    ..
                })
            ),
            "{r:?}"
        );
    }
}
