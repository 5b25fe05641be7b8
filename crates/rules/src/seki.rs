//! Seki at the end of a game: chains that live without two eyes because neither side can
//! approach them.
//!
//! Random playouts do not respect seki (one side fills a shared liberty, the other
//! captures), so the ownership estimate calls one side of it dead. A chain is in seki here
//! when it has at least two liberties and either
//! - an opposing chain next to it has exactly its liberties, and filling any of them
//!   (either side) captures nothing and gains no liberty: neither has an eye or an outside
//!   liberty, and whoever fills the shared ones runs out first;
//! - or it shares a liberty with an opposing chain, neither side can play on any liberty
//!   of it without putting its own chain in atari (or playing suicide), and each opposing
//!   chain that shares one can play on its own liberties only that way or without gaining
//!   a liberty outside ours: one eye each and a shared liberty, for example.
//!
//! Sekis that need more (a chain's eye shared with a third chain, false eyes, one eye
//! against one eye with outside liberties) are not recognised.

use crate::board::{Board, EMPTY, stone};
use crate::color::Color;
use crate::coord::Point;

/// Every stone of a chain in seki by the test below, and of the opposing chains that share
/// its liberties (the other side of the same seki, which may itself be able to fill a
/// liberty of its own without self-atari), sorted by row from the top, then column: what
/// GTP's `final_status_list seki` lists at the end of a game.
pub fn seki_stones(board: &Board) -> Vec<Point> {
    let mut seen = vec![false; board.cell_count()];
    let mut listed = vec![false; board.cell_count()];
    for p in board.points() {
        let Some(owner) = board.get(p) else { continue };
        if seen[board.index(p)] {
            continue;
        }
        let chain = board.chain_points(p);
        for q in &chain {
            seen[board.index(*q)] = true;
        }
        if in_seki(board, &chain) {
            let rivals = rivals_at(board, &liberty_cells(board, &chain), owner.opponent());
            for q in chain.iter().chain(rivals.iter().flatten()) {
                listed[board.index(*q)] = true;
            }
        }
    }
    let mut out: Vec<Point> = board.points().filter(|p| listed[board.index(*p)]).collect();
    out.sort_by_key(|p| (p.y, p.x));
    out
}

/// Whether the chain (stones of one colour) is in seki by the test above.
fn in_seki(board: &Board, chain: &[Point]) -> bool {
    let Some(owner) = chain.first().and_then(|p| board.get(*p)) else {
        return false;
    };
    let liberties = liberty_cells(board, chain);
    // A chain in atari is taken by one move, seki or not.
    if liberties.len() < 2 {
        return false;
    }
    let rivals = rivals_at(board, &liberties, owner.opponent());
    if rivals.is_empty()
        || nakade(board, chain, &liberties)
        || rivals.iter().any(|r| nakade(board, r, &liberty_cells(board, r)))
    {
        return false;
    }
    // Equal liberties, all shared: filling one shortens both alike, so whoever fills first
    // is captured first, unless a fill captures a third chain or reaches an outside
    // liberty (then it is a race). The rival must also make more than three points with
    // the liberties: the nakade size, below which the filler's sacrifice can kill.
    let colours = [Color::Black, Color::White];
    if rivals
        .iter()
        .any(|r| r.len() + liberties.len() > 3 && liberty_cells(board, r) == liberties)
        && liberties.iter().all(|&l| {
            colours
                .iter()
                .all(|&c| fill_gains_nothing(board, l, c, liberties.len()))
        })
    {
        return true;
    }
    // Every liberty is self-atari for both sides; each opposing chain that shares one is
    // not in atari, we cannot play on its liberties either, and it can play on them only
    // without gaining a liberty outside ours (else it gains one first, then approaches).
    let rival = owner.opponent();
    stuck(board, &liberties)
        && rivals.iter().all(|r| {
            let theirs = liberty_cells(board, r);
            theirs.len() >= 2
                && theirs.iter().all(|&l| {
                    cramped(board, l, owner)
                        && (cramped(board, l, rival) || fill_stays_within(board, l, rival, &liberties))
                })
        })
}

/// Whether the chain and its liberties are three points or fewer inside one opposing
/// chain: its owner fills a liberty, is captured, and leaves the opponent a space too small
/// for two eyes (a nakade), so the chain kills rather than lives in seki.
fn nakade(board: &Board, chain: &[Point], liberties: &[usize]) -> bool {
    if chain.len() + liberties.len() > 3 {
        return false;
    }
    let Some(owner) = chain.first().and_then(|p| board.get(*p)) else {
        return false;
    };
    let mut enclosing: Option<Vec<Point>> = None;
    for i in chain.iter().map(|p| board.index(*p)).chain(liberties.iter().copied()) {
        for n in board.neighbors(i) {
            let v = board.cell(n);
            if v == EMPTY || v == stone(owner) {
                if liberties.contains(&n) || chain.iter().any(|p| board.index(*p) == n) {
                    continue;
                }
                return false;
            }
            if v != stone(owner.opponent()) {
                continue; // the board's edge
            }
            let p = board.point(n);
            match &enclosing {
                None => enclosing = Some(board.chain_points(p)),
                Some(e) if e.contains(&p) => {}
                Some(_) => return false,
            }
        }
    }
    enclosing.is_some()
}

/// The chains of colour `c` with a stone next to one of `liberties`.
fn rivals_at(board: &Board, liberties: &[usize], c: Color) -> Vec<Vec<Point>> {
    let mut out: Vec<Vec<Point>> = Vec::new();
    for &l in liberties {
        for n in board.neighbors(l) {
            if board.cell(n) != stone(c) {
                continue;
            }
            let p = board.point(n);
            if !out.iter().any(|r| r.contains(&p)) {
                out.push(board.chain_points(p));
            }
        }
    }
    out
}

/// Whether neither side can play on any of the liberties without self-atari.
fn stuck(board: &Board, liberties: &[usize]) -> bool {
    liberties
        .iter()
        .all(|&l| cramped(board, l, Color::Black) && cramped(board, l, Color::White))
}

/// Whether `c` filling the empty cell `i`, one of `n` shared liberties, captures nothing
/// and leaves its chain there with fewer than `n` liberties.
fn fill_gains_nothing(board: &Board, i: usize, c: Color, n: usize) -> bool {
    let Some(b) = fill_without_capture(board, i, c) else {
        return false;
    };
    let p = b.point(i);
    b.get(p).is_none() || b.liberties(p) < n
}

/// The board after `c` plays at the empty cell `i`, or None when that captures stones.
fn fill_without_capture(board: &Board, i: usize, c: Color) -> Option<Board> {
    let mut b = board.clone();
    let removed = b.place(i, stone(c));
    (removed[c.opponent().index()] == 0).then_some(b)
}

/// The chain's liberties by padded index, sorted.
fn liberty_cells(board: &Board, chain: &[Point]) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    for p in chain {
        for n in board.neighbors(board.index(*p)) {
            if board.cell(n) == EMPTY && !out.contains(&n) {
                out.push(n);
            }
        }
    }
    out.sort_unstable();
    out
}

/// Whether `c` playing at the empty cell `i` captures nothing and leaves its chain there
/// with liberties only among `within` (sorted padded indices).
fn fill_stays_within(board: &Board, i: usize, c: Color, within: &[usize]) -> bool {
    let Some(b) = fill_without_capture(board, i, c) else {
        return false;
    };
    let chain = b.chain_points(b.point(i));
    liberty_cells(&b, &chain)
        .iter()
        .all(|l| within.binary_search(l).is_ok())
}

/// Whether `c` playing at the empty cell `i` leaves its chain there with at most one
/// liberty after captures (self-atari or suicide).
fn cramped(board: &Board, i: usize, c: Color) -> bool {
    let mut b = board.clone();
    b.place(i, stone(c));
    let p = b.point(i);
    b.get(p).is_none() || b.liberties(p) <= 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(b: &Board, v: &str) -> Vec<Point> {
        b.chain_points(Point::from_gtp(v, b.width()).unwrap())
    }

    #[test]
    fn a_group_with_one_big_eye_and_no_shared_liberty_is_not_in_seki() {
        // White inside Black's wall with a two-point eye: the eye is not shared, so this is
        // a dead shape (the opponent plays inside, captures), not a seki.
        let b = Board::from_rows(&[
            "..x..", //
            "xxxxx", //
            "xoooo", //
            "xo..o", //
            "xoooo", //
        ])
        .unwrap();
        assert!(!in_seki(&b, &chain(&b, "B3")));
    }

    #[test]
    fn a_chain_the_opponent_can_approach_is_not_in_seki() {
        // Black's D1-E1-D2 chain has the liberties D3 and E2; White at D3 joins its wall and
        // keeps plenty of liberties: an approach, not a self-atari.
        let b = Board::from_rows(&[
            ".....", //
            ".....", //
            "ooo..", //
            "x.ox.", //
            "xxoxx", //
        ])
        .unwrap();
        assert!(!in_seki(&b, &chain(&b, "D2")));
    }

    #[test]
    fn a_stone_inside_a_straight_three_is_a_nakade_not_a_seki() {
        // Black B4 and White's chain both have exactly A4 and C4, but Black at A4, captured
        // at C4, leaves White a two-point eye: Black kills, so this is no seki (C6).
        let b = Board::from_rows(&[
            "ooooo", //
            ".x.oo", //
            "ooooo", //
            "xxxxx", //
            ".....", //
        ])
        .unwrap();
        assert!(!in_seki(&b, &chain(&b, "B4")));
        assert!(!in_seki(&b, &chain(&b, "A5")));
        assert!(seki_stones(&b).is_empty());
    }

    #[test]
    fn equal_liberties_are_a_race_when_a_fill_captures() {
        // As above, but Black D4 is a separate stone in atari: White at C4 captures it and
        // wins the race, so neither side is in seki.
        let b = Board::from_rows(&[
            "ooooo", //
            ".x.xo", //
            "ooooo", //
            "xxxxx", //
            ".....", //
        ])
        .unwrap();
        assert!(!in_seki(&b, &chain(&b, "B4")));
        assert!(!in_seki(&b, &chain(&b, "A5")));
    }
}
