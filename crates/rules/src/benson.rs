//! Pass-alive chains and territory (Benson's algorithm): what no sequence of opposing
//! moves can capture, even if the owner always passes. The safe core of dead-stone proposals.

use crate::board::{Board, EMPTY, stone};
use crate::color::Color;
use crate::coord::Point;

/// The pass-alive part of one colour's position.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PassAlive {
    /// Stones of the colour that are unconditionally alive.
    pub stones: Vec<Point>,
    /// Points (empty or opposing stones) of regions that are pass-alive territory: opposing
    /// stones there are dead whatever happens.
    pub territory: Vec<Point>,
}

/// Runs Benson's algorithm for colour `c`.
pub fn pass_alive(board: &Board, c: Color) -> PassAlive {
    let me = stone(c);
    let n = board.cell_count();
    let idx: Vec<usize> = board.indices().collect();

    // Chains of `me`, numbered densely.
    let mut chain_of = vec![usize::MAX; n];
    let mut n_chains = 0;
    for &i in &idx {
        if board.cell(i) == me && chain_of[i] == usize::MAX {
            let mut stack = vec![i];
            chain_of[i] = n_chains;
            while let Some(s) = stack.pop() {
                for nb in board.neighbors(s) {
                    if board.cell(nb) == me && chain_of[nb] == usize::MAX {
                        chain_of[nb] = n_chains;
                        stack.push(nb);
                    }
                }
            }
            n_chains += 1;
        }
    }

    // Regions: maximal connected sets of points not of colour `me`.
    let mut region_of = vec![usize::MAX; n];
    let mut regions: Vec<Vec<usize>> = Vec::new();
    for &i in &idx {
        let v = board.cell(i);
        if v != me && region_of[i] == usize::MAX {
            let r = regions.len();
            let mut pts = vec![i];
            region_of[i] = r;
            let mut k = 0;
            while k < pts.len() {
                let s = pts[k];
                k += 1;
                for nb in board.neighbors(s) {
                    let w = board.cell(nb);
                    if (w == EMPTY || w == (me ^ 3)) && region_of[nb] == usize::MAX {
                        region_of[nb] = r;
                        pts.push(nb);
                    }
                }
            }
            regions.push(pts);
        }
    }

    // For each region: the chains bordering it, and the chains for which it is "vital"
    // (every empty point of the region is a liberty of that chain).
    let mut borders: Vec<Vec<usize>> = vec![Vec::new(); regions.len()];
    let mut vital_for: Vec<Vec<usize>> = vec![Vec::new(); regions.len()];
    for (r, pts) in regions.iter().enumerate() {
        for &s in pts {
            for nb in board.neighbors(s) {
                let ch = chain_of[nb];
                if ch != usize::MAX && !borders[r].contains(&ch) {
                    borders[r].push(ch);
                }
            }
        }
        for &ch in &borders[r] {
            let vital = pts
                .iter()
                .filter(|&&s| board.cell(s) == EMPTY)
                .all(|&s| board.neighbors(s).iter().any(|&nb| chain_of[nb] == ch));
            if vital {
                vital_for[r].push(ch);
            }
        }
    }

    let mut chain_alive = vec![true; n_chains];
    let mut region_alive = vec![true; regions.len()];
    loop {
        // A chain needs two healthy regions that are vital to it.
        let mut vital_count = vec![0u32; n_chains];
        for r in 0..regions.len() {
            if region_alive[r] {
                for &ch in &vital_for[r] {
                    vital_count[ch] += 1;
                }
            }
        }
        let mut changed = false;
        for ch in 0..n_chains {
            if chain_alive[ch] && vital_count[ch] < 2 {
                chain_alive[ch] = false;
                changed = true;
            }
        }
        // A region bordering a removed chain is no longer healthy.
        for r in 0..regions.len() {
            if region_alive[r] && borders[r].iter().any(|&ch| !chain_alive[ch]) {
                region_alive[r] = false;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }

    let mut out = PassAlive::default();
    for &i in &idx {
        if chain_of[i] != usize::MAX && chain_alive[chain_of[i]] {
            out.stones.push(board.point(i));
        }
    }
    for (r, pts) in regions.iter().enumerate() {
        // Territory: healthy, bordered only by pass-alive chains, and vital to one of them.
        if region_alive[r] && !borders[r].is_empty() && !vital_for[r].is_empty() {
            out.territory.extend(pts.iter().map(|&s| board.point(s)));
        }
    }
    out
}

/// Opposing stones inside either colour's pass-alive territory: dead beyond dispute.
pub fn unconditionally_dead(board: &Board) -> Vec<Point> {
    let mut dead = Vec::new();
    for c in [Color::Black, Color::White] {
        for p in pass_alive(board, c).territory {
            if board.get(p) == Some(c.opponent()) {
                dead.push(p);
            }
        }
    }
    dead
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_eyes_are_pass_alive() {
        let b = Board::from_rows(&[".x.x.", "xxxxx", ".....", ".....", "....."]).unwrap();
        let pa = pass_alive(&b, Color::Black);
        assert_eq!(pa.stones.len(), 7);
        assert_eq!(pa.territory.len(), 3);
        assert!(pass_alive(&b, Color::White).stones.is_empty());
    }

    #[test]
    fn one_eye_is_not() {
        let b = Board::from_rows(&["..x..", "xxx..", ".....", ".....", "....."]).unwrap();
        assert!(pass_alive(&b, Color::Black).stones.is_empty());
    }

    #[test]
    fn stone_in_pass_alive_territory_is_dead() {
        let b = Board::from_rows(&["o.x.x", "xxxxx", ".....", ".....", "....."]).unwrap();
        // The white stone sits in an eye that is vital to the black wall.
        let dead = unconditionally_dead(&b);
        assert_eq!(dead, vec![Point::new(0, 0)]);
    }
}
