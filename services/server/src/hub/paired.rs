//! Games the server pairs (an accepted challenge, two matched seeks), and what the
//! players' module needs of the hub ([`GameHost`]).
//!
//! A paired game's id and both seat tokens derive from the pairing's id and the server
//! secret (shared by replicas), so any server can create it, more than once with one
//! effect, and hand each player their seat again (`GetSeat`) without storing a token.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use weiqi_game::{Actor, Command, Game, Phase, PlayerRef, Rejection, Seat, Settings};
use weiqi_players::Pairing;
use weiqi_store::EventStore;

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
    /// A game as it is now (loaded from the store when it is not in memory).
    fn game<'a>(self: Arc<Self>, game_id: &'a str) -> HubFuture<'a, Game>;
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

    fn game<'a>(self: Arc<Self>, game_id: &'a str) -> HubFuture<'a, Game> {
        Box::pin(async move { Ok(self.lock(game_id).await?.game.get().clone()) })
    }
}

impl<S: EventStore> Hub<S> {
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
