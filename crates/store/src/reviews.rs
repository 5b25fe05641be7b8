//! Game reviews (`reviews`, `review_moves`), in both databases: a finished game's review
//! by the tree search, stored once (the first to be written stays, whichever replica
//! computed it) and read back by anyone who asks again.

use sqlx::{ColumnIndex, Database, Decode, Encode, Executor, IntoArguments, Pool, Type};
use weiqi_game::weiqi_rules::{Color, Move, Point};
use weiqi_gtp::{GameReview, MoveReview};

use crate::StoreFuture;
use crate::sql::{RowsAffected, SqlDb, SqlStore};

/// Reviews of finished games.
pub trait Reviews: Send + Sync + 'static {
    /// Keeps `review` as the game's unless one is stored already, and answers the one
    /// that is stored.
    fn put_review(&self, game_id: String, review: GameReview, at_ms: u64) -> StoreFuture<'_, GameReview>;
    /// The game's stored review.
    fn review(&self, game_id: String) -> StoreFuture<'_, Option<GameReview>>;
}

/// The tables, in the SQL both databases accept. A move's points are columns (x, y),
/// -1 for a pass.
pub(crate) const SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS reviews (
        game_id TEXT PRIMARY KEY,
        visits BIGINT NOT NULL,
        created_ms BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS review_moves (
        game_id TEXT NOT NULL,
        number BIGINT NOT NULL,
        color TEXT NOT NULL,
        played_x BIGINT NOT NULL,
        played_y BIGINT NOT NULL,
        black_before DOUBLE PRECISION NOT NULL,
        black_after DOUBLE PRECISION NOT NULL,
        best_x BIGINT NOT NULL,
        best_y BIGINT NOT NULL,
        black_after_best DOUBLE PRECISION NOT NULL,
        loss DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (game_id, number))",
];

/// A move as two columns.
fn columns(m: Move) -> (i64, i64) {
    match m {
        Move::Place(p) => (p.x as i64, p.y as i64),
        Move::Pass => (-1, -1),
    }
}

fn from_columns(x: i64, y: i64) -> Move {
    match (u8::try_from(x), u8::try_from(y)) {
        (Ok(x), Ok(y)) => Move::Place(Point { x, y }),
        _ => Move::Pass,
    }
}

type Row = (i64, String, i64, i64, f64, f64, i64, i64, f64, f64);

impl<S: SqlStore> Reviews for S
where
    for<'c> &'c mut <S::Db as Database>::Connection: Executor<'c, Database = S::Db>,
    for<'c> &'c Pool<S::Db>: Executor<'c, Database = S::Db>,
    for<'q> <S::Db as Database>::Arguments<'q>: IntoArguments<'q, S::Db>,
    <S::Db as Database>::QueryResult: RowsAffected,
    for<'q> String: Encode<'q, S::Db> + Decode<'q, S::Db> + Type<S::Db>,
    for<'q> &'q str: Encode<'q, S::Db> + Type<S::Db>,
    for<'q> i64: Encode<'q, S::Db> + Decode<'q, S::Db> + Type<S::Db>,
    for<'q> f64: Encode<'q, S::Db> + Decode<'q, S::Db> + Type<S::Db>,
    usize: ColumnIndex<<S::Db as Database>::Row>,
{
    fn put_review(&self, game_id: String, review: GameReview, at_ms: u64) -> StoreFuture<'_, GameReview> {
        Box::pin(async move {
            let mut tx = self.begin_write().await?;
            let q = S::Db::sql(
                "INSERT INTO reviews (game_id, visits, created_ms) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
            );
            let inserted = sqlx::query(&q)
                .bind(&game_id)
                .bind(review.visits as i64)
                .bind(at_ms as i64)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            if inserted == 0 {
                // Another replica's (or an earlier) review is the game's.
                tx.commit().await?;
                return Ok(self.review(game_id).await?.unwrap_or(review));
            }
            let q = S::Db::sql(
                "INSERT INTO review_moves (game_id, number, color, played_x, played_y, black_before, black_after,
                                           best_x, best_y, black_after_best, loss)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
            );
            for m in &review.moves {
                let (px, py) = columns(m.played);
                let (bx, by) = columns(m.best);
                sqlx::query(&q)
                    .bind(&game_id)
                    .bind(m.number as i64)
                    .bind(if m.color == Color::Black { "b" } else { "w" })
                    .bind(px)
                    .bind(py)
                    .bind(m.black_before)
                    .bind(m.black_after)
                    .bind(bx)
                    .bind(by)
                    .bind(m.black_after_best)
                    .bind(m.loss)
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await?;
            Ok(review)
        })
    }

    fn review(&self, game_id: String) -> StoreFuture<'_, Option<GameReview>> {
        Box::pin(async move {
            let q = S::Db::sql("SELECT visits FROM reviews WHERE game_id = $1");
            let Some((visits,)): Option<(i64,)> = sqlx::query_as(&q).bind(&game_id).fetch_optional(self.pool()).await?
            else {
                return Ok(None);
            };
            let q = S::Db::sql(
                "SELECT number, color, played_x, played_y, black_before, black_after, best_x, best_y,
                        black_after_best, loss
                 FROM review_moves WHERE game_id = $1 ORDER BY number",
            );
            let rows: Vec<Row> = sqlx::query_as(&q).bind(&game_id).fetch_all(self.pool()).await?;
            let moves = rows
                .into_iter()
                .map(
                    |(number, color, px, py, before, after, bx, by, after_best, loss)| MoveReview {
                        number: number as usize,
                        color: if color == "b" { Color::Black } else { Color::White },
                        played: from_columns(px, py),
                        black_before: before,
                        black_after: after,
                        best: from_columns(bx, by),
                        black_after_best: after_best,
                        loss,
                    },
                )
                .collect();
            Ok(Some(GameReview {
                visits: visits as u32,
                moves,
            }))
        })
    }
}
