//! The embedded SQLite store with a group-committing writer task.

use std::collections::HashMap;
use std::path::Path;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};

use futures::TryStreamExt;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Connection, Row, SqliteConnection, SqlitePool};
use tokio::sync::{mpsc, oneshot};

use crate::{Append, EventLog, Liveness, StoreError, StoredGame, Summary};

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
/// per write at a human pace (the README's load test has the figures).
pub const DEFAULT_COMMIT_SPACING: std::time::Duration = std::time::Duration::from_millis(1);

/// The largest commit spacing: a mistyped setting must not stall every write for long.
pub const MAX_COMMIT_SPACING: std::time::Duration = std::time::Duration::from_millis(100);

/// A game is in quick play when its previous two appends each came less than this after
/// the one before (ms): its events go to `events_recent` and reach the index in the next
/// merge, several moves at once. Slower games (a human pace) write to `events` directly, as
/// a merge would write their index page once a move anyway, and their rows only once. (One
/// quick gap is not enough: at a human pace of one move per 10 s, 2.5% of the gaps are
/// under 250 ms by chance, a row each that would be written twice for nothing.)
const QUICK_PLAY_MS: u64 = 250;

/// How often `events_recent` is merged into `events` while it has rows: at most this long
/// a quick game's moves wait for their index entries (reads see them before, scanning).
const MERGE_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// `events_recent` is merged at once when it holds this many rows: what a read of one
/// game scans there (about 8 MB at most) and what one merge writes stay bounded.
const MERGE_ROWS: u64 = 32_768;

/// The events of one game as a read takes them: both tables.
const ALL_EVENTS: &str = "(SELECT game_no, seq, request_id, body FROM events
    UNION ALL SELECT game_no, seq, request_id, body FROM events_recent)";

/// What the writer task commits.
enum Write {
    /// An append with its events already serialized (by the caller's task, in parallel,
    /// rather than by the single writer).
    Append(Box<Append>, Vec<String>),
    /// The service is alive at this time (ms).
    Heartbeat(u64),
    /// A probe row: time and payload.
    Probe(u64, Vec<u8>),
    /// Nothing to write: answered after every write queued before it (the writer answers
    /// in order), for [`EventStore::barrier`].
    Barrier,
}

type Job = (Write, oneshot::Sender<Result<(), StoreError>>);

/// Embedded SQLite event store. Cheap to clone.
#[derive(Clone)]
pub struct SqliteStore {
    reads: SqlitePool,
    writer: mpsc::Sender<Job>,
    /// Accounts and ratings: rare writes, on their own connection beside the event
    /// writer (SQLite's busy timeout orders the two).
    pub(crate) accounts: SqlitePool,
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
        let opts = SqliteConnectOptions::from_str(&format!("sqlite://{}", path.display()))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // FULL: a committed transaction survives power loss, not just a crash.
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(std::time::Duration::from_secs(10))
            // No checkpoints inside commits (they copy the WAL into the database and fsync
            // it, stalling the writer for seconds): a background task checkpoints instead.
            .pragma("wal_autocheckpoint", "0")
            // After the WAL starts over, its file is cut back to this size (bytes).
            .pragma("journal_size_limit", "67108864")
            // Statement journals (multi-row inserts under a unique index) stay in memory.
            .pragma("temp_store", "MEMORY");
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
        let mut matchmaking = crate::matchmaking::schema("INTEGER PRIMARY KEY AUTOINCREMENT");
        matchmaking.extend(crate::tournaments::schema());
        for stmt in SCHEMA
            .iter()
            .chain(crate::players::SCHEMA)
            .copied()
            .chain(matchmaking.iter().map(String::as_str))
        {
            sqlx::query(stmt).execute(&mut *tx).await?;
        }
        if old.is_some() {
            for stmt in MIGRATE_V1_COPY {
                sqlx::query(stmt).execute(&mut *tx).await?;
            }
        }
        sqlx::query(crate::phase::MIGRATE_PHASE_NAMES).execute(&mut *tx).await?;
        tx.commit().await?;
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

    /// A write transaction on the accounts connection that takes the write lock at once
    /// (`BEGIN IMMEDIATE`): a deferred one that read first could not upgrade after the
    /// event writer committed, and SQLite answers that with SQLITE_BUSY at once, past any
    /// busy timeout.
    pub(crate) async fn begin_write(&self) -> Result<sqlx::Transaction<'_, sqlx::Sqlite>, sqlx::Error> {
        self.accounts.begin_with("BEGIN IMMEDIATE").await
    }

    async fn write(&self, w: Write) -> Result<(), StoreError> {
        let (tx, rx) = oneshot::channel();
        self.writer.send((w, tx)).await.map_err(|_| StoreError::Closed)?;
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

/// What the writer knows of a game: its internal key, last sequence number, the time of
/// its last append (ms, the caller's clock) and whether that came quickly after the one
/// before, for [`QUICK_PLAY_MS`].
#[derive(Debug, Clone, Copy)]
struct Known {
    game_no: i64,
    last_seq: u64,
    last_ms: u64,
    quick_gap: bool,
}

/// The writer's cache of games, filled from the database on first use.
struct Games {
    known: HashMap<String, Known>,
    next_no: i64,
    /// Probes written since the writer started (the next probe's slot, modulo the slots).
    probes: u64,
    /// Rows in `events_recent` (committed), and since when they wait: the first of them was
    /// written (or the last merge failed) then.
    recent_rows: u64,
    waiting_since: std::time::Instant,
    /// The last merge failed: the next waits for [`MERGE_EVERY`], however many rows wait,
    /// and meanwhile every game writes to `events` (the recent rows stop growing).
    merge_failed: bool,
}

/// The single writer: takes whatever writes are waiting, commits them in one transaction
/// (one fsync), then answers each. Being the only writer, it checks the optimistic
/// concurrency condition against its cache of each game's last sequence number (read from
/// the database on first use), so a batch costs a handful of multi-row statements rather
/// than several statements per append.
async fn writer(
    mut conn: SqliteConnection,
    mut rx: mpsc::Receiver<Job>,
    _lock: std::fs::File,
    spacing: std::time::Duration,
    checkpointed: Arc<CheckpointDone>,
) {
    let mut batch: Vec<Job> = Vec::with_capacity(1024);
    let next_no = match sqlx::query_scalar::<_, i64>("SELECT COALESCE(max(game_no), 0) + 1 FROM games")
        .fetch_one(&mut conn)
        .await
    {
        Ok(n) => n,
        Err(e) => {
            tracing::error!(error = %e, "the event store cannot be written");
            return;
        }
    };
    let recent_rows = match sqlx::query_scalar::<_, i64>("SELECT count(*) FROM events_recent")
        .fetch_one(&mut conn)
        .await
    {
        Ok(n) => n as u64,
        Err(e) => {
            tracing::error!(error = %e, "the event store cannot be read");
            return;
        }
    };
    let mut games = Games {
        known: HashMap::new(),
        next_no,
        probes: 0,
        recent_rows,
        waiting_since: std::time::Instant::now(),
        merge_failed: false,
    };
    // Rows left by a server that stopped before merging them go to the index first: the
    // games they belong to are not in the cache yet, and looking one up scans the table.
    if games.recent_rows > 0 {
        merge_recent(&mut conn, &mut games).await;
    }
    let mut last_reset = std::time::Instant::now();
    let mut last_commit: Option<std::time::Instant> = None;
    while let Some(job) = rx.recv().await {
        // Under load (the last commit began less than `spacing` ago), the writes of the
        // rest of the interval join this one's commit. At a human pace most commits carried
        // one move each; a commit's fixed cost (statements, WAL frames, the fsync, two
        // threads waking) then dominated a move's CPU.
        if let Some(since) = last_commit.map(|t| t.elapsed())
            && since < spacing
        {
            tokio::time::sleep(spacing - since).await;
        }
        last_commit = Some(std::time::Instant::now());
        batch.push(job);
        while batch.len() < 1024 {
            match rx.try_recv() {
                Ok(j) => batch.push(j),
                Err(_) => break,
            }
        }
        let started = std::time::Instant::now();
        let results = commit_batch(&mut conn, &batch, &mut games).await;
        tracing::debug!(
            writes = batch.len(),
            micros = started.elapsed().as_micros() as u64,
            "batch committed"
        );
        for ((_, reply), r) in batch.drain(..).zip(results) {
            let _ = reply.send(r);
        }
        if games.recent_rows > 0
            && (games.waiting_since.elapsed() >= MERGE_EVERY
                || (games.recent_rows >= MERGE_ROWS && !games.merge_failed))
        {
            merge_recent(&mut conn, &mut games).await;
        }
        // Tried again after the next commit until it completes (the background checkpoint
        // may hold the checkpoint lock).
        let since_reset = last_reset.elapsed();
        if since_reset >= WAL_RESET_EVERY
            && (checkpointed.just_now() || since_reset >= WAL_RESET_LATEST)
            && reset_wal(&mut conn).await
        {
            last_reset = std::time::Instant::now();
        }
    }
    // Every store has gone: what waits is merged now, so that a stopped server leaves a
    // database whose `events` alone hold every event (as an older version reads it).
    if games.recent_rows > 0 {
        merge_recent(&mut conn, &mut games).await;
    }
}

/// Moves every row of `events_recent` into `events` in one transaction, sorted as the
/// index is, so each game's index page is written once for all its rows. A failure (the
/// unique index refusing a row would mean the writer's cache was wrong) leaves the rows
/// where they are, still read from there; the next merge tries again a second later, and
/// meanwhile no more rows join them.
async fn merge_recent(conn: &mut SqliteConnection, games: &mut Games) {
    let started = std::time::Instant::now();
    let merged = async {
        let mut tx = conn.begin().await?;
        sqlx::query(
            "INSERT INTO events (game_no, seq, request_id, body)
             SELECT game_no, seq, request_id, body FROM events_recent ORDER BY game_no, seq",
        )
        .execute(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM events_recent").execute(&mut *tx).await?;
        tx.commit().await
    }
    .await;
    match merged {
        Ok(()) => {
            tracing::debug!(
                rows = games.recent_rows,
                micros = started.elapsed().as_micros() as u64,
                "recent events merged"
            );
            games.recent_rows = 0;
            games.merge_failed = false;
        }
        Err(e) => {
            tracing::error!(error = %e, rows = games.recent_rows, "merging recent events failed");
            games.merge_failed = true;
            games.waiting_since = std::time::Instant::now();
        }
    }
}

/// How often the writer lets the WAL start over: at most this often, and just after a
/// background pass has copied the WAL and synced the database, so that the writer's own
/// pass (appends wait meanwhile) copies and syncs only what was committed since. At a human
/// pace a reset at any moment took 20-60 ms, mostly the database's fsync (16-18 ms). At the
/// latest after [`WAL_RESET_LATEST`], whatever the background pass does.
const WAL_RESET_EVERY: std::time::Duration = std::time::Duration::from_secs(1);
const WAL_RESET_LATEST: std::time::Duration = std::time::Duration::from_secs(3);

/// When the background pass last finished (copied and synced), for the writer's resets.
struct CheckpointDone {
    start: std::time::Instant,
    /// Milliseconds since `start` (`u64::MAX` before the first pass).
    at_ms: AtomicU64,
}

impl CheckpointDone {
    /// A pass counts as just finished this long after it did.
    const FRESH_MS: u64 = 20;

    fn new() -> CheckpointDone {
        CheckpointDone {
            start: std::time::Instant::now(),
            at_ms: AtomicU64::new(u64::MAX),
        }
    }

    fn now_ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    fn record(&self) {
        self.at_ms.store(self.now_ms(), Ordering::Relaxed);
    }

    fn just_now(&self) -> bool {
        let at = self.at_ms.load(Ordering::Relaxed);
        at != u64::MAX && self.now_ms().saturating_sub(at) <= Self::FRESH_MS
    }
}

/// Finishes the background checkpoint's work from the writer's own connection, between
/// transactions. The WAL only starts over from its beginning when a write transaction
/// begins with every frame already copied into the database; under constant writes the
/// background checkpoint never gets there (new frames arrive while it copies), and the
/// WAL grew by about 100 MB a second under load, slowing every page lookup as it grew.
/// Run by the only writer, this pass copies the few frames the background one has not
/// (it never waits for anything), so the next commit starts the WAL over. Returns whether
/// every frame is now in the database.
async fn reset_wal(conn: &mut SqliteConnection) -> bool {
    let started = std::time::Instant::now();
    match sqlx::query_as::<_, (i64, i64, i64)>("PRAGMA wal_checkpoint(PASSIVE)")
        .fetch_one(&mut *conn)
        .await
    {
        Ok((busy, frames, copied)) => {
            tracing::debug!(
                busy,
                frames,
                copied,
                micros = started.elapsed().as_micros() as u64,
                "WAL checkpoint by the writer"
            );
            busy == 0 && frames == copied
        }
        Err(e) => {
            tracing::warn!(error = %e, "WAL checkpoint by the writer failed");
            false
        }
    }
}

/// A game's key and last sequence number as stored, if the game exists.
async fn lookup(conn: &mut SqliteConnection, game_id: &str) -> Result<Option<Known>, sqlx::Error> {
    let Some(game_no) = sqlx::query_scalar::<_, i64>("SELECT game_no FROM games WHERE game_id = ?")
        .bind(game_id)
        .fetch_optional(&mut *conn)
        .await?
    else {
        return Ok(None);
    };
    // (The recent rows are scanned: they are few, and a game in quick play is cached.)
    let last: Option<i64> = sqlx::query_scalar(
        "SELECT max(s) FROM (SELECT max(seq) AS s FROM events WHERE game_no = ?1
                             UNION ALL SELECT max(seq) FROM events_recent WHERE game_no = ?1)",
    )
    .bind(game_no)
    .fetch_one(&mut *conn)
    .await?;
    Ok(Some(Known {
        game_no,
        last_seq: last.unwrap_or(0) as u64,
        // Not known to be in quick play.
        last_ms: 0,
        quick_gap: false,
    }))
}

/// Copies the WAL into the database in the background (PASSIVE: never blocks the writer),
/// then syncs the database file, until the store is dropped. SQLite syncs the database only
/// when a checkpoint copies every frame, which under constant writes only the writer's
/// reset does; the pages the background copied were then all flushed on the writer's path.
async fn checkpoints(
    mut conn: SqliteConnection,
    database: std::fs::File,
    alive: mpsc::WeakSender<Job>,
    done: Arc<CheckpointDone>,
) {
    let database = Arc::new(database);
    loop {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        if alive.upgrade().is_none() {
            return;
        }
        match sqlx::query_as::<_, (i64, i64, i64)>("PRAGMA wal_checkpoint(PASSIVE)")
            .fetch_one(&mut conn)
            .await
        {
            Ok((0, _, _)) => {
                let file = database.clone();
                match tokio::task::spawn_blocking(move || file.sync_data()).await {
                    Ok(Ok(())) => done.record(),
                    Ok(Err(e)) => tracing::warn!(error = %e, "syncing the database failed"),
                    Err(e) => tracing::warn!(error = %e, "syncing the database failed"),
                }
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "WAL checkpoint failed"),
        }
    }
}

/// Splits `items` into chunks whose lengths are powers of two up to 64, so only a few
/// statement shapes exist. (Each new shape is prepared once and analysed by sqlx, which
/// takes seconds for a 200-row upsert; a handful of cached shapes keep that off the hot
/// path.)
fn chunks<T>(items: &[T]) -> impl Iterator<Item = &[T]> {
    let mut rest = items;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let n = if rest.len() >= 64 {
            64
        } else {
            1 << (usize::BITS - 1 - rest.len().leading_zeros())
        };
        let (head, tail) = rest.split_at(n);
        rest = tail;
        Some(head)
    })
}

/// `head VALUES row, row, ... tail`: one statement inserting `rows` rows.
fn multi_row_sql(head: &str, row: &str, rows: usize, tail: &str) -> String {
    format!("{head} VALUES {} {tail}", vec![row; rows].join(", "))
}

/// One multi-row statement in every length [`chunks`] makes (1, 2, 4, ... 64 rows), built
/// once rather than formatted for every chunk of every commit.
struct Shapes([String; 7]);

impl Shapes {
    fn new(head: &str, row: &str, tail: &str) -> Shapes {
        Shapes(std::array::from_fn(|k| multi_row_sql(head, row, 1 << k, tail)))
    }

    /// The statement for a chunk of `rows` rows (a power of two up to 64).
    fn of(&self, rows: usize) -> &str {
        &self.0[rows.trailing_zeros() as usize]
    }
}

static GAME_ROWS: LazyLock<Shapes> = LazyLock::new(|| {
    Shapes::new(
        "INSERT INTO games (game_no, game_id, host_token_hash, guest_token_hash, last_seq, phase, board_size,
                            move_number, rules, finished, updated_ms)",
        "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        "ON CONFLICT (game_no) DO UPDATE SET last_seq = excluded.last_seq, phase = excluded.phase,
          move_number = excluded.move_number, finished = excluded.finished, updated_ms = excluded.updated_ms,
          guest_token_hash = COALESCE(excluded.guest_token_hash, games.guest_token_hash)",
    )
});
static EVENT_ROWS: LazyLock<Shapes> = LazyLock::new(|| {
    Shapes::new(
        "INSERT INTO events (game_no, seq, request_id, body)",
        "(?, ?, ?, ?)",
        "",
    )
});
static RECENT_ROWS: LazyLock<Shapes> = LazyLock::new(|| {
    Shapes::new(
        "INSERT INTO events_recent (game_no, seq, request_id, body)",
        "(?, ?, ?, ?)",
        "",
    )
});
static PROBE_ROWS: LazyLock<Shapes> =
    LazyLock::new(|| Shapes::new("INSERT OR REPLACE INTO probes (slot, at_ms, payload)", "(?, ?, ?)", ""));

/// An append that passed the concurrency check, with its game's key.
struct Accepted<'a> {
    append: &'a Append,
    bodies: &'a [String],
    game_no: i64,
    /// The game is in quick play: its events go to `events_recent`.
    quick: bool,
    /// The game's first append: its row in `games` is created.
    new: bool,
}

async fn commit_batch(conn: &mut SqliteConnection, batch: &[Job], games: &mut Games) -> Vec<Result<(), StoreError>> {
    let mut results: Vec<Option<Result<(), StoreError>>> = Vec::with_capacity(batch.len());
    let mut accepted: Vec<Accepted<'_>> = Vec::new();
    let mut heartbeat: Option<u64> = None;
    let mut probes: Vec<(i64, u64, &[u8])> = Vec::new();
    let mut touched: Vec<&str> = Vec::new();
    for (write, _) in batch {
        match write {
            Write::Probe(ms, payload) => {
                probes.push(((games.probes % crate::PROBE_SLOTS) as i64, *ms, payload));
                games.probes += 1;
                results.push(None);
            }
            Write::Heartbeat(ms) => {
                heartbeat = Some(heartbeat.map_or(*ms, |h: u64| h.max(*ms)));
                results.push(None);
            }
            Write::Barrier => results.push(None),
            Write::Append(a, bodies) => {
                let known = match games.known.get(&a.game_id) {
                    Some(&k) => Some(k),
                    None => match lookup(conn, &a.game_id).await {
                        Ok(k) => k,
                        Err(e) => {
                            results.push(Some(Err(StoreError::from(e))));
                            continue;
                        }
                    },
                };
                let ok = match known {
                    None => a.expected_seq == 0,
                    Some(k) => a.expected_seq == k.last_seq && a.expected_seq > 0,
                };
                if !ok {
                    if let Some(k) = known {
                        games.known.insert(a.game_id.clone(), k);
                    }
                    results.push(Some(Err(StoreError::Conflict {
                        game_id: a.game_id.clone(),
                        expected: a.expected_seq,
                    })));
                    continue;
                }
                let game_no = match known {
                    Some(k) => k.game_no,
                    None => {
                        games.next_no += 1;
                        games.next_no - 1
                    }
                };
                let last_seq = a.expected_seq + a.events.len() as u64;
                let quick_gap = known.is_some_and(|k| a.now_ms.saturating_sub(k.last_ms) < QUICK_PLAY_MS);
                let quick = quick_gap && known.is_some_and(|k| k.quick_gap) && !games.merge_failed;
                let last_ms = a.now_ms;
                // (Most appends are to a game already cached: updated in place, its id not
                // copied.)
                match games.known.get_mut(&a.game_id) {
                    Some(k) => (k.last_seq, k.last_ms, k.quick_gap) = (last_seq, last_ms, quick_gap),
                    None => {
                        let k = Known {
                            game_no,
                            last_seq,
                            last_ms,
                            quick_gap,
                        };
                        games.known.insert(a.game_id.clone(), k);
                    }
                }
                touched.push(&a.game_id);
                accepted.push(Accepted {
                    append: a,
                    bodies,
                    game_no,
                    quick,
                    new: known.is_none(),
                });
                results.push(None);
            }
        }
    }
    let recent: usize = accepted.iter().filter(|a| a.quick).map(|a| a.append.events.len()).sum();
    if let Err(e) = write_accepted(conn, &accepted, heartbeat, &probes).await {
        // Nothing of this batch is on disk: forget what we assumed and fail the accepted.
        for id in touched {
            games.known.remove(id);
        }
        let msg = e.to_string();
        return results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(StoreError::local(&msg))))
            .collect();
    }
    if games.recent_rows == 0 && recent > 0 {
        games.waiting_since = std::time::Instant::now();
    }
    games.recent_rows += recent as u64;
    // Finished games take no more appends: forget them (the cache would otherwise grow
    // with every game ever played; a late append would look the game up again).
    for acc in &accepted {
        if acc.append.summary.as_ref().is_some_and(|s| s.finished) {
            games.known.remove(&acc.append.game_id);
        }
    }
    results.into_iter().map(|r| r.unwrap_or(Ok(()))).collect()
}

/// One row of `events` or `events_recent`: game_no, seq, request_id, body.
type EventRow<'a> = (i64, i64, Option<&'a str>, &'a str);

/// Writes the accepted appends of a batch in one transaction.
async fn write_accepted(
    conn: &mut SqliteConnection,
    accepted: &[Accepted<'_>],
    heartbeat: Option<u64>,
    probes: &[(i64, u64, &[u8])],
) -> Result<(), StoreError> {
    let mut tx = conn.begin().await?;
    // Summary rows, only where they changed (most moves change none) or the game is new.
    // The unique (game_no, seq) index on events is what guarantees one event per sequence
    // number.
    // (A new game without a summary gets a blank row: no phase, no board.)
    let rows: Vec<(&Accepted<'_>, Option<&Summary>)> = accepted
        .iter()
        .filter_map(|a| match &a.append.summary {
            Some(s) => Some((a, Some(s))),
            None if a.new => Some((a, None)),
            None => None,
        })
        .collect();
    for chunk in chunks(&rows) {
        let mut q = sqlx::query(GAME_ROWS.of(chunk.len()));
        for (acc, s) in chunk {
            let s = crate::SummaryColumns::of(*s);
            let a = acc.append;
            q = q
                .bind(acc.game_no)
                .bind(&a.game_id)
                .bind(&a.host_token_hash)
                .bind(&a.guest_token_hash)
                .bind((a.expected_seq + a.events.len() as u64) as i64)
                .bind(s.phase)
                .bind(s.board_size)
                .bind(s.move_number)
                .bind(s.rules)
                .bind(s.finished)
                .bind(a.now_ms as i64);
        }
        q.execute(&mut *tx).await?;
    }
    // Indexed at once, or (games in quick play) in the next merge.
    let mut events: [Vec<EventRow>; 2] = Default::default();
    for acc in accepted {
        let a = acc.append;
        for (k, (e, body)) in a.events.iter().zip(acc.bodies.iter()).enumerate() {
            let rid = if k == 0 { a.request_id.as_deref() } else { None };
            events[usize::from(acc.quick)].push((acc.game_no, e.seq as i64, rid, body));
        }
    }
    for (rows, shapes) in events.iter().zip([&*EVENT_ROWS, &*RECENT_ROWS]) {
        for chunk in chunks(rows) {
            let mut q = sqlx::query(shapes.of(chunk.len()));
            for (no, seq, rid, body) in chunk {
                q = q.bind(*no).bind(*seq).bind(*rid).bind(*body);
            }
            q.execute(&mut *tx).await?;
        }
    }
    for chunk in chunks(probes) {
        let mut q = sqlx::query(PROBE_ROWS.of(chunk.len()));
        for (slot, ms, payload) in chunk {
            q = q.bind(*slot).bind(*ms as i64).bind(*payload);
        }
        q.execute(&mut *tx).await?;
    }
    if let Some(ms) = heartbeat {
        sqlx::query("INSERT OR REPLACE INTO meta (key, value) VALUES ('heartbeat_ms', ?)")
            .bind(ms.to_string())
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(())
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
    use super::*;

    /// Every chunk a batch is cut into has its statement, with one row of placeholders per
    /// item: the cached shapes cover every length `chunks` makes.
    #[test]
    fn every_chunk_has_a_statement_of_its_length() {
        for n in 1..300 {
            let items = vec![0u8; n];
            let mut covered = 0;
            for chunk in chunks(&items) {
                assert_eq!(EVENT_ROWS.of(chunk.len()).matches("(?, ?, ?, ?)").count(), chunk.len());
                assert_eq!(PROBE_ROWS.of(chunk.len()).matches("(?, ?, ?)").count(), chunk.len());
                assert_eq!(
                    GAME_ROWS
                        .of(chunk.len())
                        .matches("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
                        .count(),
                    chunk.len()
                );
                covered += chunk.len();
            }
            assert_eq!(covered, n);
        }
    }
}
