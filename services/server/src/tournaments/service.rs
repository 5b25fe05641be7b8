//! The tonic `TournamentService`.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};
use weiqi_game::Ms;
use weiqi_proto::v1 as pb;
use weiqi_proto::v1::tournament_service_server::TournamentService;
use weiqi_store::PlayerRecord;
use weiqi_tournament::{Board, Entrant, Round, Stage, Tournament, TournamentPhase, export};

use super::convert::{phase_to, settings_from_pb, tournament_to};
use super::{Tournaments, tournament_error};
use crate::auth;
use crate::players::{self, Players, seat_player};
use crate::status;

pub type TournamentStream = Pin<Box<dyn Stream<Item = Result<pb::WatchTournamentResponse, Status>> + Send>>;

/// A watcher re-reads the tournament at least this often (changes made through other
/// servers have no local wake-up).
const WATCH_POLL: Duration = Duration::from_millis(1000);
/// A player's rating for seeding when they have none on the board size.
const UNRATED: f64 = 1500.0;

pub struct TournamentSvc {
    pub core: Arc<Tournaments>,
    pub players: Arc<Players>,
    pub default_lag_ms: Ms,
    pub stop: tokio::sync::watch::Receiver<bool>,
}

impl TournamentSvc {
    async fn me<T>(&self, request: &Request<T>) -> Result<PlayerRecord, Status> {
        self.players.signed_in_call(request, self.core.host.now_ms()).await
    }

    fn now(&self) -> u64 {
        self.core.host.now_ms()
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
        let id = format!("t{}", auth::random_hex(8));
        let now = self.now();
        let created = Tournament::create(&id, settings, &me.id, now).map_err(|e| tournament_error(&e))?;
        let t = Tournament::fold([&created]).map_err(|e| tournament_error(&e))?;
        // Its games' settings must be ones a game accepts (board size, clock, lateness):
        // refused now rather than when the first round is paired.
        let sample = Board {
            pairing_id: String::new(),
            game_id: String::new(),
            group: Some(0),
            slot: 0,
            attempt: 0,
            starts_ms: now,
            black: Some(me.id.clone()),
            white: Some(format!("{}-opponent", me.id)),
            result: None,
            forfeit: false,
        };
        let round = Round {
            number: 1,
            stage: Stage::Groups,
            starts_ms: now,
            boards: Vec::new(),
        };
        self.core
            .host
            .check_settings(&t.game_settings(&round, &sample), &seat_player(&me))
            .map_err(status::hub_error)?;
        let stored = self
            .core
            .store
            .append_tournament(id.clone(), 0, vec![created], TournamentPhase::Registration)
            .await
            .map_err(status::store)?;
        if !stored {
            return Err(status::error(
                tonic::Code::Aborted,
                "conflict",
                "tournament id taken; retry",
                &[],
            ));
        }
        Ok(Response::new(pb::CreateTournamentResponse { tournament: reply(&t) }))
    }

    async fn register_for_tournament(
        &self,
        request: Request<pb::RegisterForTournamentRequest>,
    ) -> Result<Response<pb::RegisterForTournamentResponse>, Status> {
        let me = self.me(&request).await?;
        let id = &request.get_ref().tournament_id;
        let size = u32::from(self.core.load(id).await?.settings.game.size);
        let rating = self
            .core
            .store
            .player(me.id.clone())
            .await
            .map_err(status::store)?
            .and_then(|(_, ratings)| ratings.into_iter().find(|r| r.board_size == size))
            .map_or(UNRATED, |r| r.rating);
        let entrant = Entrant {
            player_id: me.id.clone(),
            name: me.name.clone(),
            bot: me.bot,
            rating,
        };
        let t = self.core.change(id, |t| t.register(entrant.clone())).await?;
        Ok(Response::new(pb::RegisterForTournamentResponse {
            tournament: reply(&t),
        }))
    }

    async fn withdraw_from_tournament(
        &self,
        request: Request<pb::WithdrawFromTournamentRequest>,
    ) -> Result<Response<pb::WithdrawFromTournamentResponse>, Status> {
        let me = self.me(&request).await?;
        let now = self.now();
        let id = &request.get_ref().tournament_id;
        let mut t = self.core.change(id, |t| t.withdraw(&me.id, now)).await?;
        if t.phase == TournamentPhase::Running {
            // The games left to play are forfeited now, and their results recorded, by the
            // director's step run here rather than at its next pass (which repeats it if
            // this is cut short).
            self.core.direct(id).await?;
            t = self.core.load(id).await?;
        }
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
        let now = self.now();
        self.core
            .change(&r.tournament_id, |t| t.start(&me.id, seed, now))
            .await?;
        // The first round at once, so the answer shows it.
        let host = self.core.host.clone();
        let t = self
            .core
            .change(&r.tournament_id, |t| t.advance(now, &|p: &str| host.paired_game_id(p)))
            .await?;
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
        let limit = players::limit(r.limit)?;
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
                        let _ = tx.send(Err(e)).await;
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
        let mut games = Vec::new();
        for b in t.rounds.iter().flat_map(|r| &r.boards).filter(|b| !b.is_walkover()) {
            // A game not created yet (its round just paired) has no record yet.
            if let Ok(Some(sgf)) = self.core.host.clone().game_sgf(&b.game_id).await {
                games.push(pb::GameRecord {
                    game_id: b.game_id.clone(),
                    sgf,
                });
            }
        }
        Ok(Response::new(pb::ExportTournamentResponse {
            cross_table_json: json,
            cross_table_csv: export::cross_table_csv(&t),
            games,
        }))
    }
}
