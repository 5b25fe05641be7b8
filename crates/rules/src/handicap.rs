//! Star points (R1) and fixed handicap placement (R9).

use crate::coord::Point;

/// Invalid handicap request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HandicapError {
    #[error("{stones} handicap stones are not available on a {size}x{size} board (at most {max})")]
    TooMany { stones: u32, size: u8, max: u32 },
    #[error("board size {0} is not supported")]
    BadSize(u8),
    #[error("handicap point {0} is off the board or used twice")]
    BadPoint(Point),
}

/// Distance of the corner star points from the edge (0-based line).
fn corner_line(size: u8) -> u8 {
    if size >= 13 { 3 } else { 2 }
}

/// Most fixed handicap stones a board allows: 9 on odd boards from 7x7, 4 on even ones.
pub fn max_fixed_handicap(size: u8) -> u32 {
    if size < 7 {
        0
    } else if size % 2 == 1 {
        9
    } else {
        4
    }
}

/// The standard fixed handicap points (as in GTP `fixed_handicap`): corners first, then
/// sides, the centre for odd counts.
pub fn fixed_handicap(size: u8, stones: u32) -> Result<Vec<Point>, HandicapError> {
    if !(crate::coord::MIN_SIZE..=crate::coord::MAX_SIZE).contains(&size) {
        return Err(HandicapError::BadSize(size));
    }
    if stones < 2 {
        return Ok(Vec::new());
    }
    let max = max_fixed_handicap(size);
    if stones > max {
        return Err(HandicapError::TooMany { stones, size, max });
    }
    let lo = corner_line(size);
    let hi = size - 1 - lo;
    let mid = size / 2;
    // In GTP terms on 19x19: D4, Q16, D16, Q4, D10, Q10, K4, K16, K10.
    let (bl, tr, tl, br) = (
        Point::new(lo, hi),
        Point::new(hi, lo),
        Point::new(lo, lo),
        Point::new(hi, hi),
    );
    let (l, r, b, t, c) = (
        Point::new(lo, mid),
        Point::new(hi, mid),
        Point::new(mid, hi),
        Point::new(mid, lo),
        Point::new(mid, mid),
    );
    let pts = match stones {
        2 => vec![bl, tr],
        3 => vec![bl, tr, tl],
        4 => vec![bl, tr, tl, br],
        5 => vec![bl, tr, tl, br, c],
        6 => vec![bl, tr, tl, br, l, r],
        7 => vec![bl, tr, tl, br, l, r, c],
        8 => vec![bl, tr, tl, br, l, r, b, t],
        _ => vec![bl, tr, tl, br, l, r, b, t, c],
    };
    Ok(pts)
}

/// Star points (hoshi) as usually drawn: 9 on odd boards from 15x15 (19x19 included),
/// corners and centre on odd boards 7..13, corners on even boards from 8x8, none below.
pub fn star_points(size: u8) -> Vec<Point> {
    let n = match size {
        s if s >= 15 && s % 2 == 1 => 9,
        s if s >= 7 && s % 2 == 1 => 5,
        s if s >= 8 => 4,
        _ => 0,
    };
    fixed_handicap(size, n).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nineteen_has_nine_star_points_r1() {
        let pts = star_points(19);
        assert_eq!(pts.len(), 9);
        let gtp: Vec<String> = pts.iter().map(|p| p.to_gtp(19)).collect();
        for v in ["D4", "Q16", "D16", "Q4", "D10", "Q10", "K4", "K16", "K10"] {
            assert!(gtp.contains(&v.to_string()), "{v}");
        }
        assert_eq!(star_points(9).len(), 5);
        assert_eq!(star_points(13).len(), 5);
        assert!(star_points(5).is_empty());
    }

    #[test]
    fn handicap_counts_r9() {
        for n in 2..=9 {
            let pts = fixed_handicap(19, n).unwrap();
            assert_eq!(pts.len(), n as usize);
        }
        assert_eq!(fixed_handicap(19, 2).unwrap()[0].to_gtp(19), "D4");
        assert!(fixed_handicap(19, 10).is_err());
        assert!(fixed_handicap(8, 5).is_err());
        assert!(fixed_handicap(5, 2).is_err());
    }
}
