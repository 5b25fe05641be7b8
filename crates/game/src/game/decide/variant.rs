//! The variant of seed 002 (see [`crate::variant`]): seat stones, sealed bids, their
//! reveal, and forfeits for a step held up.

use weiqi_clock::Ms;
use weiqi_rules::{Color, Move, Point};

use super::Tx;
use crate::commit;
use crate::game::seat_index;
use crate::types::*;
use crate::variant::{bid_commitment, bid_half_points, lot};

/// The longest nonce a reveal may carry.
const MAX_NONCE: usize = 256;

impl Tx<'_> {
    /// The seat that places the next seat stone (the host Black's, the guest White's) and
    /// its colour.
    fn next_seat_stone(&self) -> (Seat, Color) {
        if self.g.seat_stones.is_multiple_of(2) {
            (Seat::Host, Color::Black)
        } else {
            (Seat::Guest, Color::White)
        }
    }

    pub(super) fn place_seat_stone(&mut self, by: Actor, point: Point) -> Result<(), Rejection> {
        self.phase_is(&[Phase::SeatStones])?;
        let seat = self.seat(by)?;
        let (placer, color) = self.next_seat_stone();
        if seat != placer {
            return Err(Rejection::NotYourTurn);
        }
        if !self.state().board().contains(point) {
            return Err(Rejection::InvalidArgument(format!("{point} is off the board")));
        }
        let size = self.settings().size;
        let edge = point.x == 0 || point.y == 0 || point.x + 1 == size || point.y + 1 == size;
        if edge
            && matches!(
                self.settings().variant,
                Variant::FreeSeats {
                    no_first_line: true,
                    ..
                }
            )
        {
            return Err(Rejection::FirstLine(point));
        }
        // Occupied points and stones without liberties are refused as moves would be.
        self.state()
            .clone()
            .play_color(color, Move::Place(point))
            .map_err(Rejection::Illegal)?;
        self.emit(EventKind::SeatStonePlaced { color, point });
        Ok(())
    }

    pub(super) fn commit_bid(&mut self, by: Actor, commitment: &str) -> Result<(), Rejection> {
        self.phase_is(&[Phase::Bidding])?;
        let seat = self.seat(by)?;
        // A seal may be replaced until the opponent's is in (a client that sealed a bid
        // it cannot reveal can still mend it); from then on both are bound.
        if self.g.bids[seat_index(seat)].is_some() && self.g.bids[seat_index(seat.other())].is_some() {
            return Err(Rejection::NotPermitted(
                "both bids are sealed: yours can no longer change".into(),
            ));
        }
        if !commit::is_digest(commitment) {
            return Err(Rejection::InvalidArgument(
                "a bid commitment is a SHA-256 digest (64 hex digits)".into(),
            ));
        }
        self.emit(EventKind::BidCommitted {
            seat,
            commitment: commitment.to_ascii_lowercase(),
        });
        Ok(())
    }

    pub(super) fn reveal_bid(&mut self, by: Actor, komi: f64, nonce: &str) -> Result<(), Rejection> {
        self.phase_is(&[Phase::Bidding])?;
        let seat = self.seat(by)?;
        let Some(mine) = &self.g.bids[seat_index(seat)] else {
            return Err(Rejection::NothingPending("seal a bid before revealing it".into()));
        };
        if mine.revealed.is_some() {
            return Err(Rejection::NotPermitted("your bid is revealed already".into()));
        }
        if self.g.bids[seat_index(seat.other())].is_none() {
            return Err(Rejection::BidsNotSealed);
        }
        if nonce.is_empty() || nonce.len() > MAX_NONCE {
            return Err(Rejection::InvalidArgument(format!(
                "a nonce has 1 to {MAX_NONCE} bytes"
            )));
        }
        let halves = bid_half_points(komi, self.settings().variant)?;
        if bid_commitment(halves, nonce) != mine.commitment {
            return Err(Rejection::CommitmentMismatch);
        }
        self.emit(EventKind::BidRevealed {
            seat,
            komi: halves as f64 / 2.0,
            nonce: nonce.to_string(),
        });
        self.agree_if_revealed();
        Ok(())
    }

    /// Both bids revealed: the higher plays Black and gives its komi; equal bids by lot.
    fn agree_if_revealed(&mut self) {
        let [Some(host), Some(guest)] = &self.g.bids else {
            return;
        };
        let (Some((h, hn)), Some((g, gn))) = (&host.revealed, &guest.revealed) else {
            return;
        };
        let (black, by_lot) = match h.cmp(g) {
            std::cmp::Ordering::Greater => (Seat::Host, false),
            std::cmp::Ordering::Less => (Seat::Guest, false),
            std::cmp::Ordering::Equal => (lot(hn, gn), true),
        };
        let komi = (*h.max(g)) as f64 / 2.0;
        self.emit(EventKind::KomiAgreed { komi, black, by_lot });
        self.emit(EventKind::ColorsAssigned { black });
        self.start_play_if_ready();
    }

    /// A step held up past `nigiri_timeout_ms`: whoever owes it forfeits (both: a double
    /// forfeit), as a withheld nigiri does. Colours are assigned first, so the result
    /// names a colour: the player who kept to time takes Black.
    pub(super) fn forfeit_stalled_variant(&mut self, now: Ms) {
        if self.g.forfeit_at().is_none_or(|at| now < at) {
            return;
        }
        let owes = |s: Seat| match self.g.phase() {
            Phase::SeatStones => self.next_seat_stone().0 == s,
            _ => match &self.g.bids[seat_index(s)] {
                None => true,
                // Sealed: owes the reveal once both are sealed.
                Some(b) => b.revealed.is_none() && self.g.bids.iter().all(Option::is_some),
            },
        };
        match (owes(Seat::Host), owes(Seat::Guest)) {
            (false, false) => {}
            (true, true) => {
                self.emit(EventKind::ColorsAssigned { black: Seat::Host });
                self.end(None, EndReason::DoubleForfeit);
            }
            (host_owes, _) => {
                let black = if host_owes { Seat::Guest } else { Seat::Host };
                self.emit(EventKind::ColorsAssigned { black });
                self.end(Some(Color::Black), EndReason::Forfeit);
            }
        }
    }
}
