//! Tournaments (C9) on the service: the store's event log folded by `weiqi-tournament`,
//! the games its rounds need created through the hub (domain types and
//! [`TournamentsError`] here), and the `TournamentService` edge (`service.rs`, with
//! `convert.rs`), the only part that knows protobuf.
//!
//! Every change is decide, then append with the length the decision saw: of two servers
//! (or two calls) deciding at once, one append lands and the other decides again on the
//! new state. The director (`director.rs`) runs on every server and does what nobody asks
//! for: creating the round's games, recording their results, pairing the next round, so a
//! tournament goes on when any one server goes away.

pub mod convert;
pub mod director;
mod operations;
pub mod service;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use weiqi_game::weiqi_rules::Color;
use weiqi_game::{EndReason, GameResult, PlayerRef, Seat};
use weiqi_players::Pairing;
use weiqi_store::{Accounts, StoreError};
use weiqi_tournament::{BoardResult, Round, RoundGame, Tournament, TournamentError, TournamentEvent, TournamentPhase};

use crate::hub::{GameHost, HubError};

/// What a tournament operation fails with.
#[derive(Debug, thiserror::Error)]
pub enum TournamentsError {
    #[error("no tournament {id}")]
    NotFound { id: String },
    /// The tournament's rules refuse it.
    #[error(transparent)]
    Refused(#[from] TournamentError),
    #[error("the tournament kept changing under this call; retry")]
    Conflict { id: String },
    #[error("tournament id taken; retry")]
    IdTaken { id: String },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Hub(#[from] HubError),
}

/// How often a decision is tried again after losing an append race.
const MAX_RACES: usize = 8;

/// What the service and the director share.
pub struct Tournaments {
    pub store: Arc<dyn Accounts>,
    pub host: Arc<dyn GameHost>,
    /// Woken on every change this server makes (watchers also poll, for other servers').
    pub changed: Arc<tokio::sync::Notify>,
    /// Pairings whose game this server has created (so the director does it once).
    started: Mutex<HashSet<String>>,
}

impl Tournaments {
    pub fn new(store: Arc<dyn Accounts>, host: Arc<dyn GameHost>) -> Tournaments {
        Tournaments {
            store,
            host,
            changed: Arc::new(tokio::sync::Notify::new()),
            started: Mutex::new(HashSet::new()),
        }
    }

    /// The tournament as stored; `NotFound` when there is none.
    pub async fn load(&self, id: &str) -> Result<Tournament, TournamentsError> {
        let events = self.store.tournament_events(id.to_string()).await?;
        if events.is_empty() {
            return Err(TournamentsError::NotFound { id: id.to_string() });
        }
        Ok(Tournament::fold(&events)?)
    }

    /// Decides on the stored state and appends, again on a lost race; then creates the
    /// games the change paired. Returns the tournament after it.
    pub async fn change(
        &self,
        id: &str,
        decide: impl Fn(&Tournament) -> Result<Vec<TournamentEvent>, TournamentError>,
    ) -> Result<Tournament, TournamentsError> {
        for _ in 0..MAX_RACES {
            let mut t = self.load(id).await?;
            let events = decide(&t)?;
            if events.is_empty() {
                return Ok(t);
            }
            for e in &events {
                t.apply(e)?;
            }
            let expected = t.version - events.len() as u64;
            if self
                .store
                .append_tournament(id.to_string(), expected, events, t.phase)
                .await?
            {
                self.changed.notify_waiters();
                self.start_games(&t).await;
                return Ok(t);
            }
        }
        Err(TournamentsError::Conflict { id: id.to_string() })
    }

    /// Stores the pairing of every open board and creates its game (both again after a
    /// restart: each step is idempotent). A failure is logged and retried by the director.
    pub async fn start_games(&self, t: &Tournament) {
        for (round, board) in t.open_boards() {
            if self.started.lock().expect("poisoned").contains(&board.pairing_id) {
                continue;
            }
            let Some(p) = pairing(t, round, board, self.host.now_ms()) else {
                continue;
            };
            let started = async {
                self.store.add_pairing(p.clone()).await?;
                self.host.clone().start_paired(&p).await?;
                let _ = self.store.pairing_started(p.id.clone()).await;
                Ok::<_, TournamentsError>(())
            };
            match started.await {
                Ok(()) => {
                    self.started.lock().expect("poisoned").insert(board.pairing_id.clone());
                }
                Err(e) => {
                    tracing::warn!(tournament = %t.id, pairing = %p.id, error = %e, "creating a tournament game failed")
                }
            }
        }
    }

    /// Ends the unfinished games of players who withdrew (C9: a withdrawal after the start
    /// forfeits the games left to play, the one already created included). Run after a
    /// withdrawal and by every pass of the director, so a server that stopped between the
    /// withdrawal and the forfeit leaves nothing behind. A failure is logged and retried.
    pub async fn forfeit_withdrawn(&self, t: &Tournament) {
        for (_, board) in t.open_boards() {
            // Black hosts a tournament game, White is the guest.
            let gone = |p: &Option<String>| p.as_ref().is_some_and(|p| t.withdrawn.contains(p));
            let seat = if gone(&board.black) {
                Seat::Host
            } else if gone(&board.white) {
                Seat::Guest
            } else {
                continue;
            };
            if let Err(e) = self.host.clone().forfeit(&board.game_id, seat).await {
                tracing::warn!(tournament = %t.id, game_id = %board.game_id, error = %e, "forfeiting a withdrawn player's game failed");
            }
        }
    }

    /// One step of the director for one tournament: results of finished games recorded,
    /// then the next round (or the end) if this one is complete.
    pub async fn direct(&self, id: &str) -> Result<(), TournamentsError> {
        let t = self.load(id).await?;
        if t.phase != TournamentPhase::Running {
            return Ok(());
        }
        self.start_games(&t).await;
        self.forfeit_withdrawn(&t).await;
        for (_, board) in t.open_boards() {
            let view = match self.host.clone().game_view(&board.game_id).await {
                Ok(v) => v,
                // Not created yet (its creation failed above): the next pass.
                Err(_) => continue,
            };
            let Some(result) = view.result.as_ref() else {
                continue;
            };
            let outcome = outcome_of(result);
            let forfeit = matches!(result.reason, EndReason::Forfeit | EndReason::DoubleForfeit);
            let game_id = board.game_id.clone();
            let host = self.host.clone();
            let now = self.host.now_ms();
            let recorded = self
                .change(id, |t| {
                    let ids = |p: &str| host.paired_game_id(p);
                    match t.record(&game_id, outcome, forfeit, &ids, now) {
                        // Recorded meanwhile by another server.
                        Err(TournamentError::NotOurGame(_)) => Ok(Vec::new()),
                        r => r,
                    }
                })
                .await;
            recorded?;
        }
        let host = self.host.clone();
        let now = self.host.now_ms();
        self.change(id, |t| t.advance(now, &|p: &str| host.paired_game_id(p)))
            .await?;
        Ok(())
    }
}

/// The pairing of a board's game: Black hosts, White's seat is kept for them.
fn pairing(t: &Tournament, round: &Round, board: &RoundGame, now_ms: u64) -> Option<Pairing> {
    let player = |id: &Option<String>| {
        let id = id.as_ref()?;
        let e = t.entrant(id)?;
        Some(PlayerRef {
            id: e.player_id.clone(),
            name: e.name.clone(),
            bot: e.bot,
        })
    };
    Some(Pairing {
        id: board.pairing_id.clone(),
        game_id: board.game_id.clone(),
        host: player(&board.black)?,
        guest: player(&board.white)?,
        settings: t.game_settings(round, board),
        created_ms: now_ms,
    })
}

/// How a game's result counts in the tournament.
pub fn outcome_of(r: &GameResult) -> BoardResult {
    match (r.winner, r.reason) {
        (Some(Color::Black), _) => BoardResult::BlackWins,
        (Some(Color::White), _) => BoardResult::WhiteWins,
        (None, EndReason::DoubleForfeit) => BoardResult::BothLose,
        // (A draw claimed by the player who stayed counts as the ratings count it.)
        (None, EndReason::DrawByAgreement | EndReason::Score | EndReason::Abandoned) => BoardResult::Draw,
        // No result (C7), and a game cancelled (never, for a paired game): played again.
        (None, _) => BoardResult::NoResult,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_count_as_c9_and_c4_say() {
        let r = |winner, reason| GameResult {
            winner,
            reason,
            score: None,
        };
        assert_eq!(
            outcome_of(&r(Some(Color::White), EndReason::Forfeit)),
            BoardResult::WhiteWins
        );
        assert_eq!(
            outcome_of(&r(Some(Color::Black), EndReason::Penalty)),
            BoardResult::BlackWins
        );
        assert_eq!(outcome_of(&r(None, EndReason::DoubleForfeit)), BoardResult::BothLose);
        assert_eq!(outcome_of(&r(None, EndReason::Score)), BoardResult::Draw);
        assert_eq!(outcome_of(&r(None, EndReason::NoResult)), BoardResult::NoResult);
        assert_eq!(outcome_of(&r(None, EndReason::Abandoned)), BoardResult::Draw);
        assert_eq!(
            outcome_of(&r(Some(Color::Black), EndReason::Abandoned)),
            BoardResult::BlackWins
        );
    }
}
