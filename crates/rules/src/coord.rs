//! Board coordinates and their text notations (SGF and GTP).

use std::fmt;

/// Largest supported board side (R1).
pub const MAX_SIZE: u8 = 25;
/// Smallest supported board side (R1).
pub const MIN_SIZE: u8 = 2;

/// A point on the board: `x` is the column from the left, `y` the row from the top
/// (the SGF convention), both 0-based.
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Point {
    pub x: u8,
    pub y: u8,
}

impl Point {
    pub const fn new(x: u8, y: u8) -> Point {
        Point { x, y }
    }

    /// SGF notation, `aa` is the top-left corner. Letters go up to `y` (25 columns).
    pub fn to_sgf(self) -> String {
        let mut s = String::with_capacity(2);
        s.push((b'a' + self.x) as char);
        s.push((b'a' + self.y) as char);
        s
    }

    /// Parses SGF notation (`aa`..`yy`), without checking a board size.
    pub fn from_sgf(s: &str) -> Option<Point> {
        let b = s.as_bytes();
        if b.len() != 2 || !b[0].is_ascii_lowercase() || !b[1].is_ascii_lowercase() {
            return None;
        }
        Some(Point::new(b[0] - b'a', b[1] - b'a'))
    }

    /// GTP notation on a board `height` rows tall: column letter skipping `I`, row number
    /// counted from the bottom (`A1` is the bottom-left corner).
    pub fn to_gtp(self, height: u8) -> String {
        format!("{}{}", gtp_column_letter(self.x), height - self.y)
    }

    /// Parses GTP notation (case-insensitive, `I` is never a column) on a board `height`
    /// rows tall. Does not check the column against the width.
    pub fn from_gtp(s: &str, height: u8) -> Option<Point> {
        let s = s.trim();
        let mut chars = s.chars();
        let letter = chars.next()?.to_ascii_uppercase();
        if !letter.is_ascii_uppercase() || letter == 'I' {
            return None;
        }
        let mut x = letter as u8 - b'A';
        if letter > 'I' {
            x -= 1;
        }
        let row: u8 = chars.as_str().parse().ok()?;
        if row == 0 || row > height {
            return None;
        }
        Some(Point::new(x, height - row))
    }
}

fn gtp_column_letter(x: u8) -> char {
    let c = b'A' + x;
    (if c >= b'I' { c + 1 } else { c }) as char
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {})", self.x, self.y)
    }
}

/// One turn's action (R2): place a stone or pass.
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Move {
    Place(Point),
    Pass,
}

impl Move {
    /// GTP text: `D4` or `pass`.
    pub fn to_gtp(self, height: u8) -> String {
        match self {
            Move::Place(p) => p.to_gtp(height),
            Move::Pass => "pass".to_string(),
        }
    }

    /// Parses GTP text: a vertex or `pass` (any case).
    pub fn from_gtp(s: &str, height: u8) -> Option<Move> {
        if s.trim().eq_ignore_ascii_case("pass") {
            Some(Move::Pass)
        } else {
            Point::from_gtp(s, height).map(Move::Place)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gtp_skips_i() {
        assert_eq!(Point::new(7, 18).to_gtp(19), "H1");
        assert_eq!(Point::new(8, 18).to_gtp(19), "J1");
        assert_eq!(Point::new(18, 0).to_gtp(19), "T19");
        assert_eq!(Point::from_gtp("j1", 19), Some(Point::new(8, 18)));
        assert_eq!(Point::from_gtp("I5", 19), None);
        assert_eq!(Point::from_gtp("A20", 19), None);
        assert_eq!(Point::from_gtp("A0", 19), None);
        assert_eq!(Point::new(24, 0).to_gtp(25), "Z25");
    }

    #[test]
    fn sgf_round_trip() {
        for x in 0..MAX_SIZE {
            for y in 0..MAX_SIZE {
                let p = Point::new(x, y);
                assert_eq!(Point::from_sgf(&p.to_sgf()), Some(p));
                assert_eq!(Point::from_gtp(&p.to_gtp(MAX_SIZE), MAX_SIZE), Some(p));
            }
        }
    }
}
