//! Challenges, seeks and seats, run against the store and the hub: `weiqi-players`'s rules
//! decide, this module reads what they need and writes what they decide. Domain types in
//! and out; the gRPC edge (`grpc.rs`) converts.

use std::sync::Arc;

use tokio::sync::Notify;
use weiqi_game::Settings;
use weiqi_players::automatch::{self, SeekAsk};
use weiqi_players::challenges::{self, MAX_OPEN_CHALLENGES};
use weiqi_players::{Challenge, ChallengeState, PlayerEvent, PlayerEventKind, PlayerRecord, Refusal};
use weiqi_store::Accounts;

use super::{PlayersError, seat_player};
use crate::auth;
use crate::hub::{GameHost, GameView};

/// Challenges and automatch, for one server.
pub struct Matchmaking {
    pub store: Arc<dyn Accounts>,
    /// The hub, for the games the server pairs.
    pub host: Arc<dyn GameHost>,
    /// Woken after writing to players' feeds (the feed reads them at once).
    pub feed_wake: Arc<Notify>,
    /// Woken by a new seek.
    pub matchmaker_wake: Arc<Notify>,
}

/// An answered challenge, and the seat of the game it started (the challenged player's).
pub struct Answered {
    pub challenge: Option<Challenge>,
    /// `(game_id, seat_token)` when accepted.
    pub seat: Option<(String, String)>,
}

impl Matchmaking {
    /// Challenges `them_id` to a game of `settings` hosted by `me`.
    pub async fn challenge(
        &self,
        me: &PlayerRecord,
        them_id: String,
        settings: Settings,
    ) -> Result<Challenge, PlayersError> {
        challenges::may_challenge(&me.id, &them_id)?;
        self.host.check_settings(&settings, &seat_player(me))?;
        let Some((them, _)) = self.store.player(them_id.clone()).await? else {
            return Err(Refusal::PlayerNotFound { player_id: them_id }.into());
        };
        let online_until = self.store.online_until(them.id.clone()).await?;
        let c = challenges::challenge(
            auth::random_hex(8),
            seat_player(me),
            seat_player(&them),
            settings,
            online_until,
            self.host.now_ms(),
        )?;
        if !self.store.create_challenge(c.clone(), MAX_OPEN_CHALLENGES).await? {
            return Err(Refusal::TooManyChallenges {
                max: MAX_OPEN_CHALLENGES,
            }
            .into());
        }
        self.feed_wake.notify_one();
        Ok(c)
    }

    /// An open challenge `me` may act on (as its challenger, or as the challenged); one
    /// found expired is marked so.
    async fn open_challenge(
        &self,
        id: &str,
        me: &PlayerRecord,
        as_challenger: bool,
    ) -> Result<Challenge, PlayersError> {
        let Some(c) = self.store.challenge(id.to_string()).await? else {
            return Err(Refusal::ChallengeNotFound { id: id.to_string() }.into());
        };
        let now = self.host.now_ms();
        let allowed = challenges::may_act(&c, &me.id, as_challenger, now);
        if let Err(Refusal::ChallengeExpired { .. }) = allowed {
            self.store
                .answer_challenge(c.id.clone(), ChallengeState::Expired, String::new(), None, now)
                .await?;
            self.feed_wake.notify_one();
        }
        allowed?;
        Ok(c)
    }

    /// Answers a challenge made to `me`: accepted (`decline` none) starts its game, whose
    /// seat is returned; declined with a reason (as the store keeps it: "board_size", ...).
    pub async fn answer(
        &self,
        me: &PlayerRecord,
        challenge_id: &str,
        decline: Option<&str>,
    ) -> Result<Answered, PlayersError> {
        let c = self.open_challenge(challenge_id, me, false).await?;
        let now = self.host.now_ms();
        let (state, reason, pairing) = match decline {
            None => {
                let game_id = self.host.paired_game_id(&challenges::pairing_id(&c));
                let p = challenges::pairing_of(&c, game_id, now);
                (ChallengeState::Accepted, String::new(), Some(p))
            }
            Some(reason) => (ChallengeState::Declined, reason.to_string(), None),
        };
        if !self
            .store
            .answer_challenge(c.id.clone(), state, reason, pairing.clone(), now)
            .await?
        {
            // Cancelled (or answered) meanwhile.
            return Err(self.closed(c).await);
        }
        self.feed_wake.notify_one();
        let challenge = self.store.challenge(c.id.clone()).await?;
        let mut seat = None;
        if let Some(p) = pairing {
            // The pairing is durable: were the game to fail here, the matchmaker's sweep
            // creates it, and GetSeat hands out the seat.
            self.host.clone().start_paired(&p).await?;
            let _ = self.store.pairing_started(p.id.clone()).await;
            let token = self.host.paired_seat(&p, &me.id).unwrap_or_default();
            seat = Some((p.game_id, token));
        }
        Ok(Answered { challenge, seat })
    }

    /// The refusal for a challenge closed under our feet, in the state it is in now.
    async fn closed(&self, c: Challenge) -> PlayersError {
        match self.store.challenge(c.id.clone()).await {
            Ok(now) => challenges::closed(&now.unwrap_or(c)).into(),
            Err(e) => e.into(),
        }
    }

    /// Cancels a challenge `me` made.
    pub async fn cancel(&self, me: &PlayerRecord, challenge_id: &str) -> Result<Option<Challenge>, PlayersError> {
        let c = self.open_challenge(challenge_id, me, true).await?;
        let now = self.host.now_ms();
        if !self
            .store
            .answer_challenge(c.id.clone(), ChallengeState::Cancelled, String::new(), None, now)
            .await?
        {
            return Err(self.closed(c).await);
        }
        self.feed_wake.notify_one();
        Ok(self.store.challenge(challenge_id.to_string()).await?)
    }

    /// The open challenges `me` made or received.
    pub async fn open_challenges(&self, me: &PlayerRecord) -> Result<Vec<Challenge>, PlayersError> {
        Ok(self.store.open_challenges(me.id.clone()).await?)
    }

    /// Opens a seek for `me`; returns its id.
    pub async fn seek(&self, me: &PlayerRecord, ask: SeekAsk) -> Result<String, PlayersError> {
        // A bad request is refused as such before anything is read (the database may be
        // down; the answer is still INVALID_ARGUMENT).
        automatch::validate(&ask)?;
        let ratings = self
            .store
            .player(me.id.clone())
            .await?
            .map(|(_, r)| r)
            .unwrap_or_default();
        let seek = automatch::seek(auth::random_hex(8), seat_player(me), &ratings, ask, self.host.now_ms())?;
        if !self.store.add_seek(seek.clone()).await? {
            return Err(Refusal::DuplicateSeek.into());
        }
        self.matchmaker_wake.notify_one();
        Ok(seek.id)
    }

    /// Cancels `me`'s open seek `id`.
    pub async fn cancel_seek(&self, me: &PlayerRecord, id: String) -> Result<(), PlayersError> {
        if !self.store.cancel_seek(id.clone(), me.id.clone()).await? {
            return Err(Refusal::SeekNotFound { id }.into());
        }
        Ok(())
    }

    /// `me`'s seat in a game the server paired, and the game (created here if its server
    /// stopped before it could).
    pub async fn seat(&self, me: &PlayerRecord, game_id: String) -> Result<(String, GameView), PlayersError> {
        let Some(p) = self.store.pairing_of(game_id.clone()).await? else {
            return Err(Refusal::SeatNotFound { game_id }.into());
        };
        // A paired game of others: refused as every call on a game that is not the
        // caller's is.
        let Some(token) = self.host.paired_seat(&p, &me.id) else {
            return Err(Refusal::NotYourGame { game_id }.into());
        };
        let view = self.host.clone().start_paired(&p).await?;
        Ok((token, view))
    }

    /// The seat token a feed event carries to `me` (a pairing's events carry the player's
    /// seat); empty for other events, or when it cannot be found.
    pub async fn event_seat(&self, me: &str, e: &PlayerEvent) -> String {
        let game_id = match &e.kind {
            PlayerEventKind::Matched { game_id, .. } | PlayerEventKind::GameStarted { game_id } => game_id.clone(),
            _ => return String::new(),
        };
        match self.store.pairing_of(game_id).await {
            Ok(Some(p)) => self.host.paired_seat(&p, me).unwrap_or_default(),
            _ => String::new(),
        }
    }
}
