//! Rated games whose ratings are still to apply, in both databases.

use sqlx::{ColumnIndex, Database, Decode, Encode, Executor, IntoArguments, Pool, Type};

use crate::StoreFuture;
use crate::sql::{RowsAffected, SqlDb, SqlStore};

/// Rated games whose ratings are still to apply (what a crash between a game's end and its
/// rating leaves behind).
pub trait PendingRatings: Send + Sync + 'static {
    /// A rated game was created: until its rating is applied, a recovery pass can find it.
    fn expect_rating(&self, game_id: String, at_ms: u64) -> StoreFuture<'_, ()>;
    /// Rated games whose rating is still to apply (or which will not count).
    fn pending_ratings(&self, limit: usize) -> StoreFuture<'_, Vec<(String, u64)>>;
    fn drop_pending_rating(&self, game_id: String) -> StoreFuture<'_, ()>;
}

impl<S: SqlStore> PendingRatings for S
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
    fn expect_rating(&self, game_id: String, at_ms: u64) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let q = S::Db::sql("INSERT INTO rating_pending (game_id, at_ms) VALUES ($1, $2) ON CONFLICT DO NOTHING");
            sqlx::query(&q)
                .bind(&game_id)
                .bind(at_ms as i64)
                .execute(self.pool())
                .await?;
            Ok(())
        })
    }

    fn pending_ratings(&self, limit: usize) -> StoreFuture<'_, Vec<(String, u64)>> {
        Box::pin(async move {
            let q = S::Db::sql("SELECT game_id, at_ms FROM rating_pending ORDER BY at_ms, game_id LIMIT $1");
            let rows: Vec<(String, i64)> = sqlx::query_as(&q).bind(limit as i64).fetch_all(self.pool()).await?;
            Ok(rows.into_iter().map(|(g, at)| (g, at as u64)).collect())
        })
    }

    fn drop_pending_rating(&self, game_id: String) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let q = S::Db::sql("DELETE FROM rating_pending WHERE game_id = $1");
            sqlx::query(&q).bind(&game_id).execute(self.pool()).await?;
            Ok(())
        })
    }
}
