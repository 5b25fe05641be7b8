//! Players: who the caller is (platform JWTs and guest accounts), challenges and
//! automatch, players' feeds, and ratings as games end. The rules are `weiqi-players`'s;
//! accounts and ratings live in the store ([`weiqi_store::Accounts`]).
//!
//! - `identity`: credentials to players;
//! - `matchmaking`: challenges, seeks and seats, run against the store and the hub;
//! - `matchmaker`: the loop that pairs seeks and finishes what a stopped server left;
//! - `life`: the hub's listener: ratings and feed events as games start and end;
//! - `feed`: players' feeds, live and resumed;
//! - `grpc`: the `PlayerService` edge (the only part that knows protobuf);
//! - `error`: what the operations fail with.

mod error;
pub mod feed;
pub mod grpc;
pub mod identity;
pub mod life;
pub mod matchmaker;
pub mod matchmaking;

use std::sync::Arc;

use weiqi_game::PlayerRef;
use weiqi_players::PlayerRecord;
use weiqi_store::Accounts;

pub use error::PlayersError;
pub use identity::{Identity, IdentityConfig, IdentityError};

/// Identity and the accounts' store, shared by the game and player services.
pub struct Players {
    pub identity: Identity,
    pub store: Arc<dyn Accounts>,
}

impl Players {
    /// The caller's player: none without a credential.
    pub async fn caller(&self, token: Option<&str>, now_ms: u64) -> Result<Option<PlayerRecord>, PlayersError> {
        if token.is_none_or(str::is_empty) {
            return Ok(None);
        }
        self.signed_in(token, now_ms).await.map(Some)
    }

    /// The caller's player; `Unauthenticated` without a valid credential.
    pub async fn signed_in(&self, token: Option<&str>, now_ms: u64) -> Result<PlayerRecord, PlayersError> {
        Ok(self.identity.resolve(self.store.as_ref(), token, now_ms).await??)
    }
}

/// A seat's player as the game records it.
pub fn seat_player(p: &PlayerRecord) -> PlayerRef {
    PlayerRef {
        id: p.id.clone(),
        name: p.name.clone(),
        bot: p.bot,
    }
}
