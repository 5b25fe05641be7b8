//! # weiqi-players
//!
//! The players' side of the service as pure rules over plain data, as `weiqi-game` is
//! for a game: no IO, no async, no clock of its own (every function takes `now`).
//! - `records`: accounts, ratings, challenges, seeks, pairings, players' feed events;
//! - `challenges`: who may challenge whom, answer or cancel, expiry, the game it pairs;
//! - `automatch`: which seeks are valid, which pair, and the game a pair plays;
//! - `ratings`: which finished games count, and the Glicko-2 update the store applies;
//! - `played`: a player's finished games, as their profile lists them;
//! - `error`: [`Refusal`], why a request is refused.
//!
//! The server's `players` module runs these against the store and the hub; its gRPC edge
//! only converts.

pub mod automatch;
pub mod challenges;
mod error;
pub mod played;
pub mod ratings;
mod records;

pub use error::{Class, Refusal};
pub use records::{
    Challenge, ChallengeState, HistoryRow, Pairing, PlayerEvent, PlayerEventKind, PlayerRecord, RateFn, RatedGame,
    RatingRow, Seek,
};

/// Sizes with ratings (the sizes the service's clients play rated).
pub const RATED_SIZES: [u32; 3] = [9, 13, 19];

/// The form in which two display names are the same name: surrounding spaces and case do
/// not tell players apart ("Bob" and " bob " are one name).
pub fn name_key(name: &str) -> String {
    name.trim().to_lowercase()
}
/// The most a list call returns.
pub const MAX_LIST: u32 = 1000;

/// A list call's `limit`: 100 when 0, at most [`MAX_LIST`].
pub fn list_limit(l: u32) -> Result<usize, Refusal> {
    match l {
        0 => Ok(100),
        1..=MAX_LIST => Ok(l as usize),
        _ => Err(Refusal::bad("limit", format!("limit is at most {MAX_LIST}"))),
    }
}

/// A size ratings are kept for.
pub fn rated_size(size: u32) -> Result<u32, Refusal> {
    if RATED_SIZES.contains(&size) {
        Ok(size)
    } else {
        Err(Refusal::bad("board_size", "ratings are kept for sizes 9, 13 and 19"))
    }
}
