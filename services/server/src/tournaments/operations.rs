//! What a caller asks of tournaments (create, register, withdraw, start, the games'
//! records), checked and stored; domain types in and out. The gRPC edge (`service.rs`)
//! converts.

use weiqi_game::Ms;
use weiqi_players::PlayerRecord;
use weiqi_tournament::{Entrant, Round, RoundGame, Stage, Tournament, TournamentPhase, TournamentSettings};

use super::{Tournaments, TournamentsError};
use crate::auth;
use crate::players::seat_player;

/// A player's rating for seeding when they have none on the board size.
const UNRATED: f64 = 1500.0;

impl Tournaments {
    /// A new tournament organised by `me`, open for registration.
    pub async fn create(
        &self,
        me: &PlayerRecord,
        settings: TournamentSettings,
    ) -> Result<Tournament, TournamentsError> {
        let id = format!("t{}", auth::random_hex(8));
        let now = self.host.now_ms();
        let created = Tournament::create(&id, settings, &me.id, now)?;
        let t = Tournament::fold([&created])?;
        // Its games' settings must be ones a game accepts (board size, clock, lateness):
        // refused now rather than when the first round is paired.
        let sample = RoundGame {
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
        self.host
            .check_settings(&t.game_settings(&round, &sample), &seat_player(me))?;
        if !self
            .store
            .append_tournament(id.clone(), 0, vec![created], TournamentPhase::Registration)
            .await?
        {
            return Err(TournamentsError::IdTaken { id });
        }
        Ok(t)
    }

    /// Registers `me`, seeded by their rating at the tournament's board size.
    pub async fn register(&self, me: &PlayerRecord, id: &str) -> Result<Tournament, TournamentsError> {
        let size = u32::from(self.load(id).await?.settings.game.size);
        let rating = self
            .store
            .player(me.id.clone())
            .await?
            .and_then(|(_, ratings)| ratings.into_iter().find(|r| r.board_size == size))
            .map_or(UNRATED, |r| r.rating);
        let entrant = Entrant {
            player_id: me.id.clone(),
            name: me.name.clone(),
            bot: me.bot,
            rating,
        };
        self.change(id, |t| t.register(entrant.clone())).await
    }

    /// Withdraws `me`: after the start, the games left to play are forfeited (C9).
    pub async fn withdraw(&self, me: &PlayerRecord, id: &str) -> Result<Tournament, TournamentsError> {
        let now = self.host.now_ms();
        let t = self.change(id, |t| t.withdraw(&me.id, now)).await?;
        if t.phase != TournamentPhase::Running {
            return Ok(t);
        }
        // The games left to play are forfeited now, and their results recorded, by the
        // director's step run here rather than at its next pass (which repeats it if this
        // is cut short).
        self.direct(id).await?;
        self.load(id).await
    }

    /// Starts a tournament (its organiser only) with the draw's `seed`, and pairs its
    /// first round at once, so the answer shows it.
    pub async fn start(&self, me: &PlayerRecord, id: &str, seed: u64) -> Result<Tournament, TournamentsError> {
        let now: Ms = self.host.now_ms();
        self.change(id, |t| t.start(&me.id, seed, now)).await?;
        let host = self.host.clone();
        self.change(id, |t| t.advance(now, &|p: &str| host.paired_game_id(p)))
            .await
    }

    /// The records of a tournament's games played or in play, as `(game_id, sgf)`; a game
    /// not created yet (its round just paired) has none yet.
    pub async fn records(&self, t: &Tournament) -> Vec<(String, String)> {
        let mut games = Vec::new();
        for b in t.rounds.iter().flat_map(|r| &r.boards).filter(|b| !b.is_walkover()) {
            if let Ok(Some(sgf)) = self.host.clone().game_sgf(&b.game_id).await {
                games.push((b.game_id.clone(), sgf));
            }
        }
        games
    }
}
