//! The games in memory: one entry per game, each behind its own lock, persisted through
//! the store before anything is acknowledged, with one timer per game and an audience
//! for its watchers. The hub speaks domain types only: the service's edge turns its
//! answers and errors into protobuf and gRPC statuses.
//!
//! - `commands`: the one command path (create, join, run);
//! - `entry`: a game in memory and its lock;
//! - `recovery`: back in step with the store (restart, interrupted command, replicas);
//! - `listener`: what the rest of the server hears of a game's life;
//! - `lobby`, `watch`, `audience`, `timers`, `periodic`: what the hub shows and does on its
//!   own;
//! - `view`, `error`: what it answers.

mod audience;
mod commands;
mod entry;
mod error;
mod listener;
mod lobby;
mod paired;
mod periodic;
mod presence;
mod recovery;
mod time;
mod timers;
mod view;
mod watch;

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use tokio::sync::{Mutex, watch as signal};
use weiqi_game::Ms;
use weiqi_store::{Cluster, EventStore};

pub use commands::{Caller, Created};
pub use entry::{Broadcast, Entry, Published, redact_for_actor};
pub use error::{Denied, GameAt, HubError, valid_game_id};
pub use listener::{GameListener, ListenerFuture};
pub use paired::GameHost;
pub use presence::{GRACE_MS, SeatPresence};
pub use time::TimeSource;
pub use view::{Applied, GameView, Scoring};
pub use watch::Feed;

use crate::metrics::Metrics;
use entry::Slot;

/// Idempotency and staleness fields of a mutating call.
#[derive(Debug, Clone, Default)]
pub struct Mutation {
    pub request_id: String,
    pub expected_move_number: Option<u32>,
}

pub struct Hub<S> {
    store: S,
    /// The store's part for several servers sharing it, when they do (chosen at start-up):
    /// the lobby of every server, claims on the games of servers that are gone, and
    /// polling for what others appended. Without it the store is this server's alone, and
    /// every game in progress is in its memory.
    cluster: Option<Arc<dyn Cluster>>,
    games: RwLock<HashMap<String, Slot>>,
    pub time: TimeSource,
    secret: Vec<u8>,
    pub metrics: Metrics,
    shutdown: signal::Receiver<bool>,
    /// Who hears of games created, started and ended (none: nobody, as in tests of the
    /// core).
    listener: Option<Arc<dyn GameListener>>,
    /// Games rest packed after a command unless the one before came less than this long
    /// before (quick play), and the periodic pass packs those idle this long.
    park_after_ms: Ms,
    /// How long a seat must be gone from a game in play before its opponent may claim it.
    abandon_after_ms: Ms,
    /// The games that may be unpacked, for [`Hub::park_idle`]: every locked use puts its
    /// game here once (an entry's `on_park_list`), so the pass visits the games used since
    /// it last ran, not every game in memory (a scan of 100,000 games' locks every second
    /// showed in profiles at a human pace).
    /// (Weak: a game that left memory, or a finished one read and let go, is not kept for
    /// the pass.)
    park_list: std::sync::Mutex<Vec<std::sync::Weak<Mutex<Entry>>>>,
    /// Whether this server can serve: its store took the last heartbeat within
    /// [`READY_WITHIN`] (see [`Hub::heartbeat_loop`]). The health service's readiness.
    ready: signal::Sender<bool>,
    /// The spectators' runtime, where the heralds of spectators (watchers without a seat)
    /// run, and the players' runtime, where their streams' work under a game's lock is
    /// done (see [`Hub::with_delivery`]); none: everything on the caller's runtime.
    delivery: Option<Runtimes>,
}

/// The two runtimes of a server with a spectators' listener.
struct Runtimes {
    spectators: tokio::runtime::Handle,
    players: tokio::runtime::Handle,
}

/// How long a heartbeat may take before the server counts itself unready.
pub const READY_WITHIN: std::time::Duration = std::time::Duration::from_millis(2_000);

/// The default of [`Hub::with_park_after`]: one second between moves is quick play.
pub const PARK_AFTER_MS: Ms = 1000;

/// The default of [`Hub::with_abandon_after`]: a minute absent from a game in play.
pub const ABANDON_AFTER_MS: Ms = 60_000;

impl<S: EventStore> Hub<S> {
    pub fn new(store: S, secret: Vec<u8>, metrics: Metrics, shutdown: signal::Receiver<bool>) -> Hub<S> {
        Hub {
            store,
            cluster: None,
            games: RwLock::new(HashMap::new()),
            time: TimeSource::new(),
            secret,
            metrics,
            shutdown,
            listener: None,
            park_after_ms: PARK_AFTER_MS,
            abandon_after_ms: ABANDON_AFTER_MS,
            park_list: std::sync::Mutex::new(Vec::new()),
            ready: signal::Sender::new(true),
            delivery: None,
        }
    }

    /// Readiness as it changes: true while the store answers (see [`Hub::heartbeat_loop`]).
    pub fn readiness(&self) -> signal::Receiver<bool> {
        self.ready.subscribe()
    }

    /// A hub that packs games at rest after `ms` without a command (0: after every
    /// command). See [`Hub::rest`](commands).
    pub fn with_park_after(mut self, ms: Ms) -> Hub<S> {
        self.park_after_ms = ms;
        self
    }

    /// A hub whose players may claim a game in play once their opponent has been absent
    /// `ms` (absent: [`GRACE_MS`] after the opponent was last seen).
    pub fn with_abandon_after(mut self, ms: Ms) -> Hub<S> {
        self.abandon_after_ms = ms;
        self
    }

    /// A hub whose spectators (watchers without a seat) are told of each item from
    /// `delivery`, the spectators' runtime of the lowest priority (`crate::delivery`),
    /// rather than from the runtime that plays the moves, which is the one this is called
    /// on. Whatever a watcher does under its game's lock (subscribing, a catch-up from the
    /// log, a sealed move's redaction) runs on the players' runtime: a thread at nice 19
    /// must not hold a lock a move waits for, nor start a game's timer or open a database
    /// connection that would then be its own.
    pub fn with_delivery(mut self, delivery: tokio::runtime::Handle) -> Hub<S> {
        self.delivery = Some(Runtimes {
            spectators: delivery,
            players: tokio::runtime::Handle::current(),
        });
        self
    }

    /// Runs `work` on the players' runtime (see [`Hub::with_delivery`]), or here when the
    /// server has no spectators' runtime.
    pub(super) async fn on_players_runtime<T: Send + 'static>(
        &self,
        work: impl std::future::Future<Output = T> + Send + 'static,
    ) -> Result<T, HubError> {
        let Some(rt) = &self.delivery else {
            return Ok(work.await);
        };
        match rt.players.spawn(work).await {
            Ok(t) => Ok(t),
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            // The players' runtime is shutting down: so is the server.
            Err(_) => Err(HubError::Store(weiqi_store::StoreError::Closed)),
        }
    }

    /// The players' runtime (see [`Hub::with_delivery`]), or the caller's when there is no
    /// other; none outside a runtime.
    pub(super) fn players_runtime(&self) -> Option<tokio::runtime::Handle> {
        match &self.delivery {
            Some(rt) => Some(rt.players.clone()),
            None => tokio::runtime::Handle::try_current().ok(),
        }
    }

    /// A hub that tells `listener` of its games' lives (see [`GameListener`]).
    pub fn with_listener(mut self, listener: Arc<dyn GameListener>) -> Hub<S> {
        self.listener = Some(listener);
        self
    }

    /// A hub that shares its store with other servers through `cluster`.
    pub fn with_cluster(mut self, cluster: Arc<dyn Cluster>) -> Hub<S> {
        self.cluster = Some(cluster);
        self
    }

    pub fn shutdown_signal(&self) -> signal::Receiver<bool> {
        self.shutdown.clone()
    }

    /// A game's entry, loading it from the store when it is not in memory. Finished games
    /// are not kept there: they change no more, and are read from the store when asked for.
    pub(super) async fn entry(&self, game_id: &str) -> Result<Arc<Mutex<Entry>>, HubError> {
        if let Some(slot) = self.games.read().expect("lock").get(game_id) {
            return Ok(slot.entry.clone());
        }
        if !valid_game_id(game_id) {
            return Err(HubError::BadGameId);
        }
        // Boxed: a cold path, kept out of every command's future (see `lock`).
        let Some(sg) = Box::pin(self.store.load(game_id)).await? else {
            return Err(HubError::NotFound {
                game_id: game_id.to_string(),
            });
        };
        let mut entry = Entry::from_stored(sg).map_err(HubError::corrupt)?;
        entry.taken_up(self.time.now_ms());
        let finished = entry.game.get().phase() == weiqi_game::Phase::Finished;
        let slot = Slot::new(entry);
        if finished {
            return Ok(slot.entry);
        }
        Ok(self
            .games
            .write()
            .expect("lock")
            .entry(game_id.to_string())
            .or_insert(slot)
            .entry
            .clone())
    }

    /// A game just ended: counted, and out of memory. Only games in progress live there; a
    /// finished one is loaded from the store when asked for (its watchers keep its entry
    /// until they leave).
    fn ended(&self, game_id: &str) {
        let mut games = self.games.write().expect("lock");
        games.remove(game_id);
        self.metrics.games_active.set(games.len() as i64);
    }

    /// A game as it is now.
    pub async fn view(self: &Arc<Self>, game_id: &str) -> Result<GameView, HubError> {
        let mut e = self.lock(game_id).await?;
        Ok(self.view_of(game_id, &mut e, self.time.now_ms()))
    }

    /// A game in memory as it is at `now`, with its seats' presence.
    pub(super) fn view_of(&self, game_id: &str, entry: &mut Entry, now: Ms) -> GameView {
        let mut v = GameView::of(game_id, entry.game.get(), now);
        v.presence = Some(self.presence_of(entry, now));
        v
    }

    fn presence_of(&self, entry: &mut Entry, now: Ms) -> [SeatPresence; 2] {
        let in_play = matches!(
            entry.game.get().phase(),
            weiqi_game::Phase::Playing | weiqi_game::Phase::Scoring
        );
        entry.presence.view(now, in_play, self.abandon_after_ms)
    }

    /// A game's position and sequence number, for an analysis of it; refused as in the
    /// wrong phase before it has a board.
    pub async fn position(self: &Arc<Self>, game_id: &str) -> Result<(weiqi_rules::State, u64), HubError> {
        let mut entry = self.lock(game_id).await?;
        let game = entry.game.get();
        match game.state() {
            Some(state) => Ok((state.clone(), game.seq())),
            None => Err(HubError::Rejected {
                rejection: weiqi_game::Rejection::WrongPhase(game.phase()),
                at: entry.at(game_id),
            }),
        }
    }

    /// A finished game's last position, its moves with it (for a review); the referee's
    /// `WrongPhase` before the game ends.
    pub async fn finished_position(self: &Arc<Self>, game_id: &str) -> Result<weiqi_rules::State, HubError> {
        let mut entry = self.lock(game_id).await?;
        let game = entry.game.get();
        match game.state() {
            Some(state) if game.phase() == weiqi_game::Phase::Finished => Ok(state.clone()),
            _ => Err(HubError::Rejected {
                rejection: weiqi_game::Rejection::WrongPhase(game.phase()),
                at: entry.at(game_id),
            }),
        }
    }

    /// A game's record as SGF; `None` before it has a board.
    pub async fn sgf(self: &Arc<Self>, game_id: &str) -> Result<Option<String>, HubError> {
        Ok(self.lock(game_id).await?.game.get().to_sgf())
    }

    /// A game as the store holds it (its log, tokens and request ids); `Missing` when the
    /// store has no such game.
    async fn stored_game(&self, game_id: &str) -> Result<weiqi_store::StoredGame, HubError> {
        self.store.load(game_id).await?.ok_or_else(|| HubError::Missing {
            game_id: game_id.to_string(),
        })
    }

    /// A game's events as the store holds them.
    pub async fn stored_log(&self, game_id: &str) -> Result<Vec<weiqi_game::Event>, HubError> {
        Ok(self.stored_game(game_id).await?.events)
    }

    /// The ids of the games in memory.
    pub fn game_ids(&self) -> Vec<String> {
        self.games.read().expect("lock").keys().cloned().collect()
    }

    /// Returns once a probe row (time and payload) has gone through the store's group
    /// commit, like a move's events.
    pub async fn durable_ping(&self, payload: &[u8]) -> Result<(), HubError> {
        Ok(self.store.probe(self.time.now_ms(), payload).await?)
    }
}
