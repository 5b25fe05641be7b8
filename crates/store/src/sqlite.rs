//! The embedded SQLite store with a group-committing writer task.

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
    "CREATE TABLE IF NOT EXISTS events (
        game_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (game_id, seq)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS requests (
        game_id TEXT NOT NULL,
        request_id TEXT NOT NULL,
        response BLOB NOT NULL,
        PRIMARY KEY (game_id, request_id)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS games_unfinished ON games (finished, updated_ms)",
];

/// What the writer task commits.
enum Write {
    Append(Append),
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
            .busy_timeout(std::time::Duration::from_secs(10));
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
            let events = sqlx::query("SELECT seq, body FROM events WHERE game_id = ? ORDER BY seq")
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
            let responses = sqlx::query("SELECT request_id, response FROM requests WHERE game_id = ?")
                .bind(&game_id)
                .fetch_all(&self.reads)
                .await?
                .into_iter()
                .map(|r| (r.get::<String, _>("request_id"), r.get::<Vec<u8>, _>("response")))
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

/// The single writer: takes whatever appends are waiting, commits them in one
/// transaction (one fsync), then answers each.
async fn writer(mut conn: SqliteConnection, mut rx: mpsc::Receiver<Job>) {
    let mut batch: Vec<Job> = Vec::with_capacity(512);
    while let Some(job) = rx.recv().await {
        batch.push(job);
        while batch.len() < 512 {
            match rx.try_recv() {
                Ok(j) => batch.push(j),
                Err(_) => break,
            }
        }
        let results = commit_batch(&mut conn, &batch).await;
        for ((_, reply), r) in batch.drain(..).zip(results) {
            let _ = reply.send(r);
        }
    }
}

async fn commit_batch(conn: &mut SqliteConnection, batch: &[Job]) -> Vec<Result<(), StoreError>> {
    let mut results: Vec<Result<(), StoreError>> = Vec::with_capacity(batch.len());
    let mut tx = match conn.begin().await {
        Ok(tx) => tx,
        Err(e) => return batch.iter().map(|_| Err(StoreError::Db(clone_err(&e)))).collect(),
    };
    for (write, _) in batch {
        // Each write in its own savepoint, so one conflict does not sink the batch.
        let r = async {
            let mut sp = tx.begin().await?;
            let r = match write {
                Write::Append(a) => apply_append(&mut sp, a).await,
                Write::Heartbeat(now_ms) => {
                    sqlx::query("INSERT OR REPLACE INTO meta (key, value) VALUES ('heartbeat_ms', ?)")
                        .bind(now_ms.to_string())
                        .execute(&mut *sp)
                        .await
                        .map(|_| ())
                        .map_err(StoreError::from)
                }
            };
            match r {
                Ok(()) => {
                    sp.commit().await?;
                    Ok(())
                }
                Err(e) => {
                    sp.rollback().await?;
                    Err(e)
                }
            }
        }
        .await;
        results.push(r);
    }
    if let Err(e) = tx.commit().await {
        return batch.iter().map(|_| Err(StoreError::Db(clone_err(&e)))).collect();
    }
    results
}

fn clone_err(e: &sqlx::Error) -> sqlx::Error {
    sqlx::Error::Protocol(e.to_string())
}

async fn apply_append(conn: &mut SqliteConnection, a: &Append) -> Result<(), StoreError> {
    let last_seq = a.expected_seq + a.events.len() as u64;
    let s = &a.summary;
    if a.expected_seq == 0 {
        let r = sqlx::query(
            "INSERT INTO games (game_id, host_token_hash, guest_token_hash, last_seq, phase, board_size,
                                move_number, rules, finished, updated_ms)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (game_id) DO NOTHING",
        )
        .bind(&a.game_id)
        .bind(&a.host_token_hash)
        .bind(&a.guest_token_hash)
        .bind(last_seq as i64)
        .bind(&s.phase)
        .bind(s.board_size as i64)
        .bind(s.move_number as i64)
        .bind(&s.rules)
        .bind(s.finished)
        .bind(a.now_ms as i64)
        .execute(&mut *conn)
        .await?;
        if r.rows_affected() != 1 {
            return Err(StoreError::Conflict {
                game_id: a.game_id.clone(),
                expected: 0,
            });
        }
    } else {
        let r = sqlx::query(
            "UPDATE games SET last_seq = ?, phase = ?, move_number = ?, finished = ?, updated_ms = ?,
                    guest_token_hash = COALESCE(?, guest_token_hash)
             WHERE game_id = ? AND last_seq = ?",
        )
        .bind(last_seq as i64)
        .bind(&s.phase)
        .bind(s.move_number as i64)
        .bind(s.finished)
        .bind(a.now_ms as i64)
        .bind(&a.guest_token_hash)
        .bind(&a.game_id)
        .bind(a.expected_seq as i64)
        .execute(&mut *conn)
        .await?;
        if r.rows_affected() != 1 {
            return Err(StoreError::Conflict {
                game_id: a.game_id.clone(),
                expected: a.expected_seq,
            });
        }
    }
    for e in &a.events {
        let body = serde_json::to_string(e).map_err(|err| StoreError::Corrupt {
            game_id: a.game_id.clone(),
            why: err.to_string(),
        })?;
        sqlx::query("INSERT INTO events (game_id, seq, body) VALUES (?, ?, ?)")
            .bind(&a.game_id)
            .bind(e.seq as i64)
            .bind(body)
            .execute(&mut *conn)
            .await?;
    }
    if let Some((id, resp)) = &a.request {
        sqlx::query("INSERT OR REPLACE INTO requests (game_id, request_id, response) VALUES (?, ?, ?)")
            .bind(&a.game_id)
            .bind(id)
            .bind(resp)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

impl EventStore for SqliteStore {
    async fn append(&self, append: Append) -> Result<(), StoreError> {
        self.write(Write::Append(append)).await
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
