//! The bounds of every clock setting. Generous for any real game (correspondence
//! included); they exist so that no value can make a computation or a number overflow.

use crate::Ms;

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
