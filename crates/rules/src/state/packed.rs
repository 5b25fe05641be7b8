//! A state at rest. A live [`State`] holds a full board (chains, liberties, the empty
//! list: about 23 KB at any size, since its arrays have the largest board's capacity) and
//! a hash set of the positions seen. A server holding many games between moves needs
//! neither: the stones, the moves and the repetition keys rebuild both.

use std::sync::Arc;

use super::{KeySet, State};
use crate::board::Board;
use crate::color::Color;
use crate::coord::Move;
use crate::rules::Rules;

/// A [`State`] at rest: the stones two bits a point, the moves and repetition keys, and
/// the (shared) start position. [`State::pack`] and [`PackedState::unpack`] round-trip
/// exactly; unpacking costs O(board + moves).
#[derive(Debug, Clone, PartialEq)]
pub struct PackedState {
    rules: Rules,
    width: u8,
    height: u8,
    /// Row by row, four points a byte: 0 empty, 1 Black, 2 White.
    stones: Box<[u8]>,
    to_move: Color,
    initial: Arc<Board>,
    initial_to_move: Color,
    moves: Box<[(Color, Move)]>,
    keys: Box<[u128]>,
    ko: Option<usize>,
    passes: u32,
    captures: [u32; 2],
    handicap: u32,
    cycle: bool,
}

impl State {
    /// This state at rest (see [`PackedState`]).
    pub fn pack(self) -> PackedState {
        self.pack_keeping_board().0
    }

    /// As [`State::pack`], handing back the live board, whose storage
    /// [`PackedState::unpack_on`] can reuse for another state.
    pub fn pack_keeping_board(self) -> (PackedState, Board) {
        let b = &self.board;
        let (w, h) = (b.width(), b.height());
        let mut stones = vec![0u8; (w as usize * h as usize).div_ceil(4)].into_boxed_slice();
        // (A point's cell value is its two-bit code: 0 empty, 1 Black, 2 White.)
        for (k, i) in b.indices().enumerate() {
            stones[k / 4] |= b.cell(i) << (2 * (k % 4));
        }
        let packed = PackedState {
            rules: self.rules,
            width: w,
            height: h,
            stones,
            to_move: self.to_move,
            initial: self.initial,
            initial_to_move: self.initial_to_move,
            moves: self.moves.into_boxed_slice(),
            keys: self.keys.into_boxed_slice(),
            ko: self.ko,
            passes: self.passes,
            captures: self.captures,
            handicap: self.handicap,
            cycle: self.cycle,
        };
        (packed, self.board)
    }
}

impl PackedState {
    /// The live state again: the board's chains and liberties rebuilt from its stones, the
    /// set of positions seen from the keys.
    pub fn unpack(self) -> State {
        let board = Board::with_cells(self.width, self.height, |k| self.stone_code(k));
        self.into_state(board)
    }

    /// As [`PackedState::unpack`], rebuilding the board in `board`'s storage (a board of
    /// any size, from [`State::pack_keeping_board`]) rather than allocating one: only the
    /// cells this size uses are written.
    pub fn unpack_on(self, mut board: Board) -> State {
        board.set_cells(self.width, self.height, |k| self.stone_code(k));
        self.into_state(board)
    }

    /// The `k`-th point's two-bit code, which is the board's own cell value: 0 empty,
    /// 1 Black, 2 White.
    fn stone_code(&self, k: usize) -> u8 {
        (self.stones[k / 4] >> (2 * (k % 4))) & 3
    }

    /// The live state around a board already holding this state's stones.
    fn into_state(self, board: Board) -> State {
        let keys = self.keys.into_vec();
        let seen: KeySet = keys.iter().copied().collect();
        State {
            rules: self.rules,
            board,
            to_move: self.to_move,
            initial: self.initial,
            initial_to_move: self.initial_to_move,
            moves: self.moves.into_vec(),
            keys,
            seen,
            ko: self.ko,
            passes: self.passes,
            captures: self.captures,
            handicap: self.handicap,
            cycle: self.cycle,
        }
    }

    /// Moves played so far (passes included), as [`State::move_number`].
    pub fn move_number(&self) -> usize {
        self.moves.len()
    }

    /// Heap bytes this packed state holds of its own (the shared start position aside).
    pub fn heap_bytes(&self) -> usize {
        self.stones.len() + std::mem::size_of_val(&*self.moves) + std::mem::size_of_val(&*self.keys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Policy;
    use crate::rules::{KoRule, Rules};
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    /// Random games, packed and unpacked at every ply: the same state (stones, history,
    /// ko, captures, keys), consistent bookkeeping, and the same legal moves after.
    #[test]
    fn packing_round_trips_at_every_ply() {
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: usize| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng % n as u64) as usize
        };
        for (size, ko) in [(9, KoRule::Positional), (19, KoRule::Simple), (5, KoRule::Situational)] {
            let rules = Rules { ko, ..Rules::default() };
            let mut s = State::new(size, rules).unwrap();
            for _ in 0..300 {
                if s.is_over() {
                    break;
                }
                // Placements while there are any (pass is last), so games run long.
                let legal = s.legal_moves();
                s.play(legal[next(legal.len().saturating_sub(1).max(1))]).unwrap();
                let (key, ko_point, caps, passes) =
                    (s.key(), s.ko_point(), s.captures(Color::White), s.consecutive_passes());
                let moves_before = s.legal_moves();
                // Packing is a function of the state: twice, the same.
                let packed = s.clone().pack();
                assert_eq!(s.pack(), packed);
                s = packed.unpack();
                s.check_consistency().unwrap();
                assert_eq!(
                    (s.key(), s.ko_point(), s.captures(Color::White), s.consecutive_passes()),
                    (key, ko_point, caps, passes)
                );
                assert_eq!(s.legal_moves(), moves_before);
            }
            assert!(s.move_number() > 20);
        }
    }

    /// Unpacking onto the board of another game, of another size, larger or smaller, gives
    /// the same state as unpacking onto a fresh board: the same stones, bookkeeping, hash
    /// and legal moves, and the same game from there on.
    #[test]
    fn unpacking_on_a_used_board_equals_a_fresh_one() {
        let mut rng = SmallRng::seed_from_u64(11);
        let mut spare: Option<Board> = None;
        for (k, size) in [25u8, 9, 19, 2, 13, 25, 5, 19, 19, 7].into_iter().enumerate() {
            let mut s = State::new(size, Rules::default()).unwrap();
            s.play_random_game(Policy::Light, &mut rng, 20 + 37 * k);
            let packed = s.clone().pack();
            let fresh = packed.clone().unpack();
            let mut reused = match spare.take() {
                Some(b) => packed.unpack_on(b),
                None => packed.unpack(),
            };
            reused.check_consistency().unwrap();
            assert_eq!(reused.board(), fresh.board(), "{size}x{size}");
            assert_eq!(reused.key(), fresh.key());
            assert_eq!(reused.legal_moves(), fresh.legal_moves());
            let mut fresh = fresh;
            for _ in 0..30 {
                if fresh.is_over() {
                    break;
                }
                let legal = fresh.legal_moves();
                let m = legal[rng.random_range(0..legal.len())];
                assert_eq!(reused.play(m), fresh.play(m));
                reused.check_consistency().unwrap();
                assert_eq!(reused.key(), fresh.key());
            }
            spare = Some(reused.pack_keeping_board().1);
        }
    }

    /// A 19x19 game at rest is a small fraction of a live one.
    #[test]
    fn a_packed_board_is_small() {
        let mut s = State::new(19, Rules::default()).unwrap();
        for m in s.legal_moves().into_iter().step_by(7).take(40) {
            let _ = s.play(m);
        }
        let packed = s.pack();
        assert_eq!(packed.stones.len(), 91);
        assert!(packed.heap_bytes() < 2_000, "{}", packed.heap_bytes());
    }
}
