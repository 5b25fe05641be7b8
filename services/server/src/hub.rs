//! The games in memory: one entry per game, each behind its own lock, persisted through
//! the store before anything is acknowledged, with one timer per game and a broadcast
//! channel for watchers.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use futures::StreamExt;
use prost::Message;
use tokio::sync::{Mutex, OwnedMutexGuard, broadcast, watch};
use tokio::task::AbortHandle;
use tonic::{Code, Status};
use tracing::{debug, info, warn};
use weiqi_game::{Actor, Command, Event, Game, Ms, Parity, Phase, Seat, Settings};
use weiqi_proto::v1 as pb;
use weiqi_store::{Append, Claim, EventStore, StoreError, Summary};

use crate::auth;
use crate::convert;
use crate::metrics::Metrics;
use crate::requests::RequestKey;

/// How many recovered games have their downtime credited at once on start.
const RECOVERY_CONCURRENCY: usize = 512;

/// Milliseconds since the Unix epoch, advanced by tokio's clock (so tests can pause it).
#[derive(Clone, Copy)]
pub struct TimeSource {
    base_ms: u64,
    base: tokio::time::Instant,
}

impl TimeSource {
    pub fn new() -> TimeSource {
        let base_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        TimeSource {
            base_ms,
            base: tokio::time::Instant::now(),
        }
    }
    pub fn now_ms(&self) -> Ms {
        self.base_ms + self.base.elapsed().as_millis() as u64
    }
    fn instant(&self, ms: Ms) -> tokio::time::Instant {
        self.base + std::time::Duration::from_millis(ms.saturating_sub(self.base_ms))
    }
}

impl Default for TimeSource {
    fn default() -> TimeSource {
        TimeSource::new()
    }
}

/// What the lobby shows of a game in memory, readable without the game's lock: listing
/// never waits for a busy game. (Under load a game's lock is held while its events are on
/// their way to disk, and a lobby that locked each game in turn took 7 s for 1,000 games.)
pub struct Listing {
    /// Server time of the game's creation: the lobby shows the newest first.
    pub created_ms: Ms,
    pub board_size: u32,
    pub rules: String,
    /// `pb::Phase` as a number.
    phase: AtomicI32,
    move_number: AtomicU32,
    /// The last event's sequence number.
    seq: AtomicU64,
}

impl Listing {
    fn of(g: &Game, created_ms: Ms) -> Listing {
        // Board size and rules as the stored lobby row has them.
        let Summary { board_size, rules, .. } = summary(g);
        let l = Listing {
            created_ms,
            board_size,
            rules,
            phase: AtomicI32::new(0),
            move_number: AtomicU32::new(0),
            seq: AtomicU64::new(0),
        };
        l.update(g);
        l
    }

    /// Follows the game after a change (board size and rules never change).
    fn update(&self, g: &Game) {
        self.phase.store(convert::phase_to(g.phase()) as i32, Ordering::Relaxed);
        self.move_number.store(g.move_number() as u32, Ordering::Relaxed);
        self.seq.store(g.seq(), Ordering::Relaxed);
    }

    pub fn seq(&self) -> u64 {
        self.seq.load(Ordering::Relaxed)
    }

    pub fn phase(&self) -> pb::Phase {
        pb::Phase::try_from(self.phase.load(Ordering::Relaxed)).unwrap_or_default()
    }

    pub fn move_number(&self) -> u32 {
        self.move_number.load(Ordering::Relaxed)
    }
}

/// A game in the lobby: its id and listing.
pub type Listed = (String, Arc<Listing>);

/// A game in memory: its entry behind its lock, and its listing beside it.
#[derive(Clone)]
struct Slot {
    entry: Arc<Mutex<Entry>>,
    listing: Arc<Listing>,
    /// The game's broadcast, to count its watchers without the game's lock.
    watchers: broadcast::Sender<Broadcast>,
}

impl Slot {
    fn new(entry: Entry) -> Slot {
        Slot {
            listing: entry.listing.clone(),
            watchers: entry.tx.clone(),
            entry: Arc::new(Mutex::new(entry)),
        }
    }
}

/// What watchers receive: an event and the state right after it.
pub type Broadcast = Arc<(Event, pb::GameState)>;

pub struct Entry {
    pub game: Game,
    pub log: Vec<Event>,
    host_hash: Option<String>,
    guest_hash: Option<String>,
    /// Every request id that changed the game, by seat ([`RequestKey`]), with its first
    /// event and the fingerprint of the command it carried. A retry's answer is rebuilt
    /// from the log (retries are rare; keeping encoded answers cost memory on every move).
    requests: HashMap<String, (u64, Option<String>)>,
    pub tx: broadcast::Sender<Broadcast>,
    timer: Option<AbortHandle>,
    /// Server time of the last command that changed the game (or of loading it).
    last_active: Ms,
    /// The game in memory may be ahead of the store: a command changed it and its append
    /// did not finish (the call was cancelled while the events were on their way, or the
    /// store failed). The store is the truth: [`Hub::lock`] reloads the game before use.
    stale: bool,
    /// What the lobby shows; kept in step with `game` after every change.
    listing: Arc<Listing>,
}

impl Entry {
    fn new(game: Game, log: Vec<Event>) -> Entry {
        // Small: the buffer is allocated with the game, and a watcher that falls behind
        // catches up from the log.
        let (tx, _) = broadcast::channel(64);
        let created_ms = log.first().map_or(0, |e| e.at);
        Entry {
            listing: Arc::new(Listing::of(&game, created_ms)),
            game,
            log,
            host_hash: None,
            guest_hash: None,
            requests: HashMap::new(),
            tx,
            timer: None,
            last_active: 0,
            stale: false,
        }
    }

    /// A game as the store holds it, folded from its events.
    fn from_stored(sg: weiqi_store::StoredGame) -> Result<Entry, weiqi_game::Corrupt> {
        let game = Game::from_events(&sg.events)?;
        let mut entry = Entry::new(game, sg.events);
        entry.host_hash = sg.host_token_hash;
        entry.guest_hash = sg.guest_token_hash;
        entry.requests = sg.responses.into_iter().map(RequestKey::parse).collect();
        Ok(entry)
    }

    /// Back to the game as last acknowledged: the log in memory only grows after the
    /// store acknowledged, so it is a prefix of the stored one and its fold is that game.
    fn rewind(&mut self) -> Result<(), weiqi_game::Corrupt> {
        self.game = Game::from_events(&self.log)?;
        self.stale = false;
        Ok(())
    }

    /// The first answer to a request: remembered, or rebuilt from the log (the events of
    /// one command are contiguous and share their time).
    fn answer_for(&self, game_id: &str, first: u64, actor: Actor) -> Option<pb::CommandResult> {
        let start = self.log.iter().position(|e| e.seq == first)?;
        let at = self.log[start].at;
        let events: Vec<&Event> = self.log[start..].iter().take_while(|e| e.at == at).collect();
        let last = events.last()?.seq;
        let g = Game::from_events(self.log.iter().take_while(|e| e.seq <= last)).ok()?;
        Some(pb::CommandResult {
            state: Some(convert::state_to(game_id, &g, at)),
            events: events
                .iter()
                .map(|e| convert::event_to(&redact_for_actor(e, &g, actor)))
                .collect(),
        })
    }

    /// The actor a bearer token makes of its holder: the seat it holds in this game
    /// (PERMISSION_DENIED without one).
    pub fn actor_for(&self, token: Option<&str>, game_id: &str) -> Result<Actor, Status> {
        match self.seat_of_token(token) {
            Some(seat) => Ok(seat.into()),
            None if token.is_none() => Err(convert::with_info(
                Code::PermissionDenied,
                "this call needs the seat token (authorization: Bearer ...)".into(),
                "missing_token",
                game_id,
                &self.game,
            )),
            None => Err(convert::with_info(
                Code::PermissionDenied,
                "this token holds no seat in this game".into(),
                "wrong_token",
                game_id,
                &self.game,
            )),
        }
    }

    /// Which seat a bearer token holds in this game.
    pub fn seat_of_token(&self, token: Option<&str>) -> Option<Seat> {
        let h = auth::sha256_hex(token?.as_bytes());
        if self.host_hash.as_deref() == Some(h.as_str()) {
            Some(Seat::Host)
        } else if self.guest_hash.as_deref() == Some(h.as_str()) {
            Some(Seat::Guest)
        } else {
            None
        }
    }
}

/// Who sends a command: an actor the caller vouches for (the server's own commands), or
/// a bearer token whose seat is looked up in the game.
#[derive(Clone, Copy)]
enum Caller<'a> {
    Actor(Actor),
    Token(Option<&'a str>),
}

/// Idempotency and staleness fields of a mutating call.
#[derive(Debug, Clone, Default)]
pub struct Mutation {
    pub request_id: String,
    pub expected_move_number: Option<u32>,
}

pub struct Hub<S> {
    store: S,
    games: RwLock<HashMap<String, Slot>>,
    pub time: TimeSource,
    secret: Vec<u8>,
    pub metrics: Metrics,
    shutdown: watch::Receiver<bool>,
}

/// How long a claimed overdue game is left to the server that claimed it
/// ([`Hub::claim_overdue`]) before another may claim it again.
const CLAIM_LEASE_MS: Ms = 10_000;

/// Sleeps for `every`; false, at once, when the server starts stopping (the periodic
/// tasks' wait between rounds).
async fn sleep_unless_stopped(shutdown: &mut watch::Receiver<bool>, every: std::time::Duration) -> bool {
    tokio::select! {
        _ = tokio::time::sleep(every) => true,
        _ = shutdown.changed() => false,
    }
}

fn store_error(e: StoreError) -> Status {
    match e {
        StoreError::Conflict { .. } => convert::error(Code::Aborted, "conflict", format!("{e}; retry"), &[]),
        StoreError::Closed => convert::error(Code::Unavailable, "shutting_down", "the server is shutting down", &[]),
        other => convert::error(
            Code::Internal,
            "storage_failure",
            format!("storage failure: {other}"),
            &[],
        ),
    }
}

/// The append of `events` that took a game from `expected_seq` to `game`: what the store
/// keeps of the game beside them (its move number, its next wake-up), and nothing else
/// (tokens, request id and lobby row are the caller's to add).
fn append_of(game_id: &str, expected_seq: u64, events: &[Event], game: &Game, now: Ms) -> Append {
    Append {
        game_id: game_id.to_string(),
        expected_seq,
        events: events.to_vec(),
        host_token_hash: None,
        guest_token_hash: None,
        request_id: None,
        summary: None,
        move_number: game.move_number() as u32,
        wake_ms: game.next_wakeup(),
        now_ms: now,
    }
}

/// A stored log that does not fold (a bug or a damaged store): INTERNAL, with its reason.
fn corrupt(e: impl std::fmt::Display) -> Status {
    convert::error(Code::Internal, "corrupt_game", e.to_string(), &[])
}

fn summary(g: &Game) -> Summary {
    let s = g.settings();
    Summary {
        phase: convert::phase_name(g.phase()).to_string(),
        board_size: s.map_or(0, |s| s.size as u32),
        move_number: g.move_number() as u32,
        rules: s.map(|s| weiqi_rules::sgf::rules_name(&s.rules)).unwrap_or_default(),
        finished: g.phase() == Phase::Finished,
    }
}

impl<S: EventStore> Hub<S> {
    pub fn new(store: S, secret: Vec<u8>, metrics: Metrics, shutdown: watch::Receiver<bool>) -> Hub<S> {
        Hub {
            store,
            games: RwLock::new(HashMap::new()),
            time: TimeSource::new(),
            secret,
            metrics,
            shutdown,
        }
    }

    pub fn shutdown_signal(&self) -> watch::Receiver<bool> {
        self.shutdown.clone()
    }

    /// Rebuilds every unfinished game from its events; the time the service was down
    /// (since its last heartbeat) is credited to the player to move. With a store shared
    /// by several servers, a gap of under `others_up_ms` means another server was up all
    /// along: nothing is credited.
    pub async fn recover(self: &Arc<Self>, others_up_ms: Ms) -> anyhow::Result<usize> {
        let last = self.store.last_heartbeat().await?;
        let games = self.store.load_unfinished().await?;
        let n = games.len();
        let now = self.time.now_ms();
        let mut ids = Vec::with_capacity(n);
        for sg in games {
            let id = sg.game_id.clone();
            let mut entry = Entry::from_stored(sg)?;
            entry.last_active = now;
            self.games.write().expect("lock").insert(id.clone(), Slot::new(entry));
            ids.push(id);
        }
        let downtime = last
            .filter(|&l| now > l)
            .map(|l| now - l)
            .filter(|&d| !(self.store.is_shared() && d < others_up_ms));
        // Every game at once: their credits share group commits (one after another, a
        // restart with 5,000 open games took 4.4 s, and grew with every game).
        let credits = ids.iter().map(|id| async move {
            if let Some(ms) = downtime
                && let Err(e) = self
                    .command(id, Actor::Server, Command::CreditTime { ms }, Mutation::default())
                    .await
            {
                warn!(game_id = %id, error = %e, "crediting downtime failed");
            }
            let arc = self.entry(id).await?;
            let mut entry = arc.lock().await;
            self.schedule(id, &mut entry);
            Ok::<(), Status>(())
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

    /// With a shared store: every `every_ms`, the games watched here whose stored log is
    /// ahead of memory (another server appended) are locked, which catches them up and sends
    /// their watchers what they missed. (Polling only the watched games costs nothing per
    /// move; a notification per append serialized every commit in PostgreSQL.)
    pub async fn follow_watched(self: Arc<Self>, every_ms: Ms) {
        let mut shutdown = self.shutdown.clone();
        let every = std::time::Duration::from_millis(every_ms.max(10));
        while sleep_unless_stopped(&mut shutdown, every).await {
            let watched: Vec<(String, u64)> = self
                .games
                .read()
                .expect("lock")
                .iter()
                .filter(|(_, s)| s.watchers.receiver_count() > 0)
                .map(|(id, s)| (id.clone(), s.listing.seq()))
                .collect();
            if watched.is_empty() {
                continue;
            }
            let ids: Vec<String> = watched.iter().map(|(id, _)| id.clone()).collect();
            let stored: HashMap<String, u64> = match self.store.last_seqs(&ids).await {
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

    /// With a shared store: every `every_ms`, claims the games whose clock (or byo-yomi
    /// announcement) is overdue by more than `grace_ms` and ticks them here. The server
    /// holding a game ticks it on time from its own timer; this is for games whose server
    /// is gone (crashed, or scaled away) and which no other server holds, so that a game
    /// still ends on time with no request arriving. The claim keeps other servers off the
    /// game meanwhile, and the tick's append is the check against one that does tick it:
    /// the later of two ticks conflicts, catches up and finds nothing left to do.
    pub async fn claim_overdue(self: Arc<Self>, every_ms: Ms, grace_ms: Ms) {
        let mut shutdown = self.shutdown.clone();
        let every = std::time::Duration::from_millis(every_ms.max(10));
        while sleep_unless_stopped(&mut shutdown, every).await {
            let now = self.time.now_ms();
            let due = match self
                .store
                .claim(
                    Claim::Overdue {
                        due_ms: now.saturating_sub(grace_ms),
                    },
                    now,
                    now + CLAIM_LEASE_MS,
                    100,
                )
                .await
            {
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
                    if let Err(e) = hub
                        .command(&id, Actor::Server, Command::Tick, Mutation::default())
                        .await
                    {
                        warn!(game_id = %id, error = %e, "ticking an overdue game failed");
                    }
                });
            }
        }
    }

    /// Records liveness periodically until shutdown.
    pub async fn heartbeat_loop(self: Arc<Self>, every_ms: u64) {
        let mut shutdown = self.shutdown.clone();
        loop {
            if let Err(e) = self.store.heartbeat(self.time.now_ms()).await {
                warn!(error = %e, "heartbeat failed");
            }
            // (Sampled here too: games come into memory and leave it by several paths,
            // idle eviction and loads on demand among them.)
            let held = self.games.read().expect("lock").len();
            self.metrics.games_active.set(held as i64);
            if !sleep_unless_stopped(&mut shutdown, std::time::Duration::from_millis(every_ms.max(10))).await {
                return;
            }
        }
    }

    /// Returns once a probe row (time and payload) has gone through the store's group
    /// commit, like a move's events.
    pub async fn durable_ping(&self, payload: &[u8]) -> Result<(), Status> {
        self.store.probe(self.time.now_ms(), payload).await.map_err(store_error)
    }

    /// A game's entry, loading a finished game from the store on demand.
    pub async fn entry(&self, game_id: &str) -> Result<Arc<Mutex<Entry>>, Status> {
        if let Some(slot) = self.games.read().expect("lock").get(game_id) {
            return Ok(slot.entry.clone());
        }
        convert::game_id(game_id)?;
        // Boxed: a cold path, kept out of every command's future (see `lock`).
        let stored = Box::pin(self.store.load(game_id)).await.map_err(store_error)?;
        let Some(sg) = stored else {
            return Err(convert::error(
                Code::NotFound,
                "game_not_found",
                format!("no game {game_id:?}"),
                &[("game_id", game_id)],
            ));
        };
        let mut entry = Entry::from_stored(sg).map_err(corrupt)?;
        entry.last_active = self.time.now_ms();
        let finished = entry.game.phase() == Phase::Finished;
        let slot = Slot::new(entry);
        if finished {
            // Finished games change no more: read from the store, not kept in memory.
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

    /// A game's entry, locked, for reading: reloaded from the store first if an
    /// interrupted command left it ahead of the store or, with a shared store, if another
    /// server moved it on (a read has no append to find that out with).
    pub async fn lock(self: &Arc<Self>, game_id: &str) -> Result<OwnedMutexGuard<Entry>, Status> {
        let mut entry = self.lock_for_command(game_id).await?;
        // (Boxed: only shared stores go further than a flag test.)
        Box::pin(self.caught_up(game_id, &mut entry)).await?;
        Ok(entry)
    }

    /// Replaces a stale game with what the store holds.
    async fn heal(self: &Arc<Self>, game_id: &str, entry: &mut Entry) -> Result<(), Status> {
        // Once the barrier returns, the interrupted append is committed or refused for good.
        self.store.barrier().await.map_err(store_error)?;
        // From the game as last acknowledged, what the store holds beyond it (the
        // interrupted append, if it went through; other servers' appends) is applied as it
        // would have been.
        entry.rewind().map_err(corrupt)?;
        // (A client that cancels its call is ordinary: not a warning. A store that fails
        // is reported by the store and to the caller.)
        info!(game_id = %game_id, seq = entry.game.seq(), "reloading from the store after an interrupted command");
        self.fast_forward(game_id, entry).await?;
        Ok(())
    }

    /// Applies to a game in memory (as acknowledged) the events the store holds beyond
    /// it, reading only those, and publishes them to its watchers. Returns whether there
    /// were any.
    async fn fast_forward(self: &Arc<Self>, game_id: &str, entry: &mut Entry) -> Result<bool, Status> {
        let newer = self
            .store
            .load_since(game_id, entry.game.seq())
            .await
            .map_err(store_error)?
            .ok_or_else(|| {
                convert::error(
                    Code::Internal,
                    "storage_failure",
                    format!("game {game_id:?} is missing from the store"),
                    &[("game_id", game_id)],
                )
            })?;
        if newer.events.is_empty() {
            return Ok(false);
        }
        let finished_before = entry.game.phase() == Phase::Finished;
        // Until every event is applied the game is not as stored: were one refused (a
        // corrupt log), the next use would start over from the log.
        entry.stale = true;
        for e in newer.events {
            entry.game.apply(&e).map_err(corrupt)?;
            if entry.tx.receiver_count() > 0 {
                let _ = entry
                    .tx
                    .send(Arc::new((e.clone(), convert::state_to(game_id, &entry.game, e.at))));
            }
            entry.log.push(e);
        }
        entry.stale = false;
        entry
            .requests
            .extend(newer.responses.into_iter().map(RequestKey::parse));
        entry.host_hash = newer.host_token_hash;
        entry.guest_hash = newer.guest_token_hash;
        entry.listing.update(&entry.game);
        self.metrics.catch_ups.inc();
        debug!(game_id = %game_id, seq = entry.game.seq(), "caught up with the store");
        if !finished_before && entry.game.phase() == Phase::Finished {
            self.ended(game_id);
        }
        self.schedule(game_id, entry);
        Ok(true)
    }

    /// A game just ended: counted, and out of memory. Only games in progress live there; a
    /// finished one is loaded from the store when asked for (its watchers keep its entry
    /// until they leave).
    fn ended(&self, game_id: &str) {
        let mut games = self.games.write().expect("lock");
        games.remove(game_id);
        self.metrics.games_active.set(games.len() as i64);
    }

    /// Drops from memory the games in progress that nobody has touched for `idle_ms`, have
    /// no clock running (nothing will happen to them on its own), no watchers and are not
    /// waiting for an opponent in the lobby. They stay
    /// in the store, unfinished, and are loaded again by the next call that names them:
    /// abandoned casual games no longer hold memory for good.
    pub fn evict_idle(&self, idle_ms: Ms) -> usize {
        let now = self.time.now_ms();
        let mut games = self.games.write().expect("lock");
        let before = games.len();
        games.retain(|_, slot| {
            // A game in use right now is kept.
            let Ok(e) = slot.entry.try_lock() else { return true };
            now.saturating_sub(e.last_active) < idle_ms
                // Open games stay listed in the lobby.
                || e.game.phase() == Phase::WaitingForOpponent
                || e.game.next_wakeup().is_some()
                || e.tx.receiver_count() > 0
                || e.timer.is_some()
        });
        before - games.len()
    }

    /// Runs [`Hub::evict_idle`] periodically until shutdown.
    pub async fn evict_loop(self: Arc<Self>, idle_ms: Ms) {
        let mut shutdown = self.shutdown.clone();
        let every = std::time::Duration::from_millis((idle_ms / 4).clamp(1000, 60_000));
        while sleep_unless_stopped(&mut shutdown, every).await {
            let n = self.evict_idle(idle_ms);
            if n > 0 {
                info!(games = n, "idle games left memory (kept in the store)");
            }
        }
    }

    /// The ids of the games in memory.
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
                slot.listing.phase() == pb::Phase::WaitingForOpponent
                    && now.saturating_sub(slot.listing.created_ms) >= ttl_ms
            })
            .map(|(id, _)| id.clone())
            .collect();
        // With a shared store, other servers' open games too (one that is gone cannot
        // cancel its own), claimed so that servers do not all load the same ones.
        let created_before = now.saturating_sub(ttl_ms);
        match self
            .store
            .claim(
                Claim::OpenSince {
                    created_ms: created_before,
                },
                now,
                now + CLAIM_LEASE_MS,
                100,
            )
            .await
        {
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
        let mut cancelled = 0;
        for id in stale {
            match self
                .command(&id, Actor::Server, Command::Cancel, Mutation::default())
                .await
            {
                Ok(_) => cancelled += 1,
                Err(e) => debug!(game_id = %id, error = %e, "open game not cancelled"),
            }
        }
        cancelled
    }

    pub async fn open_ttl_loop(self: Arc<Self>, ttl_ms: Ms) {
        let mut shutdown = self.shutdown.clone();
        let every = std::time::Duration::from_millis((ttl_ms / 4).clamp(1000, 60_000));
        while sleep_unless_stopped(&mut shutdown, every).await {
            let n = self.cancel_stale_open(ttl_ms).await;
            if n > 0 {
                info!(games = n, "open games nobody joined were cancelled");
            }
        }
    }

    pub fn game_ids(&self) -> Vec<String> {
        self.games.read().expect("lock").keys().cloned().collect()
    }

    /// The lobby: the newest `limit` games waiting for an opponent, and the newest `limit`
    /// in play (everything after the opponent arrived and before the end), from the
    /// listings alone: no game's lock is taken.
    /// With a shared store, the lobby of every server (from the store); `None` otherwise.
    pub async fn shared_lobby(&self, limit: usize) -> Result<Option<weiqi_store::Lobby>, Status> {
        self.store.lobby(limit).await.map_err(store_error)
    }

    pub fn lobby(&self, limit: usize) -> (Vec<Listed>, Vec<Listed>) {
        let (mut open, mut playing) = (Vec::new(), Vec::new());
        for (id, slot) in self.games.read().expect("lock").iter() {
            match slot.listing.phase() {
                pb::Phase::WaitingForOpponent => open.push((id.clone(), slot.listing.clone())),
                pb::Phase::Finished | pb::Phase::Unspecified => {}
                _ => playing.push((id.clone(), slot.listing.clone())),
            }
        }
        for list in [&mut open, &mut playing] {
            let newest_first = |a: &Listed, b: &Listed| (b.1.created_ms, &b.0).cmp(&(a.1.created_ms, &a.0));
            if list.len() > limit {
                list.select_nth_unstable_by(limit, newest_first);
                list.truncate(limit);
            }
            list.sort_unstable_by(newest_first);
        }
        (open, playing)
    }

    /// Creates a game. With a request id, the game id and token derive from it, so a retry
    /// returns the same game and token.
    pub async fn create(
        self: &Arc<Self>,
        settings: Settings,
        nigiri_commitment: Option<String>,
        request_id: &str,
    ) -> Result<(String, String, pb::GameState), Status> {
        let (game_id, token) = if request_id.is_empty() {
            (auth::random_hex(8), auth::random_hex(24))
        } else {
            let id = auth::derive(&self.secret, &["game", request_id])[..16].to_string();
            let token = auth::derive(&self.secret, &["host", &id, request_id]);
            (id, token)
        };
        if !request_id.is_empty()
            && let Ok(e) = self.lock(&game_id).await
            && e.host_hash.as_deref() == Some(auth::sha256_hex(token.as_bytes()).as_str())
        {
            return Ok((
                game_id.clone(),
                token,
                convert::state_to(&game_id, &e.game, self.time.now_ms()),
            ));
        }
        let now = self.time.now_ms();
        let game = Game::new();
        let cmd = Command::Create {
            settings,
            nigiri_commitment,
        };
        let events = game
            .decide(Actor::Host, &cmd, now)
            .map_err(|r| convert::rejection_to(&r, &game_id, &game))?;
        let mut next = game.clone();
        for e in &events {
            next.apply(e).map_err(corrupt)?;
        }
        let host_hash = auth::sha256_hex(token.as_bytes());
        self.store
            .append(Append {
                host_token_hash: Some(host_hash.clone()),
                summary: Some(summary(&next)),
                ..append_of(&game_id, 0, &events, &next, now)
            })
            .await
            .map_err(store_error)?;
        let state = convert::state_to(&game_id, &next, now);
        let mut entry = Entry::new(next, events);
        entry.host_hash = Some(host_hash);
        let mut games = self.games.write().expect("lock");
        games.insert(game_id.clone(), Slot::new(entry));
        self.metrics.games_active.set(games.len() as i64);
        drop(games);
        self.metrics.games_created.inc();
        info!(game_id = %game_id, "game created");
        Ok((game_id, token, state))
    }

    /// Takes the guest seat (with a guess, for nigiri). A retry with the same request id
    /// returns the same token.
    pub async fn join(
        self: &Arc<Self>,
        game_id: &str,
        nigiri_guess: Option<Parity>,
        request_id: &str,
    ) -> Result<(String, pb::GameState), Status> {
        let mut entry = self.lock(game_id).await?;
        let token = if request_id.is_empty() {
            auth::random_hex(24)
        } else {
            auth::derive(&self.secret, &["guest", game_id, request_id])
        };
        let hash = auth::sha256_hex(token.as_bytes());
        if let Some(existing) = &entry.guest_hash {
            if *existing == hash {
                return Ok((token, convert::state_to(game_id, &entry.game, self.time.now_ms())));
            }
            return Err(convert::with_info(
                Code::FailedPrecondition,
                "the game already has two players".into(),
                "game_full",
                game_id,
                &entry.game,
            ));
        }
        let entropy = u64::from_le_bytes(
            hex::decode(auth::random_hex(8))
                .unwrap_or_default()
                .try_into()
                .unwrap_or([0; 8]),
        );
        let cmd = Command::Join { nigiri_guess, entropy };
        self.apply_locked(game_id, &mut entry, Actor::Guest, &cmd, Some(hash), None)
            .await?;
        Ok((token, convert::state_to(game_id, &entry.game, self.time.now_ms())))
    }

    /// Runs a command for `actor` on a game: idempotent by request id, refused when stale,
    /// durable before it is acknowledged.
    pub async fn command(
        self: &Arc<Self>,
        game_id: &str,
        actor: Actor,
        cmd: Command,
        m: Mutation,
    ) -> Result<pb::CommandResult, Status> {
        self.run(game_id, Caller::Actor(actor), &cmd, &m).await
    }

    /// A player's command: the seat comes from the bearer token, read under the same
    /// lock as the command runs.
    pub async fn player_command(
        self: &Arc<Self>,
        game_id: &str,
        token: Option<&str>,
        cmd: Command,
        m: Mutation,
    ) -> Result<pb::CommandResult, Status> {
        self.run(game_id, Caller::Token(token), &cmd, &m).await
    }

    /// The one command path: lock, run, and if that failed on a copy that was behind a
    /// shared store, catch up and run once more.
    async fn run(
        self: &Arc<Self>,
        game_id: &str,
        caller: Caller<'_>,
        cmd: &Command,
        m: &Mutation,
    ) -> Result<pb::CommandResult, Status> {
        let mut entry = self.lock_for_command(game_id).await?;
        match self.run_locked(game_id, &mut entry, caller, cmd, m).await {
            Err(e) if !Box::pin(self.caught_up(game_id, &mut entry)).await? => Err(e),
            // (A token's seat is read again: the guest may have joined through another
            // server.)
            Err(_) => self.run_locked(game_id, &mut entry, caller, cmd, m).await,
            done => done,
        }
    }

    async fn run_locked(
        self: &Arc<Self>,
        game_id: &str,
        entry: &mut Entry,
        caller: Caller<'_>,
        cmd: &Command,
        m: &Mutation,
    ) -> Result<pb::CommandResult, Status> {
        let actor = match caller {
            Caller::Actor(a) => a,
            Caller::Token(token) => entry.actor_for(token, game_id)?,
        };
        self.command_locked(game_id, entry, actor, cmd, m).await
    }

    /// A game's entry, locked, for a command. With a shared store the copy in memory is
    /// not compared with the store first (a round trip on every move): the append is the
    /// comparison, as it conflicts when another server moved the game on, and a command
    /// that fails for any reason runs once more if the copy was behind ([`Hub::caught_up`]).
    async fn lock_for_command(self: &Arc<Self>, game_id: &str) -> Result<OwnedMutexGuard<Entry>, Status> {
        let mut entry = self.entry(game_id).await?.lock_owned().await;
        if entry.stale {
            // Boxed: a rare path whose future (two store calls) would otherwise be laid
            // out inside every command's future, copied on each call.
            Box::pin(self.heal(game_id, &mut entry)).await?;
        }
        Ok(entry)
    }

    /// After a command failed: whether the game in memory was behind a shared store (a
    /// move made through another server, or an append that conflicted with one), now
    /// caught up so that the command can run again on the game as it is.
    async fn caught_up(self: &Arc<Self>, game_id: &str, entry: &mut Entry) -> Result<bool, Status> {
        if !self.store.is_shared() {
            return Ok(false);
        }
        if entry.stale {
            self.heal(game_id, entry).await?;
            return Ok(true);
        }
        self.fast_forward(game_id, entry).await
    }

    async fn command_locked(
        self: &Arc<Self>,
        game_id: &str,
        entry: &mut Entry,
        actor: Actor,
        cmd: &Command,
        m: &Mutation,
    ) -> Result<pb::CommandResult, Status> {
        let key = RequestKey::new(actor, &m.request_id, cmd);
        if let Some(key) = &key
            && let Some((first, fingerprint)) = key.find(&entry.requests)
        {
            if fingerprint.as_ref().is_some_and(|f| *f != key.fingerprint) {
                return Err(convert::with_info(
                    Code::InvalidArgument,
                    format!(
                        "request id {:?} was used for another command; a retry must repeat the call",
                        m.request_id
                    ),
                    "request_id_reused",
                    game_id,
                    &entry.game,
                ));
            }
            if let Some(answer) = entry.answer_for(game_id, *first, actor) {
                return Ok(answer);
            }
        }
        if let Some(expected) = m.expected_move_number
            && expected as usize != entry.game.move_number()
        {
            let now = self.time.now_ms();
            let mut status = convert::with_info(
                Code::FailedPrecondition,
                format!(
                    "stale: the game is at move {}, not {expected}",
                    entry.game.move_number()
                ),
                "stale",
                game_id,
                &entry.game,
            );
            let state = convert::state_to(game_id, &entry.game, now).encode_to_vec();
            status.metadata_mut().insert_bin(
                convert::STATE_TRAILER,
                tonic::metadata::MetadataValue::from_bytes(&state),
            );
            return Err(status);
        }
        self.apply_locked(game_id, entry, actor, cmd, None, key).await
    }

    /// Decides, persists, then applies and publishes. Nothing changes unless the store
    /// acknowledged the events.
    async fn apply_locked(
        self: &Arc<Self>,
        game_id: &str,
        entry: &mut Entry,
        actor: Actor,
        cmd: &Command,
        guest_hash: Option<String>,
        request: Option<RequestKey>,
    ) -> Result<pb::CommandResult, Status> {
        let now = self.time.now_ms();
        let (seq, phase) = (entry.game.seq(), entry.game.phase());
        // Watchers get the state after each event, folded on a copy of the game as it was.
        // (Boxed: a game is 1 KiB, and what an async fn holds across an await is copied
        // whenever its future moves.)
        let before = (entry.tx.receiver_count() > 0).then(|| Box::new(entry.game.clone()));
        // Decided on the game itself (a move or pass is not copied). Until the store has the
        // events the game in memory is ahead of it: `stale` stays set if this call is
        // cancelled while they are on their way or the store fails, and the next use of the
        // game reloads it from the store.
        entry.stale = true;
        let events = match entry.game.decide_in_place(actor, cmd, now) {
            Ok(events) => events,
            Err(r) => {
                // A refusal changes nothing (`decide_in_place` promises it); were that ever
                // broken, the game would be reloaded before its next use.
                entry.stale = entry.game.seq() != seq;
                return Err(convert::rejection_to(&r, game_id, &entry.game));
            }
        };
        let answer = |entry: &Entry, events: &[Event]| pb::CommandResult {
            state: Some(convert::state_to(game_id, &entry.game, now)),
            events: events
                .iter()
                .map(|e| convert::event_to(&redact_for_actor(e, &entry.game, actor)))
                .collect(),
        };
        if events.is_empty() {
            entry.stale = false;
            return Ok(answer(entry, &events));
        }
        self.store
            .append(Append {
                guest_token_hash: guest_hash.clone(),
                request_id: request.as_ref().map(RequestKey::stored),
                // The lobby row changes with the phase (and the guest's token).
                summary: (entry.game.phase() != phase || guest_hash.is_some()).then(|| summary(&entry.game)),
                ..append_of(game_id, seq, &events, &entry.game, now)
            })
            .await
            .map_err(|e| {
                if matches!(e, StoreError::Conflict { .. }) {
                    // The store refused the append for certain (another server moved the
                    // game on): the game is its acknowledged log again, no reload needed,
                    // and the caller catches up. Normal with replicas, so not a warning.
                    // (Were the log not to fold, `stale` stays and the next use reloads.)
                    let _ = entry.rewind();
                }
                store_error(e)
            })?;
        // Durable: the game in memory is the stored one again.
        entry.stale = false;
        entry.listing.update(&entry.game);
        let was_finished = phase == Phase::Finished;
        for e in &events {
            if matches!(
                e.kind,
                weiqi_game::EventKind::MovePlayed { .. } | weiqi_game::EventKind::Passed { .. }
            ) {
                self.metrics.moves.inc();
            }
        }
        // The answer is built once the events are durable: the game does not change
        // meanwhile (its lock is held), and the future holds less across the append.
        let result = answer(entry, &events);
        let mut published = Vec::new();
        if let Some(mut g) = before {
            for e in &events {
                g.apply(e).map_err(corrupt)?;
                published.push(Arc::new((e.clone(), convert::state_to(game_id, &g, e.at))));
            }
        }
        let events_first = events[0].seq;
        entry.last_active = now;
        entry.log.extend(events);
        if let Some(h) = guest_hash {
            entry.guest_hash = Some(h);
        }
        if let Some(key) = request {
            entry
                .requests
                .insert(key.map_key(), (events_first, Some(key.fingerprint)));
        }
        if !was_finished && entry.game.phase() == Phase::Finished {
            // (Counted by the server whose append ended it: with a shared store the others
            // learn of it by catching up, and the sum over servers counts it once.)
            self.metrics.games_finished.inc();
            self.ended(game_id);
        }
        for b in published {
            let _ = entry.tx.send(b);
        }
        self.schedule(game_id, entry);
        Ok(result)
    }

    /// One timer per game, at the next time something happens without a command.
    fn schedule(self: &Arc<Self>, game_id: &str, entry: &mut Entry) {
        if let Some(t) = entry.timer.take()
            && Some(t.id()) != tokio::task::try_id()
        {
            // (A timer that is itself ticking is not aborted: it is finishing anyway.)
            t.abort();
        }
        let Some(wake) = entry.game.next_wakeup() else { return };
        let hub = Arc::clone(self);
        let id = game_id.to_string();
        let at = self.time.instant(wake);
        let handle = tokio::spawn(async move {
            tokio::time::sleep_until(at).await;
            if let Err(e) = hub
                .command(&id, Actor::Server, Command::Tick, Mutation::default())
                .await
            {
                warn!(game_id = %id, error = %e, "timer tick failed");
            }
        });
        entry.timer = Some(handle.abort_handle());
    }
}

/// What an actor may see of an event: a sealed move only by its sealer.
pub fn redact_for_actor(e: &Event, g: &Game, actor: Actor) -> Event {
    let viewer = actor.seat().and_then(|s| g.color_of(s));
    e.redacted_for(viewer)
}
