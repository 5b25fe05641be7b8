//! The `PlayerService` edge: requests checked and turned into domain types, the players'
//! operations (`matchmaking`, `identity`, the accounts' store) called, and their answers,
//! events and errors turned into protobuf.

use std::pin::Pin;
use std::sync::Arc;

use tokio::sync::broadcast::error::RecvError;
use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Code, Request, Response, Status};
use weiqi_game::PlayerRef;
use weiqi_players::automatch::SeekAsk;
use weiqi_players::played;
use weiqi_players::{
    Challenge, ChallengeState, PlayerEvent, PlayerEventKind, PlayerRecord, RatingRow, Refusal, list_limit, rated_size,
};
use weiqi_proto::v1 as pb;
use weiqi_proto::v1::player_service_server::PlayerService;
use weiqi_rating::Rank;

use super::matchmaking::Matchmaking;
use super::{Players, PlayersError, feed, identity};
use crate::hub::TimeSource;
use crate::{auth, convert, status};

/// Events a resuming feed replays at most.
pub const MAX_REPLAY: usize = 1000;

pub type PlayerStream = Pin<Box<dyn Stream<Item = Result<pb::WatchPlayerResponse, Status>> + Send>>;

/// The tonic `PlayerService`.
pub struct PlayerSvc {
    pub players: Arc<Players>,
    pub matchmaking: Arc<Matchmaking>,
    /// The hub's clock (accounts' creation times).
    pub time: TimeSource,
    pub feed: Arc<feed::Feed>,
    /// Settings' lag allowance when a challenge names none.
    pub default_lag_ms: u64,
    /// Flips when the server stops (feeds end).
    pub stop: tokio::sync::watch::Receiver<bool>,
}

fn err(e: PlayersError) -> Status {
    status::players_error(e)
}

impl PlayerSvc {
    /// The caller's player; UNAUTHENTICATED without a valid credential.
    async fn me<T>(&self, request: &Request<T>) -> Result<PlayerRecord, Status> {
        auth::signed_in(&self.players, request, self.time.now_ms()).await
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
        provisional: weiqi_players::ratings::provisional(r.deviation),
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

/// Decline reasons as the store keeps them (their names, lower case).
const REASONS: [(pb::DeclineReason, &str); 12] = [
    (pb::DeclineReason::Generic, "generic"),
    (pb::DeclineReason::Later, "later"),
    (pb::DeclineReason::BoardSize, "board_size"),
    (pb::DeclineReason::Komi, "komi"),
    (pb::DeclineReason::Rules, "rules"),
    (pb::DeclineReason::TimeControl, "time_control"),
    (pb::DeclineReason::Handicap, "handicap"),
    (pb::DeclineReason::Rated, "rated"),
    (pb::DeclineReason::Casual, "casual"),
    (pb::DeclineReason::TooManyGames, "too_many_games"),
    (pb::DeclineReason::NoBots, "no_bots"),
    (pb::DeclineReason::Color, "color"),
];

fn reason_name(r: pb::DeclineReason) -> &'static str {
    REASONS.iter().find(|(k, _)| *k == r).map_or("generic", |(_, n)| n)
}

fn reason_of(name: &str) -> pb::DeclineReason {
    REASONS
        .iter()
        .find(|(_, n)| *n == name)
        .map_or(pb::DeclineReason::Unspecified, |(k, _)| *k)
}

fn status_of(s: ChallengeState) -> pb::ChallengeStatus {
    match s {
        ChallengeState::Open => pb::ChallengeStatus::Open,
        ChallengeState::Accepted => pb::ChallengeStatus::Accepted,
        ChallengeState::Declined => pb::ChallengeStatus::Declined,
        ChallengeState::Cancelled => pb::ChallengeStatus::Cancelled,
        ChallengeState::Expired => pb::ChallengeStatus::Expired,
    }
}

fn seat_player_to(p: &PlayerRef) -> pb::SeatPlayer {
    pb::SeatPlayer {
        player_id: p.id.clone(),
        name: p.name.clone(),
        bot: p.bot,
    }
}

pub fn challenge_to(c: &Challenge) -> pb::ChallengeInfo {
    pb::ChallengeInfo {
        challenge_id: c.id.clone(),
        challenger: Some(seat_player_to(&c.challenger)),
        challenged: Some(seat_player_to(&c.challenged)),
        settings: Some(convert::settings_to(&c.settings)),
        status: status_of(c.state) as i32,
        decline_reason: reason_of(&c.reason) as i32,
        game_id: c.game_id.clone().unwrap_or_default(),
        created_ms: c.created_ms as i64,
        expires_ms: c.expires_ms as i64,
    }
}

#[tonic::async_trait]
impl PlayerService for PlayerSvc {
    type WatchPlayerStream = PlayerStream;

    async fn challenge(&self, r: Request<pb::ChallengeRequest>) -> Result<Response<pb::ChallengeResponse>, Status> {
        let me = self.me(&r).await?;
        let r = r.into_inner();
        // (Before the settings: a request to oneself is refused whatever it asks.)
        weiqi_players::challenges::may_challenge(&me.id, &r.player_id).map_err(|e| err(e.into()))?;
        let settings = convert::settings_from(r.settings.as_ref(), self.default_lag_ms)?;
        let c = self
            .matchmaking
            .challenge(&me, r.player_id, settings)
            .await
            .map_err(err)?;
        Ok(Response::new(pb::ChallengeResponse {
            challenge: Some(challenge_to(&c)),
        }))
    }

    async fn answer_challenge(
        &self,
        r: Request<pb::AnswerChallengeRequest>,
    ) -> Result<Response<pb::AnswerChallengeResponse>, Status> {
        let me = self.me(&r).await?;
        let r = r.into_inner();
        let decline = (!r.accept)
            .then(|| reason_name(pb::DeclineReason::try_from(r.reason).unwrap_or(pb::DeclineReason::Generic)));
        let answered = self
            .matchmaking
            .answer(&me, &r.challenge_id, decline)
            .await
            .map_err(err)?;
        let (game_id, seat_token) = answered.seat.unwrap_or_default();
        Ok(Response::new(pb::AnswerChallengeResponse {
            challenge: answered.challenge.as_ref().map(challenge_to),
            game_id,
            seat_token,
        }))
    }

    async fn cancel_challenge(
        &self,
        r: Request<pb::CancelChallengeRequest>,
    ) -> Result<Response<pb::CancelChallengeResponse>, Status> {
        let me = self.me(&r).await?;
        let id = r.into_inner().challenge_id;
        let c = self.matchmaking.cancel(&me, &id).await.map_err(err)?;
        Ok(Response::new(pb::CancelChallengeResponse {
            challenge: c.as_ref().map(challenge_to),
        }))
    }

    async fn list_challenges(
        &self,
        r: Request<pb::ListChallengesRequest>,
    ) -> Result<Response<pb::ListChallengesResponse>, Status> {
        let me = self.me(&r).await?;
        let open = self.matchmaking.open_challenges(&me).await.map_err(err)?;
        Ok(Response::new(pb::ListChallengesResponse {
            challenges: open.iter().map(challenge_to).collect(),
        }))
    }

    async fn seek(&self, r: Request<pb::SeekRequest>) -> Result<Response<pb::SeekResponse>, Status> {
        let me = self.me(&r).await?;
        let r = r.into_inner();
        let ask = SeekAsk {
            sizes: r.board_sizes,
            main_min_s: r.main_time_min_s,
            main_max_s: r.main_time_max_s,
            rated: r.rated,
            rating_window: r.rating_window,
            handicap: r.handicap,
        };
        let seek_id = self.matchmaking.seek(&me, ask).await.map_err(err)?;
        Ok(Response::new(pb::SeekResponse { seek_id }))
    }

    async fn cancel_seek(&self, r: Request<pb::CancelSeekRequest>) -> Result<Response<pb::CancelSeekResponse>, Status> {
        let me = self.me(&r).await?;
        let id = r.into_inner().seek_id;
        self.matchmaking.cancel_seek(&me, id).await.map_err(err)?;
        Ok(Response::new(pb::CancelSeekResponse {}))
    }

    async fn get_seat(&self, r: Request<pb::GetSeatRequest>) -> Result<Response<pb::GetSeatResponse>, Status> {
        let me = self.me(&r).await?;
        let game_id = r.into_inner().game_id;
        let (seat_token, view) = self.matchmaking.seat(&me, game_id).await.map_err(err)?;
        Ok(Response::new(pb::GetSeatResponse {
            seat_token,
            state: Some(convert::view_to(&view)),
        }))
    }

    async fn watch_player(
        &self,
        r: Request<pb::WatchPlayerRequest>,
    ) -> Result<Response<Self::WatchPlayerStream>, Status> {
        self.watch(r).await.map(Response::new)
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
        let registered = self
            .players
            .store
            .register_guest(player.clone(), auth::sha256_hex(token.as_bytes()))
            .await
            .map_err(status::store)?;
        if !registered {
            return Err(err(Refusal::NameTaken { name: player.name }.into()));
        }
        Ok(Response::new(pb::RegisterGuestResponse {
            player: Some(player_to(&player, &[])),
            token,
        }))
    }

    async fn who_am_i(&self, request: Request<pb::WhoAmIRequest>) -> Result<Response<pb::WhoAmIResponse>, Status> {
        let me = self.me(&request).await?;
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
            return Err(err(weiqi_players::Refusal::PlayerNotFound { player_id: id }.into()));
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
        let size = rated_size(r.board_size).map_err(|e| err(e.into()))?;
        let rows = self
            .players
            .store
            .leaderboard(size, list_limit(r.limit).map_err(|e| err(e.into()))?)
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
        let size = rated_size(r.board_size).map_err(|e| err(e.into()))?;
        let rows = self
            .players
            .store
            .rating_history(r.player_id, size, list_limit(r.limit).map_err(|e| err(e.into()))?)
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

    async fn list_player_games(
        &self,
        request: Request<pb::ListPlayerGamesRequest>,
    ) -> Result<Response<pb::ListPlayerGamesResponse>, Status> {
        let r = request.into_inner();
        let size = played::page_size(r.page_size).map_err(|e| err(e.into()))?;
        let after = played::PageAfter::from_token(&r.page_token).map_err(|e| err(e.into()))?;
        // One more than the page: whether there is a next one.
        let mut rows = self
            .players
            .store
            .played_games(r.player_id, after, size + 1)
            .await
            .map_err(status::store)?;
        let more = rows.len() > size;
        rows.truncate(size);
        let next_page_token = match rows.last() {
            Some(last) if more => played::PageAfter {
                ended_ms: last.ended_ms,
                game_id: last.game_id.clone(),
            }
            .token(),
            _ => String::new(),
        };
        Ok(Response::new(pb::ListPlayerGamesResponse {
            games: rows
                .into_iter()
                .map(|g| pb::PlayerGame {
                    game_id: g.game_id,
                    board_size: g.board_size,
                    color: convert::color_to(Some(g.color)),
                    opponent: g.opponent.as_ref().map(convert::seat_player_to),
                    result: g.result,
                    score: g.score,
                    rated: g.rated,
                    ended_ms: g.ended_ms as i64,
                })
                .collect(),
            next_page_token,
        }))
    }
}

impl PlayerSvc {
    async fn watch(&self, request: Request<pb::WatchPlayerRequest>) -> Result<PlayerStream, Status> {
        let me = self.me(&request).await?;
        let after = request.into_inner().after_seq;
        let mut live = self.feed.subscribe(&me.id).await.map_err(status::store)?;
        let replay = if after > 0 {
            self.matchmaking
                .store
                .player_events_of(me.id.clone(), after, MAX_REPLAY)
                .await
                .map_err(status::store)?
        } else {
            Vec::new()
        };
        let (tx, rx) = tokio::sync::mpsc::channel(64);
        let matchmaking = self.matchmaking.clone();
        let mut stop = self.stop.clone();
        let now = self.time.now_ms();
        tokio::spawn(async move {
            let subscribed = pb::WatchPlayerResponse {
                seq: 0,
                time_ms: now as i64,
                event: Some(pb::watch_player_response::Event::Subscribed(pb::Subscribed {})),
            };
            if tx.send(Ok(subscribed)).await.is_err() {
                return;
            }
            let mut last = after;
            for e in replay {
                last = e.seq;
                if tx.send(Ok(event_to(&matchmaking, &me.id, &e).await)).await.is_err() {
                    return;
                }
            }
            loop {
                let e = tokio::select! {
                    e = live.recv() => e,
                    _ = tx.closed() => return,
                    _ = stop.changed() => return,
                };
                match e {
                    Ok(e) if e.seq > last => {
                        last = e.seq;
                        if tx.send(Ok(event_to(&matchmaking, &me.id, &e).await)).await.is_err() {
                            return;
                        }
                    }
                    Ok(_) => {}
                    Err(RecvError::Lagged(n)) => {
                        let msg = format!("{n} events missed; resume with after_seq = {last}");
                        let _ = tx
                            .send(Err(status::error(Code::DataLoss, "feed_lagged", msg, &[])))
                            .await;
                        return;
                    }
                    Err(RecvError::Closed) => return,
                }
            }
        });
        Ok(Box::pin(ReceiverStream::new(rx)))
    }
}

/// An event as its player sees it: a pairing's events carry the player's seat.
async fn event_to(m: &Matchmaking, me: &str, e: &PlayerEvent) -> pb::WatchPlayerResponse {
    use pb::watch_player_response::Event as E;
    let event = match &e.kind {
        PlayerEventKind::ChallengeReceived { challenge } => E::ChallengeReceived(challenge_to(challenge)),
        PlayerEventKind::ChallengeAnswered { challenge } => E::ChallengeAnswered(challenge_to(challenge)),
        PlayerEventKind::Matched { seek_id, game_id } => E::Matched(pb::Matched {
            seek_id: seek_id.clone(),
            game_id: game_id.clone(),
            seat_token: m.event_seat(me, e).await,
        }),
        PlayerEventKind::GameStarted { game_id } => E::GameStarted(pb::GameStarted {
            game_id: game_id.clone(),
            seat_token: m.event_seat(me, e).await,
        }),
        PlayerEventKind::GameEnded { game_id, result } => E::GameEnded(pb::GameEnded {
            game_id: game_id.clone(),
            result: result.clone(),
        }),
    };
    pb::WatchPlayerResponse {
        seq: e.seq,
        time_ms: e.at_ms as i64,
        event: Some(event),
    }
}
