//! The matchmaker loop, one per server: pairs open seeks (every server runs it; the
//! store lets each seek be paired once), starts paired games, finishes pairings a stopped
//! server left without a game, and applies ratings a stopped server left unapplied.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{Notify, watch};
use weiqi_players::Pairing;
use weiqi_players::automatch::{pair_up, pairing_id, pairing_of};
use weiqi_store::Accounts;

use super::life::GameLife;
use crate::hub::GameHost;

/// How often seeks are looked at without a new one arriving (windows widen meanwhile).
pub const PAIR_EVERY: Duration = Duration::from_millis(500);
/// A pairing still without its game this long after it was made is finished by whichever
/// server sees it (its own server stopped, or failed to create it).
pub const ORPHAN_AFTER_MS: u64 = 5_000;
const SWEEP_EVERY: Duration = Duration::from_secs(5);

pub struct Matchmaker {
    pub accounts: Arc<dyn Accounts>,
    pub host: Arc<dyn GameHost>,
    /// Woken by a new seek.
    pub wake: Arc<Notify>,
    /// Wakes the feed after writing to players' feeds.
    pub feed_wake: Arc<Notify>,
    /// Ratings a stopped server left unapplied are applied by the sweep.
    pub life: Arc<GameLife>,
}

impl Matchmaker {
    pub async fn run(self: Arc<Self>, mut stop: watch::Receiver<bool>) {
        let mut last_sweep = Instant::now();
        loop {
            tokio::select! {
                _ = tokio::time::sleep(PAIR_EVERY) => {}
                _ = self.wake.notified() => {}
                _ = stop.changed() => return,
            }
            if let Err(e) = self.pair_once().await {
                tracing::warn!(error = %e, "matchmaking failed");
            }
            if last_sweep.elapsed() >= SWEEP_EVERY {
                last_sweep = Instant::now();
                self.sweep().await;
            }
        }
    }

    /// One pass over the open seeks; returns the games it started.
    pub async fn pair_once(&self) -> Result<usize, weiqi_store::StoreError> {
        let seeks = self.accounts.seeks().await?;
        if seeks.len() < 2 {
            return Ok(0);
        }
        let now = self.host.now_ms();
        let mut started = 0;
        for (i, j) in pair_up(&seeks, now) {
            let (older, newer) = (&seeks[i], &seeks[j]);
            let game_id = self.host.paired_game_id(&pairing_id(older, newer));
            let pairing = pairing_of(older, newer, game_id, now);
            let claimed = [&seeks[i], &seeks[j]].map(|s| (s.id.clone(), s.player.id.clone()));
            if !self.accounts.pair_seeks(claimed, pairing.clone()).await? {
                // Another server paired one of them first.
                continue;
            }
            self.feed_wake.notify_one();
            tracing::info!(game_id = %pairing.game_id, host = %pairing.host.id, guest = %pairing.guest.id, "seeks paired");
            if self.start(&pairing).await {
                started += 1;
            }
        }
        Ok(started)
    }

    /// Creates a pairing's game (again: nothing changes) and marks it started.
    pub async fn start(&self, p: &Pairing) -> bool {
        match self.host.clone().start_paired(p).await {
            Ok(_) => {
                if let Err(e) = self.accounts.pairing_started(p.id.clone()).await {
                    tracing::warn!(pairing = %p.id, error = %e, "marking a pairing started failed");
                }
                true
            }
            Err(e) => {
                tracing::warn!(pairing = %p.id, error = %e, "creating a paired game failed; retried by the sweep");
                false
            }
        }
    }

    async fn sweep(&self) {
        let before = self.host.now_ms().saturating_sub(ORPHAN_AFTER_MS);
        match self.accounts.unstarted_pairings(before).await {
            Ok(orphans) => {
                for p in orphans {
                    self.start(&p).await;
                }
            }
            Err(e) => tracing::warn!(error = %e, "reading unstarted pairings failed"),
        }
        self.life.recover_ratings(&self.host).await;
    }
}
