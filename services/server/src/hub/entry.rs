//! A game in memory: its entry (the game, its log, its seats, its request ids, its
//! watchers' channel, its timer), behind its own lock.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::{Mutex, broadcast};
use tokio::task::AbortHandle;
use weiqi_game::{Actor, Corrupt, Event, Game, Ms, Seat};

use super::error::{Denied, GameAt, HubError};
use super::lobby::Listing;
use super::view::{GameView, Outcome};
use crate::auth;
use crate::requests::{Answered, RequestKey};

/// What watchers receive: an event and the game right after it.
pub type Broadcast = Arc<(Event, GameView)>;

/// A game in memory: its entry behind its lock, and what is read without the lock beside
/// it.
#[derive(Clone)]
pub(super) struct Slot {
    pub entry: Arc<Mutex<Entry>>,
    pub listing: Arc<Listing>,
    /// The game's broadcast, to count its watchers without the game's lock.
    pub watchers: broadcast::Sender<Broadcast>,
}

impl Slot {
    pub fn new(entry: Entry) -> Slot {
        Slot {
            listing: entry.listing.clone(),
            watchers: entry.tx.clone(),
            entry: Arc::new(Mutex::new(entry)),
        }
    }
}

pub struct Entry {
    pub game: Game,
    pub log: Vec<Event>,
    pub(super) host_hash: Option<String>,
    pub(super) guest_hash: Option<String>,
    /// Every request id that changed the game, by seat ([`RequestKey`]), with its first
    /// event and the fingerprint of the command it carried. A retry's answer is rebuilt
    /// from the log (retries are rare; keeping encoded answers cost memory on every move).
    pub(super) requests: HashMap<String, Answered>,
    pub(super) tx: broadcast::Sender<Broadcast>,
    pub(super) timer: Option<AbortHandle>,
    /// Server time of the last command that changed the game (or of loading it).
    pub(super) last_active: Ms,
    /// The game in memory may be ahead of the store: a command changed it and its append
    /// did not finish (the call was cancelled while the events were on their way, or the
    /// store failed). The store is the truth: the hub reloads the game before its next use.
    pub(super) stale: bool,
    /// What the lobby shows; kept in step with `game` after every change.
    pub(super) listing: Arc<Listing>,
}

impl Entry {
    pub(super) fn new(game: Game, log: Vec<Event>) -> Entry {
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
    pub(super) fn from_stored(sg: weiqi_store::StoredGame) -> Result<Entry, Corrupt> {
        let game = Game::from_events(&sg.events)?;
        let mut entry = Entry::new(game, sg.events);
        entry.host_hash = sg.host_token_hash;
        entry.guest_hash = sg.guest_token_hash;
        entry.requests = sg.responses.into_iter().map(RequestKey::parse).collect();
        Ok(entry)
    }

    /// Back to the game as last acknowledged: the log in memory only grows after the
    /// store acknowledged, so it is a prefix of the stored one and its fold is that game.
    pub(super) fn rewind(&mut self) -> Result<(), Corrupt> {
        self.game = Game::from_events(&self.log)?;
        self.stale = false;
        Ok(())
    }

    /// Where the game stands, for an error's details.
    pub(super) fn at(&self, game_id: &str) -> GameAt {
        GameAt::of(game_id, &self.game)
    }

    /// The first answer to a request, rebuilt from the log: its command's events are
    /// contiguous (for ids stored without their count, those that share the first one's
    /// time), with the game as it was right after them.
    pub(super) fn answer_for(&self, game_id: &str, done: &Answered, actor: Actor) -> Option<Outcome> {
        let start = self.log.iter().position(|e| e.seq == done.first)?;
        let at = self.log[start].at;
        let events: Vec<&Event> = match done.events {
            Some(n) => self.log[start..].iter().take(n as usize).collect(),
            None => self.log[start..].iter().take_while(|e| e.at == at).collect(),
        };
        let last = events.last()?.seq;
        let g = Game::from_events(self.log.iter().take_while(|e| e.seq <= last)).ok()?;
        Some(Outcome {
            events: events.iter().map(|e| redact_for_actor(e, &g, actor)).collect(),
            game: GameView::of(game_id, &g, at),
        })
    }

    /// The actor a bearer token makes of its holder: the seat it holds in this game.
    pub(super) fn actor_for(&self, token: Option<&str>, game_id: &str) -> Result<Actor, HubError> {
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

/// What an actor may see of an event: a sealed move only by its sealer.
pub fn redact_for_actor(e: &Event, g: &Game, actor: Actor) -> Event {
    let viewer = actor.seat().and_then(|s| g.color_of(s));
    e.redacted_for(viewer)
}
