//! What a tournament refuses, each with what the caller needs to fix it.

use thiserror::Error;

use crate::events::TournamentPhase;

#[derive(Debug, Clone, PartialEq, Error)]
pub enum TournamentError {
    #[error("invalid tournament settings: {0}")]
    InvalidSettings(String),
    #[error("the tournament is {actual:?}; this needs it {needed:?}")]
    WrongPhase {
        needed: TournamentPhase,
        actual: TournamentPhase,
    },
    #[error("player {0} is already registered")]
    AlreadyRegistered(String),
    #[error("the tournament is full ({capacity} players)")]
    Full { capacity: u32 },
    #[error("player {0} is not registered")]
    NotRegistered(String),
    #[error("only the organizer may do this")]
    NotOrganizer,
    #[error("{have} players registered; {need} are needed (two per group)")]
    TooFewPlayers { need: u32, have: u32 },
    #[error("game {0} is not one of this tournament's open games")]
    NotOurGame(String),
    /// Stored events that do not fold (a bug or a damaged store).
    #[error("tournament events do not fold: {0}")]
    Corrupt(String),
}
