//! Lag compensation: a bounded refund of measured network lag, so that a slow network does
//! not flag an honest player.

use serde::{Deserialize, Serialize};

use crate::Ms;
use crate::error::{ClockField, SettingError};
use crate::limits;

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
    pub fn validate(&self) -> Result<(), SettingError> {
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
            Some(value) => Err(SettingError::OutOfRange {
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
