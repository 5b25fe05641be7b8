//! Players and their ratings, in both stores: accounts (guests with a token hash, and
//! platform players known by their `sub`), one rating per player and board size, and a
//! history row per player and rated game. A game is rated at most once (`rated_games`),
//! and a rating's read, update and history row are one transaction: two games of the same
//! player ending at once update it one after the other, never from the same old value.

use sqlx::{ColumnIndex, Database, Decode, Encode, Executor, IntoArguments, Pool, Type};
use weiqi_players::{HistoryRow, PlayerRecord, RateFn, RatedGame, RatingRow};

use crate::StoreFuture;
use crate::sql::{RowsAffected, SqlDb, SqlStore};

/// Accounts and ratings (the records are `weiqi-players`'s).
pub trait PlayerStore: Send + Sync + 'static {
    /// A new guest account with the hash of its token; false (and nothing stored) when
    /// another player holds its name (the same [`weiqi_players::name_key`]).
    fn register_guest(&self, player: PlayerRecord, token_hash: String) -> StoreFuture<'_, bool>;
    /// The guest whose token hashes to `token_hash`.
    fn guest_by_token(&self, token_hash: String) -> StoreFuture<'_, Option<PlayerRecord>>;
    /// A platform's player: created on first sight, its name and bot flag kept current.
    fn upsert_player(&self, player: PlayerRecord) -> StoreFuture<'_, ()>;
    /// A player and their ratings (every board size they have played rated).
    fn player(&self, id: String) -> StoreFuture<'_, Option<(PlayerRecord, Vec<RatingRow>)>>;
    /// The leaderboard at one size: highest rating first.
    fn leaderboard(&self, board_size: u32, limit: usize) -> StoreFuture<'_, Vec<(PlayerRecord, RatingRow)>>;
    /// A player's rated games at one size, newest first.
    fn rating_history(&self, id: String, board_size: u32, limit: usize) -> StoreFuture<'_, Vec<HistoryRow>>;
    /// Applies a rated game once: false when it was applied before.
    fn rate_game(&self, game: RatedGame, rate: RateFn) -> StoreFuture<'_, bool>;
}

/// The tables, in the SQL both databases accept.
pub(crate) const SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS players (
        player_id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        bot BOOLEAN NOT NULL,
        guest BOOLEAN NOT NULL,
        token_hash TEXT UNIQUE,
        created_ms BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS ratings (
        player_id TEXT NOT NULL,
        board_size BIGINT NOT NULL,
        rating DOUBLE PRECISION NOT NULL,
        deviation DOUBLE PRECISION NOT NULL,
        volatility DOUBLE PRECISION NOT NULL,
        games BIGINT NOT NULL,
        last_ms BIGINT NOT NULL,
        PRIMARY KEY (player_id, board_size))",
    "CREATE INDEX IF NOT EXISTS ratings_by_size ON ratings (board_size, rating)",
    "CREATE TABLE IF NOT EXISTS rated_games (game_id TEXT PRIMARY KEY, at_ms BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS rating_history (
        game_id TEXT NOT NULL,
        player_id TEXT NOT NULL,
        board_size BIGINT NOT NULL,
        at_ms BIGINT NOT NULL,
        opponent_id TEXT NOT NULL,
        score DOUBLE PRECISION NOT NULL,
        rating_before DOUBLE PRECISION NOT NULL,
        rating DOUBLE PRECISION NOT NULL,
        deviation DOUBLE PRECISION NOT NULL,
        volatility DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (game_id, player_id))",
    "CREATE INDEX IF NOT EXISTS history_by_player ON rating_history (player_id, board_size, at_ms)",
    // Guests' names, one player each ([`weiqi_players::name_key`]): the key makes two
    // registrations of one name at once (on two replicas) conflict in the database.
    "CREATE TABLE IF NOT EXISTS player_names (name_key TEXT PRIMARY KEY, player_id TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS players_by_name ON players (lower(name))",
];

type PlayerTuple = (String, String, bool, bool, i64);
type RatingTuple = (i64, f64, f64, f64, i64, i64);

fn player_of((id, name, bot, guest, created): PlayerTuple) -> PlayerRecord {
    PlayerRecord {
        id,
        name,
        bot,
        guest,
        created_ms: created as u64,
    }
}

fn rating_of((board_size, rating, deviation, volatility, games, last): RatingTuple) -> RatingRow {
    RatingRow {
        board_size: board_size as u32,
        rating,
        deviation,
        volatility,
        games: games as u32,
        last_ms: last as u64,
    }
}

const PLAYER_COLS: &str = "p.player_id, p.name, p.bot, p.guest, p.created_ms";
const RATING_COLS: &str = "r.board_size, r.rating, r.deviation, r.volatility, r.games, r.last_ms";

/// One implementation for both databases (`crate::sql`).
impl<S: SqlStore> PlayerStore for S
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
    fn register_guest(&self, p: PlayerRecord, token_hash: String) -> StoreFuture<'_, bool> {
        Box::pin(async move {
            let key = weiqi_players::name_key(&p.name);
            let mut tx = self.begin_write().await?;
            // Players from before the names' table (and platform players) hold their
            // names too, found through `players_by_name`. (SQLite's lower() folds ASCII
            // letters only, PostgreSQL's follows the database's locale: the table's key,
            // folded here, is what decides between guests.)
            let q = S::Db::sql("SELECT player_id FROM players WHERE lower(name) = $1");
            let held: Option<(String,)> = sqlx::query_as(&q).bind(&key).fetch_optional(&mut *tx).await?;
            let q = S::Db::sql("INSERT INTO player_names (name_key, player_id) VALUES ($1, $2) ON CONFLICT DO NOTHING");
            if held.is_some()
                || sqlx::query(&q)
                    .bind(&key)
                    .bind(&p.id)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected()
                    == 0
            {
                return Ok(false);
            }
            let q = S::Db::sql(
                "INSERT INTO players (player_id, name, bot, guest, token_hash, created_ms)
                          VALUES ($1, $2, $3, TRUE, $4, $5)",
            );
            sqlx::query(&q)
                .bind(&p.id)
                .bind(&p.name)
                .bind(p.bot)
                .bind(&token_hash)
                .bind(p.created_ms as i64)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            Ok(true)
        })
    }

    fn guest_by_token(&self, token_hash: String) -> StoreFuture<'_, Option<PlayerRecord>> {
        Box::pin(async move {
            let q = S::Db::sql(&format!("SELECT {PLAYER_COLS} FROM players p WHERE p.token_hash = $1"));
            let row: Option<PlayerTuple> = sqlx::query_as(&q).bind(&token_hash).fetch_optional(self.pool()).await?;
            Ok(row.map(player_of))
        })
    }

    fn upsert_player(&self, p: PlayerRecord) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let q = S::Db::sql(
                "INSERT INTO players (player_id, name, bot, guest, created_ms)
                          VALUES ($1, $2, $3, FALSE, $4)
                          ON CONFLICT (player_id) DO UPDATE SET name = excluded.name, bot = excluded.bot",
            );
            sqlx::query(&q)
                .bind(&p.id)
                .bind(&p.name)
                .bind(p.bot)
                .bind(p.created_ms as i64)
                .execute(self.pool())
                .await?;
            Ok(())
        })
    }

    fn player(&self, id: String) -> StoreFuture<'_, Option<(PlayerRecord, Vec<RatingRow>)>> {
        Box::pin(async move {
            let q = S::Db::sql(&format!("SELECT {PLAYER_COLS} FROM players p WHERE p.player_id = $1"));
            let row: Option<PlayerTuple> = sqlx::query_as(&q).bind(&id).fetch_optional(self.pool()).await?;
            let Some(row) = row else { return Ok(None) };
            let q = S::Db::sql(&format!(
                "SELECT {RATING_COLS} FROM ratings r WHERE r.player_id = $1 AND r.games > 0 ORDER BY r.board_size"
            ));
            let ratings: Vec<RatingTuple> = sqlx::query_as(&q).bind(&id).fetch_all(self.pool()).await?;
            Ok(Some((player_of(row), ratings.into_iter().map(rating_of).collect())))
        })
    }

    fn leaderboard(&self, board_size: u32, limit: usize) -> StoreFuture<'_, Vec<(PlayerRecord, RatingRow)>> {
        Box::pin(async move {
            let q = S::Db::sql(&format!(
                "SELECT {PLAYER_COLS}, {RATING_COLS} FROM ratings r JOIN players p ON p.player_id = r.player_id
                 WHERE r.board_size = $1 AND r.games > 0 ORDER BY r.rating DESC, p.player_id LIMIT $2"
            ));
            #[allow(clippy::type_complexity)]
            let rows: Vec<(String, String, bool, bool, i64, i64, f64, f64, f64, i64, i64)> = sqlx::query_as(&q)
                .bind(board_size as i64)
                .bind(limit as i64)
                .fetch_all(self.pool())
                .await?;
            Ok(rows
                .into_iter()
                .map(|(id, name, bot, guest, created, size, r, d, v, games, last)| {
                    (
                        player_of((id, name, bot, guest, created)),
                        rating_of((size, r, d, v, games, last)),
                    )
                })
                .collect())
        })
    }

    fn rating_history(&self, id: String, board_size: u32, limit: usize) -> StoreFuture<'_, Vec<HistoryRow>> {
        Box::pin(async move {
            let q = S::Db::sql(
                "SELECT game_id, board_size, at_ms, opponent_id, score, rating_before, rating, deviation, volatility
                 FROM rating_history WHERE player_id = $1 AND board_size = $2
                 ORDER BY at_ms DESC, game_id LIMIT $3",
            );
            #[allow(clippy::type_complexity)]
            let rows: Vec<(String, i64, i64, String, f64, f64, f64, f64, f64)> = sqlx::query_as(&q)
                .bind(&id)
                .bind(board_size as i64)
                .bind(limit as i64)
                .fetch_all(self.pool())
                .await?;
            Ok(rows
                .into_iter()
                .map(
                    |(game_id, size, at, opponent_id, score, before, rating, deviation, volatility)| HistoryRow {
                        game_id,
                        board_size: size as u32,
                        at_ms: at as u64,
                        opponent_id,
                        score,
                        rating_before: before,
                        rating,
                        deviation,
                        volatility,
                    },
                )
                .collect())
        })
    }

    fn rate_game(&self, g: RatedGame, rate: RateFn) -> StoreFuture<'_, bool> {
        Box::pin(async move {
            let mut tx = self.begin_write().await?;
            let q = S::Db::sql("INSERT INTO rated_games (game_id, at_ms) VALUES ($1, $2) ON CONFLICT DO NOTHING");
            let fresh = sqlx::query(&q)
                .bind(&g.game_id)
                .bind(g.at_ms as i64)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            let q = S::Db::sql("DELETE FROM rating_pending WHERE game_id = $1");
            sqlx::query(&q).bind(&g.game_id).execute(&mut *tx).await?;
            if fresh == 0 {
                tx.commit().await?;
                return Ok(false);
            }
            // Both rows exist (a placeholder with no games) and are locked in one
            // order, so concurrent games of the same players wait, never deadlock.
            let mut ids = [g.black.as_str(), g.white.as_str()];
            ids.sort_unstable();
            let q = S::Db::sql(
                "INSERT INTO ratings (player_id, board_size, rating, deviation, volatility, games, last_ms)
                 VALUES ($1, $2, 0, 0, 0, 0, 0) ON CONFLICT DO NOTHING",
            );
            for id in ids {
                sqlx::query(&q)
                    .bind(id)
                    .bind(g.board_size as i64)
                    .execute(&mut *tx)
                    .await?;
            }
            let q = S::Db::sql(&format!(
                "SELECT {RATING_COLS} FROM ratings r WHERE r.player_id = $1 AND r.board_size = $2{}",
                S::Db::LOCK
            ));
            let mut current = [None, None];
            for id in ids {
                let row: RatingTuple = sqlx::query_as(&q)
                    .bind(id)
                    .bind(g.board_size as i64)
                    .fetch_one(&mut *tx)
                    .await?;
                let row = rating_of(row);
                let i = usize::from(id != g.black);
                current[i] = (row.games > 0).then_some(row);
            }
            let [black, white] = rate(current[0], current[1], &g);
            let update = S::Db::sql(
                "UPDATE ratings SET rating = $3, deviation = $4, volatility = $5, games = $6, last_ms = $7
                 WHERE player_id = $1 AND board_size = $2",
            );
            let history = S::Db::sql(
                "INSERT INTO rating_history (game_id, player_id, board_size, at_ms, opponent_id, score,
                                             rating_before, rating, deviation, volatility)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            );
            let sides = [
                (&g.black, &g.white, g.black_score, black),
                (&g.white, &g.black, 1.0 - g.black_score, white),
            ];
            for (id, opponent, score, (before, after)) in sides {
                sqlx::query(&update)
                    .bind(id)
                    .bind(g.board_size as i64)
                    .bind(after.rating)
                    .bind(after.deviation)
                    .bind(after.volatility)
                    .bind(after.games as i64)
                    .bind(after.last_ms as i64)
                    .execute(&mut *tx)
                    .await?;
                sqlx::query(&history)
                    .bind(&g.game_id)
                    .bind(id)
                    .bind(g.board_size as i64)
                    .bind(g.at_ms as i64)
                    .bind(opponent)
                    .bind(score)
                    .bind(before)
                    .bind(after.rating)
                    .bind(after.deviation)
                    .bind(after.volatility)
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await?;
            Ok(true)
        })
    }
}
