//! The 8 symmetries of a square board (4 of a rectangular one).

use crate::coord::{Move, Point};

/// A rotation/reflection: optional transpose, then optional flips.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Symmetry {
    pub transpose: bool,
    pub flip_x: bool,
    pub flip_y: bool,
}

impl Symmetry {
    /// All 8 symmetries; index 0 is the identity.
    pub const ALL: [Symmetry; 8] = {
        let mut all = [Symmetry {
            transpose: false,
            flip_x: false,
            flip_y: false,
        }; 8];
        let mut k = 0;
        while k < 8 {
            all[k] = Symmetry {
                transpose: k & 4 != 0,
                flip_x: k & 1 != 0,
                flip_y: k & 2 != 0,
            };
            k += 1;
        }
        all
    };

    /// Maps a point on a `width` x `height` board. A transposing symmetry needs a square board.
    pub fn apply(self, p: Point, width: u8, height: u8) -> Point {
        let (mut x, mut y, mut w, mut h) = (p.x, p.y, width, height);
        if self.transpose {
            (x, y, w, h) = (y, x, h, w);
        }
        if self.flip_x {
            x = w - 1 - x;
        }
        if self.flip_y {
            y = h - 1 - y;
        }
        Point::new(x, y)
    }

    pub fn apply_move(self, m: Move, width: u8, height: u8) -> Move {
        match m {
            Move::Place(p) => Move::Place(self.apply(p, width, height)),
            Move::Pass => Move::Pass,
        }
    }

    /// The symmetry that undoes this one.
    pub fn inverse(self) -> Symmetry {
        if self.transpose {
            // (flip after transpose)^-1 = transpose after the swapped flips.
            Symmetry {
                transpose: true,
                flip_x: self.flip_y,
                flip_y: self.flip_x,
            }
        } else {
            self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_undoes() {
        for s in Symmetry::ALL {
            for x in 0..5 {
                for y in 0..5 {
                    let p = Point::new(x, y);
                    assert_eq!(s.inverse().apply(s.apply(p, 5, 5), 5, 5), p);
                }
            }
        }
    }
}
