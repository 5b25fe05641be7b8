//! Tournaments, event-sourced like games, in both stores: a tournament's events in order,
//! and a row per tournament (name, phase) for listing and for the director's scan.
//!
//! An append names how many events the writer saw (`expected`): the rows are keyed by
//! `(tournament_id, seq)`, so of two servers deciding the same step one lands and the
//! other gets `false`, reloads and finds the step taken.

use serde::{Deserialize, Serialize};
use weiqi_tournament::{TournamentEvent, TournamentPhase};

use sqlx::{ColumnIndex, Database, Decode, Encode, Executor, IntoArguments, Pool, Type};

use crate::sql::{SqlDb, SqlStore};
use crate::{StoreError, StoreFuture};

/// A tournament as listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TournamentRow {
    pub id: String,
    pub name: String,
    pub phase: TournamentPhase,
    pub created_ms: u64,
}

pub trait TournamentStore: Send + Sync {
    /// Appends `events` after the first `expected`; `false` (nothing written) when the
    /// stored log is not exactly `expected` long. The first append (`expected == 0`) must
    /// start with `Created`, and makes the tournament's row.
    fn append_tournament(
        &self,
        id: String,
        expected: u64,
        events: Vec<TournamentEvent>,
        phase: TournamentPhase,
    ) -> StoreFuture<'_, bool>;
    /// The events in order (empty: no such tournament).
    fn tournament_events(&self, id: String) -> StoreFuture<'_, Vec<TournamentEvent>>;
    /// The newest first; `running_only` for those not finished (what the director runs).
    fn tournaments(&self, running_only: bool, limit: usize) -> StoreFuture<'_, Vec<TournamentRow>>;
}

pub(crate) fn schema() -> Vec<String> {
    vec![
        "CREATE TABLE IF NOT EXISTS tournaments (
            tournament_id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            phase TEXT NOT NULL,
            created_ms BIGINT NOT NULL)"
            .into(),
        "CREATE INDEX IF NOT EXISTS tournaments_by_phase ON tournaments (phase, created_ms)".into(),
        "CREATE TABLE IF NOT EXISTS tournament_events (
            tournament_id TEXT NOT NULL,
            seq BIGINT NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (tournament_id, seq))"
            .into(),
    ]
}

pub(crate) fn phase_name(p: TournamentPhase) -> &'static str {
    match p {
        TournamentPhase::Registration => "registration",
        TournamentPhase::Running => "running",
        TournamentPhase::Finished => "finished",
    }
}

fn phase_of(id: &str, s: &str) -> Result<TournamentPhase, StoreError> {
    Ok(match s {
        "registration" => TournamentPhase::Registration,
        "running" => TournamentPhase::Running,
        "finished" => TournamentPhase::Finished,
        other => {
            return Err(StoreError::Corrupt {
                game_id: id.to_string(),
                why: format!("unknown tournament phase {other}"),
            });
        }
    })
}

fn corrupt(id: &str, why: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt {
        game_id: id.to_string(),
        why: why.to_string(),
    }
}

fn row_of((id, name, phase, created): (String, String, String, i64)) -> Result<TournamentRow, StoreError> {
    Ok(TournamentRow {
        phase: phase_of(&id, &phase)?,
        id,
        name,
        created_ms: created as u64,
    })
}

/// A lost race on `(tournament_id, seq)` or on the tournament's row.
fn lost_race(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(d) if d.is_unique_violation())
}

/// One implementation for both databases (`crate::sql`).
impl<S: SqlStore> TournamentStore for S
where
    for<'c> &'c mut <S::Db as Database>::Connection: Executor<'c, Database = S::Db>,
    for<'c> &'c Pool<S::Db>: Executor<'c, Database = S::Db>,
    for<'q> <S::Db as Database>::Arguments<'q>: IntoArguments<'q, S::Db>,
    for<'q> String: Encode<'q, S::Db> + Decode<'q, S::Db> + Type<S::Db>,
    for<'q> &'q str: Encode<'q, S::Db> + Type<S::Db>,
    for<'q> i64: Encode<'q, S::Db> + Decode<'q, S::Db> + Type<S::Db>,
    usize: ColumnIndex<<S::Db as Database>::Row>,
{
    fn append_tournament(
        &self,
        id: String,
        expected: u64,
        events: Vec<TournamentEvent>,
        phase: TournamentPhase,
    ) -> StoreFuture<'_, bool> {
        Box::pin(async move {
            let mut tx = self.begin_write().await?;
            if expected == 0 {
                let Some(TournamentEvent::Created { settings, at_ms, .. }) = events.first() else {
                    return Err(corrupt(&id, "a tournament's first event is `created`"));
                };
                let q = S::Db::sql(
                    "INSERT INTO tournaments (tournament_id, name, phase, created_ms) VALUES ($1, $2, $3, $4)",
                );
                let made = sqlx::query(&q)
                    .bind(&id)
                    .bind(&settings.name)
                    .bind(phase_name(phase))
                    .bind(*at_ms as i64)
                    .execute(&mut *tx)
                    .await;
                match made {
                    Err(e) if lost_race(&e) => return Ok(false),
                    r => r?,
                };
            } else {
                // The log's length is checked, not only its next key: an append
                // that skipped a seq would otherwise land.
                let q = S::Db::sql("SELECT COUNT(*) FROM tournament_events WHERE tournament_id = $1");
                let (n,): (i64,) = sqlx::query_as(&q).bind(&id).fetch_one(&mut *tx).await?;
                if n as u64 != expected {
                    return Ok(false);
                }
                let q = S::Db::sql("UPDATE tournaments SET phase = $1 WHERE tournament_id = $2");
                sqlx::query(&q)
                    .bind(phase_name(phase))
                    .bind(&id)
                    .execute(&mut *tx)
                    .await?;
            }
            let q = S::Db::sql("INSERT INTO tournament_events (tournament_id, seq, body) VALUES ($1, $2, $3)");
            for (k, e) in events.iter().enumerate() {
                let body = serde_json::to_string(e).map_err(StoreError::local)?;
                let put = sqlx::query(&q)
                    .bind(&id)
                    .bind((expected + k as u64 + 1) as i64)
                    .bind(body)
                    .execute(&mut *tx)
                    .await;
                match put {
                    Err(e) if lost_race(&e) => return Ok(false),
                    r => r?,
                };
            }
            match tx.commit().await {
                Err(e) if lost_race(&e) => Ok(false),
                r => r.map(|_| true).map_err(Into::into),
            }
        })
    }

    fn tournament_events(&self, id: String) -> StoreFuture<'_, Vec<TournamentEvent>> {
        Box::pin(async move {
            let q = S::Db::sql("SELECT body FROM tournament_events WHERE tournament_id = $1 ORDER BY seq");
            let rows: Vec<(String,)> = sqlx::query_as(&q).bind(&id).fetch_all(self.pool()).await?;
            rows.into_iter()
                .map(|(body,)| serde_json::from_str(&body).map_err(|e| corrupt(&id, e)))
                .collect()
        })
    }

    fn tournaments(&self, running_only: bool, limit: usize) -> StoreFuture<'_, Vec<TournamentRow>> {
        Box::pin(async move {
            let filter = if running_only { "WHERE phase <> 'finished'" } else { "" };
            let q = S::Db::sql(&format!(
                "SELECT tournament_id, name, phase, created_ms FROM tournaments {filter}
                 ORDER BY created_ms DESC, tournament_id LIMIT $1"
            ));
            let rows: Vec<(String, String, String, i64)> =
                sqlx::query_as(&q).bind(limit as i64).fetch_all(self.pool()).await?;
            rows.into_iter().map(row_of).collect()
        })
    }
}
