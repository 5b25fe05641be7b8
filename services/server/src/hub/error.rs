//! Why a call on the hub did not go through, in domain terms. The service's edge
//! (status.rs) turns each into a gRPC status with its details.

use weiqi_game::{Game, Phase, Rejection};
use weiqi_store::StoreError;

use super::view::GameView;

/// Where a game stood when a call on it failed: what an error's details report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameAt {
    pub game_id: String,
    pub move_number: u32,
    pub seq: u64,
    pub phase: Phase,
}

impl GameAt {
    pub fn of(game_id: &str, g: &Game) -> GameAt {
        GameAt {
            game_id: game_id.to_string(),
            move_number: g.move_number() as u32,
            seq: g.seq(),
            phase: g.phase(),
        }
    }

    /// Where the game shown in `v` stands.
    pub fn of_view(v: &GameView) -> GameAt {
        GameAt {
            game_id: v.game_id.clone(),
            move_number: v.move_number,
            seq: v.seq,
            phase: v.phase,
        }
    }
}

/// Why a caller holds no seat in a game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denied {
    /// The call needs a seat token and came without one.
    MissingToken,
    /// The token holds no seat in this game.
    WrongToken,
}

#[derive(Debug, thiserror::Error)]
pub enum HubError {
    #[error("a game id is required (at most 64 characters, no control characters)")]
    BadGameId,
    #[error("no game {game_id:?}")]
    NotFound { game_id: String },
    /// The referee refused the command.
    #[error("{rejection}")]
    Rejected { rejection: Rejection, at: GameAt },
    /// The caller expected another move number: the game as it is comes with the error.
    #[error("stale: the game is at move {}, not {expected}", .now.move_number)]
    Stale { expected: u32, now: Box<GameView> },
    #[error("{}", match .why {
        Denied::MissingToken => "this call needs the seat token (authorization: Bearer ...)",
        Denied::WrongToken => "this token holds no seat in this game",
    })]
    Denied { why: Denied, at: GameAt },
    /// A claim that the opponent left, while they are here or not gone long enough.
    #[error("your opponent is here, or has not been gone long enough to claim the game")]
    OpponentPresent { claimable_at_ms: u64, at: GameAt },
    #[error("the game already has two players")]
    GameFull { at: GameAt },
    #[error("request id {request_id:?} was used for another command; a retry must repeat the call")]
    RequestIdReused { request_id: String, at: GameAt },
    /// A stored log that does not fold (a bug or a damaged store).
    #[error("{0}")]
    Corrupt(String),
    #[error("game {game_id:?} is missing from the store")]
    Missing { game_id: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl HubError {
    pub(crate) fn corrupt(e: impl std::fmt::Display) -> HubError {
        HubError::Corrupt(e.to_string())
    }
}

/// A game id as clients may send it: 1 to 64 characters, none of them control characters.
pub fn valid_game_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && !id.chars().any(char::is_control)
}
