//! MoGo's 3x3 patterns (Gelly et al. 2006, as listed in Pachi's moggy): hane, cut, and edge
//! shapes around an empty centre, in all 8 symmetries and both colourings, expanded once into
//! a bit table over the 4^8 neighbourhoods so that a match is one table lookup.

use std::sync::LazyLock;

use crate::board::{BLACK, BORDER, Board, EMPTY, WHITE};

/// Rows of three (top to bottom) over the 3x3 square around the empty centre `.`:
/// `X`/`O` a stone of one or the other colour, `x` not `X` (empty or `O`), `o` not `O`,
/// `.` empty, `#` off the board, `?` anything.
const PATTERNS: [&str; 13] = [
    "XOX...???", // hane: enclosing hane
    "XO....?.?", // hane: non-cutting hane
    "XO?X..x.?", // hane: magari
    "XOO...?.?", // hane: thin hane
    ".O.X.....", // katatsuke or diagonal attachment
    "XO?O.o?o?", // cut1: unprotected cut
    "XO?O.X???", // cut1: peeped cut
    "?X?O.Oooo", // cut2
    "X.?O.?##?", // edge: chase
    "OX?X.O###", // edge: block side cut
    "?X?x.O###", // edge: block side connection
    "?XOx.x###", // edge: sagari
    "?OXX.O###", // edge: cut
];

/// Grid offsets of the eight neighbours in code order (row by row, centre skipped).
const RING: [(i32, i32); 8] = [(-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1)];

/// Bit `code` set when that neighbourhood matches a pattern; `code` holds neighbour k's cell
/// value (0 empty, 1 Black, 2 White, 3 border) in bits 2k..2k+2.
static TABLE: LazyLock<Vec<u64>> = LazyLock::new(build);

/// The neighbourhood code of the point `i` (see [`TABLE`]).
#[inline]
pub(crate) fn code(board: &Board, i: usize) -> usize {
    let [n, w, e, s] = board.neighbors(i);
    // The padded layout has no cell above-left of the first point: cell 0 (border) stands in.
    let cells = [n.saturating_sub(1), n, n + 1, w, e, s - 1, s, s + 1];
    cells
        .iter()
        .enumerate()
        .fold(0, |acc, (k, &c)| acc | (board.cell(c) as usize) << (2 * k))
}

/// Whether the empty point `i` is the centre of one of the patterns.
#[inline]
pub(crate) fn matches_pattern(board: &Board, i: usize) -> bool {
    let c = code(board, i);
    TABLE[c >> 6] >> (c & 63) & 1 == 1
}

/// The cell values a pattern character allows, as a 4-bit mask, with `x` the colour `X` is.
fn allowed(ch: u8, x: u8) -> u8 {
    let o = x ^ 3;
    let bit = |v: u8| 1u8 << v;
    match ch {
        b'X' => bit(x),
        b'O' => bit(o),
        b'x' => bit(EMPTY) | bit(o),
        b'o' => bit(EMPTY) | bit(x),
        b'.' => bit(EMPTY),
        b'#' => bit(BORDER),
        _ => 0b1111,
    }
}

fn build() -> Vec<u64> {
    let mut table = vec![0u64; 1 << 10];
    for pat in PATTERNS {
        let grid: Vec<u8> = pat.bytes().collect();
        for x in [BLACK, WHITE] {
            for sym in 0..8 {
                // masks[k]: what ring position k allows after the symmetry.
                let mut masks = [0u8; 8];
                for (k, &(dx, dy)) in RING.iter().enumerate() {
                    let (sx, sy) = transform(sym, dx, dy);
                    let ch = grid[((sy + 1) * 3 + sx + 1) as usize];
                    masks[k] = allowed(ch, x);
                }
                expand(&masks, 0, 0, &mut table);
            }
        }
    }
    table
}

/// The dihedral symmetry `sym` (0..8) applied to a grid offset.
fn transform(sym: u8, dx: i32, dy: i32) -> (i32, i32) {
    let (x, y) = if sym & 4 != 0 { (dy, dx) } else { (dx, dy) };
    let x = if sym & 1 != 0 { -x } else { x };
    let y = if sym & 2 != 0 { -y } else { y };
    (x, y)
}

/// Sets every code whose neighbour k lies in `masks[k]`, for k from `k` on.
fn expand(masks: &[u8; 8], k: usize, code: usize, table: &mut [u64]) {
    if k == 8 {
        table[code >> 6] |= 1 << (code & 63);
        return;
    }
    for v in 0..4 {
        if masks[k] >> v & 1 == 1 {
            expand(masks, k + 1, code | v << (2 * k), table);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coord::Point;

    /// Whether the centre of a 5x5 board (rows top to bottom) matches.
    fn centre_matches(rows: &[&str], x: u8, y: u8) -> bool {
        let b = Board::from_rows(rows).unwrap();
        matches_pattern(&b, b.index(Point::new(x, y)))
    }

    #[test]
    fn hane_matches_in_every_orientation_and_colour() {
        // Enclosing hane, as written, rotated and with colours swapped.
        assert!(centre_matches(&[".....", ".xox.", ".....", ".....", "....."], 2, 2));
        assert!(centre_matches(&[".....", ".oxo.", ".....", ".....", "....."], 2, 2));
        assert!(centre_matches(&[".....", ".....", ".....", ".xox.", "....."], 2, 2));
        assert!(centre_matches(&[".....", ".x...", ".o...", ".x...", "....."], 2, 2));
    }

    #[test]
    fn empty_and_lone_stones_do_not_match() {
        assert!(!centre_matches(&[".....", ".....", ".....", ".....", "....."], 2, 2));
        assert!(!centre_matches(&[".....", ".x...", ".....", ".....", "....."], 2, 2));
        assert!(!centre_matches(&[".....", "..x..", ".....", ".....", "....."], 2, 2));
    }

    #[test]
    fn cut_matches_only_when_unprotected() {
        // cut1: X O / O . with no protecting stone on the far side.
        assert!(centre_matches(&[".....", ".xo..", ".o...", ".....", "....."], 2, 2));
        // Protected: a white stone on the far side (where cut1 wants "not O") blocks it.
        assert!(!centre_matches(&[".....", ".xo..", ".o.o.", ".....", "....."], 2, 2));
    }

    #[test]
    fn edge_patterns_need_the_edge() {
        // Block side cut on the first line: O X / X . O with the edge below.
        assert!(centre_matches(&[".....", ".....", ".....", ".ox..", ".x.o."], 2, 4));
        // On the edge, stones only on the far side match nothing.
        assert!(!centre_matches(&[".....", ".....", ".....", "..x..", "....."], 2, 4));
        assert!(!centre_matches(&[".....", ".....", ".....", ".....", "....."], 2, 4));
    }

    #[test]
    fn table_is_symmetric_under_colour_swap() {
        let swap = |c: usize| {
            (0..8).fold(0, |acc, k| {
                let v = (c >> (2 * k)) & 3;
                let v = if v == 1 || v == 2 { v ^ 3 } else { v };
                acc | v << (2 * k)
            })
        };
        let bit = |c: usize| TABLE[c >> 6] >> (c & 63) & 1;
        for c in 0..1 << 16 {
            assert_eq!(bit(c), bit(swap(c)));
        }
    }
}
