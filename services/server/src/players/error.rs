//! What a players' operation fails with: a refusal by the rules, a caller without a valid
//! credential, or the store or the hub failing. The gRPC edge turns it into a status
//! (`crate::status::players_error`).

use weiqi_players::Refusal;
use weiqi_store::StoreError;

use super::IdentityError;
use crate::hub::HubError;

#[derive(Debug, thiserror::Error)]
pub enum PlayersError {
    #[error(transparent)]
    Refused(#[from] Refusal),
    #[error(transparent)]
    Unauthenticated(#[from] IdentityError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Hub(#[from] HubError),
}
