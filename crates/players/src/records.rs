//! What the players' side of the service is made of: accounts and their ratings, direct
//! challenges, automatch seeks, the games the server pairs, and players' feeds. Plain data;
//! the stores keep them, the rules over them are this crate's other modules.

use serde::{Deserialize, Serialize};
use weiqi_game::{PlayerRef, Settings};

/// An account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayerRecord {
    pub id: String,
    pub name: String,
    pub bot: bool,
    /// A guest account (registered here, with a token) rather than a platform's player.
    pub guest: bool,
    pub created_ms: u64,
}

/// A player's rating at one board size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatingRow {
    pub board_size: u32,
    pub rating: f64,
    pub deviation: f64,
    pub volatility: f64,
    /// Rated games played at this size.
    pub games: u32,
    /// When the last one ended (ms since the Unix epoch).
    pub last_ms: u64,
}

/// One rated game in a player's history.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryRow {
    pub game_id: String,
    pub board_size: u32,
    pub at_ms: u64,
    pub opponent_id: String,
    /// 1 win, 0.5 draw, 0 loss.
    pub score: f64,
    pub rating_before: f64,
    pub rating: f64,
    pub deviation: f64,
    pub volatility: f64,
}

/// A finished rated game to apply.
#[derive(Debug, Clone, PartialEq)]
pub struct RatedGame {
    pub game_id: String,
    pub board_size: u32,
    pub at_ms: u64,
    pub black: String,
    pub white: String,
    /// Black's score: 1, 0.5 or 0.
    pub black_score: f64,
}

/// The rating update, given both players' ratings at the game's size (none before their
/// first rated game there): for Black then White, the rating before (the starting rating
/// for a first game) and the new rating. Pure; the store runs it inside the transaction
/// that reads and writes the ratings.
pub type RateFn = fn(black: Option<RatingRow>, white: Option<RatingRow>, game: &RatedGame) -> [(f64, RatingRow); 2];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChallengeState {
    Open,
    Accepted,
    Declined,
    Cancelled,
    Expired,
}

impl ChallengeState {
    pub fn name(self) -> &'static str {
        match self {
            ChallengeState::Open => "open",
            ChallengeState::Accepted => "accepted",
            ChallengeState::Declined => "declined",
            ChallengeState::Cancelled => "cancelled",
            ChallengeState::Expired => "expired",
        }
    }

    /// The state a stored name stands for.
    pub fn from_name(s: &str) -> Option<ChallengeState> {
        [
            ChallengeState::Open,
            ChallengeState::Accepted,
            ChallengeState::Declined,
            ChallengeState::Cancelled,
            ChallengeState::Expired,
        ]
        .into_iter()
        .find(|c| c.name() == s)
    }
}

/// A direct challenge: the challenger hosts the game it would start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Challenge {
    pub id: String,
    pub challenger: PlayerRef,
    pub challenged: PlayerRef,
    pub settings: Settings,
    pub state: ChallengeState,
    /// Why it was declined, machine-readable ("board_size", "too_many_games", ...).
    #[serde(default)]
    pub reason: String,
    #[serde(default)]
    pub game_id: Option<String>,
    pub created_ms: u64,
    pub expires_ms: u64,
}

/// An automatch request.
#[derive(Debug, Clone, PartialEq)]
pub struct Seek {
    pub id: String,
    pub player: PlayerRef,
    /// The player's rating when they sought (pairing compares these).
    pub rating: f64,
    /// Board sizes accepted, preferred first.
    pub sizes: Vec<u32>,
    /// Main time accepted, an inclusive range.
    pub main_min_ms: u64,
    pub main_max_ms: u64,
    pub rated: bool,
    /// Rating difference accepted at once; it widens as the seek waits.
    pub window: f64,
    /// Accepts a handicap game when the ratings differ.
    pub handicap: bool,
    pub created_ms: u64,
}

/// A game the server pairs (an accepted challenge, two matched seeks): written when the
/// players are paired, the game created from it afterwards by whichever server gets there
/// (its ids derive from the pairing's, so creating it twice is creating it once).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pairing {
    pub id: String,
    pub game_id: String,
    pub host: PlayerRef,
    pub guest: PlayerRef,
    pub settings: Settings,
    pub created_ms: u64,
}

/// What a player's feed tells them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PlayerEventKind {
    ChallengeReceived {
        challenge: Challenge,
    },
    /// A challenge the player made or received was accepted, declined, cancelled or
    /// expired.
    ChallengeAnswered {
        challenge: Challenge,
    },
    Matched {
        seek_id: String,
        game_id: String,
    },
    GameStarted {
        game_id: String,
    },
    /// `result` as SGF writes it ("B+R", "W+3.5", "0" for a draw, "Void").
    GameEnded {
        game_id: String,
        result: String,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct PlayerEvent {
    /// Increasing over all players' events (a feed resumes after the last it saw).
    pub seq: u64,
    pub player_id: String,
    pub at_ms: u64,
    pub kind: PlayerEventKind,
}
