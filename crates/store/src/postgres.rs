//! The PostgreSQL store, for several server replicas sharing one database.
//!
//! Each append is one statement (so one transaction). The optimistic concurrency check is
//! the `games` row's `last_seq`: the append moves it from the expected value to the new one, or, when
//! another replica got there first, changes nothing and is a `Conflict` (the caller then
//! reloads the game). PostgreSQL commits concurrent transactions with shared WAL flushes,
//! so no writer task of our own is needed. A commit is durable when acknowledged
//! (`synchronous_commit` on, PostgreSQL's default).

use std::sync::atomic::{AtomicU64, Ordering};

use futures::TryStreamExt;
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::{Connection, PgConnection, Row};

use crate::{Append, EventStore, Lobby, LobbyRow, StoreError, StoredGame};

/// The phase name of a game waiting for an opponent, as the summaries store it.
const WAITING: &str = "PHASE_WAITING_FOR_OPPONENT";

const SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS games (
        game_id TEXT PRIMARY KEY,
        host_token_hash TEXT,
        guest_token_hash TEXT,
        last_seq BIGINT NOT NULL,
        phase TEXT NOT NULL,
        board_size INTEGER NOT NULL,
        move_number INTEGER NOT NULL,
        rules TEXT NOT NULL,
        finished BOOLEAN NOT NULL,
        updated_ms BIGINT NOT NULL)",
    // `request_id` marks the first event of an idempotent request.
    "CREATE TABLE IF NOT EXISTS events (
        game_id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        request_id TEXT,
        body TEXT NOT NULL,
        PRIMARY KEY (game_id, seq))",
    "CREATE INDEX IF NOT EXISTS games_unfinished ON games (updated_ms) WHERE NOT finished",
    // The lobby, newest first (`created_ms` came after the first version of the table).
    "ALTER TABLE games ADD COLUMN IF NOT EXISTS created_ms BIGINT NOT NULL DEFAULT 0",
    "CREATE INDEX IF NOT EXISTS games_lobby ON games (created_ms DESC) WHERE NOT finished",
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    // The last `PROBE_SLOTS` durable pings, overwritten in turn.
    "CREATE TABLE IF NOT EXISTS probes (slot INTEGER PRIMARY KEY, at_ms BIGINT NOT NULL, payload BYTEA NOT NULL)",
    // (Databases from the first version of this store notified every append; a NOTIFY
    // takes a lock that serializes all commits, a third of the throughput.)
    "DROP TRIGGER IF EXISTS weiqi_game_changed ON games",
    "DROP FUNCTION IF EXISTS weiqi_game_changed()",
];

/// Replicas starting together create the schema one at a time (concurrent `CREATE ...
/// IF NOT EXISTS` can still collide in PostgreSQL's catalogs).
const SCHEMA_LOCK: i64 = 0x7765_6971_6900; // "weiqi"

/// PostgreSQL event store. Cheap to clone.
#[derive(Clone)]
pub struct PgStore {
    pool: PgPool,
    probes: std::sync::Arc<AtomicU64>,
}

impl PgStore {
    /// Connects to `url` (`postgres://user:password@host:port/database`) with a pool of
    /// [`PgStore::DEFAULT_POOL`] connections, creating the schema if it is missing.
    pub async fn open(url: &str) -> Result<PgStore, StoreError> {
        PgStore::open_with(url, PgStore::DEFAULT_POOL).await
    }

    /// Connections per server: several replicas together must stay under the database's
    /// `max_connections` (100 by default).
    pub const DEFAULT_POOL: u32 = 16;

    /// As [`PgStore::open`], with at most `pool` connections.
    pub async fn open_with(url: &str, pool: u32) -> Result<PgStore, StoreError> {
        let mut conn = PgConnection::connect(url).await?;
        let mut tx = conn.begin().await?;
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(SCHEMA_LOCK)
            .execute(&mut *tx)
            .await?;
        for stmt in SCHEMA {
            sqlx::query(stmt).execute(&mut *tx).await?;
        }
        tx.commit().await?;
        conn.close().await?;
        let pool = PgPoolOptions::new().max_connections(pool.max(1)).connect(url).await?;
        Ok(PgStore {
            pool,
            probes: Default::default(),
        })
    }

    /// The secret every replica derives seat tokens and game ids with (a retried
    /// CreateGame must get the same game whichever replica answers): `fresh` (hex) is kept
    /// if the database has none yet, and the stored one is returned.
    pub async fn shared_secret(&self, fresh: &str) -> Result<String, StoreError> {
        sqlx::query("INSERT INTO meta (key, value) VALUES ('server_secret', $1) ON CONFLICT (key) DO NOTHING")
            .bind(fresh)
            .execute(&self.pool)
            .await?;
        Ok(sqlx::query_scalar("SELECT value FROM meta WHERE key = 'server_secret'")
            .fetch_one(&self.pool)
            .await?)
    }

    /// The games that `filter` (a condition on `games g`, with at most one bound text)
    /// selects, with their events: two queries in all, however many games.
    async fn load_where(&self, filter: &str, arg: Option<&str>) -> Result<Vec<StoredGame>, StoreError> {
        let games_sql = format!("SELECT game_id, host_token_hash, guest_token_hash FROM games g WHERE {filter}");
        let events_sql = format!(
            "SELECT e.game_id, e.seq, e.request_id, e.body FROM events e JOIN games g ON g.game_id = e.game_id
             WHERE {filter} ORDER BY e.game_id, e.seq"
        );
        let mut games_q = sqlx::query(&games_sql);
        let mut events_q = sqlx::query(&events_sql);
        if let Some(a) = arg {
            games_q = games_q.bind(a);
            events_q = events_q.bind(a);
        }
        let mut games = crate::Gathered::default();
        for row in games_q.fetch_all(&self.pool).await? {
            let id: String = row.get("game_id");
            games.game(id.clone(), id, row.get("host_token_hash"), row.get("guest_token_hash"));
        }
        let mut rows = events_q.fetch(&self.pool);
        while let Some(row) = rows.try_next().await? {
            games.event(
                &row.get::<String, _>("game_id"),
                row.get::<i64, _>("seq") as u64,
                row.get("request_id"),
                row.get("body"),
            )?;
        }
        Ok(games.into_games())
    }
}

impl EventStore for PgStore {
    async fn append(&self, a: Append) -> Result<(), StoreError> {
        let bodies = crate::bodies(&a)?;
        let conflict = || StoreError::Conflict {
            game_id: a.game_id.clone(),
            expected: a.expected_seq,
        };
        let last_seq = (a.expected_seq + a.events.len() as u64) as i64;
        let seqs: Vec<i64> = a.events.iter().map(|e| e.seq as i64).collect();
        let request_ids: Vec<Option<&str>> = (0..a.events.len())
            .map(|k| if k == 0 { a.request_id.as_deref() } else { None })
            .collect();
        // One statement (one round trip, atomic on its own): the `games` row is created or
        // moved from the expected sequence number, and the events are inserted only if it
        // was. No row, no events: someone else appended first.
        let events = |first: usize| {
            format!(
                "INSERT INTO events (game_id, seq, request_id, body)
                 SELECT g.game_id, u.seq, u.request_id, u.body FROM g,
                        UNNEST(${}::BIGINT[], ${}::TEXT[], ${}::TEXT[]) AS u(seq, request_id, body)",
                first,
                first + 1,
                first + 2
            )
        };
        // The statement's shape depends on whether the game is new; `sql` outlives the
        // query that borrows it.
        let sql: String;
        let query = if a.expected_seq == 0 {
            sql = format!(
                "WITH g AS (
                   INSERT INTO games (game_id, host_token_hash, guest_token_hash, last_seq, phase, board_size,
                                      move_number, rules, finished, updated_ms, created_ms)
                   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) ON CONFLICT (game_id) DO NOTHING
                   RETURNING game_id)
                 {}",
                events(11)
            );
            let s = a.summary.clone().unwrap_or_default();
            sqlx::query(&sql)
                .bind(&a.game_id)
                .bind(&a.host_token_hash)
                .bind(&a.guest_token_hash)
                .bind(last_seq)
                .bind(s.phase)
                .bind(s.board_size as i32)
                .bind(s.move_number as i32)
                .bind(s.rules)
                .bind(s.finished)
                .bind(a.now_ms as i64)
        } else {
            // The summary columns change only with a summary (most moves carry none).
            sql = format!(
                "WITH g AS (
                   UPDATE games SET last_seq = $3, updated_ms = $4,
                     guest_token_hash = COALESCE($5, guest_token_hash),
                     phase = COALESCE($6, phase), move_number = $7, finished = COALESCE($8, finished)
                   WHERE game_id = $1 AND last_seq = $2
                   RETURNING game_id)
                 {}",
                events(9)
            );
            let s = a.summary.as_ref();
            sqlx::query(&sql)
                .bind(&a.game_id)
                .bind(a.expected_seq as i64)
                .bind(last_seq)
                .bind(a.now_ms as i64)
                .bind(&a.guest_token_hash)
                .bind(s.map(|s| &s.phase))
                .bind(a.move_number as i32)
                .bind(s.map(|s| s.finished))
        };
        let inserted = query
            .bind(&seqs)
            .bind(&request_ids)
            .bind(&bodies)
            .execute(&self.pool)
            .await?;
        if inserted.rows_affected() != a.events.len() as u64 {
            return Err(conflict());
        }
        Ok(())
    }

    fn is_shared(&self) -> bool {
        true
    }

    async fn last_seq(&self, game_id: &str) -> Result<Option<u64>, StoreError> {
        let seq: Option<i64> = sqlx::query_scalar("SELECT last_seq FROM games WHERE game_id = $1")
            .bind(game_id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(seq.map(|s| s as u64))
    }

    async fn lobby(&self, limit: usize) -> Result<Option<Lobby>, StoreError> {
        let rows = |open: bool| {
            sqlx::query_as::<_, (String, String, i32, i32, String)>(
                "SELECT game_id, phase, board_size, move_number, rules FROM games
                 WHERE NOT finished AND (phase = $1) = $2 ORDER BY created_ms DESC, game_id DESC LIMIT $3",
            )
            .bind(WAITING)
            .bind(open)
            .bind(limit as i64)
            .fetch_all(&self.pool)
        };
        let row = |(game_id, phase, board_size, move_number, rules): (String, String, i32, i32, String)| LobbyRow {
            game_id,
            phase,
            board_size: board_size as u32,
            move_number: move_number as u32,
            rules,
        };
        Ok(Some(Lobby {
            open: rows(true).await?.into_iter().map(row).collect(),
            playing: rows(false).await?.into_iter().map(row).collect(),
        }))
    }

    async fn last_seqs(&self, game_ids: &[String]) -> Result<Vec<(String, u64)>, StoreError> {
        let rows: Vec<(String, i64)> = sqlx::query_as("SELECT game_id, last_seq FROM games WHERE game_id = ANY($1)")
            .bind(game_ids)
            .fetch_all(&self.pool)
            .await?;
        Ok(rows.into_iter().map(|(id, seq)| (id, seq as u64)).collect())
    }

    async fn load_unfinished(&self) -> Result<Vec<StoredGame>, StoreError> {
        self.load_where("NOT g.finished", None).await
    }

    async fn load(&self, game_id: &str) -> Result<Option<StoredGame>, StoreError> {
        Ok(self
            .load_where("g.game_id = $1", Some(game_id))
            .await?
            .into_iter()
            .next())
    }

    async fn heartbeat(&self, now_ms: u64) -> Result<(), StoreError> {
        // Several replicas beat the same row: it only moves forward.
        sqlx::query(
            "INSERT INTO meta (key, value) VALUES ('heartbeat_ms', $1) ON CONFLICT (key)
             DO UPDATE SET value = excluded.value WHERE meta.value::BIGINT < excluded.value::BIGINT",
        )
        .bind(now_ms.to_string())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn last_heartbeat(&self) -> Result<Option<u64>, StoreError> {
        let row = sqlx::query("SELECT value FROM meta WHERE key = 'heartbeat_ms'")
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.and_then(|r| r.get::<String, _>("value").parse().ok()))
    }

    async fn probe(&self, now_ms: u64, payload: &[u8]) -> Result<(), StoreError> {
        let slot = (self.probes.fetch_add(1, Ordering::Relaxed) % crate::PROBE_SLOTS) as i32;
        sqlx::query(
            "INSERT INTO probes (slot, at_ms, payload) VALUES ($1, $2, $3)
             ON CONFLICT (slot) DO UPDATE SET at_ms = excluded.at_ms, payload = excluded.payload",
        )
        .bind(slot)
        .bind(now_ms as i64)
        .bind(payload)
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}
