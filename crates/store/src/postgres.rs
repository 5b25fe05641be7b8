//! The PostgreSQL store, for several server replicas sharing one database.
//!
//! The optimistic concurrency check is the `games` row's `last_seq`: an append moves it
//! from the expected value to the new one, or, when another replica got there first,
//! changes nothing and is a `Conflict` (the caller then reloads the game).
//!
//! Appends to games that exist (every move) are committed in groups: a few writer tasks
//! each take whatever appends are waiting and write them with one statement, so one
//! commit (one WAL flush) and one round trip serve many moves. One statement per append
//! kept PostgreSQL's CPU busy with statements and commits at about 3.4k moves/s on two
//! cores. A commit is durable when acknowledged (`synchronous_commit` on, PostgreSQL's
//! default), and every append is answered after its own statement committed.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::TryStreamExt;
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::{Connection, PgConnection, Row};
use tokio::sync::{Mutex, mpsc, oneshot};

use weiqi_game::Phase;

use crate::{
    Append, Claim, Cluster, EventLog, Liveness, Lobby, LobbyRow, StoreError, StoreFuture, StoredGame, phase_from_name,
    phase_name,
};

/// The stored phase name of a game waiting for an opponent ([`phase_name`]).
const WAITING: &str = "waiting_for_opponent";

/// How long a call waits for a database connection before it fails as unavailable
/// (sqlx's default, 30 s, outlasted every client's deadline: a database that refused
/// connections made calls hang instead of failing at once, issue 49).
pub const ACQUIRE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

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
    // A game's next wake-up (clock), and until when a server has claimed it to act on it
    // (`EventStore::claim`).
    "ALTER TABLE games ADD COLUMN IF NOT EXISTS wake_ms BIGINT",
    "ALTER TABLE games ADD COLUMN IF NOT EXISTS claimed_until_ms BIGINT NOT NULL DEFAULT 0",
    "CREATE INDEX IF NOT EXISTS games_wake ON games (wake_ms) WHERE NOT finished AND wake_ms IS NOT NULL",
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    // The last `PROBE_SLOTS` durable pings, overwritten in turn.
    "CREATE TABLE IF NOT EXISTS probes (slot INTEGER PRIMARY KEY, at_ms BIGINT NOT NULL, payload BYTEA NOT NULL)",
    // (Databases from the first version of this store notified every append; a NOTIFY
    // takes a lock that serializes all commits, a third of the throughput.)
    "DROP TRIGGER IF EXISTS weiqi_game_changed ON games",
    "DROP FUNCTION IF EXISTS weiqi_game_changed()",
    crate::phase::MIGRATE_PHASE_NAMES,
];

/// Seeks made in the same millisecond pair, and challenges list, in the order they
/// arrived (SQLite has its rowid for this); added after the first version of the tables,
/// numbering the rows there.
const ARRIVAL: [&str; 2] = [
    "ALTER TABLE seeks ADD COLUMN IF NOT EXISTS arrival BIGSERIAL",
    "ALTER TABLE challenges ADD COLUMN IF NOT EXISTS arrival BIGSERIAL",
];

/// Replicas starting together create the schema one at a time (concurrent `CREATE ...
/// IF NOT EXISTS` can still collide in PostgreSQL's catalogs).
const SCHEMA_LOCK: i64 = 0x7765_6971_6900; // "weiqi"

/// Writer tasks committing groups of appends: each holds one connection while it writes,
/// so a group gathers while the other is on its way (one writer alone waits a full
/// round trip and WAL flush between groups). Measured with the load generator and
/// PostgreSQL on the same two cores: 1, 2, 4 and 8 writers gave 18k, 17-21k, 16-20k and
/// 16k moves/s.
const WRITERS: usize = 2;

/// The most appends one statement writes.
const MAX_GROUP: usize = 256;

/// An append on its way to a writer, its events already serialized (by the caller's task,
/// in parallel), and where its outcome goes.
struct Job {
    append: Append,
    bodies: Vec<String>,
    reply: oneshot::Sender<Result<(), StoreError>>,
    /// The waiting call's span: its trace gets the statement.
    span: tracing::Span,
    /// Held until the job is answered (or dropped unsent): what [`EventStore::barrier`]
    /// waits for.
    _ticket: Ticket,
}

/// The appends on their way to the writers, by ticket number, for the barrier.
#[derive(Default)]
struct InFlight {
    next: AtomicU64,
    pending: std::sync::Mutex<std::collections::BTreeSet<u64>>,
    done: tokio::sync::Notify,
}

/// One append in flight: removed from [`InFlight`] when dropped, whether the writer
/// answered it or the caller's future was cancelled before it was sent.
struct Ticket {
    id: u64,
    flight: Arc<InFlight>,
}

impl Ticket {
    fn new(flight: &Arc<InFlight>) -> Ticket {
        let id = flight.next.fetch_add(1, Ordering::SeqCst);
        flight.pending.lock().expect("lock").insert(id);
        Ticket {
            id,
            flight: flight.clone(),
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.flight.pending.lock().expect("lock").remove(&self.id);
        self.flight.done.notify_waiters();
    }
}

/// PostgreSQL event store. Cheap to clone.
#[derive(Clone)]
pub struct PgStore {
    pub(crate) pool: PgPool,
    probes: Arc<AtomicU64>,
    writers: mpsc::Sender<Job>,
    flight: Arc<InFlight>,
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
        for stmt in crate::schema(SCHEMA, "BIGSERIAL PRIMARY KEY") {
            sqlx::query(&stmt).execute(&mut *tx).await?;
        }
        for stmt in ARRIVAL {
            sqlx::query(stmt).execute(&mut *tx).await?;
        }
        tx.commit().await?;
        conn.close().await?;
        let pool = PgPoolOptions::new()
            .max_connections(pool.max(1))
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect(url)
            .await?;
        let (writers, jobs) = mpsc::channel(4096);
        let jobs = Arc::new(Mutex::new(jobs));
        for _ in 0..WRITERS {
            tokio::spawn(writer(pool.clone(), jobs.clone()));
        }
        Ok(PgStore {
            pool,
            probes: Default::default(),
            writers,
            flight: Default::default(),
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
        gather!(&self.pool, "game_id": String, "events", filter, arg)
    }
}

impl EventLog for PgStore {
    async fn append(&self, a: Append) -> Result<(), StoreError> {
        let bodies = crate::bodies(&a)?;
        if a.expected_seq == 0 {
            return create(&self.pool, &a, &bodies).await;
        }
        let (reply, outcome) = oneshot::channel();
        let ticket = Ticket::new(&self.flight);
        self.writers
            .send(Job {
                append: a,
                bodies,
                reply,
                span: tracing::Span::current(),
                _ticket: ticket,
            })
            .await
            .map_err(|_| StoreError::Closed)?;
        outcome.await.map_err(|_| StoreError::Closed)?
    }

    /// Waits for the appends handed to the writers before the call (a new game's create
    /// is one statement on the caller's task: a cancelled create is settled by the
    /// database, and a later append to that game conflicts if it went through).
    async fn barrier(&self) -> Result<(), StoreError> {
        let before = self.flight.next.load(Ordering::SeqCst);
        loop {
            let done = self.flight.done.notified();
            tokio::pin!(done);
            done.as_mut().enable();
            let oldest = self.flight.pending.lock().expect("lock").first().copied();
            if oldest.is_none_or(|t| t >= before) {
                return Ok(());
            }
            done.await;
        }
    }

    async fn load_since(&self, game_id: &str, after_seq: u64) -> Result<Option<StoredGame>, StoreError> {
        // One round trip: the game's row, with its newer events if any.
        let rows = sqlx::query(
            "SELECT g.host_token_hash, g.guest_token_hash, e.seq, e.request_id, e.body
             FROM games g LEFT JOIN events e ON e.game_id = g.game_id AND e.seq > $2
             WHERE g.game_id = $1 ORDER BY e.seq",
        )
        .bind(game_id)
        .bind(after_seq as i64)
        .fetch_all(&self.pool)
        .await?;
        let Some(first) = rows.first() else { return Ok(None) };
        let mut game = crate::Gathered::default();
        game.game((), game_id.to_string(), first.get(0), first.get(1));
        for row in &rows {
            if let Some(seq) = row.get::<Option<i64>, _>(2) {
                game.event(&(), seq as u64, row.get(3), row.get(4))?;
            }
        }
        Ok(game.into_games().pop())
    }

    async fn load_unfinished(&self) -> Result<Vec<StoredGame>, StoreError> {
        self.load_where("NOT g.finished", None).await
    }

    async fn load(&self, game_id: &str) -> Result<Option<StoredGame>, StoreError> {
        Ok(self.load_where("g.game_id = $1", Some(game_id)).await?.pop())
    }
}

/// The request id goes with the first event of its append.
fn request_ids(a: &Append) -> impl Iterator<Item = Option<&str>> {
    (0..a.events.len()).map(|k| if k == 0 { a.request_id.as_deref() } else { None })
}

/// A new game: its `games` row and first events in one statement, or, when the game
/// already exists, nothing (`Conflict`).
async fn create(pool: &PgPool, a: &Append, bodies: &[String]) -> Result<(), StoreError> {
    let seqs: Vec<i64> = a.events.iter().map(|e| e.seq as i64).collect();
    let request_ids: Vec<Option<&str>> = request_ids(a).collect();
    let s = crate::SummaryColumns::of(a.summary.as_ref());
    let inserted = sqlx::query(
        "WITH g AS (
           INSERT INTO games (game_id, host_token_hash, guest_token_hash, last_seq, phase, board_size,
                              move_number, rules, finished, updated_ms, created_ms, wake_ms)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11) ON CONFLICT (game_id) DO NOTHING
           RETURNING game_id)
         INSERT INTO events (game_id, seq, request_id, body)
         SELECT g.game_id, u.seq, u.request_id, u.body FROM g,
                UNNEST($12::BIGINT[], $13::TEXT[], $14::TEXT[]) AS u(seq, request_id, body)",
    )
    .bind(&a.game_id)
    .bind(&a.host_token_hash)
    .bind(&a.guest_token_hash)
    .bind(a.events.len() as i64)
    .bind(s.phase)
    .bind(s.board_size)
    .bind(s.move_number)
    .bind(s.rules)
    .bind(s.finished)
    .bind(a.now_ms as i64)
    .bind(a.wake_ms.map(|w| w as i64))
    .bind(&seqs)
    .bind(&request_ids)
    .bind(bodies)
    .execute(pool)
    .await?;
    if inserted.rows_affected() != a.events.len() as u64 {
        return Err(StoreError::Conflict {
            game_id: a.game_id.clone(),
            expected: 0,
        });
    }
    Ok(())
}

/// One writer: takes the appends waiting (at least one), writes them as one group, and
/// answers each; until the store is dropped.
async fn writer(pool: PgPool, jobs: Arc<Mutex<mpsc::Receiver<Job>>>) {
    loop {
        let mut group = Vec::new();
        {
            let mut jobs = jobs.lock().await;
            match jobs.recv().await {
                Some(job) => group.push(job),
                None => return,
            }
            while group.len() < MAX_GROUP {
                match jobs.try_recv() {
                    Ok(job) => group.push(job),
                    Err(_) => break,
                }
            }
        }
        // One append per game in a statement (the `games` row is the check); a second one
        // for the same game waits for the next statement. (A server holds each game's lock
        // while it appends: two appends of one game meet only when a call was cancelled
        // with its append on the way, and the next command on the game followed it.)
        while !group.is_empty() {
            let mut seen = HashSet::new();
            let (now, later): (Vec<Job>, Vec<Job>) =
                group.into_iter().partition(|j| seen.insert(j.append.game_id.clone()));
            group = later;
            let appends: Vec<(&Append, &[String])> = now.iter().map(|j| (&j.append, &j.bodies[..])).collect();
            // In each waiting call's trace, the statement its append went into.
            let spans: Vec<tracing::Span> = now
                .iter()
                .filter(|j| !j.span.is_none())
                .map(|j| {
                    tracing::info_span!(target: crate::TRACE, parent: &j.span, "db.append_group", db.system = "postgresql", appends = appends.len())
                })
                .collect();
            let outcomes = match append_group(&pool, &appends).await {
                Ok(written) => appends
                    .iter()
                    .map(|(a, _)| {
                        if written.contains(&a.game_id) {
                            Ok(())
                        } else {
                            Err(conflict(a))
                        }
                    })
                    .collect(),
                // The statement failed as a whole (a deadlock with another replica's group,
                // a lost connection): each append is tried on its own, so one bad append
                // fails alone.
                Err(e) if appends.len() > 1 => {
                    // (The error shows the database's SQLSTATE and detail: `DbError`.)
                    tracing::warn!(error = %e, appends = appends.len(), "a group of appends failed; trying each alone");
                    let mut each = Vec::with_capacity(appends.len());
                    for one in &appends {
                        each.push(match append_group(&pool, std::slice::from_ref(one)).await {
                            Ok(written) if written.contains(&one.0.game_id) => Ok(()),
                            Ok(_) => Err(conflict(one.0)),
                            Err(e) => {
                                tracing::warn!(game_id = %one.0.game_id, error = %e, "an append failed on its own too");
                                Err(e)
                            }
                        });
                    }
                    each
                }
                Err(e) => vec![Err(e)],
            };
            drop(spans);
            for (job, outcome) in now.into_iter().zip(outcomes) {
                let _ = job.reply.send(outcome);
            }
        }
    }
}

fn conflict(a: &Append) -> StoreError {
    StoreError::Conflict {
        game_id: a.game_id.clone(),
        expected: a.expected_seq,
    }
}

/// Appends to existing games (one per game) in one statement: each `games` row moves from
/// its expected sequence number to its new one, and only the games that moved get their
/// events. Returns the games written; the others were appended to by someone else first.
async fn append_group(pool: &PgPool, group: &[(&Append, &[String])]) -> Result<HashSet<String>, StoreError> {
    let mut games = Games::default();
    let mut events = Events::default();
    for (a, bodies) in group {
        let s = a.summary.as_ref();
        games.game_id.push(&a.game_id);
        games.expected.push(a.expected_seq as i64);
        games.last_seq.push((a.expected_seq + a.events.len() as u64) as i64);
        games.updated_ms.push(a.now_ms as i64);
        games.guest_hash.push(a.guest_token_hash.as_deref());
        // The summary columns change only with a summary (most moves carry none).
        games.phase.push(s.map(|s| phase_name(s.phase)));
        games.move_number.push(a.move_number as i32);
        games.finished.push(s.map(|s| s.finished));
        games.wake_ms.push(a.wake_ms.map(|w| w as i64));
        for ((e, body), request_id) in a.events.iter().zip(bodies.iter()).zip(request_ids(a)) {
            events.game_id.push(&a.game_id);
            events.seq.push(e.seq as i64);
            events.request_id.push(request_id);
            events.body.push(body);
        }
    }
    let written: Vec<String> = sqlx::query_scalar(
        "WITH i AS (
           SELECT * FROM UNNEST($1::TEXT[], $2::BIGINT[], $3::BIGINT[], $4::BIGINT[], $5::TEXT[], $6::TEXT[],
                                $7::INT[], $8::BOOL[], $13::BIGINT[])
             AS i(game_id, expected, last_seq, updated_ms, guest_hash, phase, move_number, finished, wake_ms)),
         g AS (
           UPDATE games SET last_seq = i.last_seq, updated_ms = i.updated_ms,
             guest_token_hash = COALESCE(i.guest_hash, games.guest_token_hash),
             phase = COALESCE(i.phase, games.phase), move_number = i.move_number,
             finished = COALESCE(i.finished, games.finished), wake_ms = i.wake_ms
           FROM i WHERE games.game_id = i.game_id AND games.last_seq = i.expected
           RETURNING games.game_id),
         e AS (
           INSERT INTO events (game_id, seq, request_id, body)
           SELECT u.game_id, u.seq, u.request_id, u.body
           FROM UNNEST($9::TEXT[], $10::BIGINT[], $11::TEXT[], $12::TEXT[]) AS u(game_id, seq, request_id, body)
           JOIN g ON g.game_id = u.game_id)
         SELECT game_id FROM g",
    )
    .bind(&games.game_id)
    .bind(&games.expected)
    .bind(&games.last_seq)
    .bind(&games.updated_ms)
    .bind(&games.guest_hash)
    .bind(&games.phase)
    .bind(&games.move_number)
    .bind(&games.finished)
    .bind(&events.game_id)
    .bind(&events.seq)
    .bind(&events.request_id)
    .bind(&events.body)
    .bind(&games.wake_ms)
    .fetch_all(pool)
    .await?;
    Ok(written.into_iter().collect())
}

/// The `games` columns of a group, one array per column (bound with `UNNEST`).
#[derive(Default)]
struct Games<'a> {
    game_id: Vec<&'a str>,
    expected: Vec<i64>,
    last_seq: Vec<i64>,
    updated_ms: Vec<i64>,
    guest_hash: Vec<Option<&'a str>>,
    phase: Vec<Option<&'a str>>,
    move_number: Vec<i32>,
    finished: Vec<Option<bool>>,
    wake_ms: Vec<Option<i64>>,
}

/// The `events` columns of a group.
#[derive(Default)]
struct Events<'a> {
    game_id: Vec<&'a str>,
    seq: Vec<i64>,
    request_id: Vec<Option<&'a str>>,
    body: Vec<&'a str>,
}

impl Liveness for PgStore {
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

impl Cluster for PgStore {
    fn lobby(&self, limit: usize) -> StoreFuture<'_, Lobby> {
        Box::pin(async move {
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
            let row = |(game_id, phase, board_size, move_number, rules): (String, String, i32, i32, String)| {
                // (A name no phase has is a row written by hand: listed as in play.)
                let phase = phase_from_name(&phase).unwrap_or(Phase::Playing);
                LobbyRow {
                    game_id,
                    phase,
                    board_size: board_size as u32,
                    move_number: move_number as u32,
                    rules,
                }
            };
            Ok(Lobby {
                open: rows(true).await?.into_iter().map(row).collect(),
                playing: rows(false).await?.into_iter().map(row).collect(),
            })
        })
    }

    fn claim(&self, what: Claim, now_ms: u64, until_ms: u64, limit: usize) -> StoreFuture<'_, Vec<String>> {
        let (condition, bound) = match what {
            Claim::Overdue { due_ms } => ("wake_ms <= $1 ORDER BY wake_ms".to_string(), due_ms),
            Claim::OpenSince { created_ms } => (
                format!("phase = '{WAITING}' AND created_ms <= $1 ORDER BY created_ms"),
                created_ms,
            ),
        };
        // SKIP LOCKED: servers claiming at the same moment split the games instead of
        // waiting for each other.
        let sql = format!(
            "UPDATE games SET claimed_until_ms = $3 WHERE game_id IN (
               SELECT game_id FROM games WHERE NOT finished AND claimed_until_ms <= $2 AND {condition}
               LIMIT $4 FOR UPDATE SKIP LOCKED)
             RETURNING game_id"
        );
        Box::pin(async move {
            Ok(sqlx::query_scalar(&sql)
                .bind(bound as i64)
                .bind(now_ms as i64)
                .bind(until_ms as i64)
                .bind(limit as i64)
                .fetch_all(&self.pool)
                .await?)
        })
    }

    fn last_seqs<'a>(&'a self, game_ids: &'a [String]) -> StoreFuture<'a, Vec<(String, u64)>> {
        Box::pin(async move {
            let rows: Vec<(String, i64)> =
                sqlx::query_as("SELECT game_id, last_seq FROM games WHERE game_id = ANY($1)")
                    .bind(game_ids)
                    .fetch_all(&self.pool)
                    .await?;
            Ok(rows.into_iter().map(|(id, seq)| (id, seq as u64)).collect())
        })
    }
}
