//! # weiqi-store
//!
//! The durable, append-only event log of every game, behind the [`EventStore`] trait.
//! [`SqliteStore`] is the embedded default: one SQLite file in WAL mode with
//! `synchronous = FULL`, written by a single writer task that commits appends in groups
//! (one fsynced transaction per batch, every append answered after its batch commits), so
//! an acknowledged append is on disk without paying one fsync per call. Appends use
//! optimistic concurrency on `(game_id, seq)`: two writers can never both append event N.
//!
//! The store knows events (as JSON) and opaque response bytes; it knows nothing of
//! protobuf or of the rules.

mod memory;
mod postgres;
mod sqlite;

pub use memory::MemoryStore;
pub use postgres::PgStore;
pub use sqlite::SqliteStore;

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;

use weiqi_game::Event;

/// Store failures.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Someone else appended first (or the game already exists).
    #[error("concurrent append to game {game_id}: expected seq {expected}")]
    Conflict { game_id: String, expected: u64 },
    /// The database failed (a lost connection, a deadlock, a value it cannot store), as
    /// the database told it: no driver type leaks out of the store.
    #[error("database: {0}")]
    Db(DbError),
    #[error("corrupt event in game {game_id}: {why}")]
    Corrupt { game_id: String, why: String },
    #[error("the store is shutting down")]
    Closed,
    #[error("the database is locked: {0}")]
    Locked(String),
}

/// A database failure: the driver's message, and the database's own code (SQLSTATE) and
/// detail when it sent them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbError {
    pub message: String,
    pub code: Option<String>,
    pub detail: Option<String>,
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        if let Some(code) = &self.code {
            write!(f, " (SQLSTATE {code})")?;
        }
        if let Some(detail) = &self.detail {
            write!(f, ": {detail}")?;
        }
        Ok(())
    }
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> StoreError {
        let (code, detail) = match &e {
            sqlx::Error::Database(d) => (
                d.code().map(|c| c.into_owned()),
                d.try_downcast_ref::<sqlx::postgres::PgDatabaseError>()
                    .and_then(|p| p.detail())
                    .map(str::to_string),
            ),
            _ => (None, None),
        };
        StoreError::Db(DbError {
            message: e.to_string(),
            code,
            detail,
        })
    }
}

impl StoreError {
    /// A failure of this process around the database (a thread, a runtime).
    pub(crate) fn local(message: impl std::fmt::Display) -> StoreError {
        StoreError::Db(DbError {
            message: message.to_string(),
            code: None,
            detail: None,
        })
    }
}

/// Lobby data kept next to the log, updated with every append. (The default, all empty,
/// is the row of a game created without one.)
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub phase: String,
    pub board_size: u32,
    pub move_number: u32,
    pub rules: String,
    pub finished: bool,
}

/// One atomic append: events, token changes, the request id, and (when it changed) the
/// lobby summary.
#[derive(Debug, Clone)]
pub struct Append {
    pub game_id: String,
    /// Sequence number of the last event already stored (0 for a new game).
    pub expected_seq: u64,
    pub events: Vec<Event>,
    /// Set the host's token hash (creation).
    pub host_token_hash: Option<String>,
    /// Set the guest's token hash (join).
    pub guest_token_hash: Option<String>,
    /// The idempotency key of the request that caused these events: a retry can find
    /// them and answer as the first time.
    pub request_id: Option<String>,
    /// The game's lobby summary, when it changed (creation, join, a new phase). The events
    /// are the truth; the summary row is only for listing and finding unfinished games.
    pub summary: Option<Summary>,
    /// The game's move number after these events (a shared store's lobby shows it).
    pub move_number: u32,
    /// When the game next changes without a command (a clock running out, a byo-yomi
    /// announcement), after these events: a shared store lets another server end the game
    /// on time when the one holding it is gone ([`EventStore::claim`]).
    pub wake_ms: Option<u64>,
    pub now_ms: u64,
}

/// A game in a shared store's lobby.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LobbyRow {
    pub game_id: String,
    pub phase: String,
    pub board_size: u32,
    pub move_number: u32,
    pub rules: String,
}

/// The lobby across every server sharing a store, newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lobby {
    /// Waiting for an opponent.
    pub open: Vec<LobbyRow>,
    /// Neither waiting nor finished.
    pub playing: Vec<LobbyRow>,
}

/// A game as stored.
#[derive(Debug, Clone)]
pub struct StoredGame {
    pub game_id: String,
    pub host_token_hash: Option<String>,
    pub guest_token_hash: Option<String>,
    pub events: Vec<Event>,
    /// Request ids and the sequence number of the first event each caused.
    pub responses: Vec<(String, u64)>,
}

/// The event log. Implementations: SQLite (embedded default), PostgreSQL (several
/// replicas), memory (reference, tests).
pub trait EventStore: Send + Sync + 'static {
    /// Appends atomically; `Conflict` if `expected_seq` is not the stored last seq.
    /// Returns once the append is durable.
    fn append(&self, append: Append) -> impl Future<Output = Result<(), StoreError>> + Send;
    /// Every game not finished, with its events (for rebuilding after a restart).
    fn load_unfinished(&self) -> impl Future<Output = Result<Vec<StoredGame>, StoreError>> + Send;
    /// One game, finished or not.
    fn load(&self, game_id: &str) -> impl Future<Output = Result<Option<StoredGame>, StoreError>> + Send;
    /// Returns once every append this process submitted before the call is decided,
    /// committed or refused, and can no longer change the store. After a call was
    /// cancelled with its append on the way, what the store then holds is final for that
    /// append: the hub waits on this before it reloads such a game.
    fn barrier(&self) -> impl Future<Output = Result<(), StoreError>> + Send;
    /// Records that the service is alive at `now_ms` (to know how long it was down).
    fn heartbeat(&self, now_ms: u64) -> impl Future<Output = Result<(), StoreError>> + Send;
    /// The last heartbeat, if any.
    fn last_heartbeat(&self) -> impl Future<Output = Result<Option<u64>, StoreError>> + Send;
    /// Writes one small row through the same path as an append, durable when it returns:
    /// a deep health check of storage, and the per-write cost of storage for load tests.
    /// Only the last [`PROBE_SLOTS`] probes are kept.
    fn probe(&self, now_ms: u64, payload: &[u8]) -> impl Future<Output = Result<(), StoreError>> + Send;
    /// Whether other servers append to this store too, so that a game held in memory may
    /// be behind it (see [`EventStore::load_since`]). A store only this process writes
    /// (the default) never is.
    fn is_shared(&self) -> bool {
        false
    }
    /// For a shared store, the lobby of every server (at most `limit` games in each list,
    /// newest first). `None` for a store only this process writes: its memory is the
    /// lobby.
    fn lobby(&self, limit: usize) -> impl Future<Output = Result<Option<Lobby>, StoreError>> + Send {
        let _ = limit;
        async { Ok(None) }
    }
    /// A game with only its events after `after_seq` (and their request ids), and its
    /// token hashes (`None`: no such game): how a server catches up with what another
    /// appended, reading only what it lacks.
    fn load_since(
        &self,
        game_id: &str,
        after_seq: u64,
    ) -> impl Future<Output = Result<Option<StoredGame>, StoreError>> + Send {
        async move {
            Ok(self.load(game_id).await?.map(|mut g| {
                g.events.retain(|e| e.seq > after_seq);
                g.responses.retain(|(_, seq)| *seq > after_seq);
                g
            }))
        }
    }
    /// The games not finished that `what` selects, at most `limit`, claimed for the
    /// caller until `until_ms`: no other caller gets them before then. How the servers
    /// sharing a store act on the games of a server that is gone (or never held them). A
    /// store only this process writes has none: its server holds every game not finished.
    fn claim(
        &self,
        what: Claim,
        now_ms: u64,
        until_ms: u64,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send {
        let _ = (what, now_ms, until_ms, limit);
        async { Ok(Vec::new()) }
    }
    /// The last stored sequence numbers of several games at once (games not stored are
    /// left out): how a server with a shared store polls the games watched there.
    fn last_seqs(&self, game_ids: &[String]) -> impl Future<Output = Result<Vec<(String, u64)>, StoreError>> + Send {
        async move {
            let mut out = Vec::new();
            for id in game_ids {
                if let Some(last) = self.load(id).await?.and_then(|g| g.events.last().map(|e| e.seq)) {
                    out.push((id.clone(), last));
                }
            }
            Ok(out)
        }
    }
}

/// Which games [`EventStore::claim`] claims.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// Those whose wake-up ([`Append::wake_ms`]) is at or before this time: to be ticked
    /// (a clock ran out).
    Overdue { due_ms: u64 },
    /// Those waiting for an opponent since this time or earlier: to be cancelled.
    OpenSince { created_ms: u64 },
}

/// How many probe rows a store keeps (older ones are overwritten).
pub const PROBE_SLOTS: u64 = 1024;

/// The events of an append number on from its expected sequence number: every store
/// refuses one that breaks this on its own (before it could fail a whole group commit).
fn check_numbering(a: &Append) -> Result<(), StoreError> {
    if (1..).zip(&a.events).any(|(k, e)| e.seq != a.expected_seq + k) {
        return Err(StoreError::Corrupt {
            game_id: a.game_id.clone(),
            why: format!("the events of an append must number on from {}", a.expected_seq),
        });
    }
    Ok(())
}

/// The events of an append as the JSON bodies both databases store (checked first).
fn bodies(a: &Append) -> Result<Vec<String>, StoreError> {
    check_numbering(a)?;
    a.events
        .iter()
        .map(serde_json::to_string)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|err| StoreError::Corrupt {
            game_id: a.game_id.clone(),
            why: err.to_string(),
        })
}

/// Games read back from a database: their rows first, then their events in order, keyed
/// by the database's own game key.
struct Gathered<K> {
    games: Vec<StoredGame>,
    index: HashMap<K, usize>,
}

impl<K> Default for Gathered<K> {
    fn default() -> Self {
        Gathered {
            games: Vec::new(),
            index: HashMap::new(),
        }
    }
}

impl<K: Hash + Eq> Gathered<K> {
    fn game(&mut self, key: K, game_id: String, host_token_hash: Option<String>, guest_token_hash: Option<String>) {
        self.index.insert(key, self.games.len());
        self.games.push(StoredGame {
            game_id,
            host_token_hash,
            guest_token_hash,
            events: Vec::new(),
            responses: Vec::new(),
        });
    }

    /// The next event of the game `key` (ignored for a game without a row: one created
    /// between the two queries).
    fn event(&mut self, key: &K, seq: u64, request_id: Option<String>, body: &str) -> Result<(), StoreError> {
        let Some(&k) = self.index.get(key) else {
            return Ok(());
        };
        let g = &mut self.games[k];
        if let Some(rid) = request_id {
            g.responses.push((rid, seq));
        }
        let ev: Event = serde_json::from_str(body).map_err(|err| StoreError::Corrupt {
            game_id: g.game_id.clone(),
            why: err.to_string(),
        })?;
        g.events.push(ev);
        Ok(())
    }

    fn into_games(self) -> Vec<StoredGame> {
        self.games
    }
}
