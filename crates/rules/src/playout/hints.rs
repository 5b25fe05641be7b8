//! What the heavy policy knows about a move, for search priors: whether it captures, saves
//! a chain in atari, puts its own stones in atari, or matches a 3x3 pattern next to the
//! last move. Tree searches seed new moves' statistics with these (as Pachi and Fuego do).

use std::collections::VecDeque;

use super::heavy;
use super::patterns::matches_pattern;
use crate::board::{BORDER, EMPTY, stone};
use crate::coord::Point;
use crate::state::State;

/// Tactical facts about a move of the player to move.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MoveHints {
    /// Takes an opposing chain in atari.
    pub captures: bool,
    /// Gives an own chain in atari two liberties or more, and no working ladder.
    pub saves: bool,
    /// Leaves the new chain with one liberty without capturing: `Some(stones)` of it.
    pub self_atari: Option<u32>,
    /// One of the heavy policy's 3x3 shapes, next to the last move.
    pub pattern: bool,
    /// On the first or second line with no stone within a distance of two.
    pub edge_in_empty_area: bool,
    /// On the third line with no stone within a distance of two (a sound opening or
    /// invasion point, as Michi's prior has it).
    pub third_line_in_empty_area: bool,
}

/// Common-fate-graph distances from the last move ([`State::last_move_distances`]): a
/// chain is one node, so every point next to the last move's chain is at distance 1.
#[derive(Debug, Clone, Default)]
pub struct LastMoveDistances {
    width: usize,
    /// Per point (`y * width + x`): the distance, `u8::MAX` beyond the limit.
    dist: Vec<u8>,
}

impl LastMoveDistances {
    /// The distance of `p`, when within the limit it was computed to.
    pub fn of(&self, p: Point) -> Option<u8> {
        let d = *self.dist.get(p.y as usize * self.width + p.x as usize)?;
        (d != u8::MAX).then_some(d)
    }
}

impl State {
    /// What the heavy policy sees in a move of the player to move at the empty point `p`
    /// (all false when `p` is not an empty point of the board).
    pub fn move_hints(&self, p: Point) -> MoveHints {
        let b = self.board();
        if !b.contains(p) || b.get(p).is_some() {
            return MoveHints::default();
        }
        let i = b.index(p);
        let me = stone(self.to_move());
        let mut h = MoveHints::default();
        let mut own_in_atari = false;
        for n in b.neighbors(i) {
            let v = b.cell(n);
            if v == (me ^ 3) && b.chain_in_atari(b.head(n)) {
                h.captures = true;
            }
            if v == me && b.chain_in_atari(b.head(n)) {
                own_in_atari = true;
            }
        }
        // (The ladder read clones the board: once per move, not once per chain in atari.)
        h.saves = own_in_atari && heavy::libs_after(b, i, me) >= 2 && heavy::escape_works(b, i, me);
        if heavy::is_self_atari_of(b, i, me, 1) {
            h.self_atari = Some(heavy::stones_joined(b, i, me));
        }
        let last = self.last_placed().unwrap_or(0);
        h.pattern = last != 0 && heavy::ring(b, last).contains(&i) && matches_pattern(b, i);
        let line = p.x.min(p.y).min(b.width() - 1 - p.x).min(b.height() - 1 - p.y);
        let empty_area = line <= 2 && self.empty_around(p, 2);
        h.edge_in_empty_area = empty_area && line <= 1;
        h.third_line_in_empty_area = empty_area && line == 2;
        h
    }

    /// Common-fate-graph distances of every point from the last placement, up to `limit`
    /// (all beyond it when the last move was a pass or there is none). Moves near the last
    /// one are usually the urgent ones: search priors favour them (MoGo, Pachi, Michi).
    pub fn last_move_distances(&self, limit: u8) -> LastMoveDistances {
        let b = self.board();
        let width = b.width() as usize;
        let mut out = LastMoveDistances {
            width,
            dist: vec![u8::MAX; width * b.height() as usize],
        };
        let Some(last) = self.last_placed() else { return out };
        // 0-1 breadth-first search over cells: a step to a stone of the same chain is free.
        let mut dist = vec![u8::MAX; b.cell_count()];
        let mut queue = VecDeque::from([last]);
        dist[last] = 0;
        while let Some(i) = queue.pop_front() {
            let d = dist[i];
            for n in b.neighbors(i) {
                let v = b.cell(n);
                if v == BORDER {
                    continue;
                }
                let free = v != EMPTY && v == b.cell(i);
                let nd = if free { d } else { d + 1 };
                if nd <= limit && nd < dist[n] {
                    dist[n] = nd;
                    if free {
                        queue.push_front(n);
                    } else {
                        queue.push_back(n);
                    }
                }
            }
        }
        for p in b.points() {
            out.dist[p.y as usize * width + p.x as usize] = dist[b.index(p)];
        }
        out
    }

    /// Whether no stone lies within Manhattan distance `d` of `p`.
    fn empty_around(&self, p: Point, d: i32) -> bool {
        let b = self.board();
        for dy in -d..=d {
            for dx in -(d - dy.abs())..=(d - dy.abs()) {
                let (x, y) = (p.x as i32 + dx, p.y as i32 + dy);
                if x < 0 || y < 0 || x >= b.width() as i32 || y >= b.height() as i32 {
                    continue;
                }
                if b.cell(b.index(Point::new(x as u8, y as u8))) != EMPTY {
                    return false;
                }
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Board, Color, Move, Rules};

    fn state(rows: &[&str], to_move: Color) -> State {
        State::from_board(Board::from_rows(rows).unwrap(), to_move, Rules::default())
    }

    #[test]
    fn captures_saves_and_self_ataris_are_seen() {
        // White's a2 stone has one liberty, a1: Black there captures it.
        let s = state(&[".....", ".....", "x....", "ox...", "....."], Color::Black);
        assert!(s.move_hints(Point::new(0, 4)).captures);
        assert!(!s.move_hints(Point::new(4, 0)).captures);
        // Black's stone at b2 has one liberty, c2: Black there gives it three.
        let s = state(&[".....", ".....", ".o...", "ox...", ".o..."], Color::Black);
        let h = s.move_hints(Point::new(2, 3));
        assert!(h.saves && !h.captures && h.self_atari.is_none(), "{h:?}");
        // Inside three white stones, a black stone has one liberty.
        let s = state(&[".....", ".....", "..o..", ".o.o.", "....."], Color::Black);
        assert_eq!(s.move_hints(Point::new(2, 3)).self_atari, Some(1));
        // The first line of an empty board is an empty area's edge; the centre is not.
        let s = state(&[".....", ".....", ".....", ".....", "....."], Color::Black);
        assert!(s.move_hints(Point::new(0, 0)).edge_in_empty_area);
        assert!(!s.move_hints(Point::new(2, 2)).edge_in_empty_area);
        // An occupied point has no hints.
        let s = state(&["x....", ".....", ".....", ".....", "....."], Color::White);
        assert_eq!(s.move_hints(Point::new(0, 0)), MoveHints::default());
    }

    #[test]
    fn last_move_distances_count_a_chain_as_one_point() {
        // White's last move c4 joins a chain of three (a4, b4, c4): every liberty of the
        // chain is at distance 1, and points two steps from it at 2.
        let mut s = state(&[".....", "oo...", ".....", ".....", "....."], Color::White);
        s.play(Move::Place(Point::new(2, 1))).unwrap();
        let d = s.last_move_distances(3);
        assert_eq!(d.of(Point::new(2, 1)), Some(0));
        assert_eq!(d.of(Point::new(0, 1)), Some(0), "same chain");
        assert_eq!(d.of(Point::new(2, 0)), Some(1), "a liberty of the chain");
        assert_eq!(d.of(Point::new(3, 1)), Some(1));
        assert_eq!(d.of(Point::new(4, 1)), Some(2));
        assert_eq!(d.of(Point::new(4, 4)), None, "beyond the limit");
        // After a pass there is no last placement.
        s.pass();
        assert_eq!(s.last_move_distances(3).of(Point::new(2, 0)), None);
    }

    #[test]
    fn an_edge_eye_with_an_opposing_diagonal_is_false() {
        let p = Point::new(1, 0);
        let false_eye = Board::from_rows(&["x.x..", "oxx..", ".....", ".....", "....."]).unwrap();
        assert!(false_eye.is_eye_of(p, Color::Black) && !false_eye.is_true_eye_of(p, Color::Black));
        let true_eye = Board::from_rows(&["x.x..", ".xx..", ".....", ".....", "....."]).unwrap();
        assert!(true_eye.is_true_eye_of(p, Color::Black));
        assert!(!true_eye.is_true_eye_of(p, Color::White));
        // In the centre one opposing diagonal is allowed, two are not.
        let centre = Point::new(2, 2);
        let one = Board::from_rows(&[".....", ".oxx.", ".x.x.", ".xxx.", "....."]).unwrap();
        assert!(one.is_true_eye_of(centre, Color::Black));
        let two = Board::from_rows(&[".....", ".oxo.", ".x.x.", ".xxx.", "....."]).unwrap();
        assert!(two.is_eye_of(centre, Color::Black) && !two.is_true_eye_of(centre, Color::Black));
    }
}
