//! The edge of challenges, automatch and players' feeds: requests checked and turned into
//! domain types, answers and events turned into protobuf.

use std::pin::Pin;
use std::sync::Arc;

use tokio::sync::broadcast::error::RecvError;
use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Code, Request, Status};
use weiqi_game::{ColorChoice, PlayerRef};
use weiqi_proto::v1 as pb;
use weiqi_store::{Challenge, ChallengeState, Pairing, PlayerEvent, PlayerEventKind, PlayerRecord, Seek};

use super::{PlayerSvc, RATED_SIZES, seat_player};
use crate::{auth, convert, status};

/// Open challenges per challenger.
pub const MAX_OPEN_CHALLENGES: usize = 20;
/// How long a challenge waits for its answer.
pub const CHALLENGE_TTL_MS: u64 = 10 * 60_000;
/// The longest main time a seek may ask for.
pub const MAX_SEEK_MAIN_S: u32 = 3 * 3600;
/// Events a resuming feed replays at most.
pub const MAX_REPLAY: usize = 1000;

pub type PlayerStream = Pin<Box<dyn Stream<Item = Result<pb::WatchPlayerResponse, Status>> + Send>>;

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

fn player_to(p: &PlayerRef) -> pb::SeatPlayer {
    pb::SeatPlayer {
        player_id: p.id.clone(),
        name: p.name.clone(),
        bot: p.bot,
    }
}

pub fn challenge_to(c: &Challenge) -> pb::ChallengeInfo {
    pb::ChallengeInfo {
        challenge_id: c.id.clone(),
        challenger: Some(player_to(&c.challenger)),
        challenged: Some(player_to(&c.challenged)),
        settings: Some(convert::settings_to(&c.settings)),
        status: status_of(c.state) as i32,
        decline_reason: reason_of(&c.reason) as i32,
        game_id: c.game_id.clone().unwrap_or_default(),
        created_ms: c.created_ms as i64,
        expires_ms: c.expires_ms as i64,
    }
}

fn challenge_closed(c: &Challenge) -> Status {
    status::error(
        Code::FailedPrecondition,
        "challenge_closed",
        format!("challenge {} is {}", c.id, c.state.name()),
        &[("challenge_id", &c.id), ("state", c.state.name())],
    )
}

fn not_found(reason: &str, what: &str, id: &str) -> Status {
    status::error(Code::NotFound, reason, format!("no {what} {id:?}"), &[("id", id)])
}

/// The pairing an accepted challenge makes: the challenger hosts; the guest seat is kept
/// for the challenged player; nigiri, which needs both players' secrets, is drawn by the
/// server instead.
fn pairing_of(c: &Challenge, game_id: String, now: u64) -> Pairing {
    let mut settings = c.settings.clone();
    settings.reserved_guest = Some(c.challenged.id.clone());
    if settings.colors == ColorChoice::Nigiri {
        settings.colors = ColorChoice::Random;
    }
    Pairing {
        id: format!("c:{}", c.id),
        game_id,
        host: c.challenger.clone(),
        guest: c.challenged.clone(),
        settings,
        created_ms: now,
    }
}

impl PlayerSvc {
    async fn me<T>(&self, request: &Request<T>) -> Result<PlayerRecord, Status> {
        self.players.signed_in_call(request, self.host.now_ms()).await
    }

    pub(super) async fn do_challenge(
        &self,
        request: Request<pb::ChallengeRequest>,
    ) -> Result<pb::ChallengeResponse, Status> {
        let me = self.me(&request).await?;
        let r = request.into_inner();
        if r.player_id == me.id {
            return Err(status::error(
                Code::InvalidArgument,
                "self_challenge",
                "a player cannot challenge themself",
                &[("player_id", &r.player_id)],
            ));
        }
        let settings = convert::settings_from(r.settings.as_ref(), self.default_lag_ms)?;
        self.host
            .check_settings(&settings, &seat_player(&me))
            .map_err(status::hub_error)?;
        let store = &self.players.store;
        let Some((them, _)) = store.player(r.player_id.clone()).await.map_err(status::store)? else {
            return Err(not_found("player_not_found", "player", &r.player_id));
        };
        let now = self.host.now_ms();
        if store.online_until(them.id.clone()).await.map_err(status::store)? < now {
            return Err(status::error(
                Code::FailedPrecondition,
                "opponent_offline",
                format!("{} is not online (no WatchPlayer stream open)", them.id),
                &[("player_id", &them.id)],
            ));
        }
        let c = Challenge {
            id: auth::random_hex(8),
            challenger: seat_player(&me),
            challenged: seat_player(&them),
            settings,
            state: ChallengeState::Open,
            reason: String::new(),
            game_id: None,
            created_ms: now,
            expires_ms: now + CHALLENGE_TTL_MS,
        };
        if !store
            .create_challenge(c.clone(), MAX_OPEN_CHALLENGES)
            .await
            .map_err(status::store)?
        {
            return Err(status::error(
                Code::ResourceExhausted,
                "too_many_challenges",
                format!("at most {MAX_OPEN_CHALLENGES} open challenges"),
                &[],
            ));
        }
        self.feed.wake.notify_one();
        Ok(pb::ChallengeResponse {
            challenge: Some(challenge_to(&c)),
        })
    }

    /// An open challenge `me` may act on (as its challenger, or as the challenged).
    async fn open_challenge(&self, id: &str, me: &PlayerRecord, challenger: bool) -> Result<Challenge, Status> {
        let store = &self.players.store;
        let Some(c) = store.challenge(id.to_string()).await.map_err(status::store)? else {
            return Err(not_found("challenge_not_found", "challenge", id));
        };
        let party = if challenger { &c.challenger } else { &c.challenged };
        if party.id != me.id {
            return Err(status::error(
                Code::PermissionDenied,
                if challenger { "not_challenger" } else { "not_challenged" },
                "this challenge is not yours to answer",
                &[("challenge_id", id)],
            ));
        }
        if c.state != ChallengeState::Open {
            return Err(challenge_closed(&c));
        }
        let now = self.host.now_ms();
        if now >= c.expires_ms {
            store
                .answer_challenge(c.id.clone(), ChallengeState::Expired, String::new(), None, now)
                .await
                .map_err(status::store)?;
            self.feed.wake.notify_one();
            return Err(status::error(
                Code::FailedPrecondition,
                "challenge_expired",
                format!("challenge {id} expired"),
                &[("challenge_id", id)],
            ));
        }
        Ok(c)
    }

    pub(super) async fn do_answer(
        &self,
        request: Request<pb::AnswerChallengeRequest>,
    ) -> Result<pb::AnswerChallengeResponse, Status> {
        let me = self.me(&request).await?;
        let r = request.into_inner();
        let c = self.open_challenge(&r.challenge_id, &me, false).await?;
        let now = self.host.now_ms();
        let store = &self.players.store;
        let (state, reason, pairing) = if r.accept {
            let game_id = self.host.paired_game_id(&format!("c:{}", c.id));
            (
                ChallengeState::Accepted,
                String::new(),
                Some(pairing_of(&c, game_id, now)),
            )
        } else {
            let reason = pb::DeclineReason::try_from(r.reason).unwrap_or(pb::DeclineReason::Generic);
            (ChallengeState::Declined, reason_name(reason).to_string(), None)
        };
        if !store
            .answer_challenge(c.id.clone(), state, reason, pairing.clone(), now)
            .await
            .map_err(status::store)?
        {
            // Cancelled (or answered) meanwhile.
            let now_c = store.challenge(c.id.clone()).await.map_err(status::store)?.unwrap_or(c);
            return Err(challenge_closed(&now_c));
        }
        self.feed.wake.notify_one();
        let answered = store.challenge(c.id.clone()).await.map_err(status::store)?;
        let mut out = pb::AnswerChallengeResponse {
            challenge: answered.as_ref().map(challenge_to),
            ..Default::default()
        };
        if let Some(p) = pairing {
            // The pairing is durable: were the game to fail here, the matchmaker's sweep
            // creates it, and GetSeat hands out the seat.
            self.host.clone().start_paired(&p).await.map_err(status::hub_error)?;
            let _ = store.pairing_started(p.id.clone()).await;
            out.seat_token = self.host.paired_seat(&p, &me.id).unwrap_or_default();
            out.game_id = p.game_id;
        }
        Ok(out)
    }

    pub(super) async fn do_cancel(
        &self,
        request: Request<pb::CancelChallengeRequest>,
    ) -> Result<pb::CancelChallengeResponse, Status> {
        let me = self.me(&request).await?;
        let id = request.into_inner().challenge_id;
        let c = self.open_challenge(&id, &me, true).await?;
        let store = &self.players.store;
        let now = self.host.now_ms();
        if !store
            .answer_challenge(c.id.clone(), ChallengeState::Cancelled, String::new(), None, now)
            .await
            .map_err(status::store)?
        {
            let now_c = store.challenge(c.id.clone()).await.map_err(status::store)?.unwrap_or(c);
            return Err(challenge_closed(&now_c));
        }
        self.feed.wake.notify_one();
        let c = store.challenge(id).await.map_err(status::store)?;
        Ok(pb::CancelChallengeResponse {
            challenge: c.as_ref().map(challenge_to),
        })
    }

    pub(super) async fn do_list(
        &self,
        request: Request<pb::ListChallengesRequest>,
    ) -> Result<pb::ListChallengesResponse, Status> {
        let me = self.me(&request).await?;
        let open = self.players.store.open_challenges(me.id).await.map_err(status::store)?;
        Ok(pb::ListChallengesResponse {
            challenges: open.iter().map(challenge_to).collect(),
        })
    }

    pub(super) async fn do_seek(&self, request: Request<pb::SeekRequest>) -> Result<pb::SeekResponse, Status> {
        let me = self.me(&request).await?;
        let r = request.into_inner();
        if r.board_sizes.is_empty() || r.board_sizes.iter().any(|s| !RATED_SIZES.contains(s)) {
            return Err(status::bad_request("board_sizes", "one or more of 9, 13 and 19"));
        }
        if r.main_time_min_s > r.main_time_max_s {
            return Err(status::error(
                Code::InvalidArgument,
                "empty_range",
                format!(
                    "main time {}..{} s is an empty range",
                    r.main_time_min_s, r.main_time_max_s
                ),
                &[("field", "main_time_min_s")],
            ));
        }
        if r.main_time_max_s > MAX_SEEK_MAIN_S {
            return Err(status::bad_request(
                "main_time_max_s",
                format!("at most {MAX_SEEK_MAIN_S} s"),
            ));
        }
        if r.rating_window > super::matching::MAX_WINDOW as u32 {
            return Err(status::bad_request("rating_window", "at most 1000"));
        }
        let store = &self.players.store;
        let ratings = store
            .player(me.id.clone())
            .await
            .map_err(status::store)?
            .map(|(_, r)| r)
            .unwrap_or_default();
        let rating = ratings
            .iter()
            .find(|x| x.board_size == r.board_sizes[0])
            .map_or(weiqi_rating::Rating::default().rating, |x| x.rating);
        let seek = Seek {
            id: auth::random_hex(8),
            player: seat_player(&me),
            rating,
            sizes: r.board_sizes,
            main_min_ms: u64::from(r.main_time_min_s) * 1000,
            main_max_ms: u64::from(r.main_time_max_s) * 1000,
            rated: r.rated,
            window: if r.rating_window == 0 {
                super::matching::DEFAULT_WINDOW
            } else {
                f64::from(r.rating_window)
            },
            handicap: r.handicap,
            created_ms: self.host.now_ms(),
        };
        if !store.add_seek(seek.clone()).await.map_err(status::store)? {
            return Err(status::error(
                Code::AlreadyExists,
                "duplicate_seek",
                "this player already has an open seek (CancelSeek it first)",
                &[],
            ));
        }
        self.matchmaker_wake.notify_one();
        Ok(pb::SeekResponse { seek_id: seek.id })
    }

    pub(super) async fn do_cancel_seek(
        &self,
        request: Request<pb::CancelSeekRequest>,
    ) -> Result<pb::CancelSeekResponse, Status> {
        let me = self.me(&request).await?;
        let id = request.into_inner().seek_id;
        if !self
            .players
            .store
            .cancel_seek(id.clone(), me.id)
            .await
            .map_err(status::store)?
        {
            return Err(not_found("seek_not_found", "open seek", &id));
        }
        Ok(pb::CancelSeekResponse {})
    }

    pub(super) async fn do_get_seat(
        &self,
        request: Request<pb::GetSeatRequest>,
    ) -> Result<pb::GetSeatResponse, Status> {
        let me = self.me(&request).await?;
        let game_id = request.into_inner().game_id;
        let pairing = self
            .players
            .store
            .pairing_of(game_id.clone())
            .await
            .map_err(status::store)?;
        let Some(p) = pairing else {
            return Err(not_found("seat_not_found", "paired game", &game_id));
        };
        // A paired game of others: refused as every call on a game that is not the
        // caller's is.
        let Some(token) = self.host.paired_seat(&p, &me.id) else {
            return Err(status::error(
                Code::PermissionDenied,
                "not_your_game",
                "you hold no seat in this game",
                &[("game_id", &game_id)],
            ));
        };
        // (Created here if its server stopped before it could.)
        let view = self.host.clone().start_paired(&p).await.map_err(status::hub_error)?;
        Ok(pb::GetSeatResponse {
            seat_token: token,
            state: Some(convert::view_to(&view)),
        })
    }

    pub(super) async fn do_watch(&self, request: Request<pb::WatchPlayerRequest>) -> Result<PlayerStream, Status> {
        let me = self.me(&request).await?;
        let after = request.into_inner().after_seq;
        let mut live = self.feed.subscribe(&me.id).await.map_err(status::store)?;
        let replay = if after > 0 {
            self.players
                .store
                .player_events_of(me.id.clone(), after, MAX_REPLAY)
                .await
                .map_err(status::store)?
        } else {
            Vec::new()
        };
        let (tx, rx) = tokio::sync::mpsc::channel(64);
        let svc = self.clone_parts();
        let mut stop = self.stop.clone();
        let now = self.host.now_ms();
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
                if tx.send(Ok(svc.event_to(&me.id, &e).await)).await.is_err() {
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
                        if tx.send(Ok(svc.event_to(&me.id, &e).await)).await.is_err() {
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

/// What a feed stream needs after its call returned.
pub(super) struct FeedParts {
    pub host: Arc<dyn crate::hub::GameHost>,
    pub store: Arc<dyn weiqi_store::Accounts>,
}

impl FeedParts {
    /// An event as its player sees it: a pairing's events carry the player's seat.
    async fn event_to(&self, me: &str, e: &PlayerEvent) -> pb::WatchPlayerResponse {
        use pb::watch_player_response::Event as E;
        let seat = |game_id: String| async move {
            match self.store.pairing_of(game_id).await {
                Ok(Some(p)) => self.host.paired_seat(&p, me).unwrap_or_default(),
                _ => String::new(),
            }
        };
        let event = match &e.kind {
            PlayerEventKind::ChallengeReceived { challenge } => E::ChallengeReceived(challenge_to(challenge)),
            PlayerEventKind::ChallengeAnswered { challenge } => E::ChallengeAnswered(challenge_to(challenge)),
            PlayerEventKind::Matched { seek_id, game_id } => E::Matched(pb::Matched {
                seek_id: seek_id.clone(),
                game_id: game_id.clone(),
                seat_token: seat(game_id.clone()).await,
            }),
            PlayerEventKind::GameStarted { game_id } => E::GameStarted(pb::GameStarted {
                game_id: game_id.clone(),
                seat_token: seat(game_id.clone()).await,
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
}
