//! A game in memory: its entry (the game, its seats, the request ids it answered, its
//! audience, its timer), behind its own lock. What a game in play holds is kept
//! small (a server holds 100,000 of them): between commands the game rests packed
//! ([`Held`]), its log stays in the store unless someone watches it, its request ids are
//! hashes ([`SeenRequests`]), and its audience's channel exists once someone watches.

use std::sync::{Arc, OnceLock};

use tokio::sync::Mutex;
use tokio::task::AbortHandle;
use weiqi_game::{Actor, Corrupt, Event, Game, Ms, ParkedGame, Seat};

use super::audience::Audience;
use super::error::{Denied, GameAt, HubError};
use super::lobby::Listing;
use super::presence::Presence;
use super::view::{Applied, GameView};
use crate::auth;
use crate::requests::{Answered, SeenRequests};

/// What watchers receive: an event and the game right after it, shared by all of them.
pub type Broadcast = Arc<Published>;

/// One item of a game's broadcast.
#[derive(Debug)]
pub struct Published {
    /// None when only what is outside the log changed (a seat's presence).
    pub event: Option<Event>,
    /// The game right after the event.
    pub view: GameView,
    /// The item as the edge sends it, encoded by the first watcher's stream to send it and
    /// shared by the others (a reference count, not a copy): ten thousand watchers of one
    /// game cost one conversion and one encoding of each move, not ten thousand. (Opaque
    /// bytes: the hub knows no wire format, and never reads them.)
    pub wire: OnceLock<bytes::Bytes>,
}

impl Published {
    pub fn new(event: Event, view: GameView) -> Broadcast {
        Arc::new(Published {
            event: Some(event),
            view,
            wire: OnceLock::new(),
        })
    }

    /// The game as it is, for a change outside its log.
    pub fn state(view: GameView) -> Broadcast {
        Arc::new(Published {
            event: None,
            view,
            wire: OnceLock::new(),
        })
    }

    /// The sequence number of the item's event (0 for a change outside the log).
    pub fn seq(&self) -> u64 {
        self.event.as_ref().map_or(0, |e| e.seq)
    }
}

/// A game in memory: its entry behind its lock, and what is read without the lock beside
/// it.
#[derive(Clone)]
pub(super) struct Slot {
    pub entry: Arc<Mutex<Entry>>,
    pub listing: Arc<Listing>,
    /// The game's audience, to count its watchers without the game's lock.
    pub watchers: Audience,
}

impl Slot {
    pub fn new(entry: Entry) -> Slot {
        Slot {
            listing: entry.listing.clone(),
            watchers: entry.watchers.clone(),
            entry: Arc::new(Mutex::new(entry)),
        }
    }
}

/// An entry's game: live while in use, packed at rest (about 23 KB less on any board: the
/// live board's bookkeeping is rebuilt from the stones in a few microseconds).
#[derive(Debug)]
pub enum Held {
    Live(Game),
    Parked(ParkedGame),
}

/// Boards that games gave back when they were packed, for the next games unpacked: a
/// used board is rewritten only where its new size reaches, where a fresh one is
/// allocated and filled whole at the largest board's capacity, and its memory freed and
/// faulted in again (at a human pace about 8% of the server's samples). At most
/// [`SPARE_BOARDS`] wait.
static SPARES: std::sync::Mutex<Vec<weiqi_rules::Board>> = std::sync::Mutex::new(Vec::new());

/// 24 MB at most (23 KiB a board): at a human pace about one command in ten comes within
/// `park_after_ms` of the one before, so its game stays live until the next park pass,
/// which then packs about a thousand a second at once (100,000 games, a move each every
/// 10 s); those boards serve the unpacking until the next pass.
const SPARE_BOARDS: usize = 1024;

fn spares() -> std::sync::MutexGuard<'static, Vec<weiqi_rules::Board>> {
    // (A panic while the lock was held left at worst a board too few or too many.)
    SPARES.lock().unwrap_or_else(|e| e.into_inner())
}

impl Held {
    /// The game, live (unpacked first if it was at rest).
    pub fn get(&mut self) -> &mut Game {
        if let Held::Parked(p) = self {
            let spare = spares().pop();
            let g = std::mem::take(p).unpark_on(spare);
            *self = Held::Live(g);
        }
        match self {
            Held::Live(g) => g,
            Held::Parked(_) => unreachable!("unparked above"),
        }
    }

    /// Packs the game until its next use.
    pub fn park(&mut self) {
        if let Held::Live(g) = self {
            let (p, board) = std::mem::take(g).park_keeping_board();
            *self = Held::Parked(p);
            if let Some(b) = board {
                let mut spares = spares();
                if spares.len() < SPARE_BOARDS {
                    spares.push(b);
                }
            }
        }
    }

    pub fn is_live(&self) -> bool {
        matches!(self, Held::Live(_))
    }
}

pub struct Entry {
    pub game: Held,
    /// The acknowledged events, kept only while the game has watchers (a new or lagging
    /// watcher catches up from it); otherwise read from the store when needed.
    pub(super) log: Option<Vec<Event>>,
    /// The log as spectators replay it, folded and made into items once for all of them
    /// (with their encodings), kept and dropped with `log` ([`super::watch`]).
    pub(super) spectators_log: Option<Arc<super::watch::SpectatorsLog>>,
    pub(super) host_hash: Option<String>,
    pub(super) guest_hash: Option<String>,
    /// Every request id that changed the game, by seat ([`crate::requests::RequestKey`]), as a hash: the
    /// ids, their first event and their command's fingerprint are in the store, read
    /// when a hash matches (retries are rare).
    pub(super) requests: SeenRequests,
    pub(super) watchers: Audience,
    pub(super) timer: Option<AbortHandle>,
    /// Server time of the last command that changed the game (or of loading it), and of
    /// the one before (quick play keeps the game unpacked).
    pub(super) last_active: Ms,
    pub(super) previous_active: Ms,
    /// The entry is on the hub's list of games that may be unpacked ([`Hub::park_idle`]
    /// visits only those): set when it is put there, cleared when the pass packs it or
    /// finds it packed.
    pub(super) on_park_list: bool,
    /// The game in memory may be ahead of the store: a command changed it and its append
    /// did not finish (the call was cancelled while the events were on their way, or the
    /// store failed). The store is the truth: the hub reloads the game before its next use.
    pub(super) stale: bool,
    /// Sequence number of the last event the store acknowledged (the game in memory is
    /// ahead of it only while `stale`).
    pub(super) acked_seq: u64,
    /// What the lobby shows; kept in step with `game` after every change.
    pub(super) listing: Arc<Listing>,
    /// Whether each seat's player is here (shared with the seats' watch streams).
    pub(super) presence: Presence,
}

impl Entry {
    pub(super) fn new(game: Game, created_ms: Ms) -> Entry {
        Entry {
            listing: Arc::new(Listing::of(&game, created_ms)),
            acked_seq: game.seq(),
            game: Held::Live(game),
            log: None,
            spectators_log: None,
            host_hash: None,
            guest_hash: None,
            requests: SeenRequests::default(),
            watchers: Audience::default(),
            timer: None,
            last_active: 0,
            previous_active: 0,
            on_park_list: false,
            stale: false,
            presence: Presence::new(created_ms),
        }
    }

    /// This server takes the game up at `now` (created, loaded, recovered): it counts as
    /// active, and both seats as seen, then.
    pub(super) fn taken_up(&mut self, now: Ms) {
        self.last_active = now;
        self.presence = Presence::new(now);
    }

    /// A game as the store holds it, folded from its events.
    pub(super) fn from_stored(sg: weiqi_store::StoredGame) -> Result<Entry, Corrupt> {
        let game = Game::from_events(&sg.events)?;
        let mut entry = Entry::new(game, sg.events.first().map_or(0, |e| e.at));
        entry.host_hash = sg.host_token_hash;
        entry.guest_hash = sg.guest_token_hash;
        entry.requests.insert_stored(sg.responses);
        Ok(entry)
    }

    /// The log kept in memory for the game's watchers, if any.
    pub fn watched_log(&self) -> Option<&[Event]> {
        self.log.as_deref()
    }

    /// The store acknowledged everything the game in memory holds.
    pub(super) fn settled(&mut self) {
        self.stale = false;
        self.acked_seq = self.game.get().seq();
    }

    /// Where the game stands, for an error's details.
    pub(super) fn at(&mut self, game_id: &str) -> GameAt {
        GameAt::of(game_id, self.game.get())
    }

    /// The actor a bearer token makes of its holder: the seat it holds in this game.
    pub(super) fn actor_for(&mut self, token: Option<&str>, game_id: &str) -> Result<Actor, HubError> {
        match self.seat_of_token(token) {
            Some(seat) => Ok(seat.into()),
            None => Err(HubError::Denied {
                why: if token.is_none() {
                    Denied::MissingToken
                } else {
                    Denied::WrongToken
                },
                at: self.at(game_id),
            }),
        }
    }

    /// Which seat a bearer token holds in this game.
    pub fn seat_of_token(&self, token: Option<&str>) -> Option<Seat> {
        let hex = auth::sha256_hex_array(token?.as_bytes());
        let holds = |hash: &Option<String>| hash.as_ref().is_some_and(|h| h.as_bytes() == hex);
        if holds(&self.host_hash) {
            Some(Seat::Host)
        } else if holds(&self.guest_hash) {
            Some(Seat::Guest)
        } else {
            None
        }
    }
}

/// What an actor may see of an event: a sealed move only by its sealer.
pub fn redact_for_actor(e: &Event, g: &Game, actor: Actor) -> Event {
    let viewer = actor.seat().and_then(|s| g.color_of(s));
    e.redacted_for(viewer)
}

/// The first answer to a request, rebuilt from the game's log: its command's events are
/// contiguous (for ids stored without their count, those that share the first one's
/// time), with the game as it was right after them.
pub(super) fn answer_from_log(game_id: &str, log: &[Event], done: &Answered, actor: Actor) -> Option<Applied> {
    let start = log.iter().position(|e| e.seq == done.first)?;
    let at = log[start].at;
    let events: Vec<&Event> = match done.events {
        Some(n) => log[start..].iter().take(n as usize).collect(),
        None => log[start..].iter().take_while(|e| e.at == at).collect(),
    };
    let last = events.last()?.seq;
    let g = Game::from_events(log.iter().take_while(|e| e.seq <= last)).ok()?;
    Some(Applied {
        events: events.iter().map(|e| redact_for_actor(e, &g, actor)).collect(),
        game: GameView::of(game_id, &g, at),
    })
}
