//! Seed 002's variant, our reading of it (`../shared/seeds/002_*`):
//!
//! - **Free seat stones (开局阶段的自由座子).** Traditional Chinese Go began with four
//!   seat stones on the corner star points; here the four are placed freely, Black, White,
//!   Black, White, each on any empty point (the host places Black's, the guest White's,
//!   before anyone knows who will play which colour). The author counts about 7x10^8
//!   openings (C(361,4)) and about 3x10^8 away from the edge (C(289,4)): the option
//!   `no_first_line` keeps them off the first line. A seat stone is setup, not a move: it
//!   takes no time and is written as `AB`/`AW` in SGF; like any stone it may capture, and
//!   may not be placed without liberties (the author: no dead stone stays on the board).
//! - **An agreed win criterion (预判阶段的协定胜负) instead of a fixed komi.** Each player
//!   seals a bid, the komi they would give if they played Black, then both reveal (the
//!   sealed move's commit-reveal). The higher bid plays Black and gives that komi. Equal
//!   bids go by lot, like nigiri: the lot is drawn from both revealed nonces, which each
//!   player fixed before seeing the other's, so neither can steer it. With
//!   `half_point_bids` bids are n + 0.5 and the game cannot be drawn; otherwise any
//!   multiple of 0.5.
//! - Each step (a stone, a commitment, a reveal) is due within the game's
//!   `nigiri_timeout_ms` of the step before it; whoever holds it up forfeits, as a
//!   withheld nigiri does (both: a double forfeit).

use crate::commit::sha256_hex;
use crate::types::{Rejection, Seat, Variant};

/// The largest bid, in points, either way (a 19x19 board has 361 points).
pub const MAX_BID: f64 = 361.0;

/// A bid as a whole number of half points, if `komi` is a bid `variant` accepts.
pub fn bid_half_points(komi: f64, variant: Variant) -> Result<i64, Rejection> {
    let Variant::FreeSeats { half_point_bids, .. } = variant else {
        return Err(Rejection::NotPermitted("this game has no bids".into()));
    };
    if !komi.is_finite() || komi.abs() > MAX_BID {
        return Err(Rejection::InvalidArgument(format!(
            "a bid is a finite komi of at most {MAX_BID} points either way, not {komi}"
        )));
    }
    let halves = komi * 2.0;
    if halves.fract() != 0.0 {
        return Err(Rejection::InvalidArgument(format!(
            "a bid is a multiple of 0.5, not {komi}"
        )));
    }
    let halves = halves as i64;
    if half_point_bids && halves % 2 == 0 {
        return Err(Rejection::InvalidArgument(format!(
            "this game must produce a winner: bids are n + 0.5, not {komi}"
        )));
    }
    Ok(halves)
}

/// Commitment to a bid: `sha256("<half points>:<nonce>")` (7.5 points is `15`).
pub fn bid_commitment(half_points: i64, nonce: &str) -> String {
    sha256_hex(format!("{half_points}:{nonce}"))
}

/// Equal bids: the lot, from both nonces (the host's first). Even: the host plays Black.
pub fn lot(host_nonce: &str, guest_nonce: &str) -> Seat {
    let digest = sha256_hex(format!("lot:{host_nonce}:{guest_nonce}"));
    let last = u8::from_str_radix(&digest[62..], 16).unwrap_or(0);
    if last.is_multiple_of(2) {
        Seat::Host
    } else {
        Seat::Guest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn free(half_point_bids: bool) -> Variant {
        Variant::FreeSeats {
            no_first_line: false,
            half_point_bids,
        }
    }

    #[test]
    fn bids_are_half_points_within_bounds() {
        assert_eq!(bid_half_points(7.5, free(true)), Ok(15));
        assert_eq!(bid_half_points(-2.5, free(true)), Ok(-5));
        assert_eq!(bid_half_points(7.0, free(false)), Ok(14));
        assert!(matches!(
            bid_half_points(7.0, free(true)),
            Err(Rejection::InvalidArgument(_))
        ));
        assert!(matches!(
            bid_half_points(7.25, free(false)),
            Err(Rejection::InvalidArgument(_))
        ));
        for bad in [f64::NAN, f64::INFINITY, 1e9, -362.0] {
            assert!(
                matches!(bid_half_points(bad, free(false)), Err(Rejection::InvalidArgument(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            bid_half_points(7.5, Variant::Standard),
            Err(Rejection::NotPermitted(_))
        ));
    }

    #[test]
    fn the_lot_depends_on_both_nonces() {
        let seats: Vec<Seat> = (0..64).map(|k| lot("host", &format!("guest{k}"))).collect();
        assert!(seats.contains(&Seat::Host) && seats.contains(&Seat::Guest));
        assert_eq!(lot("a", "b"), lot("a", "b"));
    }
}
