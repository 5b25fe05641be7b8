//! Perft: the number of legal move sequences of a given length, the standard cross-check
//! of move generators (as in chess engines).

use crate::state::State;

/// Counts legal move sequences of exactly `depth` plies from `state`. With `passes`, a pass
/// is always a legal move and two consecutive passes end the game; without, only
/// placements count.
pub fn perft(state: &State, depth: u32, passes: bool) -> u64 {
    if state.is_over() {
        return u64::from(depth == 0);
    }
    if depth == 0 {
        return 1;
    }
    if depth == 1 {
        // Bulk count at the leaves: no need to play the last move.
        let n = state.count_legal() as u64;
        return if passes { n } else { n - 1 };
    }
    let mut total = 0;
    for m in state.legal_moves() {
        if !passes && m == crate::Move::Pass {
            continue;
        }
        let mut next = state.clone();
        next.play(m).expect("listed moves are legal");
        total += perft(&next, depth - 1, passes);
    }
    total
}
