//! Players: identity (platform JWTs and guest accounts), the `PlayerService` edge, and
//! which finished games update ratings. Accounts and ratings live in the store
//! ([`weiqi_store::PlayerStore`]); the rating arithmetic is `weiqi-rating`'s.

pub mod feed;
pub mod identity;
pub mod matches;
pub mod matching;
pub mod matchmaker;
pub mod ratings;

use std::sync::Arc;

use tonic::{Request, Response, Status};
use weiqi_game::PlayerRef;
use weiqi_proto::v1 as pb;
use weiqi_proto::v1::player_service_server::PlayerService;
use weiqi_rating::Rank;
use weiqi_store::{Accounts, PlayerRecord, RatingRow};

use crate::auth;
use crate::hub::{GameHost, TimeSource};
use crate::status;
pub use identity::{Identity, IdentityConfig, IdentityError};

/// The most a list call returns.
pub const MAX_LIST: u32 = 1000;
/// Sizes with ratings (R: the sizes the service's clients play rated).
pub const RATED_SIZES: [u32; 3] = [9, 13, 19];

/// Identity and the accounts' store, shared by the game and player services.
pub struct Players {
    pub identity: Identity,
    pub store: Arc<dyn Accounts>,
}

impl Players {
    /// The caller's player: none without a credential, UNAUTHENTICATED for a bad one.
    pub async fn caller(&self, token: Option<&str>, now_ms: u64) -> Result<Option<PlayerRecord>, Status> {
        if token.is_none_or(str::is_empty) {
            return Ok(None);
        }
        self.signed_in(token, now_ms).await.map(Some)
    }

    /// The player a call's bearer credential names; UNAUTHENTICATED without a valid one.
    pub async fn signed_in_call<T>(&self, request: &Request<T>, now_ms: u64) -> Result<PlayerRecord, Status> {
        self.signed_in(auth::bearer(request.metadata()).as_deref(), now_ms)
            .await
    }

    /// The caller's player; UNAUTHENTICATED without a valid credential.
    pub async fn signed_in(&self, token: Option<&str>, now_ms: u64) -> Result<PlayerRecord, Status> {
        match self.identity.resolve(self.store.as_ref(), token, now_ms).await {
            Ok(Ok(p)) => Ok(p),
            Ok(Err(e)) => Err(unauthenticated(&e)),
            Err(e) => Err(status::store(e)),
        }
    }
}

fn unauthenticated(e: &IdentityError) -> Status {
    status::error(tonic::Code::Unauthenticated, e.reason(), e.to_string(), &[])
}

/// A seat's player as the game records it.
pub fn seat_player(p: &PlayerRecord) -> PlayerRef {
    PlayerRef {
        id: p.id.clone(),
        name: p.name.clone(),
        bot: p.bot,
    }
}

fn rating_to(r: &RatingRow) -> pb::Rating {
    pb::Rating {
        board_size: r.board_size,
        rating: r.rating,
        deviation: r.deviation,
        volatility: r.volatility,
        rank: Rank::from_rating(r.rating).to_string(),
        games: r.games,
        last_ms: r.last_ms as i64,
    }
}

fn player_to(p: &PlayerRecord, ratings: &[RatingRow]) -> pb::Player {
    pb::Player {
        player_id: p.id.clone(),
        name: p.name.clone(),
        bot: p.bot,
        guest: p.guest,
        ratings: ratings.iter().map(rating_to).collect(),
    }
}

/// A list call's `limit`: 100 when 0, at most [`MAX_LIST`].
pub(crate) fn limit(l: u32) -> Result<usize, Status> {
    match l {
        0 => Ok(100),
        1..=MAX_LIST => Ok(l as usize),
        _ => Err(status::bad_request("limit", format!("limit is at most {MAX_LIST}"))),
    }
}

fn rated_size(size: u32) -> Result<u32, Status> {
    if RATED_SIZES.contains(&size) {
        Ok(size)
    } else {
        Err(status::bad_request(
            "board_size",
            "ratings are kept for sizes 9, 13 and 19",
        ))
    }
}

/// The tonic `PlayerService`.
pub struct PlayerSvc {
    pub players: Arc<Players>,
    /// The hub's clock (accounts' creation times).
    pub time: TimeSource,
    /// The hub, for the games the server pairs.
    pub host: Arc<dyn GameHost>,
    pub feed: Arc<feed::Feed>,
    /// Woken by a new seek.
    pub matchmaker_wake: Arc<tokio::sync::Notify>,
    /// Settings' lag allowance when a challenge names none.
    pub default_lag_ms: u64,
    /// Flips when the server stops (feeds end).
    pub stop: tokio::sync::watch::Receiver<bool>,
}

impl PlayerSvc {
    fn clone_parts(&self) -> matches::FeedParts {
        matches::FeedParts {
            host: self.host.clone(),
            store: self.players.store.clone(),
        }
    }
}

#[tonic::async_trait]
impl PlayerService for PlayerSvc {
    type WatchPlayerStream = matches::PlayerStream;

    async fn challenge(&self, r: Request<pb::ChallengeRequest>) -> Result<Response<pb::ChallengeResponse>, Status> {
        self.do_challenge(r).await.map(Response::new)
    }

    async fn answer_challenge(
        &self,
        r: Request<pb::AnswerChallengeRequest>,
    ) -> Result<Response<pb::AnswerChallengeResponse>, Status> {
        self.do_answer(r).await.map(Response::new)
    }

    async fn cancel_challenge(
        &self,
        r: Request<pb::CancelChallengeRequest>,
    ) -> Result<Response<pb::CancelChallengeResponse>, Status> {
        self.do_cancel(r).await.map(Response::new)
    }

    async fn list_challenges(
        &self,
        r: Request<pb::ListChallengesRequest>,
    ) -> Result<Response<pb::ListChallengesResponse>, Status> {
        self.do_list(r).await.map(Response::new)
    }

    async fn seek(&self, r: Request<pb::SeekRequest>) -> Result<Response<pb::SeekResponse>, Status> {
        self.do_seek(r).await.map(Response::new)
    }

    async fn cancel_seek(&self, r: Request<pb::CancelSeekRequest>) -> Result<Response<pb::CancelSeekResponse>, Status> {
        self.do_cancel_seek(r).await.map(Response::new)
    }

    async fn get_seat(&self, r: Request<pb::GetSeatRequest>) -> Result<Response<pb::GetSeatResponse>, Status> {
        self.do_get_seat(r).await.map(Response::new)
    }

    async fn watch_player(
        &self,
        r: Request<pb::WatchPlayerRequest>,
    ) -> Result<Response<Self::WatchPlayerStream>, Status> {
        self.do_watch(r).await.map(Response::new)
    }

    async fn register_guest(
        &self,
        request: Request<pb::RegisterGuestRequest>,
    ) -> Result<Response<pb::RegisterGuestResponse>, Status> {
        let asked = &request.get_ref().name;
        // Refused rather than cleaned: the player would not know what name they got.
        if asked.chars().any(char::is_control) {
            return Err(status::bad_request("name", "a name has no control characters"));
        }
        let name = identity::clean_name(asked);
        if name.is_empty() || asked.chars().count() > 32 {
            return Err(status::bad_request("name", "a name is 1..32 characters"));
        }
        let token = auth::random_hex(24);
        let player = PlayerRecord {
            id: format!("{}{}", identity::GUEST_PREFIX, auth::random_hex(8)),
            name,
            bot: false,
            guest: true,
            created_ms: self.time.now_ms(),
        };
        self.players
            .store
            .register_guest(player.clone(), auth::sha256_hex(token.as_bytes()))
            .await
            .map_err(status::store)?;
        Ok(Response::new(pb::RegisterGuestResponse {
            player: Some(player_to(&player, &[])),
            token,
        }))
    }

    async fn who_am_i(&self, request: Request<pb::WhoAmIRequest>) -> Result<Response<pb::WhoAmIResponse>, Status> {
        let me = self.players.signed_in_call(&request, self.time.now_ms()).await?;
        let found = self.players.store.player(me.id.clone()).await.map_err(status::store)?;
        let ratings = found.map(|(_, r)| r).unwrap_or_default();
        Ok(Response::new(pb::WhoAmIResponse {
            player: Some(player_to(&me, &ratings)),
        }))
    }

    async fn get_player(
        &self,
        request: Request<pb::GetPlayerRequest>,
    ) -> Result<Response<pb::GetPlayerResponse>, Status> {
        let id = request.into_inner().player_id;
        let Some((p, ratings)) = self.players.store.player(id.clone()).await.map_err(status::store)? else {
            return Err(status::error(
                tonic::Code::NotFound,
                "player_not_found",
                format!("no player {id:?}"),
                &[("player_id", &id)],
            ));
        };
        Ok(Response::new(pb::GetPlayerResponse {
            player: Some(player_to(&p, &ratings)),
        }))
    }

    async fn list_players(
        &self,
        request: Request<pb::ListPlayersRequest>,
    ) -> Result<Response<pb::ListPlayersResponse>, Status> {
        let r = request.into_inner();
        let size = rated_size(r.board_size)?;
        let rows = self
            .players
            .store
            .leaderboard(size, limit(r.limit)?)
            .await
            .map_err(status::store)?;
        Ok(Response::new(pb::ListPlayersResponse {
            players: rows
                .iter()
                .map(|(p, r)| player_to(p, std::slice::from_ref(r)))
                .collect(),
        }))
    }

    async fn get_rating_history(
        &self,
        request: Request<pb::GetRatingHistoryRequest>,
    ) -> Result<Response<pb::GetRatingHistoryResponse>, Status> {
        let r = request.into_inner();
        let size = rated_size(r.board_size)?;
        let rows = self
            .players
            .store
            .rating_history(r.player_id, size, limit(r.limit)?)
            .await
            .map_err(status::store)?;
        Ok(Response::new(pb::GetRatingHistoryResponse {
            changes: rows
                .into_iter()
                .map(|h| pb::RatingChange {
                    game_id: h.game_id,
                    time_ms: h.at_ms as i64,
                    opponent_id: h.opponent_id,
                    score: h.score,
                    rating_before: h.rating_before,
                    rating: h.rating,
                    deviation: h.deviation,
                    volatility: h.volatility,
                })
                .collect(),
        }))
    }
}
