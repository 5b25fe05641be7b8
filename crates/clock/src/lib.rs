//! # weiqi-clock
//!
//! Game clocks for Go as a pure state machine (C2). Time is integer milliseconds passed in
//! by the caller (`now`); nothing here reads a system clock or sleeps. The server asks
//! [`Clock::deadline`] when the player to move will lose on time and sets one timer; the
//! referee calls come from [`Clock::announcements`].
//!
//! Supported: Chinese byo-yomi (N units of 60 s), Japanese byo-yomi (periods of any length),
//! main time plus a per-move limit (局时 + 步时), Canadian overtime, Fischer increment (with
//! an optional cap), absolute time, and no clock. Adjournments pause both clocks (C2, C3);
//! lateness is deducted up front (C4); a bounded lag quota, refilled each move, keeps slow
//! networks from flagging honest players (modelled on Lichess's lag compensation).

use serde::{Deserialize, Serialize};

/// Milliseconds. Absolute times are milliseconds since an epoch chosen by the caller.
pub type Ms = u64;

/// A time control (C2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeControl {
    /// No clock (correspondence).
    None,
    /// Sudden death.
    Absolute { main_ms: Ms },
    /// Increment after every move; the bank never exceeds `cap_ms` when set.
    Fischer {
        main_ms: Ms,
        increment_ms: Ms,
        cap_ms: Option<Ms>,
    },
    /// Main time, then `periods` periods of `period_ms`: a move within a period costs
    /// nothing, each full period used removes one, using up the last loses.
    /// Chinese national byo-yomi is `periods` units of 60 s ([`TimeControl::chinese`]).
    ByoYomi { main_ms: Ms, periods: u32, period_ms: Ms },
    /// Main time, then `stones` moves within every `period_ms`.
    Canadian { main_ms: Ms, stones: u32, period_ms: Ms },
    /// Game time plus a limit per move (局时 + 步时): exceeding either loses.
    GamePlusMove { main_ms: Ms, per_move_ms: Ms },
}

impl TimeControl {
    /// Chinese national style: main time, then `units` byo-yomi units of 60 s.
    pub const fn chinese(main_ms: Ms, units: u32) -> TimeControl {
        TimeControl::ByoYomi {
            main_ms,
            periods: units,
            period_ms: 60_000,
        }
    }

    /// Checks every value against its bound ([`limits`]): a control that cannot be played
    /// (no time at all) or whose values are out of range is refused, naming the value.
    /// Zero periods (byo-yomi) and zero stones (Canadian) are refused alike: sudden death
    /// is [`TimeControl::Absolute`].
    pub fn validate(&self) -> Result<(), ClockError> {
        use limits::*;
        let check = |field: ClockField, value: u64, min: u64, max: u64| {
            if (min..=max).contains(&value) {
                Ok(())
            } else {
                Err(ClockError::OutOfRange { field, value, min, max })
            }
        };
        match *self {
            TimeControl::None => Ok(()),
            TimeControl::Absolute { main_ms } => check(ClockField::MainTime, main_ms, 1, MAX_MAIN_MS),
            TimeControl::Fischer {
                main_ms,
                increment_ms,
                cap_ms,
            } => {
                check(ClockField::MainTime, main_ms, 1, MAX_MAIN_MS)?;
                check(ClockField::Increment, increment_ms, 0, MAX_PERIOD_MS)?;
                match cap_ms {
                    Some(cap) => check(ClockField::Cap, cap, main_ms, MAX_MAIN_MS),
                    None => Ok(()),
                }
            }
            TimeControl::ByoYomi {
                main_ms,
                periods,
                period_ms,
            } => {
                check(ClockField::MainTime, main_ms, 0, MAX_MAIN_MS)?;
                check(ClockField::Periods, periods as u64, 1, MAX_PERIODS as u64)?;
                check(ClockField::PeriodTime, period_ms, MIN_PERIOD_MS, MAX_PERIOD_MS)
            }
            TimeControl::Canadian {
                main_ms,
                stones,
                period_ms,
            } => {
                check(ClockField::MainTime, main_ms, 0, MAX_MAIN_MS)?;
                check(ClockField::Stones, stones as u64, 1, MAX_STONES as u64)?;
                check(ClockField::PeriodTime, period_ms, MIN_PERIOD_MS, MAX_PERIOD_MS)
            }
            TimeControl::GamePlusMove { main_ms, per_move_ms } => {
                check(ClockField::MainTime, main_ms, 1, MAX_MAIN_MS)?;
                check(ClockField::PerMove, per_move_ms, MIN_PERIOD_MS, MAX_PERIOD_MS)
            }
        }
    }
}

/// The bounds of every clock setting. Generous for any real game (correspondence
/// included); they exist so that no value can make a computation or a number overflow.
pub mod limits {
    use super::Ms;
    /// Main time (and a Fischer cap): at most 30 days.
    pub const MAX_MAIN_MS: Ms = 30 * 86_400_000;
    /// A byo-yomi period, a Canadian block, a per-move limit: 1 s to 1 day; a Fischer
    /// increment: at most 1 day.
    pub const MIN_PERIOD_MS: Ms = 1_000;
    pub const MAX_PERIOD_MS: Ms = 86_400_000;
    /// Byo-yomi periods: 1..=100.
    pub const MAX_PERIODS: u32 = 100;
    /// Canadian stones per block: 1..=100.
    pub const MAX_STONES: u32 = 100;
    /// The lag allowance per move: at most 10 s.
    pub const MAX_LAG_MS: Ms = 10_000;
}

/// The value of a time control that a [`ClockError::OutOfRange`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockField {
    MainTime,
    Periods,
    PeriodTime,
    Stones,
    Increment,
    Cap,
    PerMove,
    LagAllowance,
}

/// Lag compensation settings: each move may refund up to `max_per_move_ms` of measured
/// network lag, drawn from a quota that starts at `initial_ms`, gains `gain_ms` per move
/// and never exceeds `max_quota_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LagComp {
    pub initial_ms: Ms,
    pub gain_ms: Ms,
    pub max_quota_ms: Ms,
    pub max_per_move_ms: Ms,
}

impl LagComp {
    /// The allowance a game sets as one number: up to `ms` refunded per move, a quota
    /// of twice that, regaining a tenth of it per move; 0 is no compensation (a player
    /// flags exactly at the deadline, C2).
    pub fn allowance(ms: Ms) -> LagComp {
        if ms == 0 {
            return LagComp::OFF;
        }
        LagComp {
            initial_ms: ms,
            gain_ms: ms / 10,
            max_quota_ms: ms.saturating_mul(2),
            max_per_move_ms: ms,
        }
    }

    /// The part of a client's measured lag that a move can have refunded: at most
    /// `max_per_move_ms` (what a client claims beyond that is never refunded, and not
    /// recorded).
    pub fn refundable(&self, lag_ms: Ms) -> Ms {
        lag_ms.min(self.max_per_move_ms)
    }

    /// At most [`limits::MAX_LAG_MS`] per move (and a quota of twice that).
    pub fn validate(&self) -> Result<(), ClockError> {
        let max = limits::MAX_LAG_MS;
        let over = [
            self.max_per_move_ms,
            self.initial_ms / 2,
            self.max_quota_ms / 2,
            self.gain_ms,
        ]
        .into_iter()
        .find(|&v| v > max);
        match over {
            Some(value) => Err(ClockError::OutOfRange {
                field: ClockField::LagAllowance,
                value,
                min: 0,
                max,
            }),
            None => Ok(()),
        }
    }

    /// No compensation.
    pub const OFF: LagComp = LagComp {
        initial_ms: 0,
        gain_ms: 0,
        max_quota_ms: 0,
        max_per_move_ms: 0,
    };
}

impl Default for LagComp {
    /// Roughly Lichess's: up to 1 s per move, 2 s of quota, 100 ms regained per move.
    fn default() -> LagComp {
        LagComp {
            initial_ms: 1_000,
            gain_ms: 100,
            max_quota_ms: 2_000,
            max_per_move_ms: 1_000,
        }
    }
}

/// Clock errors.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClockError {
    #[error("{field:?} is {value}; it must be in {min}..={max}")]
    OutOfRange {
        field: ClockField,
        value: u64,
        min: u64,
        max: u64,
    },
}

/// One player's clock as it stands (a snapshot when taken while running).
///
/// Serialized without its zero fields (most are zero under any one time control, and every
/// stored event carries two of these); a missing field reads as zero, so the full form
/// reads too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PlayerTime {
    /// Main time left.
    #[serde(skip_serializing_if = "is_zero")]
    pub main_ms: Ms,
    /// Byo-yomi periods left (ByoYomi).
    #[serde(skip_serializing_if = "is_zero")]
    pub periods: u32,
    /// Time left in the current overtime block (Canadian) or per move (GamePlusMove).
    #[serde(skip_serializing_if = "is_zero")]
    pub period_ms: Ms,
    /// Stones still to play in the current block (Canadian).
    #[serde(skip_serializing_if = "is_zero")]
    pub stones: u32,
    /// Lag quota left.
    #[serde(skip_serializing_if = "is_zero")]
    pub lag_quota_ms: Ms,
    /// Whether this clock is running.
    #[serde(skip_serializing_if = "is_false")]
    pub running: bool,
    /// Whether this player has lost on time.
    #[serde(skip_serializing_if = "is_false")]
    pub flagged: bool,
}

fn is_zero<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

fn is_false(v: &bool) -> bool {
    !*v
}

/// A referee's call (C2): seconds used in the current byo-yomi period, or the final count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Announcement {
    /// When it is due.
    pub due: Ms,
    /// Player (0 = Black, 1 = White) whose clock it concerns.
    pub player: usize,
    /// Seconds used in the period at `due` (30, 40, 50, 55, 58, or 51..59 in the last).
    pub seconds: u32,
    /// In the last period, the count 1..9; otherwise `None`.
    pub count: Option<u32>,
    /// Periods left including the current one.
    pub periods_left: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Side {
    main_ms: Ms,
    periods: u32,
    period_ms: Ms,
    stones: u32,
    lag_quota_ms: Ms,
    flagged: bool,
}

/// Both players' clocks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clock {
    control: TimeControl,
    lag: LagComp,
    sides: [Side; 2],
    /// The running side and since when.
    running: Option<(usize, Ms)>,
}

impl Clock {
    pub fn new(control: TimeControl, lag: LagComp) -> Clock {
        let side = match control {
            TimeControl::None => Side {
                main_ms: 0,
                periods: 0,
                period_ms: 0,
                stones: 0,
                lag_quota_ms: 0,
                flagged: false,
            },
            TimeControl::Absolute { main_ms } | TimeControl::Fischer { main_ms, .. } => Side {
                main_ms,
                periods: 0,
                period_ms: 0,
                stones: 0,
                lag_quota_ms: lag.initial_ms,
                flagged: false,
            },
            TimeControl::ByoYomi {
                main_ms,
                periods,
                period_ms,
            } => Side {
                main_ms,
                periods,
                period_ms,
                stones: 0,
                lag_quota_ms: lag.initial_ms,
                flagged: false,
            },
            TimeControl::Canadian {
                main_ms,
                stones,
                period_ms,
            } => Side {
                main_ms,
                periods: 0,
                period_ms,
                stones,
                lag_quota_ms: lag.initial_ms,
                flagged: false,
            },
            TimeControl::GamePlusMove { main_ms, per_move_ms } => Side {
                main_ms,
                periods: 0,
                period_ms: per_move_ms,
                stones: 0,
                lag_quota_ms: lag.initial_ms,
                flagged: false,
            },
        };
        Clock {
            control,
            lag,
            sides: [side; 2],
            running: None,
        }
    }

    pub fn control(&self) -> TimeControl {
        self.control
    }

    /// The side whose clock runs, if any.
    pub fn running(&self) -> Option<usize> {
        self.running.map(|(p, _)| p)
    }

    /// Starts `player`'s clock at `now` (stopping the other's without charging it).
    pub fn start(&mut self, player: usize, now: Ms) {
        self.running = Some((player, now));
    }

    /// Stops the running clock at `now`, charging the time used (an adjournment, C3).
    /// Returns whether the player flagged before stopping.
    pub fn pause(&mut self, now: Ms) -> bool {
        let Some((p, since)) = self.running.take() else {
            return false;
        };
        let flagged = !self.charge(p, now.saturating_sub(since), 0);
        if flagged {
            self.sides[p].flagged = true;
        }
        flagged
    }

    /// Deducts lateness from a player's main time before play (C4).
    pub fn deduct(&mut self, player: usize, ms: Ms) {
        let s = &mut self.sides[player];
        s.main_ms = s.main_ms.saturating_sub(ms);
    }

    /// Time the running player may still use from `since`, lag allowance included:
    /// `None` for no clock.
    fn budget(&self, p: usize) -> Option<Ms> {
        let s = &self.sides[p];
        let lag = s.lag_quota_ms.min(self.lag.max_per_move_ms);
        let t = match self.control {
            TimeControl::None => return None,
            TimeControl::Absolute { .. } | TimeControl::Fischer { .. } => s.main_ms,
            // (Saturating: a game stored by an older version may hold any values.)
            TimeControl::ByoYomi { .. } => s.main_ms.saturating_add((s.periods as Ms).saturating_mul(s.period_ms)),
            TimeControl::Canadian { .. } => s.main_ms.saturating_add(s.period_ms),
            TimeControl::GamePlusMove { .. } => s.main_ms.min(s.period_ms),
        };
        Some(t.saturating_add(lag))
    }

    /// When the running player loses on time (C2): the first millisecond at which they
    /// have flagged. `None` when no clock runs or there is no time limit.
    pub fn deadline(&self) -> Option<Ms> {
        let (p, since) = self.running?;
        Some(since.saturating_add(self.budget(p)?))
    }

    /// Whether the running player has lost on time at `now` (exactly at the deadline).
    pub fn flagged_at(&self, now: Ms) -> Option<usize> {
        let (p, _) = self.running?;
        (self.deadline()? <= now).then_some(p)
    }

    /// Applies `elapsed` ms of thinking (less `lag_ms` of refunded lag) to `p`'s clock.
    /// Returns false if that exhausts the player's time.
    fn charge(&mut self, p: usize, elapsed: Ms, lag_ms: Ms) -> bool {
        let control = self.control;
        let lagc = self.lag;
        let s = &mut self.sides[p];
        let refund = lag_ms.min(s.lag_quota_ms).min(lagc.max_per_move_ms);
        s.lag_quota_ms -= refund;
        let used = elapsed.saturating_sub(refund);
        match control {
            TimeControl::None => true,
            TimeControl::Absolute { .. } | TimeControl::Fischer { .. } => {
                if used >= s.main_ms {
                    s.main_ms = 0;
                    return false;
                }
                s.main_ms -= used;
                true
            }
            TimeControl::ByoYomi { .. } => {
                let from_main = used.min(s.main_ms);
                s.main_ms -= from_main;
                let over = used - from_main;
                if over == 0 {
                    return true;
                }
                // Each full period used removes one; using up the last loses.
                let full = over / s.period_ms;
                if full >= s.periods as Ms {
                    s.periods = 0;
                    return false;
                }
                s.periods -= full as u32;
                true
            }
            TimeControl::Canadian { .. } => {
                let from_main = used.min(s.main_ms);
                s.main_ms -= from_main;
                let over = used - from_main;
                if over == 0 {
                    return true;
                }
                if over >= s.period_ms {
                    s.period_ms = 0;
                    return false;
                }
                s.period_ms -= over;
                true
            }
            TimeControl::GamePlusMove { .. } => {
                if used >= s.main_ms || used >= s.period_ms {
                    s.main_ms = s.main_ms.saturating_sub(used);
                    return false;
                }
                s.main_ms -= used;
                true
            }
        }
    }

    /// The player to move finished a move at `now` (`lag_ms`: network lag the client
    /// measured, refunded within the quota). Charges the move, applies increments and
    /// per-move resets, and starts the opponent's clock. Returns `Err(player)` if the
    /// mover had already run out of time; the clocks are then stopped.
    pub fn press(&mut self, now: Ms, lag_ms: Ms) -> Result<(), usize> {
        let Some((p, since)) = self.running else { return Ok(()) };
        if self.flagged_at(now).is_some() {
            self.flag(p);
            return Err(p);
        }
        let ok = self.charge(p, now.saturating_sub(since), lag_ms);
        if !ok {
            self.flag(p);
            return Err(p);
        }
        let lagc = self.lag;
        let control = self.control;
        let s = &mut self.sides[p];
        s.lag_quota_ms = (s.lag_quota_ms.saturating_add(lagc.gain_ms)).min(lagc.max_quota_ms.max(lagc.initial_ms));
        match control {
            TimeControl::Fischer {
                increment_ms, cap_ms, ..
            } => {
                s.main_ms = s.main_ms.saturating_add(increment_ms);
                if let Some(cap) = cap_ms {
                    s.main_ms = s.main_ms.min(cap);
                }
            }
            TimeControl::Canadian { stones, period_ms, .. } if s.main_ms == 0 => {
                s.stones = s.stones.saturating_sub(1);
                if s.stones == 0 {
                    s.stones = stones;
                    s.period_ms = period_ms;
                }
            }
            _ => {}
        }
        self.running = Some((1 - p, now));
        Ok(())
    }

    /// Marks `p` as flagged and stops the clocks at `now`.
    pub fn flag(&mut self, p: usize) {
        let s = &mut self.sides[p];
        s.flagged = true;
        s.main_ms = 0;
        if matches!(self.control, TimeControl::ByoYomi { .. }) {
            s.periods = 0;
        }
        if matches!(
            self.control,
            TimeControl::Canadian { .. } | TimeControl::GamePlusMove { .. }
        ) {
            s.period_ms = 0;
        }
        self.running = None;
    }

    /// Gives the running player `ms` back, as if their clock had started `ms` later: time
    /// the service was down is not charged.
    pub fn credit(&mut self, ms: Ms) {
        if let Some((_, since)) = &mut self.running {
            *since = since.saturating_add(ms);
        }
    }

    /// Stops both clocks without charging (the game is over).
    pub fn stop(&mut self) {
        self.running = None;
    }

    /// Both players' clocks as they would read at `now` (the running one charged so far,
    /// without changing anything).
    pub fn snapshot(&self, now: Ms) -> [PlayerTime; 2] {
        let mut view = self.clone();
        if let Some((p, since)) = view.running {
            let elapsed = now.saturating_sub(since);
            // Show the time left without any lag refund.
            let saved = view.sides[p].lag_quota_ms;
            let _ = view.charge(p, elapsed, 0);
            view.sides[p].lag_quota_ms = saved;
        }
        let mk = |i: usize| {
            let s = view.sides[i];
            PlayerTime {
                main_ms: s.main_ms,
                periods: s.periods,
                period_ms: s.period_ms,
                stones: s.stones,
                lag_quota_ms: s.lag_quota_ms,
                running: self.running.map(|(p, _)| p) == Some(i),
                flagged: s.flagged,
            }
        };
        [mk(0), mk(1)]
    }

    /// The referee's next byo-yomi call for the running player's current move strictly
    /// after `after` (C2): 30, 40, 50, 55 and 58 s into a 60 s period (the same distances
    /// from its end for other lengths), and in the last period 30, 40, 50 s and then the
    /// count 1..9. O(1) whatever the settings: the period is found by division, never by
    /// walking the periods (10^8 periods once cost a call minutes).
    pub fn next_announcement(&self, after: Ms) -> Option<Announcement> {
        let (p, since) = self.running?;
        let TimeControl::ByoYomi { .. } = self.control else {
            return None;
        };
        let s = &self.sides[p];
        let period = s.period_ms;
        if period == 0 || s.periods == 0 {
            return None;
        }
        let start = since.saturating_add(s.main_ms);
        // The period `after` falls in (0 before byo-yomi starts), then the next one.
        let k = after.checked_sub(start).map_or(0, |d| d / period);
        for k in [k, k.saturating_add(1)] {
            if k >= s.periods as Ms {
                return None;
            }
            let left = s.periods - k as u32;
            let base = start.saturating_add(k.saturating_mul(period));
            let found = period_calls(period, left == 1)
                .map(|(offset, count)| (base.saturating_add(offset), offset, count))
                .find(|&(due, _, _)| due > after);
            if let Some((due, offset, count)) = found {
                return Some(Announcement {
                    due,
                    player: p,
                    seconds: (offset / 1000) as u32,
                    count,
                    periods_left: left,
                });
            }
        }
        None
    }

    /// The calls due in `(after, now]` that still matter: those of the period `now` is in
    /// and of the one before it, in order. A tick that comes late (after an outage, or on
    /// another replica) does not recite periods long gone: at most 28 calls, whatever the
    /// settings.
    pub fn due_announcements(&self, after: Ms, now: Ms) -> Vec<Announcement> {
        let mut out = Vec::new();
        let Some(first) = self.next_announcement(after) else {
            return out;
        };
        let mut from = after;
        if let (Some((p, since)), TimeControl::ByoYomi { .. }) = (self.running, self.control) {
            let s = &self.sides[p];
            let start = since.saturating_add(s.main_ms);
            if s.period_ms > 0 && now > start {
                // The start of the period before `now`'s: older calls are skipped.
                let k = ((now - start) / s.period_ms).saturating_sub(1);
                from = from.max(start.saturating_add(k.saturating_mul(s.period_ms)).saturating_sub(1));
            }
        }
        let mut next = if from == after {
            Some(first)
        } else {
            self.next_announcement(from)
        };
        while let Some(a) = next.filter(|a| a.due <= now) {
            out.push(a);
            next = self.next_announcement(a.due);
        }
        out
    }
}

/// The calls within one byo-yomi period of `period` ms, as (offset from its start, count),
/// in order: at most 5, or 12 in the last period.
fn period_calls(period: Ms, last: bool) -> impl Iterator<Item = (Ms, Option<u32>)> {
    let before_end: &[Ms] = if last {
        &[30_000, 20_000, 10_000]
    } else {
        &[30_000, 20_000, 10_000, 5_000, 2_000]
    };
    let spoken = before_end
        .iter()
        .filter(move |&&r| r < period)
        .map(move |&r| (period - r, None));
    let counted = (1..=9u32)
        .filter(move |&c| last && (c as Ms) * 1000 + 10_000 <= period)
        .map(move |c| (period - 10_000 + c as Ms * 1000, Some(c)));
    spoken.chain(counted)
}

#[cfg(test)]
mod tests;
