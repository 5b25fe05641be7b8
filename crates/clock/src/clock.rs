//! Both players' clocks as a state machine: start, press, pause, flag, credit, stop.

use serde::{Deserialize, Serialize};
use weiqi_rules::Color;

use crate::error::ClockError;
use crate::{LagComp, Ms, PlayerTime, TimeControl};

/// One player's clock at rest: what is left of each kind of time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Side {
    pub(crate) main_ms: Ms,
    pub(crate) periods: u32,
    pub(crate) period_ms: Ms,
    pub(crate) stones: u32,
    pub(crate) lag_quota_ms: Ms,
    pub(crate) flagged: bool,
}

impl Side {
    /// Applies `elapsed` ms of thinking (less `lag_ms` of refunded lag) under `control`.
    /// Returns false if that exhausts the player's time.
    fn charge(&mut self, control: TimeControl, lagc: LagComp, elapsed: Ms, lag_ms: Ms) -> bool {
        let s = self;
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
}

/// Both players' clocks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clock {
    pub(crate) control: TimeControl,
    lag: LagComp,
    /// `[black, white]`, indexed by [`Color::index`].
    pub(crate) sides: [Side; 2],
    /// The running side and since when.
    pub(crate) running: Option<(Color, Ms)>,
}

impl Clock {
    pub fn new(control: TimeControl, lag: LagComp) -> Clock {
        let fresh = |main_ms: Ms, periods: u32, period_ms: Ms, stones: u32| Side {
            main_ms,
            periods,
            period_ms,
            stones,
            lag_quota_ms: lag.initial_ms,
            flagged: false,
        };
        let side = match control {
            TimeControl::None => Side {
                lag_quota_ms: 0,
                ..fresh(0, 0, 0, 0)
            },
            TimeControl::Absolute { main_ms } | TimeControl::Fischer { main_ms, .. } => fresh(main_ms, 0, 0, 0),
            TimeControl::ByoYomi {
                main_ms,
                periods,
                period_ms,
            } => fresh(main_ms, periods, period_ms, 0),
            TimeControl::Canadian {
                main_ms,
                stones,
                period_ms,
            } => fresh(main_ms, 0, period_ms, stones),
            TimeControl::GamePlusMove { main_ms, per_move_ms } => fresh(main_ms, 0, per_move_ms, 0),
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

    /// The player whose clock runs, if any.
    pub fn running(&self) -> Option<Color> {
        self.running.map(|(c, _)| c)
    }

    /// Starts `color`'s clock at `now` (stopping the other's without charging it).
    pub fn start(&mut self, color: Color, now: Ms) {
        self.running = Some((color, now));
    }

    /// Stops the running clock at `now`, charging the time used (an adjournment, C3).
    /// `Err(Flagged)` if the player had run out of time before stopping; the clocks are
    /// stopped either way. Stopping no running clock is `Ok`.
    pub fn pause(&mut self, now: Ms) -> Result<(), ClockError> {
        let Some((color, since)) = self.running.take() else {
            return Ok(());
        };
        if self.charge(color, now.saturating_sub(since), 0) {
            return Ok(());
        }
        self.side_mut(color).flagged = true;
        Err(ClockError::Flagged { color })
    }

    /// Deducts lateness from a player's main time before play (C4).
    pub fn deduct(&mut self, color: Color, ms: Ms) {
        let s = self.side_mut(color);
        s.main_ms = s.main_ms.saturating_sub(ms);
    }

    fn side(&self, color: Color) -> &Side {
        &self.sides[color.index()]
    }

    fn side_mut(&mut self, color: Color) -> &mut Side {
        &mut self.sides[color.index()]
    }

    /// Charges `elapsed` ms (less refunded lag) to `color`; false if their time ran out.
    fn charge(&mut self, color: Color, elapsed: Ms, lag_ms: Ms) -> bool {
        let (control, lag) = (self.control, self.lag);
        self.side_mut(color).charge(control, lag, elapsed, lag_ms)
    }

    /// Time the running player may still use from `since`, lag allowance included:
    /// `None` for no clock.
    fn budget(&self, color: Color) -> Option<Ms> {
        let s = self.side(color);
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
        let (color, since) = self.running?;
        Some(since.saturating_add(self.budget(color)?))
    }

    /// The running player, if they have lost on time at `now` (exactly at the deadline).
    pub fn flagged_at(&self, now: Ms) -> Option<Color> {
        let (color, _) = self.running?;
        (self.deadline()? <= now).then_some(color)
    }

    /// `color` finished a move at `now` (`lag_ms`: network lag the client measured,
    /// refunded within the quota). Charges the move, applies increments and per-move
    /// resets, and starts the opponent's clock.
    ///
    /// `Err(Flagged)` if the mover had already run out of time; the clocks are then
    /// stopped. `Err(NotRunning)` if `color`'s clock is not the one running: nothing is
    /// charged (a placement logged before its clock was started, for one).
    pub fn press(&mut self, color: Color, now: Ms, lag_ms: Ms) -> Result<(), ClockError> {
        let Some((_, since)) = self.running.filter(|&(running, _)| running == color) else {
            return Err(ClockError::NotRunning { color });
        };
        if self.flagged_at(now).is_some() || !self.charge(color, now.saturating_sub(since), lag_ms) {
            self.flag(color);
            return Err(ClockError::Flagged { color });
        }
        let lagc = self.lag;
        let control = self.control;
        let s = self.side_mut(color);
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
        self.running = Some((color.opponent(), now));
        Ok(())
    }

    /// Marks `color` as flagged (no time left) and stops the clocks.
    pub fn flag(&mut self, color: Color) {
        let control = self.control;
        let s = self.side_mut(color);
        s.flagged = true;
        s.main_ms = 0;
        if matches!(control, TimeControl::ByoYomi { .. }) {
            s.periods = 0;
        }
        if matches!(control, TimeControl::Canadian { .. } | TimeControl::GamePlusMove { .. }) {
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

    /// Both players' clocks, `[black, white]`, as they would read at `now` (the running
    /// one charged so far, without changing anything).
    pub fn snapshot(&self, now: Ms) -> [PlayerTime; 2] {
        [self.reading(Color::Black, now), self.reading(Color::White, now)]
    }

    /// `color`'s clock as it would read at `now`.
    pub fn reading(&self, color: Color, now: Ms) -> PlayerTime {
        let mut side = *self.side(color);
        if let Some((c, since)) = self.running
            && c == color
        {
            // Show the time left without any lag refund.
            let quota = side.lag_quota_ms;
            let _ = side.charge(self.control, self.lag, now.saturating_sub(since), 0);
            side.lag_quota_ms = quota;
        }
        PlayerTime {
            main_ms: side.main_ms,
            periods: side.periods,
            period_ms: side.period_ms,
            stones: side.stones,
            lag_quota_ms: side.lag_quota_ms,
            running: self.running() == Some(color),
            flagged: side.flagged,
        }
    }
}
