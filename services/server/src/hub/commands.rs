//! The command pipeline: one path from a caller's command to the referee, the store and
//! the watchers. Idempotent by request id, refused when stale, durable before it is
//! acknowledged.

use std::collections::HashMap;
use std::sync::Arc;

use tracing::{Instrument, info};
use weiqi_game::{Actor, Command, Event, EventKind, Game, Ms, Parity, Phase, PlayerRef, Seat, Settings};
use weiqi_store::{Append, EventStore};

use super::entry::{Entry, Published, Slot, answer_from_log, redact_for_actor};
use super::error::{GameAt, HubError};
use super::lobby::summary;
use super::view::{Applied, GameView};
use super::{Hub, Mutation};
use crate::auth;
use crate::requests::{Answered, RequestKey};

/// Who sends a command: an actor the caller vouches for (the server's own commands), or
/// a bearer token whose seat is looked up in the game, under the lock the command runs
/// under.
#[derive(Clone, Copy, Debug)]
pub enum Caller<'a> {
    Actor(Actor),
    Token(Option<&'a str>),
}

impl From<Actor> for Caller<'_> {
    fn from(a: Actor) -> Self {
        Caller::Actor(a)
    }
}

/// A new game: its id, the host's seat token, and the game.
#[derive(Debug)]
pub struct Created {
    pub game_id: String,
    pub seat_token: String,
    pub game: GameView,
}

/// The append of `events` that took a game from `expected_seq` to `game`: what the store
/// keeps of the game beside them (its move number, its next wake-up), and nothing else
/// (tokens, request id and lobby row are the caller's to add).
fn append_of(game_id: &str, expected_seq: u64, events: &[Event], game: &Game, now: u64) -> Append {
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

impl<S: EventStore> Hub<S> {
    /// Creates a game. With a request id, the game id and token derive from it, so a retry
    /// returns the same game and token.
    pub async fn create(
        self: &Arc<Self>,
        settings: Settings,
        nigiri_commitment: Option<String>,
        host: Option<PlayerRef>,
        request_id: &str,
    ) -> Result<Created, HubError> {
        let (game_id, seat_token) = if request_id.is_empty() {
            (auth::random_hex(8), auth::random_hex(24))
        } else {
            let id = self.game_id_for(request_id);
            let token = self.host_token_for(&id, request_id);
            (id, token)
        };
        let host_hash = auth::sha256_hex(seat_token.as_bytes());
        if !request_id.is_empty()
            && let Ok(mut e) = self.lock(&game_id).await
            && e.host_hash.as_deref() == Some(host_hash.as_str())
        {
            let game = GameView::of(&game_id, e.game.get(), self.time.now_ms());
            drop(e);
            return Ok(Created {
                game_id,
                seat_token,
                game,
            });
        }
        let now = self.time.now_ms();
        let cmd = Command::Create {
            host,
            settings,
            nigiri_commitment,
        };
        let mut game = Game::new();
        let events = game
            .decide_in_place(Actor::Host, &cmd, now)
            .map_err(|rejection| HubError::Rejected {
                rejection,
                at: GameAt::of(&game_id, &game),
            })?;
        if let Some(listener) = &self.listener {
            listener.creating(&game_id, &game, now).await?;
        }
        self.store
            .append(Append {
                host_token_hash: Some(host_hash.clone()),
                summary: Some(summary(&game)),
                ..append_of(&game_id, 0, &events, &game, now)
            })
            .await?;
        let view = GameView::of(&game_id, &game, now);
        let mut entry = Entry::new(game, now);
        entry.host_hash = Some(host_hash);
        entry.taken_up(now);
        entry.game.park();
        let mut games = self.games.write().expect("lock");
        games.insert(game_id.clone(), Slot::new(entry));
        self.metrics.games_active.set(games.len() as i64);
        drop(games);
        self.metrics.games_created.inc();
        info!(game_id = %game_id, "game created");
        Ok(Created {
            game_id,
            seat_token,
            game: view,
        })
    }

    /// Takes the guest seat (with a guess, for nigiri). A retry with the same request id
    /// returns the same token. Returns the guest's seat token and the game.
    pub async fn join(
        self: &Arc<Self>,
        game_id: &str,
        nigiri_guess: Option<Parity>,
        player: Option<PlayerRef>,
        request_id: &str,
    ) -> Result<(String, GameView), HubError> {
        let mut entry = self.lock(game_id).await?;
        let token = if request_id.is_empty() {
            auth::random_hex(24)
        } else {
            self.guest_token_for(game_id, request_id)
        };
        let hash = auth::sha256_hex(token.as_bytes());
        if let Some(existing) = &entry.guest_hash {
            if *existing == hash {
                return Ok((token, GameView::of(game_id, entry.game.get(), self.time.now_ms())));
            }
            return Err(HubError::GameFull { at: entry.at(game_id) });
        }
        let entropy = u64::from_le_bytes(
            hex::decode(auth::random_hex(8))
                .unwrap_or_default()
                .try_into()
                .unwrap_or([0; 8]),
        );
        let cmd = Command::Join {
            player,
            nigiri_guess,
            entropy,
        };
        let done = self
            .apply_locked(game_id, &mut entry, Actor::Guest, &cmd, Some(hash), None)
            .await;
        if done.is_ok() {
            // The guest is here: it just joined.
            self.seen(game_id, &mut entry, Seat::Guest);
        }
        self.rest(&mut entry);
        Ok((token, done?.game))
    }

    /// Runs a command on a game: lock, run, and if that failed on a copy that was behind a
    /// shared store, catch up and run once more. (Its span, with the game id, is the hub's
    /// part of the call's trace.)
    #[tracing::instrument(target = "weiqi::trace", name = "hub.command", skip_all, fields(game_id = %game_id))]
    pub async fn run<'a>(
        self: &Arc<Self>,
        game_id: &str,
        caller: impl Into<Caller<'a>>,
        cmd: Command,
        m: Mutation,
    ) -> Result<Applied, HubError> {
        let caller = caller.into();
        let mut entry = self.lock_for_command(game_id).await?;
        let done = match self.run_locked(game_id, &mut entry, caller, &cmd, &m).await {
            Err(e) if !Box::pin(self.caught_up(game_id, &mut entry)).await? => Err(e),
            // (A token's seat is read again: the guest may have joined through another
            // server.)
            Err(_) => self.run_locked(game_id, &mut entry, caller, &cmd, &m).await,
            done => done,
        };
        self.rest(&mut entry);
        done
    }

    /// After a command: the game rests packed unless it is in quick play (its previous
    /// command less than `park_after_ms` before this one), so that games at a human pace
    /// hold a fraction of the memory and quick ones are not unpacked on every move. The
    /// periodic pass packs quick games once they pause ([`Hub::park_idle`]).
    fn rest(&self, entry: &mut Entry) {
        if entry.last_active.saturating_sub(entry.previous_active) >= self.park_after_ms {
            entry.game.park();
        }
    }

    /// Who the caller is, whether the request was seen before, whether it is stale; then
    /// the command.
    async fn run_locked(
        self: &Arc<Self>,
        game_id: &str,
        entry: &mut Entry,
        caller: Caller<'_>,
        cmd: &Command,
        m: &Mutation,
    ) -> Result<Applied, HubError> {
        let actor = match caller {
            Caller::Actor(a) => a,
            Caller::Token(token) => entry.actor_for(token, game_id)?,
        };
        if let Some(seat) = actor.seat() {
            self.seen(game_id, entry, seat);
        }
        let key = RequestKey::new(actor, &m.request_id, cmd);
        if let Some(key) = &key
            && entry.requests.may_contain(key)
            && let Some(answer) = Box::pin(self.answer_again(game_id, entry, key, actor, &m.request_id)).await?
        {
            return Ok(answer);
        }
        if let Some(expected) = m.expected_move_number
            && expected as usize != entry.game.get().move_number()
        {
            let now = GameView::of(game_id, entry.game.get(), self.time.now_ms());
            return Err(HubError::Stale {
                expected,
                now: Box::new(now),
            });
        }
        // A claim that the opponent left (after a retry's lookup: a retry of a claim that
        // ended the game gets its first answer). Outside play the referee says why not.
        if matches!(cmd, Command::ClaimAbandoned { .. })
            && let Some(seat) = actor.seat()
            && matches!(entry.game.get().phase(), Phase::Playing | Phase::Scoring)
            && let Err(from) = entry
                .presence
                .claimable(seat.other(), self.time.now_ms(), self.abandon_after_ms)
        {
            return Err(HubError::OpponentPresent {
                claimable_at_ms: from,
                at: entry.at(game_id),
            });
        }
        self.apply_locked(game_id, entry, actor, cmd, None, key).await
    }

    /// A request id this game may have answered before, looked up in the store (where the
    /// ids are): the first answer again, rebuilt from the log, or a refusal if the id came
    /// with another command; `None` when the id is new after all (a hash collision).
    async fn answer_again(
        &self,
        game_id: &str,
        entry: &mut Entry,
        key: &RequestKey,
        actor: Actor,
        request_id: &str,
    ) -> Result<Option<Applied>, HubError> {
        let stored = self.stored_game(game_id).await?;
        let answered: HashMap<String, Answered> = stored.responses.into_iter().map(RequestKey::parse).collect();
        let Some(done) = key.find(&answered) else {
            return Ok(None);
        };
        if done.fingerprint.as_ref().is_some_and(|f| *f != key.fingerprint) {
            return Err(HubError::RequestIdReused {
                request_id: request_id.to_string(),
                at: entry.at(game_id),
            });
        }
        Ok(answer_from_log(game_id, &stored.events, done, actor))
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
    ) -> Result<Applied, HubError> {
        let now = self.time.now_ms();
        let watched = entry.watchers.count() > 0;
        let game = entry.game.get();
        let (seq, phase) = (game.seq(), game.phase());
        // Watchers get the game after each event, folded on a copy of the game as it was.
        // (Boxed: a game is 1 KiB, and what an async fn holds across an await is copied
        // whenever its future moves.)
        let before = watched.then(|| Box::new(game.clone()));
        // Decided on the game itself (a move or pass is not copied). Until the store has the
        // events the game in memory is ahead of it: `stale` stays set if this call is
        // cancelled while they are on their way or the store fails, and the next use of the
        // game reloads it from the store.
        entry.stale = true;
        let decide = tracing::info_span!(target: weiqi_store::TRACE, "hub.decide");
        let events = match decide.in_scope(|| entry.game.get().decide_in_place(actor, cmd, now)) {
            Ok(events) => events,
            Err(rejection) => {
                // A refusal changes nothing (`decide_in_place` promises it); were that ever
                // broken, the game would be reloaded before its next use.
                entry.stale = entry.game.get().seq() != seq;
                return Err(HubError::Rejected {
                    rejection,
                    at: entry.at(game_id),
                });
            }
        };
        // (A command's answer carries no presence: a retry is answered from the log with the
        // same state as the first answer, and presence is not in the log.)
        let answer = |game: &Game, events: &[Event]| Applied {
            events: events.iter().map(|e| redact_for_actor(e, game, actor)).collect(),
            game: GameView::of(game_id, game, now),
        };
        if events.is_empty() {
            entry.stale = false;
            if matches!(cmd, Command::Tick) {
                // A tick that finds nothing due must not leave the game without a timer.
                self.rearm_after_empty_tick(game_id, entry, now);
            }
            return Ok(answer(entry.game.get(), &events));
        }
        let game = entry.game.get();
        self.store
            .append(Append {
                guest_token_hash: guest_hash.clone(),
                request_id: request.as_ref().map(|k| k.stored(events.len())),
                // The lobby row changes with the phase (and the guest's token).
                summary: (game.phase() != phase || guest_hash.is_some()).then(|| summary(game)),
                ..append_of(game_id, seq, &events, game, now)
            })
            .instrument(tracing::info_span!(target: weiqi_store::TRACE, "store.append", events = events.len()))
            .await?;
        // (A refused append, as when another server moved the game on, leaves the game
        // stale: the caller catches up, reloading it from the store.)
        // Durable: the game in memory is the stored one again.
        entry.settled();
        let game = entry.game.get();
        entry.listing.update(game);
        let moves = events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::MovePlayed { .. } | EventKind::Passed { .. }))
            .count();
        self.metrics.moves.inc_by(moves as u64);
        // The answer is built once the events are durable: the game does not change
        // meanwhile (its lock is held), and the future holds less across the append.
        let result = answer(game, &events);
        if phase != Phase::Playing && phase != Phase::Scoring && game.phase() == Phase::Playing {
            // Play starts (or resumes): the absence of a seat counts from here, not from
            // when the game waited in the lobby.
            entry.presence.both_seen(now);
        }
        let mut published = Vec::new();
        if let Some(mut g) = before {
            // (Only a watched game's items carry presence: nobody reads it otherwise.)
            let presence = self.presence_of(entry, now);
            for e in &events {
                g.apply(e).map_err(HubError::corrupt)?;
                let view = GameView {
                    presence: Some(presence),
                    ..GameView::of(game_id, &g, e.at)
                };
                published.push(Published::new(e.clone(), view));
            }
        }
        entry.previous_active = entry.last_active;
        entry.last_active = now;
        match &mut entry.log {
            Some(log) if watched => log.extend(events),
            // Nobody watches: the store has the log.
            _ => {
                entry.log = None;
                entry.spectators_log = None;
            }
        }
        if let Some(h) = guest_hash {
            entry.guest_hash = Some(h);
        }
        if let Some(key) = request {
            entry.requests.insert(key.map_key());
        }
        if phase != Phase::Finished && entry.game.get().phase() == Phase::Finished {
            // (Counted by the server whose append ended it: with a shared store the others
            // learn of it by catching up, and the sum over servers counts it once.)
            self.metrics.games_finished.inc();
            self.ended(game_id);
        }
        if entry.game.get().phase() != phase
            && let Some(listener) = &self.listener
        {
            listener.changed(game_id, entry.game.get(), phase, now).await;
        }
        for b in published {
            entry.watchers.publish(b);
        }
        self.schedule(game_id, entry);
        Ok(result)
    }

    /// A call from `seat`: it is here now. Its watchers hear if it had been away, and, if
    /// the game is watched, its absence is watched for (a seat kept present by calls alone
    /// goes quietly otherwise; a game nobody watches has nobody to tell, and its first
    /// watcher starts the watch, see `Hub::watch`).
    pub(super) fn seen(self: &Arc<Self>, game_id: &str, entry: &mut Entry, seat: Seat) {
        let now = self.time.now_ms();
        if entry.presence.called(seat, now) {
            self.publish_presence(game_id, entry, now);
        }
        if entry.watchers.count() > 0 {
            self.watch_for_lapse(game_id, &entry.presence, seat);
        }
    }

    /// Tells the game's watchers that a seat came or went.
    pub(super) fn publish_presence(&self, game_id: &str, entry: &mut Entry, now: Ms) {
        if entry.watchers.count() > 0 {
            let view = self.view_of(game_id, entry, now);
            entry.watchers.publish(Published::state(view));
        }
    }
}
