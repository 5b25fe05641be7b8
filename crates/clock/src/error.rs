//! The clock's two kinds of failure: a setting out of its bounds (refused when a game is
//! created) and a press or pause that finds the mover out of time or not on move.

use serde::{Deserialize, Serialize};
use weiqi_rules::Color;

/// The value of a time control that a [`SettingError::OutOfRange`] names.
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

/// A time control or lag setting that cannot be played.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingError {
    #[error("{field:?} is {value}; it must be in {min}..={max}")]
    OutOfRange {
        field: ClockField,
        value: u64,
        min: u64,
        max: u64,
    },
}

/// Why a running clock refused to charge a move ([`crate::Clock::press`],
/// [`crate::Clock::pause`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ClockError {
    /// `color` had run out of time: they lose on time, and both clocks are stopped.
    #[error("{color:?} has run out of time")]
    Flagged { color: Color },
    /// `color`'s clock is not running (not on move, or no clock started): nothing changed.
    #[error("{color:?}'s clock is not running")]
    NotRunning { color: Color },
}
