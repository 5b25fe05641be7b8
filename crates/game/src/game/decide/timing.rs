//! Time: what passing time decides on its own (losses on time, byo-yomi calls, forfeits for
//! a withheld nigiri or a missed scheduled start), checking in at a scheduled start (C4),
//! and time credited for a service outage.

use weiqi_clock::Ms;
use weiqi_rules::Color;

use super::Tx;
use crate::game::seat_index;
use crate::types::*;

impl Tx<'_> {
    /// Time-driven events due at `now`: the flag, forfeits, byo-yomi calls (C2, C4).
    pub(super) fn settle_time(&mut self) {
        if self.g.phase() == Phase::Scheduled {
            // First: a start that is due puts the game in play, and the clock's own events
            // since the start (a flag after a long outage) follow below.
            self.settle_scheduled_start();
        }
        if let Some(deadline) = self.g.deadline().filter(|&d| d <= self.now) {
            // A loss on time is stamped with the deadline itself, not with when it was
            // noticed (a timer firing late, another replica's claim, a move arriving after
            // it). The whole decision takes that time, so its events still share one.
            self.now = deadline.max(self.g.last_at);
        }
        let now = self.now;
        match self.g.phase() {
            Phase::Playing => {
                for a in self.g.clock.due_announcements(self.g.last_announced, now) {
                    if self.g.clock.flagged_at(a.due).is_none() {
                        self.emit(EventKind::Announcement {
                            color: a.color,
                            due: a.due,
                            seconds: a.seconds,
                            count: a.count,
                            periods_left: a.periods_left,
                        });
                    }
                }
                if let Some(loser) = self.g.clock.flagged_at(now) {
                    self.end(Some(loser.opponent()), EndReason::Time);
                }
            }
            // Black ran out of time placing the stones.
            Phase::PlacingHandicap if self.g.clock.flagged_at(now).is_some() => {
                self.end(Some(Color::White), EndReason::Time);
            }
            Phase::Nigiri => self.forfeit_withheld_nigiri(now),
            Phase::SeatStones | Phase::Bidding => self.forfeit_stalled_variant(now),
            Phase::Scheduled => self.forfeit_absent_players(now),
            _ => {}
        }
    }

    /// Withholding the nigiri reveal past its timeout must never pay: the host forfeits.
    fn forfeit_withheld_nigiri(&mut self, now: Ms) {
        if self.g.forfeit_at().is_some_and(|at| now >= at) {
            self.emit(EventKind::ColorsAssigned { black: Seat::Guest });
            self.end(Some(Color::Black), EndReason::Forfeit);
        }
    }

    /// Past the allowed lateness of a scheduled start, whoever has not checked in forfeits
    /// (C4); both absent is a double forfeit.
    fn forfeit_absent_players(&mut self, now: Ms) {
        if self.g.forfeit_at().is_none_or(|at| now < at) {
            return;
        }
        match self.g.checked_in {
            [false, false] => self.end(None, EndReason::DoubleForfeit),
            [true, false] => {
                let w = self.g.color_of(Seat::Host);
                self.end(w, EndReason::Forfeit)
            }
            [false, true] => {
                let w = self.g.color_of(Seat::Guest);
                self.end(w, EndReason::Forfeit)
            }
            [true, true] => {}
        }
    }

    /// Both players checked in before the start and the start has come: play starts,
    /// stamped with the start itself however late the tick that noticed (as a flag is
    /// stamped with the deadline), so the first player's clock runs from the start.
    fn settle_scheduled_start(&mut self) {
        let Some(start) = self.g.scheduled_play_at().filter(|&start| start <= self.now) else {
            return;
        };
        let now = self.now;
        self.now = start.max(self.g.last_at);
        self.start_play_if_ready();
        self.now = now;
    }

    /// Presence at a scheduled start (C4): lateness is deducted from the player's time.
    pub(super) fn check_in(&mut self, by: Actor) -> Result<(), Rejection> {
        self.phase_is(&[Phase::Scheduled])?;
        let seat = self.seat(by)?;
        if self.g.checked_in[seat_index(seat)] {
            return Err(Rejection::NotPermitted("already checked in".into()));
        }
        let start = self.settings().scheduled_start.unwrap_or(0);
        let lateness_ms = self.now.saturating_sub(start);
        self.emit(EventKind::CheckedIn { seat, lateness_ms });
        self.start_play_if_ready();
        Ok(())
    }

    /// The service was down for `ms`: that time is not charged to the player to move.
    pub(super) fn credit_time(&mut self, by: Actor, ms: Ms) -> Result<(), Rejection> {
        if by != Actor::Server {
            return Err(Rejection::NotPermitted("only the server credits time".into()));
        }
        if self.g.clock.running().is_some() && ms > 0 {
            self.emit(EventKind::TimeCredited { ms });
        }
        Ok(())
    }
}
