//! The tonic `GameService`: authentication, request validation, and delegation to the hub.

use std::pin::Pin;
use std::sync::Arc;

use futures::Stream;
use tokio::sync::{broadcast, mpsc};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};
use weiqi_game::{Actor, Command, Game};
use weiqi_proto::v1 as pb;
use weiqi_proto::v1::game_service_server::GameService;
use weiqi_rules::Move;
use weiqi_store::EventStore;

use crate::auth;
use crate::convert;
use crate::hub::{Hub, Mutation, redact_for_actor};
use crate::limits::Quotas;

pub struct GameSvc<S> {
    hub: Arc<Hub<S>>,
    /// The lag allowance of games that set none.
    default_lag_ms: u64,
    quotas: Arc<Quotas>,
}

impl<S: EventStore> GameSvc<S> {
    pub fn new(hub: Arc<Hub<S>>, default_lag_ms: u64) -> GameSvc<S> {
        GameSvc {
            hub,
            default_lag_ms,
            quotas: Quotas::new(&crate::limits::Limits::default()),
        }
    }

    /// With per-client quotas other than the defaults.
    pub fn with_quotas(mut self, quotas: Arc<Quotas>) -> GameSvc<S> {
        self.quotas = quotas;
        self
    }

    /// Runs a player's command from a request's `Mutation` (points were checked against
    /// the largest board; the referee checks them against the game's).
    async fn mutate<T>(
        &self,
        req: &Request<T>,
        m: Option<&pb::Mutation>,
        cmd: Command,
    ) -> Result<pb::CommandResult, Status> {
        let m = m.ok_or_else(|| convert::invalid("mutation (game_id, request_id) is required"))?;
        convert::request_id(&m.request_id)?;
        let token = auth::bearer(req.metadata());
        let mutation = Mutation {
            request_id: m.request_id.clone(),
            expected_move_number: m.expected_move_number,
        };
        // Boxed: awaiting a future made in the same async fn lays it out twice in the
        // caller's future (1.6 KiB here), and every call would copy both.
        Box::pin(self.hub.player_command(&m.game_id, token.as_deref(), cmd, mutation)).await
    }
}

fn sealed(s: Option<&pb::SealedMove>) -> Result<Move, Status> {
    match s.and_then(|s| s.r#move.as_ref()) {
        Some(pb::sealed_move::Move::Point(p)) => Ok(Move::Place(convert::point_from(Some(p))?)),
        Some(pb::sealed_move::Move::Pass(true)) => Ok(Move::Pass),
        _ => Err(convert::invalid("sealed_move needs a point or pass = true")),
    }
}

/// A list of points from the wire: each within the largest board, and no more than it
/// holds (a longer list is refused before any work is done on it; the referee checks the
/// points against the game's board).
fn points_from(points: &[pb::Point], field: &str) -> Result<Vec<weiqi_rules::Point>, Status> {
    let max = weiqi_rules::MAX_SIZE as usize;
    if points.len() > max * max {
        return Err(convert::bad_request(
            field,
            format!("at most {} points (a {max}x{max} board)", max * max),
        ));
    }
    points.iter().map(|p| convert::point_from(Some(p))).collect()
}

type WatchStream = Pin<Box<dyn Stream<Item = Result<pb::WatchGameResponse, Status>> + Send>>;

#[tonic::async_trait]
impl<S: EventStore> GameService for GameSvc<S> {
    type WatchGameStream = WatchStream;

    async fn create_game(
        &self,
        request: Request<pb::CreateGameRequest>,
    ) -> Result<Response<pb::CreateGameResponse>, Status> {
        let client = request.remote_addr().map(|a| a.ip());
        let r = request.into_inner();
        convert::request_id(&r.request_id)?;
        let settings = convert::settings_from(r.settings.as_ref(), self.default_lag_ms)?;
        // (Whether nigiri needs a commitment, and its form, is the game's to check.)
        let commitment = (!r.nigiri_commitment.is_empty()).then_some(r.nigiri_commitment);
        // Counted once the request is known to be well formed (a retry counts again:
        // the quota is on calls, which is what costs).
        self.quotas.create(client)?;
        let (game_id, seat_token, state) = self.hub.create(settings, commitment, &r.request_id).await?;
        Ok(Response::new(pb::CreateGameResponse {
            game_id,
            seat_token,
            state: Some(state),
        }))
    }

    async fn join_game(&self, request: Request<pb::JoinGameRequest>) -> Result<Response<pb::JoinGameResponse>, Status> {
        let r = request.into_inner();
        convert::request_id(&r.request_id)?;
        let guess = convert::parity_from(r.nigiri_guess)?;
        let (seat_token, state) = self.hub.join(&r.game_id, guess, &r.request_id).await?;
        Ok(Response::new(pb::JoinGameResponse {
            seat_token,
            state: Some(state),
        }))
    }

    async fn cancel_game(
        &self,
        request: Request<pb::CancelGameRequest>,
    ) -> Result<Response<pb::CancelGameResponse>, Status> {
        let r = request.get_ref();
        let result = self.mutate(&request, r.mutation.as_ref(), Command::Cancel).await?;
        Ok(Response::new(pb::CancelGameResponse { result: Some(result) }))
    }

    async fn get_game(&self, request: Request<pb::GetGameRequest>) -> Result<Response<pb::GetGameResponse>, Status> {
        let id = &request.get_ref().game_id;
        let e = self.hub.lock(id).await?;
        Ok(Response::new(pb::GetGameResponse {
            state: Some(convert::state_to(id, &e.game, self.hub.time.now_ms())),
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
        // Several servers sharing a store list every server's games; one server alone
        // lists those in its memory (every game in progress is there).
        let out = match self.hub.shared_lobby(limit).await? {
            Some(lobby) => pb::ListGamesResponse {
                open: lobby.open.into_iter().map(convert::lobby_row_to).collect(),
                playing: lobby.playing.into_iter().map(convert::lobby_row_to).collect(),
            },
            None => {
                let (open, playing) = self.hub.lobby(limit);
                pb::ListGamesResponse {
                    open: open.into_iter().map(convert::summary_to).collect(),
                    playing: playing.into_iter().map(convert::summary_to).collect(),
                }
            }
        };
        Ok(Response::new(out))
    }

    async fn play(&self, request: Request<pb::PlayRequest>) -> Result<Response<pb::PlayResponse>, Status> {
        let r = request.get_ref();
        let cmd = Command::Play {
            point: convert::point_from(r.point.as_ref())?,
            lag_ms: r.lag_ms,
        };
        let result = self.mutate(&request, r.mutation.as_ref(), cmd).await?;
        Ok(Response::new(pb::PlayResponse { result: Some(result) }))
    }

    async fn pass(&self, request: Request<pb::PassRequest>) -> Result<Response<pb::PassResponse>, Status> {
        let r = request.get_ref();
        let cmd = Command::Pass { lag_ms: r.lag_ms };
        let result = self.mutate(&request, r.mutation.as_ref(), cmd).await?;
        Ok(Response::new(pb::PassResponse { result: Some(result) }))
    }

    async fn resign(&self, request: Request<pb::ResignRequest>) -> Result<Response<pb::ResignResponse>, Status> {
        let r = request.get_ref();
        let result = self.mutate(&request, r.mutation.as_ref(), Command::Resign).await?;
        Ok(Response::new(pb::ResignResponse { result: Some(result) }))
    }

    async fn declare_end(
        &self,
        request: Request<pb::DeclareEndRequest>,
    ) -> Result<Response<pb::DeclareEndResponse>, Status> {
        let r = request.get_ref();
        let result = self.mutate(&request, r.mutation.as_ref(), Command::DeclareEnd).await?;
        Ok(Response::new(pb::DeclareEndResponse { result: Some(result) }))
    }

    async fn accept_score(
        &self,
        request: Request<pb::AcceptScoreRequest>,
    ) -> Result<Response<pb::AcceptScoreResponse>, Status> {
        let r = request.get_ref();
        let result = self.mutate(&request, r.mutation.as_ref(), Command::AcceptScore).await?;
        Ok(Response::new(pb::AcceptScoreResponse { result: Some(result) }))
    }

    async fn dispute_score(
        &self,
        request: Request<pb::DisputeScoreRequest>,
    ) -> Result<Response<pb::DisputeScoreResponse>, Status> {
        let r = request.get_ref();
        let result = self
            .mutate(&request, r.mutation.as_ref(), Command::DisputeScore)
            .await?;
        Ok(Response::new(pb::DisputeScoreResponse { result: Some(result) }))
    }

    async fn request_undo(
        &self,
        request: Request<pb::RequestUndoRequest>,
    ) -> Result<Response<pb::RequestUndoResponse>, Status> {
        let r = request.get_ref();
        let result = self.mutate(&request, r.mutation.as_ref(), Command::RequestUndo).await?;
        Ok(Response::new(pb::RequestUndoResponse { result: Some(result) }))
    }

    async fn offer_draw(
        &self,
        request: Request<pb::OfferDrawRequest>,
    ) -> Result<Response<pb::OfferDrawResponse>, Status> {
        let r = request.get_ref();
        let result = self.mutate(&request, r.mutation.as_ref(), Command::OfferDraw).await?;
        Ok(Response::new(pb::OfferDrawResponse { result: Some(result) }))
    }

    async fn resume(&self, request: Request<pb::ResumeRequest>) -> Result<Response<pb::ResumeResponse>, Status> {
        let r = request.get_ref();
        let result = self.mutate(&request, r.mutation.as_ref(), Command::Resume).await?;
        Ok(Response::new(pb::ResumeResponse { result: Some(result) }))
    }

    async fn reveal_nigiri(
        &self,
        request: Request<pb::RevealNigiriRequest>,
    ) -> Result<Response<pb::RevealNigiriResponse>, Status> {
        let r = request.get_ref();
        if r.nonce.len() > 256 {
            return Err(convert::invalid("the nigiri nonce is at most 256 characters"));
        }
        let cmd = Command::RevealNigiri {
            stones: r.stones,
            nonce: r.nonce.clone(),
        };
        let result = self.mutate(&request, r.mutation.as_ref(), cmd).await?;
        Ok(Response::new(pb::RevealNigiriResponse { result: Some(result) }))
    }

    async fn propose_dead_stones(
        &self,
        request: Request<pb::ProposeDeadStonesRequest>,
    ) -> Result<Response<pb::ProposeDeadStonesResponse>, Status> {
        let r = request.get_ref();
        let cmd = Command::ProposeDead {
            stones: points_from(&r.stones, "stones")?,
        };
        let result = self.mutate(&request, r.mutation.as_ref(), cmd).await?;
        Ok(Response::new(pb::ProposeDeadStonesResponse { result: Some(result) }))
    }

    async fn place_handicap(
        &self,
        request: Request<pb::PlaceHandicapRequest>,
    ) -> Result<Response<pb::PlaceHandicapResponse>, Status> {
        let r = request.get_ref();
        let cmd = Command::PlaceHandicap {
            points: points_from(&r.stones, "stones")?,
        };
        let result = self.mutate(&request, r.mutation.as_ref(), cmd).await?;
        Ok(Response::new(pb::PlaceHandicapResponse { result: Some(result) }))
    }

    async fn check_in(&self, request: Request<pb::CheckInRequest>) -> Result<Response<pb::CheckInResponse>, Status> {
        let r = request.get_ref();
        let result = self.mutate(&request, r.mutation.as_ref(), Command::CheckIn).await?;
        Ok(Response::new(pb::CheckInResponse { result: Some(result) }))
    }

    async fn claim_timeout(
        &self,
        request: Request<pb::ClaimTimeoutRequest>,
    ) -> Result<Response<pb::ClaimTimeoutResponse>, Status> {
        let r = request.get_ref();
        let result = self
            .mutate(&request, r.mutation.as_ref(), Command::ClaimTimeout)
            .await?;
        Ok(Response::new(pb::ClaimTimeoutResponse { result: Some(result) }))
    }

    async fn answer_undo(
        &self,
        request: Request<pb::AnswerUndoRequest>,
    ) -> Result<Response<pb::AnswerUndoResponse>, Status> {
        let r = request.get_ref();
        let cmd = Command::AnswerUndo { accept: r.accept };
        let result = self.mutate(&request, r.mutation.as_ref(), cmd).await?;
        Ok(Response::new(pb::AnswerUndoResponse { result: Some(result) }))
    }

    async fn answer_draw(
        &self,
        request: Request<pb::AnswerDrawRequest>,
    ) -> Result<Response<pb::AnswerDrawResponse>, Status> {
        let r = request.get_ref();
        let cmd = Command::AnswerDraw { accept: r.accept };
        let result = self.mutate(&request, r.mutation.as_ref(), cmd).await?;
        Ok(Response::new(pb::AnswerDrawResponse { result: Some(result) }))
    }

    async fn adjourn(&self, request: Request<pb::AdjournRequest>) -> Result<Response<pb::AdjournResponse>, Status> {
        let r = request.get_ref();
        let cmd = seal_command(r.sealed_move.as_ref())?;
        let result = self.mutate(&request, r.mutation.as_ref(), cmd).await?;
        Ok(Response::new(pb::AdjournResponse { result: Some(result) }))
    }

    async fn seal_move(&self, request: Request<pb::SealMoveRequest>) -> Result<Response<pb::SealMoveResponse>, Status> {
        let r = request.get_ref();
        let cmd = seal_command(r.sealed_move.as_ref())?;
        let result = self.mutate(&request, r.mutation.as_ref(), cmd).await?;
        Ok(Response::new(pb::SealMoveResponse { result: Some(result) }))
    }

    async fn watch_game(&self, request: Request<pb::WatchGameRequest>) -> Result<Response<WatchStream>, Status> {
        let token = auth::bearer(request.metadata());
        let permit = self.quotas.watch(request.remote_addr().map(|a| a.ip()))?;
        let r = request.into_inner();
        let (mut rx, backlog, viewer) = {
            let e = self.hub.lock(&r.game_id).await?;
            let rx = e.tx.subscribe();
            let viewer: Actor = e.seat_of_token(token.as_deref()).map_or(Actor::Server, Into::into);
            (rx, e.log.clone(), viewer)
        };
        let (out, out_rx) = mpsc::channel::<Result<pb::WatchGameResponse, Status>>(256);
        let hub = self.hub.clone();
        let game_id = r.game_id.clone();
        let since = r.since_seq;
        let mut shutdown = hub.shutdown_signal();
        hub.metrics.open_streams.inc();
        tokio::spawn(async move {
            let watcher = Watcher {
                hub: &hub,
                game_id: &game_id,
                viewer,
                out: &out,
            };
            watcher.run(since, backlog, &mut rx, &mut shutdown).await;
            hub.metrics.open_streams.dec();
            drop(permit);
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(out_rx))))
    }

    async fn export_sgf(
        &self,
        request: Request<pb::ExportSgfRequest>,
    ) -> Result<Response<pb::ExportSgfResponse>, Status> {
        let e = self.hub.lock(&request.get_ref().game_id).await?;
        let sgf = e.game.to_sgf().ok_or_else(|| {
            convert::error(
                tonic::Code::FailedPrecondition,
                "wrong_phase",
                "the game has no board yet",
                &[("game_id", &request.get_ref().game_id)],
            )
        })?;
        Ok(Response::new(pb::ExportSgfResponse { sgf }))
    }

    async fn ping(&self, request: Request<pb::PingRequest>) -> Result<Response<pb::PingResponse>, Status> {
        let r = request.get_ref();
        if r.durable {
            if r.payload.len() > 1024 {
                return Err(convert::invalid("a durable ping carries at most 1024 bytes"));
            }
            self.hub.durable_ping(&r.payload).await?;
        }
        Ok(Response::new(pb::PingResponse {
            payload: request.into_inner().payload,
        }))
    }
}

type WatchSender = mpsc::Sender<Result<pb::WatchGameResponse, Status>>;

/// Feeds one watcher until the client goes away (cancels, closes its connection, hits its
/// deadline: the stream's receiver is dropped), the game's channel closes, or the server
/// stops. Waiting on `out.closed()` beside the game's channel is what ends a stream on a
/// quiet game: a dead client is noticed at once, not at the game's next event.
struct Watcher<'a, S> {
    hub: &'a Arc<Hub<S>>,
    game_id: &'a str,
    viewer: Actor,
    out: &'a WatchSender,
}

impl<S: EventStore> Watcher<'_, S> {
    async fn run(
        &self,
        since: u64,
        backlog: Vec<weiqi_game::Event>,
        rx: &mut broadcast::Receiver<crate::hub::Broadcast>,
        shutdown: &mut tokio::sync::watch::Receiver<bool>,
    ) {
        let Watcher {
            hub,
            game_id,
            viewer,
            out,
        } = *self;
        // Replay what the client missed, with the state after each event.
        let Some(mut last) = replay(game_id, &backlog, since, viewer, out).await else {
            return;
        };
        drop(backlog);
        loop {
            let item = tokio::select! {
                _ = shutdown.changed() => return,
                _ = out.closed() => return,
                item = rx.recv() => item,
            };
            match item {
                Ok(b) => {
                    let (e, state) = &*b;
                    if e.seq <= last {
                        continue;
                    }
                    let shown = if matches!(e.kind, weiqi_game::EventKind::MoveSealed { .. }) {
                        // Only a sealed move needs the viewer's colour.
                        let Ok(entry) = hub.lock(game_id).await else { return };
                        redact_for_actor(e, &entry.game, viewer)
                    } else {
                        e.clone()
                    };
                    let msg = pb::WatchGameResponse {
                        event: Some(convert::event_to(&shown)),
                        state: Some(state.clone()),
                    };
                    if out.send(Ok(msg)).await.is_err() {
                        return;
                    }
                    last = e.seq;
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    // Fell behind the channel: catch up from the log, each event with the
                    // state folded up to it (not the game's state now).
                    let Ok(entry) = hub.lock(game_id).await else { return };
                    let log = entry.log.clone();
                    drop(entry);
                    match replay(game_id, &log, last, viewer, out).await {
                        Some(seq) => last = seq,
                        None => return,
                    }
                }
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    }
}

/// Sends a watcher the events of `log` after `since`, each redacted for `viewer` and with
/// the state folded up to it. Returns the last sequence number sent (`since` when none),
/// or `None` when the client went away.
async fn replay(game_id: &str, log: &[weiqi_game::Event], since: u64, viewer: Actor, out: &WatchSender) -> Option<u64> {
    let mut g = Game::new();
    let mut last = since;
    for e in log {
        if let Err(err) = g.apply(e) {
            // A log that does not fold: the watcher is told, not left with a gap.
            let status = convert::error(
                tonic::Code::Internal,
                "corrupt_game",
                err.to_string(),
                &[("game_id", game_id)],
            );
            let _ = out.send(Err(status)).await;
            return None;
        }
        if e.seq > since {
            let shown = redact_for_actor(e, &g, viewer);
            let msg = pb::WatchGameResponse {
                event: Some(convert::event_to(&shown)),
                state: Some(convert::state_to(game_id, &g, e.at)),
            };
            out.send(Ok(msg)).await.ok()?;
            last = e.seq;
        }
    }
    Some(last)
}

fn seal_command(sm: Option<&pb::SealedMove>) -> Result<Command, Status> {
    let mv = sealed(sm)?;
    // The nonce hides the move; the server picks it so it is unguessable.
    Ok(Command::Seal {
        mv,
        nonce: auth::random_hex(16),
    })
}
