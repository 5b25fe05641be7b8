//! The embedded SQLite store with a group-committing writer task.

use std::collections::HashMap;
use std::path::Path;
use std::str::FromStr;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Connection, Row, SqliteConnection, SqlitePool};
use tokio::sync::{mpsc, oneshot};
use weiqi_game::Event;

use crate::{Append, EventStore, StoreError, StoredGame};

const SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS games (
        game_id TEXT PRIMARY KEY,
        host_token_hash TEXT,
        guest_token_hash TEXT,
        last_seq INTEGER NOT NULL,
        phase TEXT NOT NULL,
        board_size INTEGER NOT NULL,
        move_number INTEGER NOT NULL,
        rules TEXT NOT NULL,
        finished INTEGER NOT NULL,
        updated_ms INTEGER NOT NULL)",
    // An append-only log: a rowid table (rows are large) with a unique (game, seq) index.
    // `request_id` marks the first event of an idempotent request.
    "CREATE TABLE IF NOT EXISTS events (
        game_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        request_id TEXT,
        body TEXT NOT NULL)",
    "CREATE UNIQUE INDEX IF NOT EXISTS events_by_game ON events (game_id, seq)",
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS games_unfinished ON games (finished, updated_ms)",
];

/// What the writer task commits.
enum Write {
    /// An append with its events already serialized (by the caller's task, in parallel,
    /// rather than by the single writer).
    Append(Box<Append>, Vec<String>),
    /// The service is alive at this time (ms).
    Heartbeat(u64),
}

type Job = (Write, oneshot::Sender<Result<(), StoreError>>);

/// Embedded SQLite event store. Cheap to clone.
#[derive(Clone)]
pub struct SqliteStore {
    reads: SqlitePool,
    writer: mpsc::Sender<Job>,
}

impl SqliteStore {
    /// Opens (or creates) the database file at `path`.
    pub async fn open(path: &Path) -> Result<SqliteStore, StoreError> {
        let opts = SqliteConnectOptions::from_str(&format!("sqlite://{}", path.display()))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // FULL: a committed transaction survives power loss, not just a crash.
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(std::time::Duration::from_secs(10))
            // No checkpoints inside commits (they copy the WAL into the database and fsync
            // it, stalling the writer for seconds): a background task checkpoints instead.
            .pragma("wal_autocheckpoint", "0");
        let mut conn = SqliteConnection::connect_with(&opts).await?;
        for stmt in SCHEMA {
            sqlx::query(stmt).execute(&mut conn).await?;
        }
        let reads = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(opts.clone().read_only(true))
            .await?;
        let (tx, rx) = mpsc::channel::<Job>(4096);
        tokio::spawn(writer(conn, rx));
        let checkpointer = SqliteConnection::connect_with(&opts).await?;
        tokio::spawn(checkpoints(checkpointer, tx.downgrade()));
        Ok(SqliteStore { reads, writer: tx })
    }

    async fn write(&self, w: Write) -> Result<(), StoreError> {
        let (tx, rx) = oneshot::channel();
        self.writer.send((w, tx)).await.map_err(|_| StoreError::Closed)?;
        rx.await.map_err(|_| StoreError::Closed)?
    }

    async fn load_games(&self, rows: Vec<sqlx::sqlite::SqliteRow>) -> Result<Vec<StoredGame>, StoreError> {
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let game_id: String = row.get("game_id");
            let events = sqlx::query("SELECT body FROM events WHERE game_id = ? ORDER BY seq")
                .bind(&game_id)
                .fetch_all(&self.reads)
                .await?;
            let mut evs = Vec::with_capacity(events.len());
            for e in events {
                let body: String = e.get("body");
                let ev: Event = serde_json::from_str(&body).map_err(|err| StoreError::Corrupt {
                    game_id: game_id.clone(),
                    why: err.to_string(),
                })?;
                evs.push(ev);
            }
            let responses = sqlx::query(
                "SELECT request_id, seq FROM events WHERE game_id = ? AND request_id IS NOT NULL ORDER BY seq",
            )
            .bind(&game_id)
            .fetch_all(&self.reads)
            .await?
            .into_iter()
            .map(|r| (r.get::<String, _>("request_id"), r.get::<i64, _>("seq") as u64))
            .collect();
            out.push(StoredGame {
                game_id,
                host_token_hash: row.get("host_token_hash"),
                guest_token_hash: row.get("guest_token_hash"),
                events: evs,
                responses,
            });
        }
        Ok(out)
    }
}

/// The single writer: takes whatever writes are waiting, commits them in one transaction
/// (one fsync), then answers each. Being the only writer, it checks the optimistic
/// concurrency condition against its cache of each game's last sequence number (read from
/// the database on first use), so a batch costs a handful of multi-row statements rather
/// than several statements per append.
async fn writer(mut conn: SqliteConnection, mut rx: mpsc::Receiver<Job>) {
    let mut batch: Vec<Job> = Vec::with_capacity(1024);
    let mut last_seq: HashMap<String, u64> = HashMap::new();
    while let Some(job) = rx.recv().await {
        batch.push(job);
        while batch.len() < 1024 {
            match rx.try_recv() {
                Ok(j) => batch.push(j),
                Err(_) => break,
            }
        }
        let started = std::time::Instant::now();
        let results = commit_batch(&mut conn, &batch, &mut last_seq).await;
        tracing::debug!(
            writes = batch.len(),
            micros = started.elapsed().as_micros() as u64,
            "batch committed"
        );
        for ((_, reply), r) in batch.drain(..).zip(results) {
            let _ = reply.send(r);
        }
    }
}

/// Copies the WAL into the database in the background (PASSIVE: never blocks the writer),
/// until the store is dropped.
async fn checkpoints(mut conn: SqliteConnection, alive: mpsc::WeakSender<Job>) {
    loop {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        if alive.upgrade().is_none() {
            return;
        }
        if let Err(e) = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)").execute(&mut conn).await {
            tracing::warn!(error = %e, "WAL checkpoint failed");
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

async fn commit_batch(
    conn: &mut SqliteConnection,
    batch: &[Job],
    last_seq: &mut HashMap<String, u64>,
) -> Vec<Result<(), StoreError>> {
    let mut results: Vec<Option<Result<(), StoreError>>> = Vec::with_capacity(batch.len());
    let mut accepted: Vec<(&Append, &Vec<String>)> = Vec::new();
    let mut heartbeat: Option<u64> = None;
    let mut touched: Vec<String> = Vec::new();
    for (write, _) in batch {
        match write {
            Write::Heartbeat(ms) => {
                heartbeat = Some(heartbeat.map_or(*ms, |h: u64| h.max(*ms)));
                results.push(None);
            }
            Write::Append(a, bodies) => {
                let current = match last_seq.get(&a.game_id) {
                    Some(&s) => Some(s),
                    None => match sqlx::query("SELECT max(seq) AS last FROM events WHERE game_id = ?")
                        .bind(&a.game_id)
                        .fetch_one(&mut *conn)
                        .await
                    {
                        Ok(row) => row.get::<Option<i64>, _>("last").map(|s| s as u64),
                        Err(e) => {
                            results.push(Some(Err(StoreError::Db(e))));
                            continue;
                        }
                    },
                };
                let ok = match current {
                    None => a.expected_seq == 0,
                    Some(s) => a.expected_seq == s && a.expected_seq > 0,
                };
                if !ok {
                    if let Some(s) = current {
                        last_seq.insert(a.game_id.clone(), s);
                    }
                    results.push(Some(Err(StoreError::Conflict {
                        game_id: a.game_id.clone(),
                        expected: a.expected_seq,
                    })));
                    continue;
                }
                last_seq.insert(a.game_id.clone(), a.expected_seq + a.events.len() as u64);
                touched.push(a.game_id.clone());
                accepted.push((&**a, bodies));
                results.push(None);
            }
        }
    }
    if let Err(e) = write_accepted(conn, &accepted, heartbeat).await {
        // Nothing of this batch is on disk: forget what we assumed and fail the accepted.
        for id in touched {
            last_seq.remove(&id);
        }
        let msg = e.to_string();
        return results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(StoreError::Db(sqlx::Error::Protocol(msg.clone())))))
            .collect();
    }
    results.into_iter().map(|r| r.unwrap_or(Ok(()))).collect()
}

/// Writes the accepted appends of a batch in one transaction.
async fn write_accepted(
    conn: &mut SqliteConnection,
    accepted: &[(&Append, &Vec<String>)],
    heartbeat: Option<u64>,
) -> Result<(), StoreError> {
    let mut tx = conn.begin().await?;
    // Summary rows, only where they changed (most moves change none). The unique
    // (game_id, seq) index on events is what guarantees one event per sequence number.
    let summaries: Vec<&Append> = accepted
        .iter()
        .map(|(a, _)| *a)
        .filter(|a| a.summary.is_some())
        .collect();
    for chunk in chunks(&summaries) {
        let mut sql = String::from(
            "INSERT INTO games (game_id, host_token_hash, guest_token_hash, last_seq, phase, board_size,
                                move_number, rules, finished, updated_ms) VALUES ",
        );
        sql.push_str(&vec!["(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"; chunk.len()].join(", "));
        sql.push_str(
            " ON CONFLICT (game_id) DO UPDATE SET last_seq = excluded.last_seq, phase = excluded.phase,
              move_number = excluded.move_number, finished = excluded.finished, updated_ms = excluded.updated_ms,
              guest_token_hash = COALESCE(excluded.guest_token_hash, games.guest_token_hash)",
        );
        let mut q = sqlx::query(&sql);
        for a in chunk {
            let s = a.summary.as_ref().expect("filtered");
            q = q
                .bind(&a.game_id)
                .bind(&a.host_token_hash)
                .bind(&a.guest_token_hash)
                .bind((a.expected_seq + a.events.len() as u64) as i64)
                .bind(&s.phase)
                .bind(s.board_size as i64)
                .bind(s.move_number as i64)
                .bind(&s.rules)
                .bind(s.finished)
                .bind(a.now_ms as i64);
        }
        q.execute(&mut *tx).await?;
    }
    let mut events: Vec<(&str, i64, Option<&str>, &str)> = Vec::new();
    for (a, bodies) in accepted {
        for (k, (e, body)) in a.events.iter().zip(bodies.iter()).enumerate() {
            let rid = if k == 0 { a.request_id.as_deref() } else { None };
            events.push((&a.game_id, e.seq as i64, rid, body));
        }
    }
    for chunk in chunks(&events) {
        let sql = format!(
            "INSERT INTO events (game_id, seq, request_id, body) VALUES {}",
            vec!["(?, ?, ?, ?)"; chunk.len()].join(", ")
        );
        let mut q = sqlx::query(&sql);
        for (id, seq, rid, body) in chunk {
            q = q.bind(*id).bind(*seq).bind(*rid).bind(body);
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

impl EventStore for SqliteStore {
    async fn append(&self, append: Append) -> Result<(), StoreError> {
        let bodies = append
            .events
            .iter()
            .map(serde_json::to_string)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|err| StoreError::Corrupt {
                game_id: append.game_id.clone(),
                why: err.to_string(),
            })?;
        self.write(Write::Append(Box::new(append), bodies)).await
    }

    async fn load_unfinished(&self) -> Result<Vec<StoredGame>, StoreError> {
        let rows = sqlx::query("SELECT game_id, host_token_hash, guest_token_hash FROM games WHERE finished = 0")
            .fetch_all(&self.reads)
            .await?;
        self.load_games(rows).await
    }

    async fn load(&self, game_id: &str) -> Result<Option<StoredGame>, StoreError> {
        let rows = sqlx::query("SELECT game_id, host_token_hash, guest_token_hash FROM games WHERE game_id = ?")
            .bind(game_id)
            .fetch_all(&self.reads)
            .await?;
        Ok(self.load_games(rows).await?.into_iter().next())
    }

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
}
