//! One player's clock as the outside world sees it (and as every event stores it).

use serde::{Deserialize, Serialize};

use crate::Ms;

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
