//! Play: free handicap placement, stones and passes, with the referee policy for illegal
//! moves (C5) and the clock pressed on every move (C2).

use weiqi_clock::{ClockError, Ms};
use weiqi_rules::{Color, Illegal, KoRule, Move, Point, State};

use super::Tx;
use crate::types::*;

impl Tx<'_> {
    /// Black's free handicap stones (R9 option), placed on Black's clock.
    pub(super) fn place_handicap(&mut self, by: Actor, points: &[Point]) -> Result<(), Rejection> {
        self.phase_is(&[Phase::PlacingHandicap])?;
        if self.color(by)? != Color::Black {
            return Err(Rejection::NotYourTurn);
        }
        // Placed within the lag allowance but after the clock's own time: lost on time, as
        // a move would be.
        if self.flags_on_press(Color::Black, 0) {
            return Ok(());
        }
        let s = self.settings();
        if points.len() != s.handicap as usize {
            return Err(Rejection::InvalidArgument(format!("{} stones expected", s.handicap)));
        }
        State::with_free_handicap(s.size, points, s.rules).map_err(|e| Rejection::InvalidArgument(e.to_string()))?;
        self.emit(EventKind::HandicapPlaced {
            points: points.to_vec(),
        });
        self.emit(EventKind::PlayStarted { first: Color::White });
        Ok(())
    }

    pub(super) fn play(&mut self, by: Actor, point: Point, lag_ms: Ms) -> Result<(), Rejection> {
        let c = self.my_turn(by)?;
        let lag_ms = self.settings().lag.refundable(lag_ms);
        if self.flags_on_press(c, lag_ms) {
            return Ok(());
        }
        self.place(c, point, lag_ms, false)
    }

    pub(super) fn pass(&mut self, by: Actor, lag_ms: Ms) -> Result<(), Rejection> {
        let c = self.my_turn(by)?;
        let lag_ms = self.settings().lag.refundable(lag_ms);
        if self.flags_on_press(c, lag_ms) {
            return Ok(());
        }
        self.emit(EventKind::Passed {
            color: c,
            declared_end: false,
            lag_ms,
        });
        self.after_pass();
        Ok(())
    }

    /// Would pressing the clock now flag the mover? Then the game ends on time instead.
    pub(super) fn flags_on_press(&mut self, c: Color, lag_ms: Ms) -> bool {
        let pressed = self.g.clock.clone().press(c, self.now, lag_ms);
        if let Err(ClockError::Flagged { color }) = pressed {
            self.end(Some(color.opponent()), EndReason::Time);
            return true;
        }
        false
    }

    /// Plays a placement, or handles an illegal one per the referee mode (C5) — a sealed
    /// move (C3) that is illegal always counts as a pass.
    pub(super) fn place(&mut self, c: Color, point: Point, lag_ms: Ms, sealed: bool) -> Result<(), Rejection> {
        let mv = Move::Place(point);
        // Checked without copying the position (the event's application plays it).
        let checked = if self.state().is_over() {
            Err(Illegal::GameOver)
        } else if self.state().to_move() != c {
            Err(Illegal::NotYourTurn)
        } else {
            self.state().check_captures(mv)
        };
        match checked {
            Ok(captures) => {
                self.emit(EventKind::MovePlayed {
                    color: c,
                    point,
                    captures,
                    lag_ms,
                });
                let s = self.state();
                if s.rules().ko == KoRule::Simple && self.g.repetitions.get(&s.key()).copied().unwrap_or(0) >= 3 {
                    // The same position for the third time: a cycle (triple ko...), C7.
                    self.end(None, EndReason::NoResult);
                }
                Ok(())
            }
            Err(Illegal::OffBoard) => Err(Rejection::InvalidArgument(format!("{point} is off the board"))),
            Err(reason) if sealed => {
                self.emit(EventKind::MoveVoided {
                    color: c,
                    mv,
                    reason,
                    lag_ms,
                });
                self.after_pass();
                Ok(())
            }
            Err(reason @ (Illegal::Suicide | Illegal::Ko | Illegal::Superko))
                if self.settings().mode == RefereeMode::Tournament =>
            {
                self.emit(EventKind::MoveVoided {
                    color: c,
                    mv,
                    reason,
                    lag_ms,
                });
                let count = self.g.warnings[c.index()] + 1;
                self.emit(EventKind::Warning { color: c, count });
                if count >= 2 {
                    self.end(Some(c.opponent()), EndReason::Penalty);
                } else {
                    self.after_pass();
                }
                Ok(())
            }
            Err(reason) => Err(Rejection::Illegal(reason)),
        }
    }
}
