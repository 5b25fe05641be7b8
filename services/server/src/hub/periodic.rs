//! The hub's periodic tasks, each until the server stops: liveness, idle eviction, the
//! open games' time to live and, with a cluster, following watched games and claiming
//! the overdue games of servers that are gone.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tracing::{debug, info, warn};
use weiqi_game::{Actor, Command, Ms, Phase};
use weiqi_store::{Claim, EventStore};

use super::{Entry, Hub, Mutation};

/// How long a claimed game is left to the server that claimed it before another may
/// claim it again.
const CLAIM_LEASE_MS: Ms = 10_000;

/// Sleeps for `every`; false, at once, when the server starts stopping (the periodic
/// tasks' wait between rounds).
async fn sleep_unless_stopped(shutdown: &mut watch::Receiver<bool>, every: Duration) -> bool {
    tokio::select! {
        _ = tokio::time::sleep(every) => true,
        _ = shutdown.changed() => false,
    }
}

impl<S: EventStore> Hub<S> {
    /// Records liveness periodically until shutdown, and with it readiness: a heartbeat
    /// the store did not take within [`READY_WITHIN`](super::READY_WITHIN) makes the server
    /// unready (a database cut off, restarting, a full disk), the next one it takes ready
    /// again.
    pub async fn heartbeat_loop(self: Arc<Self>, every_ms: u64) {
        let mut shutdown = self.shutdown.clone();
        loop {
            let beat = tokio::time::timeout(super::READY_WITHIN, self.store.heartbeat(self.time.now_ms())).await;
            let ready = match beat {
                Ok(Ok(())) => true,
                Ok(Err(e)) => {
                    warn!(error = %e, "heartbeat failed");
                    false
                }
                Err(_) => {
                    warn!(within = ?super::READY_WITHIN, "heartbeat took too long");
                    false
                }
            };
            self.ready.send_if_modified(|r| {
                let changed = *r != ready;
                if changed {
                    info!(ready, "readiness changed");
                }
                *r = ready;
                changed
            });
            // (Sampled here too: games come into memory and leave it by several paths,
            // idle eviction and loads on demand among them.)
            let held = self.games.read().expect("lock").len();
            self.metrics.games_active.set(held as i64);
            if !sleep_unless_stopped(&mut shutdown, Duration::from_millis(every_ms.max(10))).await {
                return;
            }
        }
    }

    /// With a cluster: every `every_ms`, the games watched here whose stored log is ahead
    /// of memory (another server appended) are locked, which catches them up and sends
    /// their watchers what they missed. (Polling only the watched games costs nothing per
    /// move; a notification per append serialized every commit in PostgreSQL.)
    pub async fn follow_watched(self: Arc<Self>, every_ms: Ms) {
        let Some(cluster) = self.cluster.clone() else { return };
        let mut shutdown = self.shutdown.clone();
        let every = Duration::from_millis(every_ms.max(10));
        while sleep_unless_stopped(&mut shutdown, every).await {
            let watched: Vec<(String, u64)> = self
                .games
                .read()
                .expect("lock")
                .iter()
                .filter(|(_, s)| s.watchers.count() > 0)
                .map(|(id, s)| (id.clone(), s.listing.seq()))
                .collect();
            if watched.is_empty() {
                continue;
            }
            let ids: Vec<String> = watched.iter().map(|(id, _)| id.clone()).collect();
            let stored: HashMap<String, u64> = match cluster.last_seqs(&ids).await {
                Ok(s) => s.into_iter().collect(),
                Err(e) => {
                    warn!(error = %e, "polling the watched games");
                    continue;
                }
            };
            for (id, seq) in watched {
                if stored.get(&id).is_some_and(|&s| s != seq) {
                    let hub = self.clone();
                    tokio::spawn(async move {
                        if let Err(e) = hub.lock(&id).await {
                            debug!(game_id = %id, error = %e, "catching up with another server");
                        }
                    });
                }
            }
        }
    }

    /// With a cluster: every `every_ms`, claims the games whose clock (or byo-yomi
    /// announcement) is overdue by more than `grace_ms` and ticks them here. The server
    /// holding a game ticks it on time from its own timer; this is for games whose server
    /// is gone (crashed, or scaled away) and which no other server holds, so that a game
    /// still ends on time with no request arriving. The claim keeps other servers off the
    /// game meanwhile, and the tick's append is the check against one that does tick it:
    /// the later of two ticks conflicts, catches up and finds nothing left to do.
    pub async fn claim_overdue(self: Arc<Self>, every_ms: Ms, grace_ms: Ms) {
        let Some(cluster) = self.cluster.clone() else { return };
        let mut shutdown = self.shutdown.clone();
        let every = Duration::from_millis(every_ms.max(10));
        while sleep_unless_stopped(&mut shutdown, every).await {
            let now = self.time.now_ms();
            let overdue = Claim::Overdue {
                due_ms: now.saturating_sub(grace_ms),
            };
            let due = match cluster.claim(overdue, now, now + CLAIM_LEASE_MS, 100).await {
                Ok(due) => due,
                Err(e) => {
                    warn!(error = %e, "claiming overdue games");
                    continue;
                }
            };
            self.metrics
                .claims
                .with_label_values(&["overdue"])
                .inc_by(due.len() as u64);
            for id in due {
                let hub = self.clone();
                tokio::spawn(async move {
                    info!(game_id = %id, "ticking an overdue game of another server");
                    if let Err(e) = hub.run(&id, Actor::Server, Command::Tick, Mutation::default()).await {
                        warn!(game_id = %id, error = %e, "ticking an overdue game failed");
                    }
                });
            }
        }
    }

    /// Drops from memory the games in progress that nobody has touched for `idle_ms`, have
    /// no clock running (nothing will happen to them on its own), no watchers and are not
    /// waiting for an opponent in the lobby. They stay in the store, unfinished, and are
    /// loaded again by the next call that names them: abandoned casual games no longer
    /// hold memory for good.
    pub fn evict_idle(&self, idle_ms: Ms) -> usize {
        let now = self.time.now_ms();
        let mut games = self.games.write().expect("lock");
        let before = games.len();
        games.retain(|_, slot| {
            // A game in use right now is kept.
            let Ok(mut e) = slot.entry.try_lock() else { return true };
            now.saturating_sub(e.last_active) < idle_ms
                // Open games stay listed in the lobby.
                || slot.listing.phase() == Phase::WaitingForOpponent
                || e.timer.is_some()
                || e.watchers.count() > 0
                // (A game at rest with a wake-up has its timer.)
                || (e.game.is_live() && e.game.get().next_wakeup().is_some())
        });
        before - games.len()
    }

    /// Puts a game about to be used (`entry`, locked, from `slot`) on the list that
    /// [`Hub::park_idle`] visits, unless it is there already: a use may unpack it. (Called
    /// by `Hub::locked_entry`, the one way to a game's entry.)
    pub(super) fn may_unpack(&self, slot: &Arc<tokio::sync::Mutex<Entry>>, entry: &mut Entry) {
        if !entry.on_park_list {
            entry.on_park_list = true;
            self.park_list.lock().expect("lock").push(Arc::downgrade(slot));
        }
    }

    /// How many games the next [`Hub::park_idle`] visits.
    pub fn park_list_len(&self) -> usize {
        self.park_list.lock().expect("lock").len()
    }

    /// Packs the games left unpacked (quick play, reads) that had no command for the
    /// hub's `park_after_ms`. Returns how many. Visits only the games used since the last
    /// pass ([`Hub::may_unpack`]) and those it left: games in use right now, or used less
    /// than `park_after_ms` ago, stay on the list for the next pass.
    pub fn park_idle(&self) -> usize {
        let now = self.time.now_ms();
        let listed = std::mem::take(&mut *self.park_list.lock().expect("lock"));
        let mut kept = Vec::new();
        let mut parked = 0;
        for listed in listed {
            let Some(slot) = listed.upgrade() else { continue };
            let Ok(mut e) = slot.try_lock() else {
                kept.push(listed);
                continue;
            };
            if e.game.is_live() {
                if now.saturating_sub(e.last_active) < self.park_after_ms {
                    kept.push(listed);
                    continue;
                }
                e.game.park();
                parked += 1;
            }
            e.on_park_list = false;
        }
        self.park_list.lock().expect("lock").extend(kept);
        parked
    }

    /// Runs [`Hub::park_idle`] every `park_after_ms` (at least every second) until
    /// shutdown.
    pub async fn park_loop(self: Arc<Self>) {
        let mut shutdown = self.shutdown.clone();
        let every = Duration::from_millis(self.park_after_ms.clamp(1000, 60_000));
        while sleep_unless_stopped(&mut shutdown, every).await {
            self.park_idle();
        }
    }

    /// Runs [`Hub::evict_idle`] periodically until shutdown.
    pub async fn evict_loop(self: Arc<Self>, idle_ms: Ms) {
        let mut shutdown = self.shutdown.clone();
        let every = Duration::from_millis((idle_ms / 4).clamp(1000, 60_000));
        while sleep_unless_stopped(&mut shutdown, every).await {
            let n = self.evict_idle(idle_ms);
            if n > 0 {
                info!(games = n, "idle games left memory (kept in the store)");
            }
        }
    }

    /// Cancels the open games that nobody joined within `ttl_ms` of their creation.
    /// Returns how many it cancelled. (A game joined meanwhile refuses the cancel.)
    pub async fn cancel_stale_open(self: &Arc<Self>, ttl_ms: Ms) -> usize {
        let now = self.time.now_ms();
        let mut stale: Vec<String> = self
            .games
            .read()
            .expect("lock")
            .iter()
            .filter(|(_, slot)| {
                slot.listing.phase() == Phase::WaitingForOpponent
                    && now.saturating_sub(slot.listing.created_ms) >= ttl_ms
            })
            .map(|(id, _)| id.clone())
            .collect();
        // With a cluster, other servers' open games too (one that is gone cannot cancel
        // its own), claimed so that servers do not all load the same ones.
        if let Some(cluster) = &self.cluster {
            let open = Claim::OpenSince {
                created_ms: now.saturating_sub(ttl_ms),
            };
            match cluster.claim(open, now, now + CLAIM_LEASE_MS, 100).await {
                Ok(claimed) => {
                    self.metrics
                        .claims
                        .with_label_values(&["open"])
                        .inc_by(claimed.len() as u64);
                    for id in claimed {
                        if !stale.contains(&id) {
                            stale.push(id);
                        }
                    }
                }
                Err(e) => warn!(error = %e, "claiming other servers' open games"),
            }
        }
        let mut cancelled = 0;
        for id in stale {
            match self.run(&id, Actor::Server, Command::Cancel, Mutation::default()).await {
                Ok(_) => cancelled += 1,
                Err(e) => debug!(game_id = %id, error = %e, "open game not cancelled"),
            }
        }
        cancelled
    }

    /// Runs [`Hub::cancel_stale_open`] periodically until shutdown.
    pub async fn open_ttl_loop(self: Arc<Self>, ttl_ms: Ms) {
        let mut shutdown = self.shutdown.clone();
        let every = Duration::from_millis((ttl_ms / 4).clamp(1000, 60_000));
        while sleep_unless_stopped(&mut shutdown, every).await {
            let n = self.cancel_stale_open(ttl_ms).await;
            if n > 0 {
                info!(games = n, "open games nobody joined were cancelled");
            }
        }
    }
}
