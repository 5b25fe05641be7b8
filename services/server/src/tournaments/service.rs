//! The tonic `TournamentService`: requests to domain types, the tournaments' operations
//! (`operations.rs`, `mod.rs`), answers to protobuf.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};
use weiqi_game::Ms;
use weiqi_players::{PlayerRecord, list_limit};
use weiqi_proto::v1 as pb;
use weiqi_proto::v1::tournament_service_server::TournamentService;
use weiqi_tournament::{Tournament, TournamentPhase, export};

use super::Tournaments;
use super::convert::{phase_to, settings_from_pb, tournament_to};
use crate::auth;
use crate::players::Players;
use crate::status;

pub type TournamentStream = Pin<Box<dyn Stream<Item = Result<pb::WatchTournamentResponse, Status>> + Send>>;

/// A watcher re-reads the tournament at least this often (changes made through other
/// servers have no local wake-up).
const WATCH_POLL: Duration = Duration::from_millis(1000);

pub struct TournamentSvc {
    pub core: Arc<Tournaments>,
    pub players: Arc<Players>,
    pub default_lag_ms: Ms,
    pub stop: tokio::sync::watch::Receiver<bool>,
}

impl TournamentSvc {
    async fn me<T>(&self, request: &Request<T>) -> Result<PlayerRecord, Status> {
        auth::signed_in(&self.players, request, self.core.host.now_ms()).await
    }
}

fn reply(t: &Tournament) -> Option<pb::Tournament> {
    Some(tournament_to(t))
}

#[tonic::async_trait]
impl TournamentService for TournamentSvc {
    type WatchTournamentStream = TournamentStream;

    async fn create_tournament(
        &self,
        request: Request<pb::CreateTournamentRequest>,
    ) -> Result<Response<pb::CreateTournamentResponse>, Status> {
        let me = self.me(&request).await?;
        let settings = settings_from_pb(request.get_ref().settings.as_ref(), self.default_lag_ms)?;
        let t = self.core.create(&me, settings).await?;
        Ok(Response::new(pb::CreateTournamentResponse { tournament: reply(&t) }))
    }

    async fn register_for_tournament(
        &self,
        request: Request<pb::RegisterForTournamentRequest>,
    ) -> Result<Response<pb::RegisterForTournamentResponse>, Status> {
        let me = self.me(&request).await?;
        let t = self.core.register(&me, &request.get_ref().tournament_id).await?;
        Ok(Response::new(pb::RegisterForTournamentResponse {
            tournament: reply(&t),
        }))
    }

    async fn withdraw_from_tournament(
        &self,
        request: Request<pb::WithdrawFromTournamentRequest>,
    ) -> Result<Response<pb::WithdrawFromTournamentResponse>, Status> {
        let me = self.me(&request).await?;
        let t = self.core.withdraw(&me, &request.get_ref().tournament_id).await?;
        Ok(Response::new(pb::WithdrawFromTournamentResponse {
            tournament: reply(&t),
        }))
    }

    async fn start_tournament(
        &self,
        request: Request<pb::StartTournamentRequest>,
    ) -> Result<Response<pb::StartTournamentResponse>, Status> {
        let me = self.me(&request).await?;
        let r = request.get_ref();
        let seed = if r.seed != 0 {
            r.seed
        } else {
            u64::from_str_radix(&auth::random_hex(8), 16).unwrap_or(1)
        };
        let t = self.core.start(&me, &r.tournament_id, seed).await?;
        Ok(Response::new(pb::StartTournamentResponse { tournament: reply(&t) }))
    }

    async fn get_tournament(
        &self,
        request: Request<pb::GetTournamentRequest>,
    ) -> Result<Response<pb::GetTournamentResponse>, Status> {
        let t = self.core.load(&request.get_ref().tournament_id).await?;
        Ok(Response::new(pb::GetTournamentResponse { tournament: reply(&t) }))
    }

    async fn list_tournaments(
        &self,
        request: Request<pb::ListTournamentsRequest>,
    ) -> Result<Response<pb::ListTournamentsResponse>, Status> {
        let r = request.get_ref();
        let limit = list_limit(r.limit).map_err(|e| status::players_error(e.into()))?;
        let rows = self
            .core
            .store
            .tournaments(r.running_only, limit)
            .await
            .map_err(status::store)?;
        Ok(Response::new(pb::ListTournamentsResponse {
            tournaments: rows
                .into_iter()
                .map(|t| pb::TournamentSummary {
                    tournament_id: t.id,
                    name: t.name,
                    phase: phase_to(t.phase) as i32,
                    created_ms: t.created_ms as i64,
                })
                .collect(),
        }))
    }

    async fn watch_tournament(
        &self,
        request: Request<pb::WatchTournamentRequest>,
    ) -> Result<Response<Self::WatchTournamentStream>, Status> {
        let id = request.into_inner().tournament_id;
        let first = self.core.load(&id).await?;
        let (tx, rx) = tokio::sync::mpsc::channel(16);
        let core = self.core.clone();
        let mut stop = self.stop.clone();
        tokio::spawn(async move {
            let mut version = 0;
            let mut t = first;
            loop {
                if t.version != version {
                    version = t.version;
                    let msg = pb::WatchTournamentResponse { tournament: reply(&t) };
                    if tx.send(Ok(msg)).await.is_err() {
                        return;
                    }
                }
                if t.phase == TournamentPhase::Finished {
                    return;
                }
                tokio::select! {
                    _ = core.changed.notified() => {}
                    _ = tokio::time::sleep(WATCH_POLL) => {}
                    _ = tx.closed() => return,
                    _ = stop.changed() => return,
                }
                t = match core.load(&id).await {
                    Ok(t) => t,
                    Err(e) => {
                        let _ = tx.send(Err(e.into())).await;
                        return;
                    }
                };
            }
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }

    async fn export_tournament(
        &self,
        request: Request<pb::ExportTournamentRequest>,
    ) -> Result<Response<pb::ExportTournamentResponse>, Status> {
        let t = self.core.load(&request.get_ref().tournament_id).await?;
        let json = serde_json::to_string_pretty(&export::cross_table(&t))
            .map_err(|e| status::error(tonic::Code::Internal, "export_failed", e.to_string(), &[]))?;
        let games = self
            .core
            .records(&t)
            .await
            .into_iter()
            .map(|(game_id, sgf)| pb::GameRecord { game_id, sgf })
            .collect();
        Ok(Response::new(pb::ExportTournamentResponse {
            cross_table_json: json,
            cross_table_csv: export::cross_table_csv(&t),
            games,
        }))
    }
}
