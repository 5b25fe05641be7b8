//! The heavy policy's tactics, in the spirit of MoGo's and Pachi's moggy playouts: answer
//! the last move by capturing, saving own chains put in atari (never into a working
//! ladder), or playing a 3x3 pattern next to it; never fill an own eye, avoid self-atari of
//! chains of two stones or more.
//! When no rule fires the caller falls back to a light move without big self-ataris.

use rand_core::RngCore;

use super::below;
use super::patterns::matches_pattern;
use crate::board::{BORDER, Board, EMPTY};

/// Chains at least this large are never put into self-atari (single stones may be: throw-ins
/// and nakade need them).
const SELF_ATARI_MIN: u32 = 2;

/// A tactical or pattern move answering `last` (0: none) for colour value `me`, or `None`.
/// `legal` is the caller's legality test (simple ko, or the exact rules).
pub(crate) fn choose<R: RngCore + ?Sized>(
    board: &Board,
    me: u8,
    last: usize,
    legal: impl Fn(usize) -> bool,
    rng: &mut R,
) -> Option<usize> {
    // One move in ten skips the rules: no fixed answer can then repeat forever (a cycle
    // of throw-in and capture under simple ko).
    if last == 0 || board.cell(last) != (me ^ 3) || below(rng, 10) == 0 {
        return None;
    }
    let good = |c: usize| !board.is_eye(c, me) && legal(c) && !is_self_atari(board, c, me, SELF_ATARI_MIN);
    // Capture the stone just played if it stands in atari.
    let h = board.head(last);
    if board.chain_in_atari(h) {
        let lib = board.atari_liberty(h);
        if good(lib) {
            return Some(lib);
        }
    }
    // Save own chains the last move put in atari: capture a neighbour in atari, or extend.
    for n in board.neighbors(last) {
        if board.cell(n) == me
            && board.chain_in_atari(board.head(n))
            && let Some(c) = save(board, board.head(n), me).filter(|&c| good(c))
        {
            return Some(c);
        }
    }
    // A 3x3 pattern on an empty point around the last move, chosen at random among those.
    let mut found = [0usize; 8];
    let mut k = 0;
    for c in ring(board, last) {
        // Pattern moves are never self-atari, not even of one stone.
        if board.cell(c) == EMPTY && matches_pattern(board, c) && good(c) && !is_self_atari(board, c, me, 1) {
            found[k] = c;
            k += 1;
        }
    }
    (k > 0).then(|| found[below(rng, k)])
}

/// The eight points around `i` (some may be border cells).
#[inline]
pub(crate) fn ring(board: &Board, i: usize) -> [usize; 8] {
    let [n, w, e, s] = board.neighbors(i);
    // The padded layout has no cell above-left of the first point: cell 0 (border) stands in.
    [n, w, e, s, n.saturating_sub(1), n + 1, s - 1, s + 1]
}

/// A move that saves the own chain `h` in atari: capture an adjacent opposing chain in
/// atari, else extend at its liberty when that leaves at least two liberties and no working
/// ladder.
fn save(board: &Board, h: usize, me: u8) -> Option<usize> {
    if let Some(capture) = capture_next_to(board, h, me) {
        return Some(capture);
    }
    let lib = board.atari_liberty(h);
    (libs_after(board, lib, me) >= 2 && escape_works(board, lib, me)).then_some(lib)
}

/// A lower bound on the distinct liberties of the chain `me` would form at empty `i`,
/// captures aside: empty neighbours, plus one for each joined chain that is not in atari.
#[inline]
pub(crate) fn libs_after(board: &Board, i: usize, me: u8) -> u32 {
    let mut libs = 0;
    for n in board.neighbors(i) {
        match board.cell(n) {
            EMPTY => libs += 1,
            v if v == me && !board.chain_in_atari(board.head(n)) => libs += 1,
            _ => {}
        }
    }
    libs
}

/// Whether `me` at empty `i` would leave a chain of [`SELF_ATARI_MIN`] stones or more with
/// one liberty and capture nothing.
#[inline]
pub(crate) fn is_big_self_atari(board: &Board, i: usize, me: u8) -> bool {
    is_self_atari(board, i, me, SELF_ATARI_MIN)
}

/// Whether `me` at empty `i` would leave a chain of `min_size` stones or more with one
/// liberty and capture nothing (liberties shared by joined chains are counted once each
/// chain: a quick bound, not an exact count).
/// [`is_self_atari`] for other modules (search priors).
pub(crate) fn is_self_atari_of(board: &Board, i: usize, me: u8, min_size: u32) -> bool {
    is_self_atari(board, i, me, min_size)
}

/// Stones of the chain a stone of `me` at `i` would make.
pub(crate) fn stones_joined(board: &Board, i: usize, me: u8) -> u32 {
    let mut heads = [0usize; 4];
    let mut k = 0;
    let mut size = 1;
    for n in board.neighbors(i) {
        if board.cell(n) == me {
            let h = board.head(n);
            if !heads[..k].contains(&h) {
                heads[k] = h;
                k += 1;
                size += board.chain_size(h);
            }
        }
    }
    size
}

#[inline]
fn is_self_atari(board: &Board, i: usize, me: u8, min_size: u32) -> bool {
    let mut size = 1;
    let mut empties = 0;
    let mut heads = [0usize; 4];
    let mut k = 0;
    for n in board.neighbors(i) {
        match board.cell(n) {
            EMPTY => empties += 1,
            BORDER => {}
            v if v == me => {
                let h = board.head(n);
                if !heads[..k].contains(&h) {
                    heads[k] = h;
                    k += 1;
                    size += board.chain_size(h);
                    if !board.chain_in_atari(h) {
                        // Two distinct liberties, at most one of them `i`.
                        empties += 1;
                    }
                }
            }
            _ => {
                if board.chain_in_atari(board.head(n)) {
                    return false; // captures: gains a liberty
                }
            }
        }
        if empties >= 2 {
            return false;
        }
    }
    size >= min_size
}

/// Positions a ladder read may visit before it gives up (calling the chain safe): ladders
/// branch little, so real ones end far below this; it bounds the pathological rest.
const LADDER_BUDGET: u32 = 200;

/// Up to three distinct liberties of the chain with head `h`, into `out`; how many found.
fn libs_upto3(board: &Board, h: usize, out: &mut [usize; 3]) -> usize {
    let mut k = 0;
    let mut s = h;
    loop {
        for n in board.neighbors(s) {
            if board.cell(n) == EMPTY && !out[..k].contains(&n) {
                out[k] = n;
                k += 1;
                if k == 3 {
                    return k;
                }
            }
        }
        s = board.next_stone(s);
        if s == h {
            return k;
        }
    }
}

/// Whether a stone of `me` at empty `i` (which must be legal) leaves its chain safe from a
/// ladder: three liberties or more, or two that the opponent cannot chase to a capture.
/// Escaping from atari into a working ladder only loses more stones (Michi's `fix_atari`
/// reads the same).
pub(crate) fn escape_works(board: &Board, i: usize, me: u8) -> bool {
    let mut b = board.clone();
    b.place(i, me);
    let h = b.head(i);
    let mut libs = [0; 3];
    match libs_upto3(&b, h, &mut libs) {
        0 | 1 => false,
        2 => {
            let mut budget = LADDER_BUDGET;
            !ladder_captures(&b, h, &mut budget)
        }
        _ => true,
    }
}

/// Whether the attacker (the opponent of the chain with head `h`, which has exactly two
/// liberties; the attacker to move) captures it by ataris the defender can only run from.
fn ladder_captures(board: &Board, h: usize, budget: &mut u32) -> bool {
    let defender = board.cell(h);
    let attacker = defender ^ 3;
    let mut libs = [0; 3];
    if libs_upto3(board, h, &mut libs) != 2 {
        return false;
    }
    for (x, y) in [(libs[0], libs[1]), (libs[1], libs[0])] {
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        if !board.is_legal_simple(x, attacker, false) {
            continue;
        }
        let mut b = board.clone();
        b.place(x, attacker);
        // The atari may be a self-atari the defender answers by capturing; and any
        // attacking chain next to the defender left in atari is a way out.
        if capture_next_to(&b, h, defender).is_some() {
            continue;
        }
        if !b.is_legal_simple(y, defender, false) {
            return true;
        }
        b.place(y, defender);
        let hd = b.head(y);
        match libs_upto3(&b, hd, &mut libs) {
            0 | 1 => return true,
            2 if ladder_captures(&b, hd, budget) => return true,
            _ => {}
        }
    }
    false
}

/// The point that captures an opposing chain in atari touching the chain with head `h`
/// (of `me`), if there is one.
fn capture_next_to(board: &Board, h: usize, me: u8) -> Option<usize> {
    let mut s = h;
    loop {
        for n in board.neighbors(s) {
            if board.cell(n) == (me ^ 3) && board.chain_in_atari(board.head(n)) {
                return Some(board.atari_liberty(board.head(n)));
            }
        }
        s = board.next_stone(s);
        if s == h {
            return None;
        }
    }
}

#[cfg(test)]
mod ladder_tests {
    use super::*;
    use crate::coord::Point;

    fn idx(b: &Board, x: u8, y: u8) -> usize {
        b.index(Point::new(x, y))
    }

    /// `rows` with black stones added at `extra` (x, y).
    fn with_black(rows: &[&str], extra: &[(usize, usize)]) -> Board {
        let mut r: Vec<Vec<char>> = rows.iter().map(|s| s.chars().collect()).collect();
        for &(x, y) in extra {
            r[y][x] = 'x';
        }
        let r: Vec<String> = r.into_iter().map(|row| row.into_iter().collect()).collect();
        Board::from_rows(&r).unwrap()
    }

    #[test]
    fn running_into_a_ladder_does_not_work_and_breakers_save_it() {
        // Black's e5 in atari from d5, f5 and e4; White's e7 above the escape. Running to
        // e6 leaves two liberties, and White can chase it up-left or up-right to the edge.
        let rows = [
            ".........",
            ".........",
            "....o....",
            ".........",
            "...oxo...",
            "....o....",
            ".........",
            ".........",
            ".........",
        ];
        let black = crate::board::BLACK;
        let b = with_black(&rows, &[]);
        let (stone, run) = (idx(&b, 4, 4), idx(&b, 4, 3));
        assert!(b.chain_in_atari(b.head(stone)));
        assert!(!escape_works(&b, run, black), "either ladder captures");
        // A breaker on one diagonal leaves the other ladder.
        assert!(!escape_works(&with_black(&rows, &[(7, 1)]), run, black));
        // Breakers on both diagonals: the run works.
        assert!(escape_works(&with_black(&rows, &[(7, 1), (1, 1)]), run, black));
        // Without e7 the run has three liberties: nothing to read.
        let mut open = rows;
        open[2] = ".........";
        assert!(escape_works(&with_black(&open, &[]), run, black));
    }
}
