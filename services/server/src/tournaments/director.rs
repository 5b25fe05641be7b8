//! The director: on every server, every second, each running tournament is moved on
//! (games created, results recorded, the next round paired). Servers racing on one step
//! are settled by the append (see `mod.rs`), so running it everywhere is safe, and a
//! tournament never waits for one server.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use super::Tournaments;

/// How often the director looks (a round's results are recorded at most this late).
pub const DIRECT_EVERY: Duration = Duration::from_millis(1000);
/// Running tournaments one pass looks at, the oldest last (documented limit).
pub const MAX_RUNNING: usize = 1000;

pub async fn run(t: Arc<Tournaments>, mut stop: watch::Receiver<bool>) {
    loop {
        tokio::select! {
            _ = tokio::time::sleep(DIRECT_EVERY) => {}
            _ = stop.changed() => return,
        }
        let running = match t.store.tournaments(true, MAX_RUNNING).await {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(error = %e, "listing tournaments failed");
                continue;
            }
        };
        for row in running {
            if let Err(e) = t.direct(&row.id).await {
                tracing::warn!(tournament = %row.id, error = %e, "directing a tournament failed");
            }
        }
    }
}
