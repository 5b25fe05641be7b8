//! Direct challenges in both databases: a challenge changes state only while open
//! (`UPDATE ... WHERE state = 'open'`), and its players' feed events and an accepted one's
//! pairing are written in the same transaction.

use sqlx::{ColumnIndex, Database, Decode, Encode, Executor, IntoArguments, Pool, Type};
use weiqi_players::{Challenge, ChallengeState, Pairing, PlayerEventKind};

use super::{json, parse};
use crate::sql::{RowsAffected, SqlDb, SqlStore};
use crate::{StoreError, StoreFuture};

/// Direct challenges.
pub trait ChallengeStore: Send + Sync + 'static {
    /// Opens a challenge and tells the challenged player; false (and nothing written) when
    /// the challenger already has `max_open` open challenges.
    fn create_challenge(&self, c: Challenge, max_open: usize) -> StoreFuture<'_, bool>;
    fn challenge(&self, id: String) -> StoreFuture<'_, Option<Challenge>>;
    /// Moves an open challenge to `state` (with a decline reason, and the pairing of an
    /// accepted one) and tells both players; false when it was no longer open.
    fn answer_challenge(
        &self,
        id: String,
        state: ChallengeState,
        reason: String,
        pairing: Option<Pairing>,
        now_ms: u64,
    ) -> StoreFuture<'_, bool>;
    /// A player's open challenges, made or received, oldest first.
    fn open_challenges(&self, player_id: String) -> StoreFuture<'_, Vec<Challenge>>;
}

fn challenge_of((id, state, body): (String, String, String)) -> Result<Challenge, StoreError> {
    let mut c: Challenge = parse(&id, &body)?;
    c.state = ChallengeState::from_name(&state)
        .ok_or_else(|| StoreError::local(format!("unknown challenge state {state:?}")))?;
    Ok(c)
}

/// One implementation for both databases (`crate::sql`).
impl<S: SqlStore> ChallengeStore for S
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
    fn create_challenge(&self, c: Challenge, max_open: usize) -> StoreFuture<'_, bool> {
        Box::pin(async move {
            let mut tx = self.begin_write().await?;
            let q = S::Db::sql("SELECT COUNT(*) FROM challenges WHERE challenger_id = $1 AND state = 'open'");
            let (open,): (i64,) = sqlx::query_as(&q).bind(&c.challenger.id).fetch_one(&mut *tx).await?;
            if open as usize >= max_open {
                return Ok(false);
            }
            let q = S::Db::sql(
                "INSERT INTO challenges (challenge_id, challenger_id, challenged_id, state, body, created_ms)
                          VALUES ($1, $2, $3, $4, $5, $6)",
            );
            sqlx::query(&q)
                .bind(&c.id)
                .bind(&c.challenger.id)
                .bind(&c.challenged.id)
                .bind(c.state.name())
                .bind(json(&c)?)
                .bind(c.created_ms as i64)
                .execute(&mut *tx)
                .await?;
            let event = (
                c.challenged.id.clone(),
                PlayerEventKind::ChallengeReceived { challenge: c.clone() },
            );
            push!(tx, [event], c.created_ms, S::Db::sql);
            tx.commit().await?;
            Ok(true)
        })
    }

    fn challenge(&self, id: String) -> StoreFuture<'_, Option<Challenge>> {
        Box::pin(async move {
            let q = S::Db::sql("SELECT challenge_id, state, body FROM challenges WHERE challenge_id = $1");
            let row: Option<(String, String, String)> =
                sqlx::query_as(&q).bind(&id).fetch_optional(self.pool()).await?;
            row.map(challenge_of).transpose()
        })
    }

    fn answer_challenge(
        &self,
        id: String,
        state: ChallengeState,
        reason: String,
        pairing: Option<Pairing>,
        now_ms: u64,
    ) -> StoreFuture<'_, bool> {
        Box::pin(async move {
            let mut tx = self.begin_write().await?;
            let q = S::Db::sql("SELECT challenge_id, state, body FROM challenges WHERE challenge_id = $1");
            let row: Option<(String, String, String)> = sqlx::query_as(&q).bind(&id).fetch_optional(&mut *tx).await?;
            let Some(mut c) = row.map(challenge_of).transpose()? else {
                return Ok(false);
            };
            c.state = state;
            c.reason = reason;
            c.game_id = pairing.as_ref().map(|p| p.game_id.clone());
            let q =
                S::Db::sql("UPDATE challenges SET state = $2, body = $3 WHERE challenge_id = $1 AND state = 'open'");
            let changed = sqlx::query(&q)
                .bind(&id)
                .bind(state.name())
                .bind(json(&c)?)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            if changed == 0 {
                return Ok(false);
            }
            if let Some(p) = &pairing {
                insert_pairing!(tx, p, S::Db::sql);
            }
            let told = [c.challenger.id.clone(), c.challenged.id.clone()]
                .map(|who| (who, PlayerEventKind::ChallengeAnswered { challenge: c.clone() }));
            push!(tx, told, now_ms, S::Db::sql);
            tx.commit().await?;
            Ok(true)
        })
    }

    fn open_challenges(&self, player_id: String) -> StoreFuture<'_, Vec<Challenge>> {
        Box::pin(async move {
            let q = S::Db::sql(&format!(
                "SELECT challenge_id, state, body FROM challenges
                          WHERE (challenger_id = $1 OR challenged_id = $1) AND state = 'open'
                          ORDER BY created_ms, {} LIMIT 1000",
                S::Db::ARRIVAL
            ));
            let rows: Vec<(String, String, String)> =
                sqlx::query_as(&q).bind(&player_id).fetch_all(self.pool()).await?;
            rows.into_iter().map(challenge_of).collect()
        })
    }
}
