//! Scoring (C6): two passes (or a declared end) open it with the referee's proposal of dead
//! stones; both players must accept one proposal, and a dispute resumes play.

use weiqi_rules::{Point, State};

use super::Tx;
use crate::types::*;

/// The referee's proposal of dead stones after two passes: the project's one estimate
/// (`weiqi_rules::DeadEstimate::default()`, the same `weiqi gtp` answers with): stones
/// inside the opponent's pass-alive territory (Benson, certain), plus chains the opponent
/// owns in at least half of 1000 random continuations (never a pass-alive chain).
/// Deterministic. Players may change it; nothing is scored without both agreeing.
pub fn propose_dead(state: &State) -> Vec<Point> {
    weiqi_rules::DeadEstimate::default().estimate(state)
}

impl Tx<'_> {
    /// After a pass (or a move that counts as one): two in a row end play and open scoring.
    pub(super) fn after_pass(&mut self) {
        if self.state().is_over() {
            let proposal = propose_dead(self.state());
            self.emit(EventKind::ScoringStarted { proposal });
        }
    }

    /// Declares play complete: counts as a pass; the opponent may play on.
    pub(super) fn declare_end(&mut self, by: Actor) -> Result<(), Rejection> {
        let c = self.my_turn(by)?;
        if self.flags_on_press(c, 0) {
            return Ok(());
        }
        self.emit(EventKind::Passed {
            color: c,
            declared_end: true,
            lag_ms: 0,
        });
        self.after_pass();
        Ok(())
    }

    /// Proposes the dead stones (one stone marks its chain); both acceptances are cleared,
    /// the proposer's too: each player accepts the proposal on the table explicitly.
    pub(super) fn propose_dead(&mut self, by: Actor, stones: &[Point]) -> Result<(), Rejection> {
        self.phase_is(&[Phase::Scoring])?;
        let c = self.color(by)?;
        let board = self.state().board();
        if let Some(p) = stones.iter().find(|p| board.get(**p).is_none()) {
            return Err(Rejection::InvalidArgument(format!("{p} holds no stone")));
        }
        let mut stones = stones.to_vec();
        stones.sort_by_key(|p| (p.y, p.x));
        stones.dedup();
        self.emit(EventKind::DeadStonesProposed { by: c, stones });
        Ok(())
    }

    /// Accepts the proposal on the table; the second acceptance scores the game.
    pub(super) fn accept_score(&mut self, by: Actor) -> Result<(), Rejection> {
        self.phase_is(&[Phase::Scoring])?;
        let c = self.color(by)?;
        if self.g.accepted[c.index()] {
            return Err(Rejection::NotPermitted(
                "you have already accepted this proposal".into(),
            ));
        }
        self.emit(EventKind::ScoreAccepted { by: c });
        if self.g.accepted == [true, true] {
            let dead = self.g.proposal.clone().unwrap_or_default();
            let score = self.state().score(&dead).expect("proposal validated");
            let winner = score.outcome.winner();
            self.emit(EventKind::GameEnded {
                result: GameResult {
                    winner,
                    reason: EndReason::Score,
                    score: Some(score),
                },
            });
        }
        Ok(())
    }

    /// Disagrees about life and death: play resumes to settle it.
    pub(super) fn dispute_score(&mut self, by: Actor) -> Result<(), Rejection> {
        self.phase_is(&[Phase::Scoring])?;
        let c = self.color(by)?;
        self.emit(EventKind::ScoreDisputed { by: c });
        Ok(())
    }
}
