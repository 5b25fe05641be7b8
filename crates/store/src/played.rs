//! Players' finished games (`played_games`), in both databases: one row per signed-in
//! seat of a finished game, for the player's profile, read newest first a page at a time.

use sqlx::{ColumnIndex, Database, Decode, Encode, Executor, IntoArguments, Pool, Type};
use weiqi_game::PlayerRef;
use weiqi_game::weiqi_rules::Color;
use weiqi_players::played::{PageAfter, PlayedGame};

use crate::StoreFuture;
use crate::sql::{RowsAffected, SqlDb, SqlStore};

/// A player's finished games.
pub trait PlayedGames: Send + Sync + 'static {
    /// Records finished games (a row already there, for the same player and game, stays).
    fn record_played(&self, rows: Vec<PlayedGame>) -> StoreFuture<'_, ()>;
    /// One player's finished games after `after`, newest first (ties by game id, last
    /// first), at most `limit`.
    fn played_games(
        &self,
        player_id: String,
        after: Option<PageAfter>,
        limit: usize,
    ) -> StoreFuture<'_, Vec<PlayedGame>>;
}

/// The table, in the SQL both databases accept.
pub(crate) const SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS played_games (
        player_id TEXT NOT NULL,
        game_id TEXT NOT NULL,
        ended_ms BIGINT NOT NULL,
        board_size BIGINT NOT NULL,
        color TEXT NOT NULL,
        opponent_id TEXT NOT NULL,
        opponent_name TEXT NOT NULL,
        opponent_bot BOOLEAN NOT NULL,
        result TEXT NOT NULL,
        score DOUBLE PRECISION NOT NULL,
        rated BOOLEAN NOT NULL,
        PRIMARY KEY (player_id, game_id))",
    "CREATE INDEX IF NOT EXISTS played_by_player ON played_games (player_id, ended_ms, game_id)",
];

/// What a page that starts at the beginning is after: every game.
pub(crate) fn bounds(after: Option<PageAfter>) -> (u64, String) {
    after.map_or((i64::MAX as u64, String::new()), |a| (a.ended_ms, a.game_id))
}

/// Whether `g` comes after the page mark `(ended_ms, game_id)` in newest-first order.
pub(crate) fn is_after(g: &PlayedGame, (ms, id): &(u64, String)) -> bool {
    g.ended_ms < *ms || (g.ended_ms == *ms && (id.is_empty() || g.game_id < *id))
}

type Row = (String, i64, i64, String, String, String, bool, String, f64, bool);

impl<S: SqlStore> PlayedGames for S
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
    fn record_played(&self, rows: Vec<PlayedGame>) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let mut tx = self.begin_write().await?;
            let q = S::Db::sql(
                "INSERT INTO played_games (player_id, game_id, ended_ms, board_size, color, opponent_id,
                                           opponent_name, opponent_bot, result, score, rated)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT DO NOTHING",
            );
            for g in &rows {
                sqlx::query(&q)
                    .bind(&g.player_id)
                    .bind(&g.game_id)
                    .bind(g.ended_ms as i64)
                    .bind(g.board_size as i64)
                    .bind(if g.color == Color::Black { "b" } else { "w" })
                    // (An anonymous opponent is the empty id.)
                    .bind(g.opponent.as_ref().map_or("", |o| o.id.as_str()))
                    .bind(g.opponent.as_ref().map_or("", |o| o.name.as_str()))
                    .bind(g.opponent.as_ref().is_some_and(|o| o.bot))
                    .bind(&g.result)
                    .bind(g.score)
                    .bind(g.rated)
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await?;
            Ok(())
        })
    }

    fn played_games(
        &self,
        player_id: String,
        after: Option<PageAfter>,
        limit: usize,
    ) -> StoreFuture<'_, Vec<PlayedGame>> {
        Box::pin(async move {
            let (ms, id) = bounds(after);
            let q = S::Db::sql(
                "SELECT game_id, ended_ms, board_size, color, opponent_id, opponent_name, opponent_bot,
                        result, score, rated
                 FROM played_games
                 WHERE player_id = $1 AND (ended_ms < $2 OR (ended_ms = $2 AND ($3 = '' OR game_id < $3)))
                 ORDER BY ended_ms DESC, game_id DESC LIMIT $4",
            );
            let rows: Vec<Row> = sqlx::query_as(&q)
                .bind(&player_id)
                .bind(ms as i64)
                .bind(&id)
                .bind(limit as i64)
                .fetch_all(self.pool())
                .await?;
            Ok(rows
                .into_iter()
                .map(
                    |(game_id, ended, size, color, opp_id, opp_name, opp_bot, result, score, rated)| PlayedGame {
                        player_id: player_id.clone(),
                        game_id,
                        board_size: size as u32,
                        color: if color == "b" { Color::Black } else { Color::White },
                        opponent: (!opp_id.is_empty()).then_some(PlayerRef {
                            id: opp_id,
                            name: opp_name,
                            bot: opp_bot,
                        }),
                        result,
                        score,
                        rated,
                        ended_ms: ended as u64,
                    },
                )
                .collect())
        })
    }
}
