//! The embedded SQLite store with a group-committing writer task.

use std::path::Path;
use std::sync::Arc;

use futures::TryStreamExt;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use sqlx::{Connection, Row, SqliteConnection, SqlitePool};
use tokio::sync::{mpsc, oneshot};

use crate::{Append, EventLog, Liveness, StoreError, StoredGame};

mod rows;
mod wal;
mod writer;

use wal::{CheckpointDone, checkpoints};
use writer::{Job, Write, writer};

const SCHEMA: &[&str] = &[
    // `game_no` is the internal key, given in creation order: the games being played are
    // the recent ones, so their events' index entries sit together at the end of the
    // (game_no, seq) index and a group commit rewrites a few index pages, not one page per
    // move as with the public (random) game id as key.
    "CREATE TABLE IF NOT EXISTS games (
        game_no INTEGER PRIMARY KEY,
        game_id TEXT NOT NULL UNIQUE,
        host_token_hash TEXT,
        guest_token_hash TEXT,
        last_seq INTEGER NOT NULL,
        phase TEXT NOT NULL,
        board_size INTEGER NOT NULL,
        move_number INTEGER NOT NULL,
        rules TEXT NOT NULL,
        finished INTEGER NOT NULL,
        updated_ms INTEGER NOT NULL)",
    // An append-only log: a rowid table (rows are large, appended at the end) with a
    // unique (game_no, seq) index. `request_id` marks the first event of an idempotent
    // request.
    "CREATE TABLE IF NOT EXISTS events (
        game_no INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        request_id TEXT,
        body TEXT NOT NULL)",
    "CREATE UNIQUE INDEX IF NOT EXISTS events_by_game ON events (game_no, seq)",
    // The events of games in quick play, in arrival order with no index: an indexed row
    // rewrites its game's index page in every commit (a 4 KiB WAL frame a move), while
    // rows merged into `events` in bulk ([`merge_recent`]) rewrite it once for all the
    // moves the game made meanwhile. Reads take the union of both tables.
    "CREATE TABLE IF NOT EXISTS events_recent (
        game_no INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        request_id TEXT,
        body TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    // The last `PROBE_SLOTS` durable pings, overwritten in turn.
    "CREATE TABLE IF NOT EXISTS probes (slot INTEGER PRIMARY KEY, at_ms INTEGER NOT NULL, payload BLOB NOT NULL)",
    "CREATE INDEX IF NOT EXISTS games_unfinished ON games (finished, updated_ms)",
];

/// Databases written before `game_no` existed (keyed by game id): moved over once, in one
/// transaction, keeping every event.
const MIGRATE_V1: &[&str] = &[
    "ALTER TABLE games RENAME TO games_v1",
    "ALTER TABLE events RENAME TO events_v1",
    "DROP INDEX IF EXISTS events_by_game",
    "DROP INDEX IF EXISTS games_unfinished",
];
const MIGRATE_V1_COPY: &[&str] = &[
    "INSERT INTO games (game_id, host_token_hash, guest_token_hash, last_seq, phase, board_size, move_number,
                        rules, finished, updated_ms)
     SELECT game_id, host_token_hash, guest_token_hash, last_seq, phase, board_size, move_number, rules,
            finished, updated_ms FROM games_v1 ORDER BY rowid",
    "INSERT INTO events (game_no, seq, request_id, body)
     SELECT g.game_no, e.seq, e.request_id, e.body FROM events_v1 e JOIN games g ON g.game_id = e.game_id
     ORDER BY e.rowid",
    "DROP TABLE events_v1",
    "DROP TABLE games_v1",
];

/// The default least time between the starts of two group commits under load: up to 1 ms
/// more latency for a write that arrives right after a commit began, against a commit
/// per write at a human pace (docs/performance.md's load test has the figures).
pub const DEFAULT_COMMIT_SPACING: std::time::Duration = std::time::Duration::from_millis(1);

/// The largest commit spacing: a mistyped setting must not stall every write for long.
pub const MAX_COMMIT_SPACING: std::time::Duration = std::time::Duration::from_millis(100);

/// The events of one game as a read takes them: both tables.
const ALL_EVENTS: &str = "(SELECT game_no, seq, request_id, body FROM events
    UNION ALL SELECT game_no, seq, request_id, body FROM events_recent)";

/// Embedded SQLite event store. Cheap to clone.
#[derive(Clone)]
pub struct SqliteStore {
    reads: SqlitePool,
    writer: mpsc::Sender<Job>,
    /// Accounts and ratings: rare writes, on their own connection beside the event
    /// writer (SQLite's busy timeout orders the two).
    pub(crate) accounts: SqlitePool,
}

/// Every connection's settings, sqlx's and the writer's alike.
const PRAGMAS: [(&str, &str); 5] = [
    ("journal_mode", "WAL"),
    // FULL: a committed transaction survives power loss, not just a crash.
    ("synchronous", "FULL"),
    // No checkpoints inside commits (they copy the WAL into the database and fsync it,
    // stalling the writer for seconds): a background task checkpoints instead.
    ("wal_autocheckpoint", "0"),
    // After the WAL starts over, its file is cut back to this size (bytes).
    ("journal_size_limit", "67108864"),
    // Statement journals (multi-row inserts under a unique index) stay in memory.
    ("temp_store", "MEMORY"),
];

/// How long a connection waits for another's write lock (the event writer and the
/// accounts connection take turns).
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The writer's connection, with the settings of the store's others: SQLite run on the
/// writer's own thread. (Through sqlx each statement went to a thread of its own and back,
/// two threads waking per statement; at a human pace that was most of a commit's CPU.)
fn writer_connection(path: &Path) -> Result<rusqlite::Connection, StoreError> {
    let conn = rusqlite::Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    for (name, value) in PRAGMAS {
        // (Some answer with the new value: read and dropped.)
        let mut statement = conn.prepare(&format!("PRAGMA {name} = {value}"))?;
        let mut rows = statement.query([])?;
        while rows.next()?.is_some() {}
    }
    // Every multi-row shape of the four tables, and the writer's few other statements.
    conn.set_prepared_statement_cache_capacity(64);
    Ok(conn)
}

impl SqliteStore {
    /// Opens (or creates) the database file at `path`, with commits spaced by
    /// [`DEFAULT_COMMIT_SPACING`]. One process at a time: the writer's cache is the
    /// concurrency check, so a second server on the same file is refused (`path` +
    /// `.lock`, held until the writer has finished).
    pub async fn open(path: &Path) -> Result<SqliteStore, StoreError> {
        SqliteStore::open_with(path, DEFAULT_COMMIT_SPACING).await
    }

    /// [`SqliteStore::open`], with group commits begun at most once per `commit_spacing`
    /// while writes keep coming (the first write after a quiet spell commits at once);
    /// zero commits whatever is waiting as soon as the last commit ends. The wait is
    /// tokio's timer, which rounds up to whole milliseconds, and at most
    /// [`MAX_COMMIT_SPACING`] (a larger spacing is cut to it).
    pub async fn open_with(path: &Path, commit_spacing: std::time::Duration) -> Result<SqliteStore, StoreError> {
        let commit_spacing = commit_spacing.min(MAX_COMMIT_SPACING);
        let lock = lock_file(path).await?;
        // The path as given (a URL would percent-decode it and cut it at a `?`), as the
        // writer's connection and the lock file take it.
        let opts = PRAGMAS.iter().fold(
            SqliteConnectOptions::new()
                .filename(path)
                .create_if_missing(true)
                .busy_timeout(BUSY_TIMEOUT),
            |opts, (name, value)| opts.pragma(*name, *value),
        );
        let mut conn = SqliteConnection::connect_with(&opts).await?;
        let old: Option<(String,)> = sqlx::query_as(
            "SELECT name FROM pragma_table_info('games') WHERE name = 'game_id'
             AND NOT EXISTS (SELECT 1 FROM pragma_table_info('games') WHERE name = 'game_no')",
        )
        .fetch_optional(&mut conn)
        .await?;
        let mut tx = conn.begin().await?;
        if old.is_some() {
            tracing::info!("migrating the event store to integer game keys");
            for stmt in MIGRATE_V1 {
                sqlx::query(stmt).execute(&mut *tx).await?;
            }
        }
        for stmt in crate::schema(SCHEMA, "INTEGER PRIMARY KEY AUTOINCREMENT") {
            sqlx::query(&stmt).execute(&mut *tx).await?;
        }
        if old.is_some() {
            for stmt in MIGRATE_V1_COPY {
                sqlx::query(stmt).execute(&mut *tx).await?;
            }
        }
        sqlx::query(crate::phase::MIGRATE_PHASE_NAMES).execute(&mut *tx).await?;
        tx.commit().await?;
        conn.close().await?;
        let conn = writer_connection(path)?;
        let reads = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(opts.clone().read_only(true))
            .await?;
        let (tx, rx) = mpsc::channel::<Job>(4096);
        let done = Arc::new(CheckpointDone::new());
        // The writer runs on its own thread with its own event loop: under load the server's
        // runtime has hundreds of request tasks queued, and a writer task among them waited
        // behind them at every statement of every batch (milliseconds per commit).
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(StoreError::local)?;
        std::thread::Builder::new()
            .name("weiqi-store-writer".into())
            .spawn({
                let done = done.clone();
                move || rt.block_on(writer(conn, rx, lock, commit_spacing, done))
            })
            .map_err(StoreError::local)?;
        let checkpointer = SqliteConnection::connect_with(&opts).await?;
        // (Read-only is enough to sync: fsync flushes the file, whatever the handle.)
        let database = std::fs::File::open(path).map_err(StoreError::local)?;
        tokio::spawn(checkpoints(checkpointer, database, tx.downgrade(), done));
        let accounts = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(opts.clone())
            .await?;
        Ok(SqliteStore {
            reads,
            writer: tx,
            accounts,
        })
    }

    async fn write(&self, w: Write) -> Result<(), StoreError> {
        let (tx, rx) = oneshot::channel();
        self.writer
            .send((w, tx, tracing::Span::current()))
            .await
            .map_err(|_| StoreError::Closed)?;
        rx.await.map_err(|_| StoreError::Closed)?
    }

    /// The games that `filter` (a condition on `games g`, with at most one bound text)
    /// selects, with their events: two queries in all, however many games (one query per
    /// game made a restart with thousands of open games slow).
    async fn load_where(&self, filter: &str, arg: Option<&str>) -> Result<Vec<StoredGame>, StoreError> {
        gather!(&self.reads, "game_no": i64, ALL_EVENTS, filter, arg)
    }
}

/// Takes the database's lock file, waiting a little for a store of this process that is
/// closing (its writer finishing its last batch).
async fn lock_file(path: &Path) -> Result<std::fs::File, StoreError> {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&name)
        .map_err(|e| StoreError::Locked(format!("{}: {e}", Path::new(&name).display())))?;
    for _ in 0..100 {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(std::fs::TryLockError::WouldBlock) => tokio::time::sleep(std::time::Duration::from_millis(50)).await,
            Err(std::fs::TryLockError::Error(e)) => return Err(StoreError::Locked(e.to_string())),
        }
    }
    Err(StoreError::Locked(format!(
        "{} is held by another process (is another weiqi server using this data directory?)",
        Path::new(&name).display()
    )))
}

impl EventLog for SqliteStore {
    async fn load_unfinished(&self) -> Result<Vec<StoredGame>, StoreError> {
        self.load_where("g.finished = 0", None).await
    }

    async fn append(&self, append: Append) -> Result<(), StoreError> {
        let bodies = crate::bodies(&append)?;
        self.write(Write::Append(Box::new(append), bodies)).await
    }

    async fn load(&self, game_id: &str) -> Result<Option<StoredGame>, StoreError> {
        Ok(self.load_where("g.game_id = ?", Some(game_id)).await?.pop())
    }

    async fn barrier(&self) -> Result<(), StoreError> {
        // The single writer answers in order: once this is answered, every append queued
        // before it is committed or refused.
        self.write(Write::Barrier).await
    }
}

impl Liveness for SqliteStore {
    async fn heartbeat(&self, now_ms: u64) -> Result<(), StoreError> {
        // Through the writer too: one connection writes, so there is no lock contention.
        self.write(Write::Heartbeat(now_ms)).await
    }

    async fn last_heartbeat(&self) -> Result<Option<u64>, StoreError> {
        let row = sqlx::query("SELECT value FROM meta WHERE key = 'heartbeat_ms'")
            .fetch_optional(&self.reads)
            .await?;
        Ok(row.and_then(|r| r.get::<String, _>("value").parse().ok()))
    }

    async fn probe(&self, now_ms: u64, payload: &[u8]) -> Result<(), StoreError> {
        self.write(Write::Probe(now_ms, payload.to_vec())).await
    }
}

#[cfg(test)]
mod tests {
    /// The writer's own connection commits as durably as the store's others were set up
    /// to: WAL, a sync at every commit (FULL), no checkpoint inside a commit, and the busy
    /// timeout that orders it with the accounts connection.
    #[test]
    fn the_writer_connection_commits_durably() {
        let dir = std::env::temp_dir().join(format!("weiqi-writer-conn-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let conn = super::writer_connection(&dir.join("w.sqlite3")).unwrap();
        let pragma = |name: &str| -> String {
            conn.query_row(&format!("PRAGMA {name}"), [], |r| r.get::<_, rusqlite::types::Value>(0))
                .map(|v| match v {
                    rusqlite::types::Value::Integer(n) => n.to_string(),
                    rusqlite::types::Value::Text(t) => t,
                    other => format!("{other:?}"),
                })
                .unwrap()
        };
        assert_eq!(pragma("journal_mode"), "wal");
        assert_eq!(pragma("synchronous"), "2", "FULL");
        assert_eq!(pragma("wal_autocheckpoint"), "0");
        assert_eq!(pragma("busy_timeout"), "10000");
        assert_eq!(pragma("journal_size_limit"), "67108864");
        drop(conn);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
