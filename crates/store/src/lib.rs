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

/// The games that `$filter` (a condition on `games g`, with at most one bound text, `$arg`)
/// selects, with their events: two queries in all, however many games (one query per game
/// made a restart with thousands of open games slow). `$key` is the database's own game
/// key, the column that joins events to games; `$events` the table (or subquery) the
/// events are read from. The same steps on both
/// databases, whose sqlx types share no trait that lets one function bind and read these
/// columns without a page of bounds: hence a macro.
macro_rules! gather {
    ($pool:expr, $key:literal: $key_ty:ty, $events:expr, $filter:expr, $arg:expr) => {{
        let (key, events, filter) = ($key, $events, $filter);
        let games_sql =
            format!("SELECT g.{key}, g.game_id, g.host_token_hash, g.guest_token_hash FROM games g WHERE {filter}");
        let events_sql = format!(
            "SELECT e.{key}, e.seq, e.request_id, e.body FROM {events} e JOIN games g ON g.{key} = e.{key}
             WHERE {filter} ORDER BY e.{key}, e.seq"
        );
        let mut games_q = sqlx::query(&games_sql);
        let mut events_q = sqlx::query(&events_sql);
        if let Some(a) = $arg {
            games_q = games_q.bind(a);
            events_q = events_q.bind(a);
        }
        let mut games = crate::Gathered::<$key_ty>::default();
        for row in games_q.fetch_all($pool).await? {
            games.game(
                row.get::<$key_ty, _>(0),
                row.get("game_id"),
                row.get("host_token_hash"),
                row.get("guest_token_hash"),
            );
        }
        // Streamed: a restart reads every open game's events, more than memory should
        // hold as rows at once.
        let mut rows = events_q.fetch($pool);
        while let Some(row) = rows.try_next().await? {
            games.event(
                &row.get::<$key_ty, _>(0),
                row.get::<i64, _>("seq") as u64,
                row.get("request_id"),
                row.get("body"),
            )?;
        }
        Ok(games.into_games())
    }};
}

mod matchmaking;
mod memory;
mod phase;
mod played;
mod players;
mod postgres;
mod reviews;
mod sql;
mod sqlite;
mod tournaments;

pub use matchmaking::{ChallengeStore, FeedStore, PendingRatings, SeekStore};
pub use memory::MemoryStore;
pub use played::PlayedGames;
pub use players::PlayerStore;
pub use postgres::PgStore;
pub use reviews::Reviews;
pub use sqlite::{DEFAULT_COMMIT_SPACING, MAX_COMMIT_SPACING, SqliteStore};
pub use tournaments::{TournamentRow, TournamentStore};

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::pin::Pin;

use weiqi_game::{Event, Phase};

pub use phase::{phase_from_name, phase_name};

/// The `tracing` target of the spans a call's trace is made of (the server's logs leave
/// it out; its OpenTelemetry layer takes only it). The store's: `db.commit` (SQLite) and
/// `db.append_group` (PostgreSQL), each a child of the waiting call's span.
pub const TRACE: &str = "weiqi::trace";

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
    /// The database cannot be reached or cannot serve right now (a refused or lost
    /// connection, a restart, no free connection within the pool's wait, a serialization
    /// failure or deadlock, a full disk): nothing was stored, and the same call may succeed
    /// in a moment ([`transient_sqlstate`] and [`transient_sqlite`] say which failures).
    #[error("database unavailable: {0}")]
    Unavailable(DbError),
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

/// Whether a PostgreSQL failure is worth retrying as it is: the database was unreachable,
/// restarting, out of connections or disk, or chose this transaction as a serialization
/// or deadlock victim. By SQLSTATE class: 08 connection exceptions, 53 insufficient
/// resources, 57P0x shutdowns and "cannot connect now", 58 system errors, and 40001,
/// 40P01, 55P03 (lock not available). A constraint, a bad value or a syntax error is not:
/// it would fail the same way again.
pub fn transient_sqlstate(code: &str) -> bool {
    code.starts_with("08")
        || code.starts_with("53")
        || code.starts_with("57P0")
        || code.starts_with("58")
        || matches!(code, "40001" | "40P01" | "55P03")
}

/// [`transient_sqlstate`] for SQLite's result codes (extended codes keep the primary one
/// in the low byte): 5 busy, 6 locked, 10 I/O error, 13 full, 14 cannot open.
pub fn transient_sqlite(extended_code: i64) -> bool {
    matches!(extended_code & 0xff, 5 | 6 | 10 | 13 | 14)
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> StoreError {
        let (code, detail, transient) = match &e {
            sqlx::Error::Database(d) => {
                let code = d.code().map(|c| c.into_owned());
                let pg = d.try_downcast_ref::<sqlx::postgres::PgDatabaseError>();
                // (The codes of the two databases look alike: "22021" is a SQLSTATE.)
                let transient = match (&code, pg) {
                    (Some(c), Some(_)) => transient_sqlstate(c),
                    (Some(c), None) => c.parse().is_ok_and(transient_sqlite),
                    (None, _) => false,
                };
                (code, pg.and_then(|p| p.detail()).map(str::to_string), transient)
            }
            // No answer from the database at all: the network, the pool's wait, a
            // connection that broke mid-message.
            sqlx::Error::Io(_) | sqlx::Error::Tls(_) | sqlx::Error::PoolTimedOut | sqlx::Error::Protocol(_) => {
                (None, None, true)
            }
            _ => (None, None, false),
        };
        let error = DbError {
            message: e.to_string(),
            code,
            detail,
        };
        if transient {
            StoreError::Unavailable(error)
        } else {
            StoreError::Db(error)
        }
    }
}

/// Every table and index a store creates, in order: the store's own (`own`), then the
/// players', matchmaking's (`serial`: the database's auto-increment key) and tournaments'.
fn schema(own: &[&str], serial: &str) -> Vec<String> {
    own.iter()
        .chain(players::SCHEMA)
        .chain(played::SCHEMA)
        .chain(reviews::SCHEMA)
        .map(|s| s.to_string())
        .chain(matchmaking::schema(serial))
        .chain(tournaments::schema())
        .collect()
}

/// The embedded store's writer runs SQLite through rusqlite: the same code as sqlx reports
/// (SQLite's extended result code).
impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> StoreError {
        StoreError::sqlite(&e.to_string(), sqlite_code(&e))
    }
}

/// SQLite's extended result code of a failure, when SQLite gave one.
pub(crate) fn sqlite_code(e: &rusqlite::Error) -> Option<i32> {
    match e {
        rusqlite::Error::SqliteFailure(f, _) => Some(f.extended_code),
        _ => None,
    }
}

impl StoreError {
    /// A SQLite failure from its message and code: one per write of a batch that failed
    /// as a whole (rusqlite's error is not `Clone`), classified as the first was.
    pub(crate) fn sqlite(message: &str, extended: Option<i32>) -> StoreError {
        let error = DbError {
            message: message.to_string(),
            code: extended.map(|c| c.to_string()),
            detail: None,
        };
        if extended.is_some_and(|c| transient_sqlite(c.into())) {
            StoreError::Unavailable(error)
        } else {
            StoreError::Db(error)
        }
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Stored by its domain name ([`phase_name`]).
    pub phase: Phase,
    pub board_size: u32,
    pub move_number: u32,
    pub rules: String,
    pub finished: bool,
}

/// The lobby columns a summary is stored as. A game appended without a summary gets a
/// blank row: no phase, no board (such a game is never listed as open).
pub(crate) struct SummaryColumns<'a> {
    pub phase: &'static str,
    pub board_size: i32,
    pub move_number: i32,
    pub rules: &'a str,
    pub finished: bool,
}

impl<'a> SummaryColumns<'a> {
    pub(crate) fn of(s: Option<&'a Summary>) -> SummaryColumns<'a> {
        SummaryColumns {
            phase: s.map_or("", |s| phase_name(s.phase)),
            board_size: s.map_or(0, |s| s.board_size as i32),
            move_number: s.map_or(0, |s| s.move_number as i32),
            rules: s.map_or("", |s| s.rules.as_str()),
            finished: s.is_some_and(|s| s.finished),
        }
    }
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
    /// on time when the one holding it is gone ([`Cluster::claim`]).
    pub wake_ms: Option<u64>,
    pub now_ms: u64,
}

/// A game in a shared store's lobby.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LobbyRow {
    pub game_id: String,
    pub phase: Phase,
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

/// The event log of every game. Implementations: SQLite (embedded default), PostgreSQL
/// (several replicas), memory (the reference, for tests).
pub trait EventLog: Send + Sync + 'static {
    /// Appends atomically; `Conflict` if `expected_seq` is not the stored last seq.
    /// Returns once the append is durable.
    fn append(&self, append: Append) -> impl Future<Output = Result<(), StoreError>> + Send;
    /// Every game not finished, with its events (for rebuilding after a restart).
    fn load_unfinished(&self) -> impl Future<Output = Result<Vec<StoredGame>, StoreError>> + Send;
    /// One game, finished or not.
    fn load(&self, game_id: &str) -> impl Future<Output = Result<Option<StoredGame>, StoreError>> + Send;
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
    /// Returns once every append this process submitted before the call is decided,
    /// committed or refused, and can no longer change the store. After a call was
    /// cancelled with its append on the way, what the store then holds is final for that
    /// append: the hub waits on this before it reloads such a game. (A method of its own:
    /// only a single writer gets it for free from the order of its queue.)
    fn barrier(&self) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// The service's liveness, kept beside the log: how long it was down, and a deep check
/// that storage writes.
pub trait Liveness: Send + Sync + 'static {
    /// Records that the service is alive at `now_ms` (to know how long it was down).
    fn heartbeat(&self, now_ms: u64) -> impl Future<Output = Result<(), StoreError>> + Send;
    /// The last heartbeat, if any.
    fn last_heartbeat(&self) -> impl Future<Output = Result<Option<u64>, StoreError>> + Send;
    /// Writes one small row through the same path as an append, durable when it returns:
    /// a deep health check of storage, and the per-write cost of storage for load tests.
    /// Only the last [`PROBE_SLOTS`] probes are kept.
    fn probe(&self, now_ms: u64, payload: &[u8]) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// What a server needs of its store: the log and liveness. Implemented by every type
/// that has both.
pub trait EventStore: EventLog + Liveness {}

impl<T: EventLog + Liveness> EventStore for T {}

/// A boxed store call: [`Cluster`] is used as a trait object, chosen at start-up, and
/// its calls are periodic, not on the path of a move.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// What servers sharing one store need of it beyond the log: the lobby of every server,
/// claims on the games of a server that is gone, and polling for what others appended.
/// Only a store several servers can share has it (PostgreSQL); a server alone holds every
/// game in progress in memory and needs none of it.
pub trait Cluster: Send + Sync + 'static {
    /// The lobby of every server: at most `limit` games in each list, newest first.
    fn lobby(&self, limit: usize) -> StoreFuture<'_, Lobby>;
    /// The games not finished that `what` selects, at most `limit`, claimed for the
    /// caller until `until_ms`: no other caller gets them before then.
    fn claim(&self, what: Claim, now_ms: u64, until_ms: u64, limit: usize) -> StoreFuture<'_, Vec<String>>;
    /// The last stored sequence numbers of several games at once (games not stored are
    /// left out): how a server polls the games watched there.
    fn last_seqs<'a>(&'a self, game_ids: &'a [String]) -> StoreFuture<'a, Vec<(String, u64)>>;
}

/// Which games [`Cluster::claim`] claims.
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

/// Everything the service keeps about players: accounts and ratings, finished games and
/// their reviews, challenges, seeks, feeds and tournaments (both databases and memory
/// implement all).
pub trait Accounts:
    PlayerStore + PlayedGames + Reviews + ChallengeStore + SeekStore + FeedStore + PendingRatings + TournamentStore
{
}

impl<T: PlayerStore + PlayedGames + Reviews + ChallengeStore + SeekStore + FeedStore + PendingRatings + TournamentStore>
    Accounts for T
{
}

#[cfg(test)]
mod tests {
    use super::{transient_sqlite, transient_sqlstate};

    #[test]
    fn failures_worth_retrying_are_told_from_the_others() {
        // PostgreSQL: a connection refused or lost, a restart, too many connections, a
        // full disk, a serialization failure, a deadlock, a lock not available.
        for code in [
            "08006", "08001", "57P01", "57P02", "57P03", "53300", "53100", "40001", "40P01", "55P03", "58030",
        ] {
            assert!(transient_sqlstate(code), "{code}");
        }
        // A unique violation, a bad value (a NUL byte), a syntax error, a missing table:
        // not, though some look like SQLite's numbers.
        for code in ["23505", "22P02", "42601", "42P01", "22021"] {
            assert!(!transient_sqlstate(code), "{code}");
        }
        // SQLite's extended codes: SQLITE_BUSY_SNAPSHOT (517), SQLITE_IOERR_WRITE (778),
        // SQLITE_FULL (13) are; SQLITE_CONSTRAINT_UNIQUE (2067) is not.
        for code in [5, 517, 6, 778, 13, 14] {
            assert!(transient_sqlite(code), "{code}");
        }
        assert!(!transient_sqlite(2067));
    }
}
