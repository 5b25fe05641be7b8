//! # weiqi-game
//!
//! One game of Go as an event-sourced referee (C1..C8 of `shared/spec/rules.md`), pure:
//! no IO, no async, no system clock. [`Game::decide`] checks a [`Command`] sent by an
//! [`Actor`] at a time `now` and returns the [`Event`]s it causes; [`Game::apply`] folds an
//! event in. A game is the fold of its events, so replaying the log reproduces it exactly.
//!
//! The server transports, persists and times this library; it never re-implements rules.

mod commit;
mod fingerprint;
mod game;
mod redaction;
mod settings;
mod types;
pub mod variant;

pub use commit::{is_digest, move_text, nigiri_commitment, seal_commitment, sha256_hex, sha256_hex_array};
pub use game::{Corrupt, Game, MoveClock, ParkedGame, propose_dead};
pub use types::*;
pub use variant::bid_commitment;
pub use weiqi_clock::{ClockField, LagComp, Ms, PlayerTime, TimeControl, limits as clock_limits};
pub use weiqi_rules;
