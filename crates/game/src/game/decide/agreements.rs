//! Agreements and withdrawals: taking back a move with consent (C8), a draw by agreement,
//! resignation, and cancelling an open game.

use weiqi_rules::Color;

use super::Tx;
use crate::types::*;

impl Tx<'_> {
    /// Withdraws an open game before anyone joins: no result.
    pub(super) fn cancel(&mut self, by: Actor) -> Result<(), Rejection> {
        self.phase_is(&[Phase::WaitingForOpponent])?;
        if !matches!(by, Actor::Host | Actor::Server) {
            return Err(Rejection::NotPermitted("only the host cancels an open game".into()));
        }
        self.end(None, EndReason::Cancelled);
        Ok(())
    }

    pub(super) fn resign(&mut self, by: Actor) -> Result<(), Rejection> {
        self.phase_is(&[
            Phase::Nigiri,
            Phase::Scheduled,
            Phase::PlacingHandicap,
            Phase::Playing,
            Phase::Adjourned,
            Phase::Scoring,
        ])?;
        let seat = self.seat(by)?;
        match self.g.color_of(seat) {
            Some(c) => self.end(Some(c.opponent()), EndReason::Resignation),
            None => {
                // Before colours are known (nigiri pending): the other seat takes Black.
                self.emit(EventKind::ColorsAssigned { black: seat.other() });
                self.end(Some(Color::Black), EndReason::Resignation);
            }
        }
        Ok(())
    }

    /// The server forfeits a seat whose player withdrew (C9): the other seat wins, in
    /// whatever phase the game is, taking Black when colours are not known yet.
    pub(super) fn forfeit(&mut self, by: Actor, seat: Seat) -> Result<(), Rejection> {
        if by != Actor::Server {
            return Err(Rejection::NotPermitted("only the server forfeits a seat".into()));
        }
        match self.g.color_of(seat) {
            Some(c) => self.end(Some(c.opponent()), EndReason::Forfeit),
            None => {
                self.emit(EventKind::ColorsAssigned { black: seat.other() });
                self.end(Some(Color::Black), EndReason::Forfeit);
            }
        }
        Ok(())
    }

    /// The player who stayed claims a game in play (or being scored) whose opponent left:
    /// a win, or a draw. (The service has checked that the opponent is gone.)
    pub(super) fn claim_abandoned(&mut self, by: Actor, draw: bool) -> Result<(), Rejection> {
        self.phase_is(&[Phase::Playing, Phase::Scoring])?;
        let c = self.color(by)?;
        self.end((!draw).then_some(c), EndReason::Abandoned);
        Ok(())
    }

    /// Asks to take back one's own last move (C8): casual games that allow it only.
    pub(super) fn request_undo(&mut self, by: Actor) -> Result<(), Rejection> {
        self.phase_is(&[Phase::Playing])?;
        let c = self.color(by)?;
        let s = self.settings();
        if s.mode == RefereeMode::Tournament {
            return Err(Rejection::UndoNotAllowed(
                "undo is not allowed in tournament mode (C8)".into(),
            ));
        }
        if !s.allow_undo {
            return Err(Rejection::UndoNotAllowed("undo is disabled for this game".into()));
        }
        if self.g.pending_undo.is_some() {
            return Err(Rejection::NotPermitted("an undo request is already pending".into()));
        }
        if !matches!(self.state().moves().last(), Some((mover, _)) if *mover == c) {
            return Err(Rejection::NotPermitted(
                "you can only take back your own last move".into(),
            ));
        }
        self.emit(EventKind::UndoRequested { by: c });
        Ok(())
    }

    pub(super) fn answer_undo(&mut self, by: Actor, accept: bool) -> Result<(), Rejection> {
        self.phase_is(&[Phase::Playing])?;
        let c = self.color(by)?;
        if self.g.pending_undo.is_none_or(|requester| requester == c) {
            return Err(Rejection::NothingPending("no undo request from your opponent".into()));
        }
        if !accept {
            self.emit(EventKind::UndoDeclined { by: c });
            return Ok(());
        }
        // A request names the requester's own last move, and any move since clears it.
        let Some(&(color, mv)) = self.state().moves().last() else {
            return Err(Rejection::NothingPending("no move to take back".into()));
        };
        self.emit(EventKind::MoveTakenBack { color, mv });
        Ok(())
    }

    pub(super) fn offer_draw(&mut self, by: Actor) -> Result<(), Rejection> {
        self.phase_is(&[Phase::Playing, Phase::Scoring])?;
        let c = self.color(by)?;
        if self.g.pending_draw.is_some() {
            return Err(Rejection::NotPermitted("a draw offer is already pending".into()));
        }
        self.emit(EventKind::DrawOffered { by: c });
        Ok(())
    }

    pub(super) fn answer_draw(&mut self, by: Actor, accept: bool) -> Result<(), Rejection> {
        self.phase_is(&[Phase::Playing, Phase::Scoring])?;
        let c = self.color(by)?;
        if self.g.pending_draw.is_none_or(|offerer| offerer == c) {
            return Err(Rejection::NothingPending("no draw offer from your opponent".into()));
        }
        if accept {
            self.end(None, EndReason::DrawByAgreement);
        } else {
            self.emit(EventKind::DrawDeclined { by: c });
        }
        Ok(())
    }
}
