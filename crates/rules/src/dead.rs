//! Dead-stone estimation for the scoring phase: Benson's pass-alive analysis, which is
//! certain, plus Monte Carlo ownership, which is a proposal players may change.
//!
//! From the final position we play `playouts` light-policy games to the end and count who
//! owns each point (area). A chain that is not pass-alive is proposed dead when the
//! opponent owns its points in at least `threshold` of the playouts. Random play leaves
//! living groups with two eyes alive (light playouts never fill their own eyes) and lets
//! dead groups be captured, which is why engines from GNU Go to Pachi score this way.
//! The RNG is seeded from the position, so the proposal is deterministic.

use rand_core::{RngCore, impls};

use crate::benson;
use crate::color::Color;
use crate::coord::Point;
use crate::playout::Policy;
use crate::score::region_reach;
use crate::state::State;

/// SplitMix64: a small deterministic generator for internal estimates.
pub(crate) struct SplitMix(pub u64);

impl RngCore for SplitMix {
    fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        impls::fill_bytes_via_next(self, dest)
    }
}

/// Proposes the dead stones of a finished position: every stone inside the opponent's
/// pass-alive territory, and every other chain (never a pass-alive one) whose points the
/// opponent owns in at least `threshold` (0..=1) of `playouts` random continuations.
pub fn estimate_dead(state: &State, playouts: u32, threshold: f64) -> Vec<Point> {
    let board = state.board();
    let mut dead: Vec<Point> = benson::unconditionally_dead(board);
    // Stones whose fate Benson's analysis already decides (dead or pass-alive), by index.
    let mut settled = vec![false; board.cell_count()];
    for p in dead
        .iter()
        .chain(&benson::pass_alive(board, Color::Black).stones)
        .chain(&benson::pass_alive(board, Color::White).stones)
    {
        settled[board.index(*p)] = true;
    }
    // When every stone is settled (half of all finished random 9x9 games), the playouts
    // could change nothing, so none are played.
    let playouts = if board
        .indices()
        .all(|i| settled[i] || board.cell(i) == crate::board::EMPTY)
    {
        0
    } else {
        playouts
    };
    // Ownership counts per point: how often Black / White owns it at the end.
    let n = board.cell_count();
    let mut owned = vec![[0u32; 2]; n];
    let mut rng = SplitMix(board.hash() as u64 ^ (board.hash() >> 64) as u64);
    let cap = 4 * board.area() as usize;
    // The continuations start from the position alone, without the game's history: this
    // is an estimate, and copying a long history (and its superko set) into every playout
    // cost more than the playout itself.
    let start = State::from_board(board.clone(), state.to_move(), *state.rules());
    for _ in 0..playouts {
        let mut s = start.clone();
        s.play_random_game(Policy::Light, &mut rng, cap);
        let b = s.board();
        let reach = region_reach(b);
        for i in b.indices() {
            match b.cell(i) {
                crate::board::BLACK => owned[i][0] += 1,
                crate::board::WHITE => owned[i][1] += 1,
                _ => match reach[i] {
                    1 => owned[i][0] += 1,
                    2 => owned[i][1] += 1,
                    _ => {}
                },
            }
        }
    }
    let need = (threshold * playouts as f64).ceil() as u32;
    for p in board.points() {
        let Some(c) = board.get(p) else { continue };
        if settled[board.index(p)] {
            continue;
        }
        let chain = board.chain_points(p);
        for q in &chain {
            settled[board.index(*q)] = true;
        }
        let opp = c.opponent().index();
        if playouts > 0 && chain.iter().all(|q| owned[board.index(*q)][opp] >= need) {
            dead.extend(chain);
        }
    }
    dead.sort_by_key(|p| (p.y, p.x));
    dead.dedup();
    dead
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Board, Rules};

    #[test]
    fn a_lone_stone_in_enemy_territory_is_dead_and_living_groups_are_not() {
        // White lives in the top right; a black stone inside White's area; Black's wall.
        let b = Board::from_rows(&[
            ".....o.o.",
            ".....oooo",
            "xxxxxo...",
            "....xo.x.",
            "....xoooo",
            "....xxxxx",
            ".........",
            ".........",
            ".........",
        ])
        .unwrap();
        let s = State::from_board(b, Color::Black, Rules::default());
        let dead = estimate_dead(&s, 64, 0.9);
        assert_eq!(dead, vec![Point::new(7, 3)]);
        assert_eq!(estimate_dead(&s, 64, 0.9), dead, "deterministic");
    }

    #[test]
    fn a_position_benson_settles_needs_no_playouts() {
        // Black's wall is pass-alive; the white stone in its eye is unconditionally dead.
        // With or without playouts, the same answer.
        let b = Board::from_rows(&["o.x.x", "xxxxx", ".....", ".....", "....."]).unwrap();
        let s = State::from_board(b, Color::Black, Rules::default());
        assert_eq!(estimate_dead(&s, 64, 0.9), vec![Point::new(0, 0)]);
        assert_eq!(estimate_dead(&s, 0, 0.9), vec![Point::new(0, 0)]);
    }
}
