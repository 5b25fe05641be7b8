//! Why the players' rules refuse a request: one enum, each case with a stable
//! machine-readable reason and the class of error it is (the service's edge maps the
//! class to a gRPC code).

use crate::ChallengeState;

/// The class of a refusal, as a client reacts to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// The request is malformed: the same request is always refused.
    BadRequest,
    /// What it names does not exist.
    NotFound,
    /// It names something that is not the caller's.
    NotYours,
    /// Right request, wrong moment (closed, expired, offline).
    NotNow,
    /// A per-player limit is reached.
    TooMany,
    /// It exists already.
    Exists,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Refusal {
    #[error("{field}: {message}")]
    BadField { field: &'static str, message: String },
    #[error("main time {min_s}..{max_s} s is an empty range")]
    EmptyRange { min_s: u32, max_s: u32 },
    #[error("a player cannot challenge themself")]
    SelfChallenge { player_id: String },
    #[error("no player {player_id:?}")]
    PlayerNotFound { player_id: String },
    #[error("{player_id} is not online (no WatchPlayer stream open)")]
    OpponentOffline { player_id: String },
    #[error("at most {max} open challenges")]
    TooManyChallenges { max: usize },
    #[error("no challenge {id:?}")]
    ChallengeNotFound { id: String },
    #[error("this challenge is not yours to answer")]
    NotYourChallenge { id: String, as_challenger: bool },
    #[error("challenge {id} is {}", state.name())]
    ChallengeClosed { id: String, state: ChallengeState },
    #[error("challenge {id} expired")]
    ChallengeExpired { id: String },
    #[error("this player already has an open seek (CancelSeek it first)")]
    DuplicateSeek,
    #[error("no open seek {id:?}")]
    SeekNotFound { id: String },
    #[error("no paired game {game_id:?}")]
    SeatNotFound { game_id: String },
    #[error("you hold no seat in this game")]
    NotYourGame { game_id: String },
    #[error("another player is called {name:?}")]
    NameTaken { name: String },
    #[error("this page token was not given by this service")]
    BadPageToken,
}

impl Refusal {
    /// A refusal about one field of the request.
    pub fn bad(field: &'static str, message: impl Into<String>) -> Refusal {
        Refusal::BadField {
            field,
            message: message.into(),
        }
    }

    /// The stable, machine-readable reason (an ErrorInfo's reason at the edge).
    pub fn reason(&self) -> &'static str {
        match self {
            Refusal::BadField { .. } => "bad_request",
            Refusal::EmptyRange { .. } => "empty_range",
            Refusal::SelfChallenge { .. } => "self_challenge",
            Refusal::PlayerNotFound { .. } => "player_not_found",
            Refusal::OpponentOffline { .. } => "opponent_offline",
            Refusal::TooManyChallenges { .. } => "too_many_challenges",
            Refusal::ChallengeNotFound { .. } => "challenge_not_found",
            Refusal::NotYourChallenge {
                as_challenger: true, ..
            } => "not_challenger",
            Refusal::NotYourChallenge {
                as_challenger: false, ..
            } => "not_challenged",
            Refusal::ChallengeClosed { .. } => "challenge_closed",
            Refusal::ChallengeExpired { .. } => "challenge_expired",
            Refusal::DuplicateSeek => "duplicate_seek",
            Refusal::SeekNotFound { .. } => "seek_not_found",
            Refusal::SeatNotFound { .. } => "seat_not_found",
            Refusal::NotYourGame { .. } => "not_your_game",
            Refusal::NameTaken { .. } => "name_taken",
            Refusal::BadPageToken => "bad_page_token",
        }
    }

    pub fn class(&self) -> Class {
        match self {
            Refusal::BadField { .. }
            | Refusal::EmptyRange { .. }
            | Refusal::SelfChallenge { .. }
            | Refusal::BadPageToken => Class::BadRequest,
            Refusal::PlayerNotFound { .. }
            | Refusal::ChallengeNotFound { .. }
            | Refusal::SeekNotFound { .. }
            | Refusal::SeatNotFound { .. } => Class::NotFound,
            Refusal::NotYourChallenge { .. } | Refusal::NotYourGame { .. } => Class::NotYours,
            Refusal::OpponentOffline { .. } | Refusal::ChallengeClosed { .. } | Refusal::ChallengeExpired { .. } => {
                Class::NotNow
            }
            Refusal::TooManyChallenges { .. } => Class::TooMany,
            Refusal::DuplicateSeek | Refusal::NameTaken { .. } => Class::Exists,
        }
    }

    /// The details a client may act on, as (key, value) pairs.
    pub fn details(&self) -> Vec<(&'static str, String)> {
        match self {
            Refusal::BadField { field, .. } => vec![("field", (*field).to_string())],
            Refusal::EmptyRange { .. } => vec![("field", "main_time_min_s".to_string())],
            Refusal::SelfChallenge { player_id } | Refusal::OpponentOffline { player_id } => {
                vec![("player_id", player_id.clone())]
            }
            // (GetPlayer named it `player_id`, Challenge `id`: both, as clients read them.)
            Refusal::PlayerNotFound { player_id } => {
                vec![("player_id", player_id.clone()), ("id", player_id.clone())]
            }
            Refusal::ChallengeNotFound { id } | Refusal::SeekNotFound { id } => vec![("id", id.clone())],
            Refusal::NotYourChallenge { id, .. } | Refusal::ChallengeExpired { id } => {
                vec![("challenge_id", id.clone())]
            }
            Refusal::ChallengeClosed { id, state } => {
                vec![("challenge_id", id.clone()), ("state", state.name().to_string())]
            }
            Refusal::SeatNotFound { game_id } => vec![("id", game_id.clone())],
            Refusal::NotYourGame { game_id } => vec![("game_id", game_id.clone())],
            Refusal::NameTaken { name } => vec![("field", "name".to_string()), ("name", name.clone())],
            Refusal::TooManyChallenges { .. } | Refusal::DuplicateSeek => Vec::new(),
            Refusal::BadPageToken => vec![("field", "page_token".to_string())],
        }
    }
}
