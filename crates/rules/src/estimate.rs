//! A score estimate during a game, as players ask a server for one (OGS's "estimate
//! score"): who owns each point, which stones look dead, and the count that makes. The
//! dead stones are the project's one estimate ([`DeadEstimate::default`], the scoring
//! phase's proposal) with fewer playouts on larger boards, so that its cost is bounded:
//! [`estimate_playouts`] keeps the playouts' work about the same on every size.

use crate::score::{self, Score, ScoreError};
use crate::{Color, DeadEstimate, Point, State};

/// Board points times playouts an estimate may spend: 1000 playouts up to 19x19, 577 on
/// 25x25, so that one estimate costs at most a few tens of milliseconds of one core (8 ms
/// on 19x19 here) (`taskset -c 0 cargo run --release -p weiqi-rules --example estimate_bench`;
/// figures in docs/service.md).
pub const ESTIMATE_BUDGET: u32 = 361_000;

/// The playouts of an estimate on a board of `points` points: [`ESTIMATE_BUDGET`] spread
/// over them, between 100 and 1000.
pub fn estimate_playouts(points: u32) -> u32 {
    (ESTIMATE_BUDGET / points.max(1)).clamp(100, 1000)
}

/// A position's estimate.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// Each point, row by row from the top: +1 always Black's at the end, -1 always
    /// White's, between as the playouts shared it (the points of dead stones go to their
    /// captor).
    pub ownership: Vec<f32>,
    /// The stones that look dead, row by row.
    pub dead: Vec<Point>,
    /// The count with those stones removed, komi included.
    pub score: Score,
    /// How many playouts it took (0 when every stone was settled without any).
    pub playouts: u32,
}

/// Estimates `state` with [`estimate_playouts`] playouts for its size.
pub fn estimate(state: &State) -> Result<Estimate, ScoreError> {
    let b = state.board();
    estimate_with(state, estimate_playouts(b.width() as u32 * b.height() as u32))
}

/// Estimates `state` with `playouts` playouts. Deterministic (the playouts are seeded from
/// the position).
pub fn estimate_with(state: &State, playouts: u32) -> Result<Estimate, ScoreError> {
    let judged = DeadEstimate {
        playouts,
        ..DeadEstimate::default()
    }
    .judge(state);
    let board = state.board();
    let score = state.score(&judged.dead)?;
    // Who owns each point once the dead stones are off: where the playouts settled nothing
    // (or none ran), the count's owner.
    let owners = score::owners_with_dead(board, &judged.dead)?;
    let ownership = board
        .points()
        .zip(owners)
        .map(|(p, owner)| {
            let n = judged.playouts as f32;
            let [b, w] = judged.owned[board.index(p)];
            let share = if judged.playouts > 0 {
                (b as f32 - w as f32) / n
            } else {
                0.0
            };
            let settled = match owner {
                Some(Color::Black) => 1.0,
                Some(Color::White) => -1.0,
                None => 0.0,
            };
            // A dead stone's point is its captor's, however the playouts went.
            if judged.dead.contains(&p) || judged.playouts == 0 {
                settled
            } else {
                share
            }
        })
        .collect();
    Ok(Estimate {
        ownership,
        dead: judged.dead,
        score,
        playouts: judged.playouts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Board, Rules};

    #[test]
    fn the_budget_bounds_the_playouts_on_every_size() {
        assert_eq!(estimate_playouts(81), 1000);
        assert_eq!(estimate_playouts(169), 1000);
        assert_eq!(estimate_playouts(361), 1000);
        assert_eq!(estimate_playouts(625), 577);
        assert_eq!(estimate_playouts(4), 1000);
    }

    #[test]
    fn territory_dead_stones_and_the_count() {
        // Black's wall on the left, White's on the right; a black stone lost in White's
        // area.
        let b = Board::from_rows(&[
            "..x.o....",
            "..x.o....",
            "..x.o..x.",
            "..x.o....",
            "..x.o....",
            "..x.o....",
            "..x.o....",
            "..x.o....",
            "..x.o....",
        ])
        .unwrap();
        let s = State::from_board(b, Color::Black, Rules::default());
        let e = estimate(&s).unwrap();
        assert_eq!(e.playouts, 1000);
        assert_eq!(e.dead, [Point::new(7, 2)]);
        let at = |x: usize, y: usize| e.ownership[y * 9 + x];
        assert!(at(0, 0) > 0.5 && at(1, 8) > 0.5, "Black's side");
        // White's side, less surely so (random play lets the black stone inside live).
        assert!(
            at(4, 4) < -0.5 && at(8, 8) < -0.2 && at(6, 4) < -0.2,
            "{:?}",
            e.ownership
        );
        assert_eq!(at(7, 2), -1.0, "a dead stone's point is its captor's");
        assert!(e.ownership.iter().all(|v| (-1.0..=1.0).contains(v)));
        // The count is the rules' own, komi included.
        assert_eq!(e.score, s.score(&e.dead).unwrap());
        assert!(e.score.white_minus_black > 0.0, "{:?}", e.score);
        // The same position gives the same estimate.
        assert_eq!(estimate(&s).unwrap(), e);
    }

    #[test]
    fn an_empty_board_is_nobody_s_and_komi_decides() {
        let s = State::new(9, Rules::default()).unwrap();
        let e = estimate(&s).unwrap();
        assert!(e.dead.is_empty());
        assert_eq!(e.score.white_minus_black, s.score(&[]).unwrap().white_minus_black);
    }
}
