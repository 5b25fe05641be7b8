//! Adjournment (C3): the player to move seals a move and both clocks stop; at resumption
//! the sealed move is revealed and played.

use weiqi_rules::Move;

use super::Tx;
use crate::commit;
use crate::types::*;

impl Tx<'_> {
    /// Adjourns with a sealed move. The nonce hides the move until resumption.
    pub(super) fn seal(&mut self, by: Actor, mv: Move, nonce: &str) -> Result<(), Rejection> {
        let c = self.my_turn(by)?;
        if let Move::Place(p) = mv
            && !self.state().board().contains(p)
        {
            return Err(Rejection::InvalidArgument(format!("{p} is off the board")));
        }
        if nonce.len() < 8 {
            return Err(Rejection::InvalidArgument(
                "the nonce must have at least 8 characters".into(),
            ));
        }
        // Time spent before sealing is charged: if it runs out, that decides.
        if self.g.clock.clone().pause(self.now).is_err() {
            self.end(Some(c.opponent()), EndReason::Time);
            return Ok(());
        }
        let commitment = commit::seal_commitment(mv, nonce);
        self.emit(EventKind::MoveSealed {
            by: c,
            commitment,
            sealed: Some(SealedMove {
                mv,
                nonce: nonce.to_string(),
            }),
        });
        Ok(())
    }

    /// Resumes: the sealed move is revealed and played at once (an illegal one counts as a
    /// pass, in any mode).
    pub(super) fn resume(&mut self) -> Result<(), Rejection> {
        self.phase_is(&[Phase::Adjourned])?;
        let Some(sealed) = self.g.sealed.clone() else {
            return Err(Rejection::NothingPending("no sealed move".into()));
        };
        self.emit(EventKind::Resumed {
            revealed: sealed.mv.clone(),
        });
        match sealed.mv.mv {
            Move::Pass => {
                self.emit(EventKind::Passed {
                    color: sealed.by,
                    declared_end: false,
                    lag_ms: 0,
                });
                self.after_pass();
                Ok(())
            }
            Move::Place(point) => self.place(sealed.by, point, 0, true),
        }
    }
}
