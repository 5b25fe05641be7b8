//! Clock tests with a fake time source: every time is an explicit millisecond (C2-C4).

use super::*;
use crate::announce::period_calls;
use weiqi_rules::Color::{Black, White};

const S: Ms = 1000;
const MIN: Ms = 60 * S;

/// Every call of the running player's current move, by walking all the periods: the
/// oracle that [`Clock::next_announcement`]'s closed form must agree with.
fn all_announcements(c: &Clock) -> Vec<Announcement> {
    let Some((color, since)) = c.running else {
        return Vec::new();
    };
    let TimeControl::ByoYomi { .. } = c.control else {
        return Vec::new();
    };
    let s = &c.sides[color.index()];
    let mut out = Vec::new();
    for k in 0..s.periods {
        let start = since + s.main_ms + k as Ms * s.period_ms;
        let left = s.periods - k;
        for (offset, count) in period_calls(s.period_ms, left == 1) {
            out.push(Announcement {
                due: start + offset,
                color,
                seconds: (offset / 1000) as u32,
                count,
                periods_left: left,
            });
        }
    }
    out
}

fn clock(tc: TimeControl) -> Clock {
    let mut c = Clock::new(tc, LagComp::OFF);
    c.start(Black, 0);
    c
}

/// C2: the seed's example: 5 units of 60 s; a 59 s move keeps 5, a 61 s move leaves 4.
#[test]
fn chinese_byo_yomi_units_c2() {
    let mut c = clock(TimeControl::chinese(0, 5));
    c.press(Black, 59 * S, 0).unwrap();
    assert_eq!(c.snapshot(59 * S)[0].periods, 5);
    c.press(White, 59 * S + 1, 0).unwrap(); // White moves at once
    c.press(Black, 59 * S + 1 + 61 * S, 0).unwrap();
    assert_eq!(c.snapshot(0)[0].periods, 4);
    // Exactly one full unit also uses it up.
    let mut c = clock(TimeControl::chinese(0, 5));
    c.press(Black, 60 * S, 0).unwrap();
    assert_eq!(c.snapshot(60 * S)[0].periods, 4);
}

/// C2: flag exactly at the deadline and not a millisecond before.
#[test]
fn flag_exactly_at_deadline_c2() {
    let cases = [
        (TimeControl::Absolute { main_ms: 5 * MIN }, 5 * MIN),
        (TimeControl::chinese(10 * MIN, 3), 13 * MIN),
        (
            TimeControl::ByoYomi {
                main_ms: 60 * MIN,
                periods: 1,
                period_ms: 30 * S,
            },
            60 * MIN + 30 * S,
        ),
        (
            TimeControl::Canadian {
                main_ms: MIN,
                stones: 10,
                period_ms: 5 * MIN,
            },
            6 * MIN,
        ),
        (
            TimeControl::Fischer {
                main_ms: 2 * MIN,
                increment_ms: 10 * S,
                cap_ms: None,
            },
            2 * MIN,
        ),
        (
            TimeControl::GamePlusMove {
                main_ms: 60 * MIN,
                per_move_ms: MIN,
            },
            MIN,
        ),
    ];
    for (tc, deadline) in cases {
        let c = clock(tc);
        assert_eq!(c.deadline(), Some(deadline), "{tc:?}");
        assert_eq!(c.flagged_at(deadline - 1), None, "{tc:?}");
        assert_eq!(c.flagged_at(deadline), Some(Black), "{tc:?}");
        // A move 1 ms before the deadline is in time; at the deadline it is not.
        let mut early = c.clone();
        assert!(early.press(Black, deadline - 1, 0).is_ok(), "{tc:?}");
        let mut late = c.clone();
        assert_eq!(
            late.press(Black, deadline, 0),
            Err(ClockError::Flagged { color: Black }),
            "{tc:?}"
        );
        assert!(late.snapshot(deadline)[0].flagged);
        assert_eq!(late.deadline(), None);
    }
    assert_eq!(clock(TimeControl::None).deadline(), None);
}

/// C2: the last unit used up loses; main time flows into byo-yomi within one move.
#[test]
fn main_time_flows_into_byo_yomi_c2() {
    let mut c = clock(TimeControl::chinese(MIN, 2));
    // 1 min main + 70 s: one full unit used.
    c.press(Black, MIN + 70 * S, 0).unwrap();
    let t = c.snapshot(MIN + 70 * S)[0];
    assert_eq!((t.main_ms, t.periods), (0, 1));
    c.press(White, MIN + 70 * S, 0).unwrap();
    // In the last unit, 59.999 s is fine, 60 s is not.
    let start = MIN + 70 * S;
    assert_eq!(c.deadline(), Some(start + 60 * S));
}

/// C2: Fischer adds the increment after the move, capped.
#[test]
fn fischer_increment_and_cap_c2() {
    let mut c = clock(TimeControl::Fischer {
        main_ms: MIN,
        increment_ms: 20 * S,
        cap_ms: Some(70 * S),
    });
    c.press(Black, 5 * S, 0).unwrap();
    assert_eq!(c.snapshot(5 * S)[0].main_ms, 70 * S); // 55 + 20 = 75, capped at 70
}

/// C2: Canadian: after main time, N stones per block; the block resets after N stones.
#[test]
fn canadian_blocks_c2() {
    let mut c = clock(TimeControl::Canadian {
        main_ms: 0,
        stones: 2,
        period_ms: 60 * S,
    });
    let mut t = 0;
    for _ in 0..2 {
        t += 25 * S;
        c.press(Black, t, 0).unwrap();
        c.press(White, t, 0).unwrap(); // instantly
    }
    // Two stones in 50 s: the block reset to 60 s and 2 stones.
    let b = c.snapshot(t)[0];
    assert_eq!((b.period_ms, b.stones), (60 * S, 2));
    t += 25 * S;
    c.press(Black, t, 0).unwrap();
    assert_eq!(c.snapshot(t)[0].period_ms, 35 * S);
}

/// C2: game time + per-move limit: a slow move loses even with game time left.
#[test]
fn per_move_limit_c2() {
    let mut c = clock(TimeControl::GamePlusMove {
        main_ms: 10 * MIN,
        per_move_ms: 30 * S,
    });
    assert_eq!(c.press(Black, 30 * S, 0), Err(ClockError::Flagged { color: Black }));
}

/// C2, C3: an adjournment pauses both clocks; time before it is charged.
#[test]
fn pause_and_resume_c3() {
    let mut c = clock(TimeControl::Absolute { main_ms: 10 * MIN });
    assert_eq!(c.pause(2 * MIN), Ok(()));
    assert_eq!(c.deadline(), None);
    // A day later, resume: 8 minutes left.
    c.start(Black, 24 * 60 * MIN);
    assert_eq!(c.deadline(), Some(24 * 60 * MIN + 8 * MIN));
}

/// C2: a press names the mover; the clock refuses a press by the player not on move, and
/// one before any clock runs, without charging anything.
#[test]
fn press_by_the_wrong_colour_is_refused() {
    let mut c = Clock::new(TimeControl::Absolute { main_ms: MIN }, LagComp::OFF);
    assert_eq!(c.press(Black, S, 0), Err(ClockError::NotRunning { color: Black }));
    c.start(Black, 0);
    let before = c.clone();
    assert_eq!(c.press(White, 10 * S, 0), Err(ClockError::NotRunning { color: White }));
    assert_eq!(c, before, "a refused press changes nothing");
    assert_eq!(c.press(Black, 10 * S, 0), Ok(()));
    assert_eq!(c.running(), Some(White));
}

/// C2: the flag names whoever ran out of time, White as well as Black, and stops the clocks.
#[test]
fn flagged_error_names_the_mover() {
    let mut c = clock(TimeControl::Absolute { main_ms: MIN });
    c.press(Black, S, 0).unwrap();
    assert_eq!(c.flagged_at(S + MIN), Some(White));
    let err = c.press(White, S + MIN, 0).unwrap_err();
    assert_eq!(err, ClockError::Flagged { color: White });
    assert_eq!(err.to_string(), "White has run out of time");
    assert_eq!(c.running(), None);
    assert!(c.snapshot(S + MIN)[White.index()].flagged);
    assert!(!c.snapshot(S + MIN)[Black.index()].flagged);
}

/// C3: sealing after the deadline is a loss on time, named by colour; pausing a clock
/// that does not run is no error.
#[test]
fn pause_after_the_deadline_flags_c3() {
    let mut c = clock(TimeControl::Absolute { main_ms: MIN });
    assert_eq!(c.pause(MIN), Err(ClockError::Flagged { color: Black }));
    assert!(c.snapshot(MIN)[Black.index()].flagged);
    assert_eq!(c.running(), None);
    assert_eq!(c.pause(2 * MIN), Ok(()));
}

/// A reading by colour is the snapshot's entry for that colour.
#[test]
fn reading_by_colour_matches_the_snapshot() {
    let mut c = clock(TimeControl::chinese(MIN, 3));
    c.press(Black, 20 * S, 0).unwrap();
    for now in [20 * S, 90 * S, 200 * S] {
        let both = c.snapshot(now);
        assert_eq!(c.reading(Black, now), both[0]);
        assert_eq!(c.reading(White, now), both[1]);
    }
}

/// C4: lateness is deducted from the late player's main time.
#[test]
fn lateness_deducted_c4() {
    let mut c = Clock::new(TimeControl::Absolute { main_ms: 30 * MIN }, LagComp::OFF);
    c.deduct(White, 5 * MIN);
    assert_eq!(c.snapshot(0)[1].main_ms, 25 * MIN);
}

/// Lag compensation: a refund within the quota, which refills per move but is bounded.
#[test]
fn lag_quota() {
    let lag = LagComp {
        initial_ms: 500,
        gain_ms: 100,
        max_quota_ms: 1000,
        max_per_move_ms: 400,
    };
    let mut c = Clock::new(TimeControl::Absolute { main_ms: MIN }, lag);
    c.start(Black, 0);
    // The deadline allows the per-move maximum on top of the time left.
    assert_eq!(c.deadline(), Some(MIN + 400));
    c.press(Black, 10 * S, 1_000).unwrap(); // claims 1 s of lag: only 400 ms refunded
    let b = c.snapshot(10 * S)[0];
    assert_eq!(b.main_ms, MIN - 10 * S + 400);
    assert_eq!(b.lag_quota_ms, 500 - 400 + 100);
    // The quota never exceeds its maximum.
    for k in 0..40 {
        let mover = c.running().unwrap();
        c.press(mover, 10 * S + k, 0).unwrap();
    }
    assert!(c.snapshot(0)[0].lag_quota_ms <= 1000);
}

/// C2: the referee's calls, 30/40/50/55/58 s, and 30/40/50 then 1..9 in the last unit.
#[test]
fn announcements_c2() {
    let c = clock(TimeControl::chinese(0, 2));
    let a = all_announcements(&c);
    let first: Vec<u32> = a.iter().filter(|x| x.periods_left == 2).map(|x| x.seconds).collect();
    assert_eq!(first, vec![30, 40, 50, 55, 58]);
    let last: Vec<(u32, Option<u32>)> = a
        .iter()
        .filter(|x| x.periods_left == 1)
        .map(|x| (x.seconds, x.count))
        .collect();
    assert_eq!(last[..3], [(30, None), (40, None), (50, None)]);
    assert_eq!(
        last[3..].iter().map(|x| x.1.unwrap()).collect::<Vec<_>>(),
        (1..=9).collect::<Vec<_>>()
    );
    assert_eq!(a.last().unwrap().due, 60 * S + 59 * S);
    // Sorted by due time.
    assert!(a.windows(2).all(|w| w[0].due < w[1].due));
    assert!(all_announcements(&clock(TimeControl::Absolute { main_ms: MIN })).is_empty());
    assert!(
        clock(TimeControl::Absolute { main_ms: MIN })
            .next_announcement(0)
            .is_none()
    );
}

#[test]
fn validation() {
    assert!(
        TimeControl::ByoYomi {
            main_ms: 0,
            periods: 0,
            period_ms: 0
        }
        .validate()
        .is_err()
    );
    assert!(TimeControl::chinese(0, 5).validate().is_ok());
    // Zero periods and zero stones are refused alike (sudden death is Absolute).
    let zero_stones = TimeControl::Canadian {
        main_ms: MIN,
        stones: 0,
        period_ms: MIN,
    };
    let zero_periods = TimeControl::ByoYomi {
        main_ms: MIN,
        periods: 0,
        period_ms: MIN,
    };
    for (tc, field) in [(zero_stones, ClockField::Stones), (zero_periods, ClockField::Periods)] {
        assert!(
            matches!(tc.validate(), Err(SettingError::OutOfRange { field: f, .. }) if f == field),
            "{tc:?}"
        );
    }
    // Every value has an upper bound, named when crossed.
    let over = [
        (TimeControl::chinese(0, limits::MAX_PERIODS + 1), ClockField::Periods),
        (
            TimeControl::ByoYomi {
                main_ms: 0,
                periods: 5,
                period_ms: limits::MAX_PERIOD_MS + 1,
            },
            ClockField::PeriodTime,
        ),
        (
            TimeControl::Absolute {
                main_ms: limits::MAX_MAIN_MS + 1,
            },
            ClockField::MainTime,
        ),
        (
            TimeControl::Canadian {
                main_ms: 0,
                stones: limits::MAX_STONES + 1,
                period_ms: MIN,
            },
            ClockField::Stones,
        ),
        (
            TimeControl::Fischer {
                main_ms: MIN,
                increment_ms: limits::MAX_PERIOD_MS + 1,
                cap_ms: None,
            },
            ClockField::Increment,
        ),
        (
            TimeControl::Fischer {
                main_ms: MIN,
                increment_ms: S,
                cap_ms: Some(limits::MAX_MAIN_MS + 1),
            },
            ClockField::Cap,
        ),
        (
            TimeControl::GamePlusMove {
                main_ms: MIN,
                per_move_ms: limits::MAX_PERIOD_MS + 1,
            },
            ClockField::PerMove,
        ),
    ];
    for (tc, field) in over {
        assert!(
            matches!(tc.validate(), Err(SettingError::OutOfRange { field: f, .. }) if f == field),
            "{tc:?}"
        );
    }
    assert!(LagComp::allowance(limits::MAX_LAG_MS).validate().is_ok());
    assert!(LagComp::allowance(limits::MAX_LAG_MS + 1).validate().is_err());
    assert_eq!(LagComp::allowance(0), LagComp::OFF);
    assert!(
        TimeControl::Fischer {
            main_ms: 10,
            increment_ms: 1,
            cap_ms: Some(5)
        }
        .validate()
        .is_err()
    );
}

mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The closed forms agree with walking every period: the next call after any
        /// time, and the calls a late tick recites (those of the last two periods).
        #[test]
        fn next_announcement_matches_the_walk(main in 0u64..100_000, periods in 1u32..6, period in 1_000u64..70_000, after in 0u64..500_000, late in 0u64..200_000) {
            let c = clock(TimeControl::ByoYomi { main_ms: main, periods, period_ms: period });
            let all = all_announcements(&c);
            prop_assert_eq!(c.next_announcement(after), all.iter().find(|a| a.due > after).copied());
            let now = after + late;
            let due = c.due_announcements(after, now);
            let window = now.saturating_sub(main).saturating_sub(period) / period * period + main;
            let expected: Vec<_> = all
                .iter()
                .filter(|a| a.due > after && a.due <= now && (now < main + period || a.due >= window))
                .copied()
                .collect();
            prop_assert_eq!(due, expected);
        }

        /// Whatever the values (a game stored by an older version may hold any), every
        /// clock computation answers in constant work: with 4 billion periods of up to
        /// u64::MAX ms, walking the periods would never finish. The answers are checked
        /// against the closed forms' own arithmetic.
        #[test]
        fn extreme_values_cost_nothing(periods in (u32::MAX - 10)..=u32::MAX, period in 1_000u64..=u64::MAX / 2, k in 0u64..1_000_000_000, main in 0u64..=u64::MAX / 4) {
            let c = clock(TimeControl::ByoYomi { main_ms: main, periods, period_ms: period });
            prop_assert_eq!(c.deadline(), Some(main.saturating_add((periods as Ms).saturating_mul(period))));
            let start = main.saturating_add(k.saturating_mul(period));
            let next = c.next_announcement(start);
            if let Some(a) = next {
                prop_assert!(a.due > start);
                prop_assert!(a.periods_left <= periods);
            }
            prop_assert!(c.due_announcements(0, u64::MAX).len() <= 28);
            let mut c2 = c.clone();
            let _ = c2.press(Black, start, 0);
            let _ = c2.snapshot(u64::MAX);
        }

        /// Whatever the moves, a player flags exactly when a move reaches the deadline.
        #[test]
        fn deadline_is_the_flag_time(main in 0u64..100_000, periods in 1u32..5, period in 1u64..20_000, moves in proptest::collection::vec(0u64..50_000, 1..40)) {
            let mut c = clock(TimeControl::ByoYomi { main_ms: main, periods, period_ms: period });
            let mut now = 0;
            for m in moves {
                let d = c.deadline().unwrap();
                let t = now + m;
                let mover = c.running().unwrap();
                let r = c.press(mover, t, 0);
                prop_assert_eq!(r.is_err(), t >= d);
                if r.is_err() { break; }
                now = t;
            }
        }
    }
}
