//! # weiqi-tournament
//!
//! Tournaments run by the server (C9, the tournament notice in `../shared/seeds/`): a
//! round robin in groups (a win 3 points, a draw 1, a loss or forfeit 0; ties broken by the
//! head-to-head result), the top two of each group on to a knockout.
//!
//! Pure and event-sourced like a game: a [`Tournament`] is the fold of its
//! [`TournamentEvent`]s, and every decision (`register`, `start`, `record`, `advance`)
//! returns the events to append or a typed [`TournamentError`], never half a change. No
//! IO, no clock: the caller passes the time, and the games' ids come from the caller's
//! [`GameIds`] (the server derives them from the pairing id and its secret).
//!
//! Rules this crate applies where C9 is silent (each cited in the tests):
//! - Colours: Berger tables balance them in the groups; in the knockout a coin from the
//!   published seed, swapped on a replay.
//! - A knockout game cannot end drawn: its komi is rounded up to a half point, and a draw
//!   that still happens (by agreement) is replayed with colours swapped. A game with no
//!   result (C7, a repetition cycle) is replayed in either stage.
//! - Both players forfeiting (C4) is a loss for both; in the knockout neither goes on and
//!   the next opponent wins by walkover.
//! - A player who withdraws after the start forfeits their remaining games.
//! - Ties head-to-head cannot break go to Sonneborn-Berger, then to the draw's order
//!   (see [`standings`]).

mod bracket;
mod error;
mod events;
pub mod export;
pub mod schedule;
pub mod standings;
mod tournament;

pub use error::TournamentError;
pub use events::{Entrant, Round, RoundGame, Seeding, Stage, TournamentEvent, TournamentPhase, TournamentSettings};
pub use standings::{BoardResult, Standing};
pub use tournament::{GameIds, Tournament};

/// Limits on what a tournament may ask for (documented in docs/players.md, "Tournaments (C9)").
pub mod limits {
    /// Groups: 1 to 16 (a power of two when a knockout follows, so the bracket is full).
    pub const MAX_GROUPS: u32 = 16;
    /// Players in one group: 2 to 16.
    pub const MAX_GROUP_SIZE: u32 = 16;
    pub const MAX_NAME_CHARS: usize = 100;
    /// Planned round start times.
    pub const MAX_PLANNED_ROUNDS: usize = 64;
    /// The break between rounds: at most a day.
    pub const MAX_ROUND_BREAK_MS: u64 = 24 * 3600 * 1000;
    /// A knockout game replayed (draws by agreement, no result) at most this many times;
    /// then the player placed higher in the groups goes on.
    pub const MAX_REPLAYS: u32 = 3;
}
