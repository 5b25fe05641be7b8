//! What the rest of the server hears of a game's life, through one small trait: the hub
//! calls it and knows nothing of who listens (the players' module rates games and writes
//! players' feeds with it). Calls come under the game's lock, once the game's events are
//! durable and before the command is answered, so a player who reads their feed or rating
//! after the answer finds what it did.

use std::future::Future;
use std::pin::Pin;

use weiqi_game::{Game, Ms, Phase};
use weiqi_store::StoreError;

pub type ListenerFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A game's life as the hub sees it.
pub trait GameListener: Send + Sync + 'static {
    /// A game is about to be created (before its first append: a listener that must find
    /// it again after a crash records it here). An error refuses the creation.
    fn creating<'a>(
        &'a self,
        game_id: &'a str,
        game: &'a Game,
        now_ms: Ms,
    ) -> ListenerFuture<'a, Result<(), StoreError>>;

    /// A command moved a game on from `before` (its phase before the command): started
    /// when it left `WaitingForOpponent`, ended when it reached `Finished`. Failures are
    /// the listener's to log: the game itself is durable already.
    fn changed<'a>(&'a self, game_id: &'a str, game: &'a Game, before: Phase, now_ms: Ms) -> ListenerFuture<'a, ()>;
}
