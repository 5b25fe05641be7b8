//! # weiqi-clock
//!
//! Game clocks for Go as a pure state machine (C2). Time is integer milliseconds passed in
//! by the caller (`now`); nothing here reads a system clock or sleeps. The server asks
//! [`Clock::deadline`] when the player to move will lose on time and sets one timer; the
//! referee calls come from [`Clock::due_announcements`].
//!
//! Supported: Chinese byo-yomi (N units of 60 s), Japanese byo-yomi (periods of any length),
//! main time plus a per-move limit (局时 + 步时), Canadian overtime, Fischer increment (with
//! an optional cap), absolute time, and no clock. Adjournments pause both clocks (C2, C3);
//! lateness is deducted up front (C4); a bounded lag quota, refilled each move, keeps slow
//! networks from flagging honest players (modelled on Lichess's lag compensation).
//!
//! Players are named by their colour (`weiqi_rules::Color`): a clock cannot be pressed for the wrong player.

mod announce;
mod clock;
mod control;
mod error;
mod lag;
pub mod limits;
mod player_time;

pub use announce::Announcement;
pub use clock::Clock;
pub use control::TimeControl;
pub use error::{ClockError, ClockField, SettingError};
pub use lag::LagComp;
pub use player_time::PlayerTime;

/// Milliseconds. Absolute times are milliseconds since an epoch chosen by the caller.
pub type Ms = u64;

#[cfg(test)]
mod tests;
