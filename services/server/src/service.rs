//! The tonic `GameService`: the edge where requests become the hub's calls and its
//! answers become responses. Every player's command goes through one handler
//! ([`GameSvc::player`]); timing and metrics are a tower layer (`rpc_metrics`).

use std::pin::Pin;
use std::sync::Arc;

use futures::{Stream, StreamExt};
use tokio::sync::watch;
use tonic::{Request, Response, Status};
use weiqi_game::PlayerRef;
use weiqi_proto::v1 as pb;
use weiqi_proto::v1::game_service_server::GameService;
use weiqi_store::EventStore;

use crate::auth;
use crate::calls::PlayerCall;
use crate::convert;
use crate::estimates::Estimates;
use crate::hub::{Broadcast, Caller, Feed, Hub, HubError, Mutation};
use crate::limits::{Quotas, WatchPermit};
use crate::players::Players;
use crate::reviews::{Reviews, Step};
use crate::status;

pub struct GameSvc<S> {
    hub: Arc<Hub<S>>,
    /// The lag allowance of games that set none.
    default_lag_ms: u64,
    quotas: Arc<Quotas>,
    /// Who a CreateGame or JoinGame caller is (none: every seat is anonymous).
    players: Option<Arc<Players>>,
    estimates: Estimates,
    /// Reviews of finished games (none: ReviewGame and GetReview are UNIMPLEMENTED).
    reviews: Option<Arc<Reviews>>,
}

impl<S: EventStore> GameSvc<S> {
    pub fn new(hub: Arc<Hub<S>>, default_lag_ms: u64) -> GameSvc<S> {
        GameSvc {
            hub,
            default_lag_ms,
            quotas: Quotas::new(&crate::limits::Limits::default()),
            players: None,
            estimates: Estimates::new(0),
            reviews: None,
        }
    }

    /// Per-client quotas and the estimates' bound, as the server's limits say.
    pub fn with_limits(mut self, limits: &crate::limits::Limits) -> GameSvc<S> {
        self.quotas = Quotas::new(limits);
        self.estimates = Estimates::new(limits.concurrent_estimates);
        self
    }

    /// Reviews of finished games.
    pub fn with_reviews(mut self, reviews: Arc<Reviews>) -> GameSvc<S> {
        self.reviews = Some(reviews);
        self
    }

    fn reviews(&self) -> Result<&Arc<Reviews>, Status> {
        self.reviews
            .as_ref()
            .ok_or_else(|| Status::unimplemented("this server does not review games"))
    }

    /// Seats taken with a player's credential record the player (rated games need it).
    pub fn with_players(mut self, players: Arc<Players>) -> GameSvc<S> {
        self.players = Some(players);
        self
    }

    /// A WatchGame call's items, before encoding: the watch quota taken, then the game's
    /// events as the caller may see them.
    pub(crate) async fn watch_items(&self, request: Request<pb::WatchGameRequest>) -> Result<Watching<S>, Status> {
        let token = auth::bearer(request.metadata());
        let permit = self.quotas.watch(request.remote_addr().map(|a| a.ip()))?;
        let group = connection_group(request.remote_addr());
        let r = request.into_inner();
        let feed = self.hub.watch(&r.game_id, token.as_deref(), r.since_seq, group).await?;
        Ok(Watching { feed, _permit: permit })
    }

    /// The player a CreateGame or JoinGame caller signs in as: none without a credential
    /// (an anonymous seat); UNAUTHENTICATED for a credential that does not verify.
    async fn seat_player<R>(&self, request: &Request<R>) -> Result<Option<PlayerRef>, Status> {
        let token = auth::bearer(request.metadata());
        match (&self.players, token) {
            (Some(players), token) => {
                let me = players.caller(token.as_deref(), self.hub.time.now_ms()).await?;
                Ok(me.as_ref().map(crate::players::seat_player))
            }
            (None, Some(_)) => Err(status::error(
                tonic::Code::Unauthenticated,
                "players_not_configured",
                "this server has no player accounts",
                &[],
            )),
            (None, None) => Ok(None),
        }
    }

    /// Every player's command: the command and the mutation from the request, the seat
    /// from the bearer token (looked up by the hub under the game's lock), the result
    /// back on the wire.
    async fn player<R: PlayerCall>(&self, request: Request<R>) -> Result<Response<R::Reply>, Status> {
        let token = auth::bearer(request.metadata());
        let r = request.get_ref();
        let cmd = r.command()?;
        let m = r
            .mutation()
            .ok_or_else(|| status::invalid("mutation (game_id, request_id) is required"))?;
        convert::request_id(&m.request_id)?;
        let view = convert::state_view_from(m.view)?;
        let mutation = Mutation {
            request_id: m.request_id.clone(),
            expected_move_number: m.expected_move_number,
        };
        // Boxed: awaiting a future made in the same async fn lays it out twice in the
        // caller's future, and every call would copy both.
        let outcome = Box::pin(self.hub.run(&m.game_id, Caller::Token(token.as_deref()), cmd, mutation)).await?;
        Ok(Response::new(R::reply(convert::outcome_to(outcome, view))))
    }
}

type WatchStream = Pin<Box<dyn Stream<Item = Result<pb::WatchGameResponse, Status>> + Send>>;

/// A watcher's feed and its place in the client's watch quota, which counts until the
/// stream is dropped. Its items are the hub's: the edge turns an error into a status once,
/// at the stream's end, not on every item's way.
pub(crate) struct Watching<S: EventStore> {
    feed: Feed<S>,
    _permit: WatchPermit,
}

impl<S: EventStore> Stream for Watching<S> {
    type Item = Result<Broadcast, HubError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Option<Self::Item>> {
        self.feed.poll_next_unpin(cx)
    }
}
type ReviewStream = Pin<Box<dyn Stream<Item = Result<pb::ReviewGameResponse, Status>> + Send>>;

/// The service: the player's commands, one line each, then the other calls.
macro_rules! game_service {
    (players { $($method:ident($req:ident);)* } $($rest:tt)*) => {
        #[tonic::async_trait]
        impl<S: EventStore> GameService for GameSvc<S> {
            $(
                async fn $method(
                    &self,
                    request: Request<pb::$req>,
                ) -> Result<Response<<pb::$req as PlayerCall>::Reply>, Status> {
                    self.player(request).await
                }
            )*
            $($rest)*
        }
    };
}

game_service! {
    players {
    play(PlayRequest);
    pass(PassRequest);
    resign(ResignRequest);
    cancel_game(CancelGameRequest);
    declare_end(DeclareEndRequest);
    accept_score(AcceptScoreRequest);
    dispute_score(DisputeScoreRequest);
    request_undo(RequestUndoRequest);
    answer_undo(AnswerUndoRequest);
    offer_draw(OfferDrawRequest);
    answer_draw(AnswerDrawRequest);
    resume(ResumeRequest);
    reveal_nigiri(RevealNigiriRequest);
    propose_dead_stones(ProposeDeadStonesRequest);
    place_handicap(PlaceHandicapRequest);
    check_in(CheckInRequest);
    place_seat_stone(PlaceSeatStoneRequest);
    commit_bid(CommitBidRequest);
    reveal_bid(RevealBidRequest);
    claim_timeout(ClaimTimeoutRequest);
    claim_abandoned(ClaimAbandonedRequest);
    adjourn(AdjournRequest);
    seal_move(SealMoveRequest);
    }

    type WatchGameStream = WatchStream;

    async fn create_game(
        &self,
        request: Request<pb::CreateGameRequest>,
    ) -> Result<Response<pb::CreateGameResponse>, Status> {
        let client = request.remote_addr().map(|a| a.ip());
        let host = self.seat_player(&request).await?;
        let r = request.into_inner();
        convert::request_id(&r.request_id)?;
        let settings = convert::settings_from(r.settings.as_ref(), self.default_lag_ms)?;
        // (Whether nigiri needs a commitment, and its form, is the game's to check.)
        let commitment = (!r.nigiri_commitment.is_empty()).then_some(r.nigiri_commitment);
        // Counted once the request is known to be well formed (a retry counts again:
        // the quota is on calls, which is what costs).
        self.quotas.create(client)?;
        let created = self.hub.create(settings, commitment, host, &r.request_id).await?;
        Ok(Response::new(pb::CreateGameResponse {
            state: Some(convert::view_to(&created.game)),
            game_id: created.game_id,
            seat_token: created.seat_token,
        }))
    }

    async fn join_game(&self, request: Request<pb::JoinGameRequest>) -> Result<Response<pb::JoinGameResponse>, Status> {
        let player = self.seat_player(&request).await?;
        let r = request.into_inner();
        convert::request_id(&r.request_id)?;
        let guess = convert::parity_from(r.nigiri_guess)?;
        let (seat_token, game) = self.hub.join(&r.game_id, guess, player, &r.request_id).await?;
        Ok(Response::new(pb::JoinGameResponse {
            seat_token,
            state: Some(convert::view_to(&game)),
        }))
    }

    async fn estimate_score(
        &self,
        request: Request<pb::EstimateScoreRequest>,
    ) -> Result<Response<pb::EstimateScoreResponse>, Status> {
        self.quotas.estimate(request.remote_addr().map(|a| a.ip()))?;
        let (state, seq) = self.hub.position(&request.get_ref().game_id).await?;
        let estimate = self.estimates.estimate(state).await.map_err(status::estimate_error)?;
        Ok(Response::new(convert::estimate_to(estimate, seq)))
    }

    type ReviewGameStream = ReviewStream;

    async fn review_game(
        &self,
        request: Request<pb::ReviewGameRequest>,
    ) -> Result<Response<ReviewStream>, Status> {
        let reviews = self.reviews()?;
        self.quotas.review(request.remote_addr().map(|a| a.ip()))?;
        let game_id = request.into_inner().game_id;
        // A stored review is the only item; else the game must be over (a game in play
        // gets no engine's help), and its review is joined or started.
        let steps = match reviews.stored(&game_id).await.map_err(|e| status::review_error(&e))? {
            Some(done) => watch::channel(Step::Done(Arc::new(done))).1,
            None => {
                let end = self.hub.finished_position(&game_id).await?;
                reviews.review(&game_id, end).map_err(|e| status::review_error(&e))?
            }
        };
        // Every step until the last (the review, or why there is none), then the end.
        let items = tokio_stream::wrappers::WatchStream::new(steps)
            .scan(false, move |ended, step| {
                let item = match (*ended, &step) {
                    (true, _) => None,
                    (false, Step::Failed(e)) => Some(Err(status::review_error(e))),
                    (false, s) => Some(Ok(convert::review_step_to(&game_id, s))),
                };
                *ended |= matches!(step, Step::Done(_) | Step::Failed(_));
                futures::future::ready(item)
            });
        Ok(Response::new(Box::pin(items)))
    }

    async fn get_review(
        &self,
        request: Request<pb::GetReviewRequest>,
    ) -> Result<Response<pb::GetReviewResponse>, Status> {
        let game_id = &request.get_ref().game_id;
        if !crate::hub::valid_game_id(game_id) {
            return Err(status::invalid("game_id is 1 to 64 characters, none a control character"));
        }
        let review = self
            .reviews()?
            .stored(game_id)
            .await
            .map_err(|e| status::review_error(&e))?
            .ok_or_else(|| {
                status::error(
                    tonic::Code::NotFound,
                    "review_not_found",
                    "the game has no review; ReviewGame makes one",
                    &[("game_id", game_id)],
                )
            })?;
        Ok(Response::new(pb::GetReviewResponse {
            review: Some(convert::review_to(game_id, &review)),
        }))
    }

    async fn get_game(&self, request: Request<pb::GetGameRequest>) -> Result<Response<pb::GetGameResponse>, Status> {
        let game = self.hub.view(&request.get_ref().game_id).await?;
        Ok(Response::new(pb::GetGameResponse {
            state: Some(convert::view_to(&game)),
        }))
    }

    async fn list_games(
        &self,
        request: Request<pb::ListGamesRequest>,
    ) -> Result<Response<pb::ListGamesResponse>, Status> {
        let limit = match request.get_ref().limit {
            0 => 100,
            n => n.min(1000) as usize,
        };
        Ok(Response::new(convert::lobby_to(self.hub.lobby(limit).await?)))
    }

    /// (The server answers WatchGame from `shared_watch`, with the same items encoded once
    /// for all watchers; this is the generated route's, which gives the same bytes.)
    async fn watch_game(&self, request: Request<pb::WatchGameRequest>) -> Result<Response<WatchStream>, Status> {
        let items = self.watch_items(request).await?;
        Ok(Response::new(Box::pin(items.map(|item| {
            item.map(|b| convert::watched_to(&b)).map_err(status::hub_error)
        }))))
    }

    async fn export_sgf(
        &self,
        request: Request<pb::ExportSgfRequest>,
    ) -> Result<Response<pb::ExportSgfResponse>, Status> {
        let game_id = &request.get_ref().game_id;
        let sgf = self.hub.sgf(game_id).await?.ok_or_else(|| {
            status::error(
                tonic::Code::FailedPrecondition,
                "wrong_phase",
                "the game has no board yet",
                &[("game_id", game_id)],
            )
        })?;
        Ok(Response::new(pb::ExportSgfResponse { sgf }))
    }

    async fn ping(&self, request: Request<pb::PingRequest>) -> Result<Response<pb::PingResponse>, Status> {
        let r = request.get_ref();
        if r.durable {
            if r.payload.len() > 1024 {
                return Err(status::invalid("a durable ping carries at most 1024 bytes"));
            }
            self.hub.durable_ping(&r.payload).await?;
        }
        Ok(Response::new(pb::PingResponse {
            payload: request.into_inner().payload,
        }))
    }
}

/// A watcher's group in the game's audience: its connection (the client's address and
/// port), so that the watchers one connection carries are woken together and their frames
/// leave in one write.
fn connection_group(remote: Option<std::net::SocketAddr>) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    remote.hash(&mut h);
    h.finish()
}
