//! Games the server pairs (an accepted challenge, two matched seeks) and what the hub
//! tells players about their games: a started and an ended event on their feeds, and
//! ratings applied again after a crash.
//!
//! A paired game's id and both seat tokens derive from the pairing's id and the server
//! secret (shared by replicas), so any server can create it, more than once with one
//! effect, and hand each player their seat again (`GetSeat`) without storing a token.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use weiqi_game::{Actor, Command, Game, Phase, PlayerRef, Rejection, Seat, Settings};
use weiqi_store::{EventStore, Pairing, PlayerEventKind};

use super::error::{GameAt, HubError};
use super::view::GameView;
use super::{Hub, Mutation};
use crate::auth;

pub type HubFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, HubError>> + Send + 'a>>;

/// What the player service needs of the hub, whatever its store.
pub trait GameHost: Send + Sync + 'static {
    fn now_ms(&self) -> u64;
    /// The id the game of `pairing_id` gets.
    fn paired_game_id(&self, pairing_id: &str) -> String;
    /// A player's seat token in a paired game; none when they hold no seat in it.
    fn paired_seat(&self, p: &Pairing, player_id: &str) -> Option<String>;
    /// Creates a paired game and seats both players (again: nothing changes).
    fn start_paired<'a>(self: Arc<Self>, p: &'a Pairing) -> HubFuture<'a, GameView>;
    /// Ends a game with a forfeit by `seat` (its player withdrew, C9); nothing when the
    /// game has ended already.
    fn forfeit<'a>(self: Arc<Self>, game_id: &'a str, seat: Seat) -> HubFuture<'a, ()>;
    /// Refuses settings a game `host` creates would refuse, as creating it would.
    fn check_settings(&self, s: &Settings, host: &PlayerRef) -> Result<(), HubError>;
    fn game_view<'a>(self: Arc<Self>, game_id: &'a str) -> HubFuture<'a, GameView>;
    /// The game's record (none before it has a board).
    fn game_sgf<'a>(self: Arc<Self>, game_id: &'a str) -> HubFuture<'a, Option<String>>;
    /// See [`Hub::recover_ratings`].
    fn recover_ratings(self: Arc<Self>) -> Pin<Box<dyn Future<Output = usize> + Send>>;
}

fn request_id(pairing_id: &str) -> String {
    format!("pairing:{pairing_id}")
}

impl<S: EventStore> GameHost for Hub<S> {
    fn now_ms(&self) -> u64 {
        self.time.now_ms()
    }

    fn paired_game_id(&self, pairing_id: &str) -> String {
        self.game_id_for(&request_id(pairing_id))
    }

    fn paired_seat(&self, p: &Pairing, player_id: &str) -> Option<String> {
        let rid = request_id(&p.id);
        if p.host.id == player_id {
            Some(self.host_token_for(&p.game_id, &rid))
        } else if p.guest.id == player_id {
            Some(self.guest_token_for(&p.game_id, &rid))
        } else {
            None
        }
    }

    fn start_paired<'a>(self: Arc<Self>, p: &'a Pairing) -> HubFuture<'a, GameView> {
        Box::pin(async move {
            let rid = request_id(&p.id);
            let created = self
                .create(p.settings.clone(), None, Some(p.host.clone()), &rid)
                .await?;
            if created.game_id != p.game_id {
                return Err(HubError::corrupt(format!(
                    "pairing {} names game {}, its id derives to {}",
                    p.id, p.game_id, created.game_id
                )));
            }
            let (_, view) = self.join(&p.game_id, None, Some(p.guest.clone()), &rid).await?;
            Ok(view)
        })
    }

    fn forfeit<'a>(self: Arc<Self>, game_id: &'a str, seat: Seat) -> HubFuture<'a, ()> {
        Box::pin(async move {
            match self
                .run(game_id, Actor::Server, Command::Forfeit { seat }, Mutation::default())
                .await
            {
                Ok(_) => Ok(()),
                Err(HubError::Rejected {
                    rejection: Rejection::WrongPhase(Phase::Finished),
                    ..
                }) => Ok(()),
                Err(e) => Err(e),
            }
        })
    }

    fn check_settings(&self, s: &Settings, host: &PlayerRef) -> Result<(), HubError> {
        let cmd = Command::Create {
            host: Some(host.clone()),
            settings: s.clone(),
            nigiri_commitment: None,
        };
        let game = Game::new();
        game.decide(Actor::Host, &cmd, self.time.now_ms())
            .map(|_| ())
            .map_err(|rejection| HubError::Rejected {
                rejection,
                at: GameAt::of("", &game),
            })
    }

    fn game_view<'a>(self: Arc<Self>, game_id: &'a str) -> HubFuture<'a, GameView> {
        Box::pin(async move { self.view(game_id).await })
    }

    fn game_sgf<'a>(self: Arc<Self>, game_id: &'a str) -> HubFuture<'a, Option<String>> {
        Box::pin(async move { self.sgf(game_id).await })
    }

    fn recover_ratings(self: Arc<Self>) -> Pin<Box<dyn Future<Output = usize> + Send>> {
        Box::pin(async move { Hub::recover_ratings(&self).await })
    }
}

impl<S: EventStore> Hub<S> {
    /// Tells a game's players what just happened to it: started (both seats taken by
    /// players) or ended. Written before the command is answered; a failure is logged
    /// (the game itself is durable already).
    pub(super) async fn tell_players(&self, game_id: &str, game: &Game, phase_before: Phase) {
        // (Every command passes here: the phase test comes first, and costs nothing.)
        let started = phase_before == Phase::WaitingForOpponent && game.phase() != Phase::WaitingForOpponent;
        let ended = phase_before != Phase::Finished && game.phase() == Phase::Finished;
        if !started && !ended {
            return;
        }
        let Some(accounts) = &self.accounts else { return };
        let players: Vec<String> = [Seat::Host, Seat::Guest]
            .into_iter()
            .filter_map(|s| game.player(s).map(|p| p.id.clone()))
            .collect();
        let kind = if started {
            if players.len() < 2 {
                return;
            }
            PlayerEventKind::GameStarted {
                game_id: game_id.to_string(),
            }
        } else {
            if players.is_empty() {
                return;
            }
            PlayerEventKind::GameEnded {
                game_id: game_id.to_string(),
                result: game.result().map(|r| r.sgf()).unwrap_or_default(),
            }
        };
        let events = players.into_iter().map(|p| (p, kind.clone())).collect();
        match accounts.push_player_events(events, self.time.now_ms()).await {
            Ok(()) => self.player_events.notify_one(),
            Err(e) => tracing::warn!(game_id, error = %e, "player feed update failed"),
        }
    }

    /// Applies the ratings of rated games that ended without them (the server stopped
    /// between the game's last append and the rating update), and forgets rated games that
    /// will not count or were never created. Returns how many it rated.
    pub async fn recover_ratings(self: &Arc<Self>) -> usize {
        let Some(accounts) = &self.accounts else { return 0 };
        let pending = match accounts.pending_ratings(100).await {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(error = %e, "reading pending ratings failed");
                return 0;
            }
        };
        let now = self.time.now_ms();
        let mut rated = 0;
        for (game_id, at_ms) in pending {
            match self.lock(&game_id).await {
                Ok(mut entry) => {
                    let game = entry.game.get().clone();
                    drop(entry);
                    let ended = game.last_event_at().unwrap_or(now);
                    if game.phase() == Phase::Finished && self.rate(&game_id, &game, ended).await {
                        rated += 1;
                    }
                }
                // Registered, then the server stopped before the game's first append.
                Err(HubError::NotFound { .. }) if at_ms + 60_000 < now => {
                    let _ = accounts.drop_pending_rating(game_id).await;
                }
                Err(e) => tracing::warn!(game_id, error = %e, "pending rating: game unreadable"),
            }
        }
        if rated > 0 {
            tracing::info!(rated, "ratings recovered");
        }
        rated
    }

    /// Derived ids (see `create`): the game id a request id makes, and its seats' tokens.
    pub(super) fn game_id_for(&self, request_id: &str) -> String {
        auth::derive(&self.secret, &["game", request_id])[..16].to_string()
    }

    pub(super) fn host_token_for(&self, game_id: &str, request_id: &str) -> String {
        auth::derive(&self.secret, &["host", game_id, request_id])
    }

    pub(super) fn guest_token_for(&self, game_id: &str, request_id: &str) -> String {
        auth::derive(&self.secret, &["guest", game_id, request_id])
    }
}
