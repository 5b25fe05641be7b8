//! Players' feeds (`player_events`, one increasing `seq` over all players) and presence,
//! in both databases.

use sqlx::{ColumnIndex, Database, Decode, Encode, Executor, IntoArguments, Pool, Type};
use weiqi_players::{PlayerEvent, PlayerEventKind};

use super::{json, parse};
use crate::sql::{RowsAffected, SqlDb, SqlStore};
use crate::{StoreError, StoreFuture};

/// Players' feeds, and who is online.
pub trait FeedStore: Send + Sync + 'static {
    /// Appends events to players' feeds (each gets the next `seq`).
    fn push_player_events(&self, events: Vec<(String, PlayerEventKind)>, at_ms: u64) -> StoreFuture<'_, ()>;
    /// Every player's events after `seq`, in order, at most `limit`.
    fn player_events_after(&self, seq: u64, limit: usize) -> StoreFuture<'_, Vec<PlayerEvent>>;
    /// One player's events after `seq` (a feed resuming), at most `limit`.
    fn player_events_of(&self, player_id: String, seq: u64, limit: usize) -> StoreFuture<'_, Vec<PlayerEvent>>;
    /// The last event's seq (0 when none).
    fn last_player_event(&self) -> StoreFuture<'_, u64>;
    /// These players are online until `until_ms` (each server refreshes its own feeds').
    fn seen(&self, player_ids: Vec<String>, until_ms: u64) -> StoreFuture<'_, ()>;
    /// Until when a player was last known online (0: never).
    fn online_until(&self, player_id: String) -> StoreFuture<'_, u64>;
}

fn event_of((seq, player_id, at, body): (i64, String, i64, String)) -> Result<PlayerEvent, StoreError> {
    Ok(PlayerEvent {
        seq: seq as u64,
        kind: parse(&player_id, &body)?,
        player_id,
        at_ms: at as u64,
    })
}

impl<S: SqlStore> FeedStore for S
where
    for<'c> &'c mut <S::Db as Database>::Connection: Executor<'c, Database = S::Db>,
    for<'c> &'c Pool<S::Db>: Executor<'c, Database = S::Db>,
    for<'q> <S::Db as Database>::Arguments<'q>: IntoArguments<'q, S::Db>,
    <S::Db as Database>::QueryResult: RowsAffected,
    for<'q> String: Encode<'q, S::Db> + Decode<'q, S::Db> + Type<S::Db>,
    for<'q> &'q str: Encode<'q, S::Db> + Type<S::Db>,
    for<'q> i64: Encode<'q, S::Db> + Decode<'q, S::Db> + Type<S::Db>,
    for<'q> f64: Encode<'q, S::Db> + Decode<'q, S::Db> + Type<S::Db>,
    for<'q> bool: Encode<'q, S::Db> + Decode<'q, S::Db> + Type<S::Db>,
    usize: ColumnIndex<<S::Db as Database>::Row>,
{
    fn push_player_events(&self, events: Vec<(String, PlayerEventKind)>, at_ms: u64) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let mut tx = self.begin_write().await?;
            push!(tx, events, at_ms, S::Db::sql);
            tx.commit().await?;
            Ok(())
        })
    }

    fn player_events_after(&self, seq: u64, limit: usize) -> StoreFuture<'_, Vec<PlayerEvent>> {
        Box::pin(async move {
            let q = S::Db::sql(
                "SELECT seq, player_id, at_ms, body FROM player_events WHERE seq > $1 ORDER BY seq LIMIT $2",
            );
            let rows: Vec<(i64, String, i64, String)> = sqlx::query_as(&q)
                .bind(seq as i64)
                .bind(limit as i64)
                .fetch_all(self.pool())
                .await?;
            rows.into_iter().map(event_of).collect()
        })
    }

    fn player_events_of(&self, player_id: String, seq: u64, limit: usize) -> StoreFuture<'_, Vec<PlayerEvent>> {
        Box::pin(async move {
            let q = S::Db::sql(
                "SELECT seq, player_id, at_ms, body FROM player_events WHERE player_id = $1 AND seq > $2
                          ORDER BY seq LIMIT $3",
            );
            let rows: Vec<(i64, String, i64, String)> = sqlx::query_as(&q)
                .bind(&player_id)
                .bind(seq as i64)
                .bind(limit as i64)
                .fetch_all(self.pool())
                .await?;
            rows.into_iter().map(event_of).collect()
        })
    }

    fn last_player_event(&self) -> StoreFuture<'_, u64> {
        Box::pin(async move {
            let (seq,): (Option<i64>,) = sqlx::query_as("SELECT MAX(seq) FROM player_events")
                .fetch_one(self.pool())
                .await?;
            Ok(seq.unwrap_or(0) as u64)
        })
    }

    fn seen(&self, player_ids: Vec<String>, until_ms: u64) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let mut tx = self.begin_write().await?;
            let q = S::Db::sql(
                "INSERT INTO presence (player_id, until_ms) VALUES ($1, $2)
                          ON CONFLICT (player_id) DO UPDATE SET until_ms = excluded.until_ms
                          WHERE presence.until_ms < excluded.until_ms",
            );
            for id in &player_ids {
                sqlx::query(&q).bind(id).bind(until_ms as i64).execute(&mut *tx).await?;
            }
            tx.commit().await?;
            Ok(())
        })
    }

    fn online_until(&self, player_id: String) -> StoreFuture<'_, u64> {
        Box::pin(async move {
            let q = S::Db::sql("SELECT until_ms FROM presence WHERE player_id = $1");
            let row: Option<(i64,)> = sqlx::query_as(&q).bind(&player_id).fetch_optional(self.pool()).await?;
            Ok(row.map_or(0, |(u,)| u as u64))
        })
    }
}
