//! Time controls (C2) and the bounds a playable one keeps.

use serde::{Deserialize, Serialize};

use crate::Ms;
use crate::error::{ClockField, SettingError};
use crate::limits::*;

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

    /// Checks every value against its bound ([`crate::limits`]): a control that cannot be
    /// played (no time at all) or whose values are out of range is refused, naming the
    /// value. Zero periods (byo-yomi) and zero stones (Canadian) are refused alike: sudden
    /// death is [`TimeControl::Absolute`].
    pub fn validate(&self) -> Result<(), SettingError> {
        let check = |field: ClockField, value: u64, min: u64, max: u64| {
            if (min..=max).contains(&value) {
                Ok(())
            } else {
                Err(SettingError::OutOfRange { field, value, min, max })
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
