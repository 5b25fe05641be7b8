//! # weiqi-rating
//!
//! Player ratings for the service: Glicko-2 (Glickman, "Example of the Glicko-2 system",
//! 2012) rated continuously, and kyu/dan ranks derived from a rating.
//!
//! - `glicko2` — the update of one player's rating after a rating period's games;
//! - `continuous` — how a server that rates every game at once uses it: each game is its
//!   own rating period, and a rating's deviation grows with the time since the player's
//!   last rated game (Lichess's way);
//! - `rank` — kyu and dan from a rating (OGS's published formula);
//! - `elo` — Elo ratings fitted to a table of match results (Bradley-Terry), for engines;
//! - `interval` — the Wilson score interval of a match's score.
//!
//! Pure: no IO, no clock (times are passed in), no randomness.

pub mod continuous;
pub mod elo;
pub mod glicko2;
pub mod interval;
pub mod rank;

pub use continuous::{Period, rate_game};
pub use glicko2::{PeriodGame, Rating, update, update_over};
pub use interval::wilson95;
pub use rank::{Rank, rank_value};
