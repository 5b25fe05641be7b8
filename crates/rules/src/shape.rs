//! A move's local shape as a number, for pattern weights learned from game records (as
//! Pachi's and Michi's "large patterns", which reach much farther, and Coulom's move
//! features): the 20 points within the 5x5
//! square around the move but its corners, each empty, the mover's, the opponent's or off
//! the board, and whether each of the four adjacent chains is in atari.
//!
//! A key is read in one orientation; [`ShapeKey::symmetries`] gives the eight (the
//! board's rotations and reflections), so a table fitted on canonical keys
//! ([`ShapeKey::canonical`]) can be stored under all eight and read with one lookup.

use crate::board::{BORDER, Board, EMPTY, stone};
use crate::color::Color;
use crate::coord::Point;

/// Offsets around the move: the eight neighbours first (the 3x3 shape), then the twelve
/// points at distance two (two straight, or a knight's move).
const OFFSETS: [(i8, i8); 20] = [
    (-1, -1),
    (0, -1),
    (1, -1),
    (-1, 0),
    (1, 0),
    (-1, 1),
    (0, 1),
    (1, 1),
    (0, -2),
    (-2, 0),
    (2, 0),
    (0, 2),
    (-1, -2),
    (1, -2),
    (-2, -1),
    (2, -1),
    (-2, 1),
    (2, 1),
    (-1, 2),
    (1, 2),
];

/// The four neighbours whose chains' atari is part of the key, as indices into [`OFFSETS`].
const ADJACENT: [usize; 4] = [1, 3, 4, 6];
/// Where the atari bits start (after the 3x3 ring's 16 bits of colours).
const ATARI_SHIFT: u32 = 16;
/// Where the outer twelve points' colours start.
const OUTER_SHIFT: u32 = 20;

/// Cell values in a key: the mover's stone, the opponent's, empty, off the board.
const OWN: u64 = 1;
const OPPONENT: u64 = 2;
const OFF: u64 = 3;

/// A move's local shape (see the module's docs). Bits 0..16: the 3x3 ring's colours, two
/// bits a point in [`OFFSETS`] order; bits 16..20: atari of the chains above, left, right
/// and below; bits 20..44: the outer twelve points' colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ShapeKey(pub u64);

impl ShapeKey {
    /// The key of the 3x3 shape alone (the ring and the atari bits), for moves whose large
    /// shape is too rare to have a weight of its own.
    pub fn small(self) -> ShapeKey {
        ShapeKey(self.0 & ((1 << OUTER_SHIFT) - 1))
    }

    /// The key in each of the board's eight orientations (the first is this one; bits
    /// outside the layout are dropped).
    pub fn symmetries(self) -> [ShapeKey; 8] {
        let perms = &*PERMUTATIONS;
        std::array::from_fn(|s| self.permuted(&perms[s]))
    }

    /// The least of the eight orientations' keys: equal for shapes that differ only by a
    /// rotation or a reflection.
    pub fn canonical(self) -> ShapeKey {
        self.symmetries().into_iter().min().unwrap_or(self)
    }

    /// The key with the point at offset k moved to `to[k]` (colours and atari bits alike).
    fn permuted(self, to: &[usize; 20]) -> ShapeKey {
        let mut out = 0u64;
        for (k, &t) in to.iter().enumerate() {
            out |= self.cell(k) << cell_shift(t);
        }
        for (a, &k) in ADJACENT.iter().enumerate() {
            if self.0 >> (ATARI_SHIFT + a as u32) & 1 == 1 {
                let b = ADJACENT
                    .iter()
                    .position(|&j| j == to[k])
                    .expect("adjacent maps to adjacent");
                out |= 1 << (ATARI_SHIFT + b as u32);
            }
        }
        ShapeKey(out)
    }

    fn cell(self, k: usize) -> u64 {
        self.0 >> cell_shift(k) & 3
    }
}

/// Where offset k's two bits of colour lie in a key.
fn cell_shift(k: usize) -> u32 {
    if k < 8 {
        2 * k as u32
    } else {
        OUTER_SHIFT + 2 * (k as u32 - 8)
    }
}

/// For each of the eight symmetries, where each offset goes.
static PERMUTATIONS: std::sync::LazyLock<[[usize; 20]; 8]> = std::sync::LazyLock::new(|| {
    std::array::from_fn(|s| {
        std::array::from_fn(|k| {
            let (dx, dy) = OFFSETS[k];
            let (x, y) = if s & 4 != 0 { (dy, dx) } else { (dx, dy) };
            let x = if s & 1 != 0 { -x } else { x };
            let y = if s & 2 != 0 { -y } else { y };
            OFFSETS
                .iter()
                .position(|&o| o == (x, y))
                .expect("the offsets are closed under symmetry")
        })
    })
});

impl Board {
    /// The shape of a move by `mover` at `p` (any point of the board; its own colour is
    /// not part of the key).
    pub fn shape_key(&self, p: Point, mover: Color) -> ShapeKey {
        let me = stone(mover);
        let (w, h) = (self.width() as i16, self.height() as i16);
        let mut key = 0u64;
        for (k, &(dx, dy)) in OFFSETS.iter().enumerate() {
            let (x, y) = (p.x as i16 + dx as i16, p.y as i16 + dy as i16);
            let v = if x < 0 || y < 0 || x >= w || y >= h {
                OFF
            } else {
                let i = self.index(Point::new(x as u8, y as u8));
                match self.cell(i) {
                    EMPTY => 0,
                    BORDER => OFF,
                    c if c == me => OWN,
                    _ => OPPONENT,
                }
            };
            key |= v << cell_shift(k);
            if matches!(v, OWN | OPPONENT)
                && let Some(a) = ADJACENT.iter().position(|&j| j == k)
                && self.chain_in_atari(self.head(self.index(Point::new(x as u8, y as u8))))
            {
                key |= 1 << (ATARI_SHIFT + a as u32);
            }
        }
        ShapeKey(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(rows: &[&str]) -> Board {
        Board::from_rows(rows).unwrap()
    }

    #[test]
    fn the_eight_orientations_of_a_shape_share_one_canonical_key() {
        // A shape near the top edge and its mirror image.
        let a = board(&["......", ".XO...", ".OX...", "......", "......", "......"]);
        let b = board(&["......", "...OX.", "...XO.", "......", "......", "......"]);
        let ka = a.shape_key(Point::new(1, 0), Color::Black);
        let kb = b.shape_key(Point::new(4, 0), Color::Black);
        assert_ne!(ka, kb);
        assert_eq!(ka.canonical(), kb.canonical());
        assert!(ka.symmetries().contains(&kb));
        // The other colour to move sees the colours swapped: another shape.
        assert_ne!(a.shape_key(Point::new(1, 0), Color::White).canonical(), ka.canonical());
    }

    #[test]
    fn edges_atari_and_the_small_key() {
        let b = board(&["X....", "O....", ".....", ".....", "....."]);
        // Right of the black stone in the corner, whose one liberty this point is.
        let k = b.shape_key(Point::new(1, 0), Color::White);
        // Off the board above: ring cells 0, 1, 2 and the outer (0,-2), (-1,-2), (1,-2).
        for off in [0, 1, 2, 8, 12, 13] {
            assert_eq!(k.cell(off), OFF, "offset {off}");
        }
        assert_eq!(k.cell(3), OPPONENT, "the black stone to the left, from White's view");
        assert_eq!(k.cell(5), OWN, "the white stone below-left");
        assert_eq!(
            k.0 >> ATARI_SHIFT & 0xF,
            0b0010,
            "the black chain on the left is in atari"
        );
        assert_eq!(k.small().0 >> OUTER_SHIFT, 0);
        assert_eq!(k.small(), ShapeKey(k.0 & 0xF_FFFF));
        // Every orientation keeps the atari bit on the stone it belongs to.
        for s in k.symmetries() {
            assert_eq!((s.0 >> ATARI_SHIFT & 0xF).count_ones(), 1);
            assert_eq!(s.canonical(), k.canonical());
        }
    }
}
