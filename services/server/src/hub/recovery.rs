//! Getting games back in step with the store: after a restart (every unfinished game,
//! its downtime credited), after an interrupted command (the game in memory ahead of the
//! store), and with a shared store (another server moved the game on).

use std::sync::Arc;

use futures::StreamExt;
use tokio::sync::OwnedMutexGuard;
use tracing::{debug, info, warn};
use weiqi_game::{Actor, Command, Game, Ms, Phase};
use weiqi_store::EventStore;

use super::entry::{Entry, Held, Published, Slot};
use super::error::HubError;
use super::view::GameView;
use super::{Hub, Mutation};

/// How many recovered games have their downtime credited at once on start.
const RECOVERY_CONCURRENCY: usize = 512;

impl<S: EventStore> Hub<S> {
    /// Rebuilds every unfinished game from its events; the time the service was down
    /// (since its last heartbeat) is credited to the player to move. With a cluster, a gap
    /// of under `others_up_ms` means another server was up all along: nothing is credited.
    pub async fn recover(self: &Arc<Self>, others_up_ms: Ms) -> anyhow::Result<usize> {
        let last = self.store.last_heartbeat().await?;
        let games = self.store.load_unfinished().await?;
        let n = games.len();
        let now = self.time.now_ms();
        let mut ids = Vec::with_capacity(n);
        for sg in games {
            let id = sg.game_id.clone();
            let mut entry = Entry::from_stored(sg)?;
            entry.taken_up(now);
            entry.game.park();
            self.games.write().expect("lock").insert(id.clone(), Slot::new(entry));
            ids.push(id);
        }
        let downtime = last
            .filter(|&l| now > l)
            .map(|l| now - l)
            .filter(|&d| !(self.cluster.is_some() && d < others_up_ms));
        // Every game at once: their credits share group commits (one after another, a
        // restart with 5,000 open games took 4.4 s, and grew with every game).
        let credits = ids.iter().map(|id| async move {
            if let Some(ms) = downtime
                && let Err(e) = self
                    .run(id, Actor::Server, Command::CreditTime { ms }, Mutation::default())
                    .await
            {
                warn!(game_id = %id, error = %e, "crediting downtime failed");
            }
            let mut entry = self.locked_entry(id).await?;
            self.schedule(id, &mut entry);
            Ok::<(), HubError>(())
        });
        for r in futures::stream::iter(credits)
            .buffer_unordered(RECOVERY_CONCURRENCY)
            .collect::<Vec<_>>()
            .await
        {
            r?;
        }
        self.metrics.games_active.set(n as i64);
        info!(games = n, downtime_ms = downtime, "recovered unfinished games");
        Ok(n)
    }

    /// A game's entry, locked, for a command. With a shared store the copy in memory is
    /// not compared with the store first (a round trip on every move): the append is the
    /// comparison, as it conflicts when another server moved the game on, and a command
    /// that fails for any reason runs once more if the copy was behind ([`Hub::caught_up`]).
    pub(super) async fn lock_for_command(self: &Arc<Self>, game_id: &str) -> Result<OwnedMutexGuard<Entry>, HubError> {
        let mut entry = self.locked_entry(game_id).await?;
        if entry.stale {
            // Boxed: a rare path whose future (two store calls) would otherwise be laid
            // out inside every command's future, copied on each call.
            Box::pin(self.heal(game_id, &mut entry)).await?;
        }
        Ok(entry)
    }

    /// A game's entry, locked, and listed for [`Hub::park_idle`] (a use may unpack it): the
    /// one way to a game's entry, so that no game is unpacked off the list.
    async fn locked_entry(&self, game_id: &str) -> Result<OwnedMutexGuard<Entry>, HubError> {
        let slot = self.entry(game_id).await?;
        let mut entry = slot.clone().lock_owned().await;
        self.may_unpack(&slot, &mut entry);
        Ok(entry)
    }

    /// A game's entry, locked, for reading: reloaded from the store first if an
    /// interrupted command left it ahead of the store or, with a shared store, if another
    /// server moved it on (a read has no append to find that out with).
    pub async fn lock(self: &Arc<Self>, game_id: &str) -> Result<OwnedMutexGuard<Entry>, HubError> {
        let mut entry = self.lock_for_command(game_id).await?;
        // (Boxed: only shared stores go further than a flag test.)
        Box::pin(self.caught_up(game_id, &mut entry)).await?;
        Ok(entry)
    }

    /// After a command failed: whether the game in memory was behind a shared store (a
    /// move made through another server, or an append that conflicted with one), now
    /// caught up so that the command can run again on the game as it is.
    pub(super) async fn caught_up(self: &Arc<Self>, game_id: &str, entry: &mut Entry) -> Result<bool, HubError> {
        if self.cluster.is_none() {
            return Ok(false);
        }
        if entry.stale {
            self.heal(game_id, entry).await?;
            return Ok(true);
        }
        self.fast_forward(game_id, entry).await
    }

    /// Replaces a stale game with what the store holds.
    async fn heal(self: &Arc<Self>, game_id: &str, entry: &mut Entry) -> Result<(), HubError> {
        // Once the barrier returns, the interrupted append is committed or refused for good.
        self.store.barrier().await?;
        // From the game as last acknowledged (the stored log folded up to it), what the
        // store holds beyond it (the interrupted append, if it went through; other
        // servers' appends) is applied as it would have been.
        let stored = self.stored_game(game_id).await?;
        let acked = stored.events.iter().take_while(|e| e.seq <= entry.acked_seq);
        entry.game = Held::Live(Game::from_events(acked).map_err(HubError::corrupt)?);
        entry.log = None;
        entry.spectators_log = None;
        // (A client that cancels its call is ordinary: not a warning. A store that fails
        // is reported by the store and to the caller.)
        info!(game_id = %game_id, seq = entry.acked_seq, "reloading from the store after an interrupted command");
        self.fast_forward(game_id, entry).await?;
        entry.settled();
        Ok(())
    }

    /// Applies to a game in memory (as acknowledged) the events the store holds beyond
    /// it, reading only those, and publishes them to its watchers. Returns whether there
    /// were any.
    async fn fast_forward(self: &Arc<Self>, game_id: &str, entry: &mut Entry) -> Result<bool, HubError> {
        let newer = self
            .store
            .load_since(game_id, entry.game.get().seq())
            .await?
            .ok_or_else(|| HubError::Missing {
                game_id: game_id.to_string(),
            })?;
        if newer.events.is_empty() {
            return Ok(false);
        }
        let finished_before = entry.game.get().phase() == Phase::Finished;
        // Until every event is applied the game is not as stored: were one refused (a
        // corrupt log), the next use would start over from the log.
        entry.stale = true;
        let watched = entry.watchers.count() > 0;
        for e in newer.events {
            let game = entry.game.get();
            game.apply(&e).map_err(HubError::corrupt)?;
            if watched {
                entry
                    .watchers
                    .publish(Published::new(e.clone(), GameView::of(game_id, game, e.at)));
            }
            if let Some(log) = &mut entry.log {
                log.push(e);
            }
        }
        entry.settled();
        entry.requests.insert_stored(newer.responses);
        entry.host_hash = newer.host_token_hash;
        entry.guest_hash = newer.guest_token_hash;
        let game = entry.game.get();
        entry.listing.update(game);
        self.metrics.catch_ups.inc();
        debug!(game_id = %game_id, seq = entry.acked_seq, "caught up with the store");
        if !finished_before && entry.game.get().phase() == Phase::Finished {
            self.ended(game_id);
        }
        self.schedule(game_id, entry);
        Ok(true)
    }
}
