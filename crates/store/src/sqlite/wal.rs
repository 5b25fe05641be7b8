//! Keeping the WAL short: a background pass copies it into the database and syncs the
//! file, and the writer lets it start over between two commits.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use sqlx::SqliteConnection;
use tokio::sync::mpsc;

use super::writer::Job;

/// How often the writer lets the WAL start over: at most this often, and just after a
/// background pass has copied the WAL and synced the database, so that the writer's own
/// pass (appends wait meanwhile) copies and syncs only what was committed since. At a human
/// pace a reset at any moment took 20-60 ms, mostly the database's fsync (16-18 ms). At the
/// latest after [`WAL_RESET_LATEST`], whatever the background pass does.
const WAL_RESET_EVERY: std::time::Duration = std::time::Duration::from_secs(1);
const WAL_RESET_LATEST: std::time::Duration = std::time::Duration::from_secs(3);

/// When the background pass last finished (copied and synced), for the writer's resets.
pub(super) struct CheckpointDone {
    start: std::time::Instant,
    /// Milliseconds since `start` (`u64::MAX` before the first pass).
    at_ms: AtomicU64,
}

impl CheckpointDone {
    /// A pass counts as just finished this long after it did.
    const FRESH_MS: u64 = 20;

    pub(super) fn new() -> CheckpointDone {
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

    /// Whether the writer, whose WAL last started over `since_reset` ago, resets it now
    /// ([`WAL_RESET_EVERY`]).
    pub(super) fn reset_due(&self, since_reset: std::time::Duration) -> bool {
        since_reset >= WAL_RESET_EVERY && (self.just_now() || since_reset >= WAL_RESET_LATEST)
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
pub(super) fn reset_wal(conn: &rusqlite::Connection) -> bool {
    let started = std::time::Instant::now();
    let pass = conn.query_row(PASSIVE, [], |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?))
    });
    match pass {
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

/// Copies the WAL into the database in the background (PASSIVE: never blocks the writer),
/// then syncs the database file, until the store is dropped. SQLite syncs the database only
/// when a checkpoint copies every frame, which under constant writes only the writer's
/// reset does; the pages the background copied were then all flushed on the writer's path.
pub(super) async fn checkpoints(
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
        match passive_checkpoint(&mut conn).await {
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

/// Copies into the database what of the WAL it can without waiting for anyone: (busy,
/// frames in the WAL, frames copied), as SQLite reports them.
async fn passive_checkpoint(conn: &mut SqliteConnection) -> Result<(i64, i64, i64), sqlx::Error> {
    sqlx::query_as(PASSIVE).fetch_one(conn).await
}

/// A checkpoint that copies what of the WAL it can without waiting for anyone; SQLite
/// answers (busy, frames in the WAL, frames copied). The background pass runs it through
/// sqlx, the writer on its own connection.
const PASSIVE: &str = "PRAGMA wal_checkpoint(PASSIVE)";
