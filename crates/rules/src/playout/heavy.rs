//! The heavy policy's tactics, in the spirit of MoGo's and Pachi's moggy playouts: answer
//! the last move by capturing, saving own chains put in atari, or playing a 3x3 pattern
//! next to it; never fill an own eye, avoid self-atari of chains of two stones or more.
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
/// atari, else extend at its liberty when that leaves at least two liberties.
fn save(board: &Board, h: usize, me: u8) -> Option<usize> {
    let mut s = h;
    loop {
        for n in board.neighbors(s) {
            if board.cell(n) == (me ^ 3) && board.chain_in_atari(board.head(n)) {
                return Some(board.atari_liberty(board.head(n)));
            }
        }
        s = board.next_stone(s);
        if s == h {
            break;
        }
    }
    let lib = board.atari_liberty(h);
    (libs_after(board, lib, me) >= 2).then_some(lib)
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
