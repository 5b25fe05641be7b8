//! Challenges, seeks, the games the server pairs from them, each player's event feed, and
//! who is online, in both stores.
//!
//! Every change that pairs players is one transaction that checks the state it changes:
//! a challenge is answered only while open (an accept and a cancel racing: one wins), two
//! seeks are paired only if both rows are still there (deleted together, or not at all),
//! so with several servers on one PostgreSQL a seek is matched at most once. The pairing
//! row is written in the same transaction: a server that dies before it creates the game
//! leaves the pairing for any server to finish (`unstarted_pairings`).

use serde::{Deserialize, Serialize};

use crate::StoreError;

fn json<T: Serialize>(v: &T) -> Result<String, StoreError> {
    serde_json::to_string(v).map_err(StoreError::local)
}

fn parse<T: for<'de> Deserialize<'de>>(what: &str, s: &str) -> Result<T, StoreError> {
    serde_json::from_str(s).map_err(|e| StoreError::Corrupt {
        game_id: what.to_string(),
        why: e.to_string(),
    })
}

/// Writes `$events` (a slice of `(player id, kind)`) inside the transaction `$tx`.
macro_rules! push {
    ($tx:expr, $events:expr, $at_ms:expr, $sql:path) => {{
        let q = $sql("INSERT INTO player_events (player_id, at_ms, body) VALUES ($1, $2, $3)");
        for (who, kind) in $events.iter() {
            sqlx::query(&q)
                .bind(who)
                .bind($at_ms as i64)
                .bind(json(kind)?)
                .execute(&mut *$tx)
                .await?;
        }
    }};
}

macro_rules! insert_pairing {
    ($tx:expr, $p:expr, $sql:path) => {{
        let p: &Pairing = $p;
        let q = $sql(
            "INSERT INTO pairings (pairing_id, game_id, started, body, created_ms) VALUES ($1, $2, FALSE, $3, $4)",
        );
        sqlx::query(&q)
            .bind(&p.id)
            .bind(&p.game_id)
            .bind(json(p)?)
            .bind(p.created_ms as i64)
            .execute(&mut *$tx)
            .await?;
    }};
}

mod challenges;
mod feeds;
mod pending_ratings;
mod seeks;

pub use challenges::ChallengeStore;
pub use feeds::FeedStore;
pub use pending_ratings::PendingRatings;
pub use seeks::SeekStore;

/// The tables; `$serial` is the database's auto-increment key.
pub(crate) fn schema(serial: &str) -> Vec<String> {
    vec![
        "CREATE TABLE IF NOT EXISTS challenges (
            challenge_id TEXT PRIMARY KEY,
            challenger_id TEXT NOT NULL,
            challenged_id TEXT NOT NULL,
            state TEXT NOT NULL,
            body TEXT NOT NULL,
            created_ms BIGINT NOT NULL)"
            .into(),
        "CREATE INDEX IF NOT EXISTS challenges_by_challenger ON challenges (challenger_id, state)".into(),
        "CREATE INDEX IF NOT EXISTS challenges_by_challenged ON challenges (challenged_id, state)".into(),
        "CREATE TABLE IF NOT EXISTS seeks (
            seek_id TEXT PRIMARY KEY,
            player_id TEXT NOT NULL UNIQUE,
            body TEXT NOT NULL,
            created_ms BIGINT NOT NULL)"
            .into(),
        "CREATE TABLE IF NOT EXISTS pairings (
            pairing_id TEXT PRIMARY KEY,
            game_id TEXT NOT NULL UNIQUE,
            started BOOLEAN NOT NULL,
            body TEXT NOT NULL,
            created_ms BIGINT NOT NULL)"
            .into(),
        format!(
            "CREATE TABLE IF NOT EXISTS player_events (
            seq {serial},
            player_id TEXT NOT NULL,
            at_ms BIGINT NOT NULL,
            body TEXT NOT NULL)"
        ),
        "CREATE INDEX IF NOT EXISTS player_events_by_player ON player_events (player_id, seq)".into(),
        "CREATE TABLE IF NOT EXISTS presence (player_id TEXT PRIMARY KEY, until_ms BIGINT NOT NULL)".into(),
        "CREATE TABLE IF NOT EXISTS rating_pending (game_id TEXT PRIMARY KEY, at_ms BIGINT NOT NULL)".into(),
    ]
}
