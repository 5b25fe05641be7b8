//! 128-bit Zobrist keys, generated at compile time from a fixed seed so that hashes are
//! stable across runs and machines. With 128 bits a chance collision is ~2^-64 even after
//! 2^32 positions; the superko check confirms every hit anyway (see `state.rs`).

use crate::board::MAX_CELLS;
use crate::rng::step as splitmix64;

const fn make_keys() -> [[u128; 2]; MAX_CELLS] {
    let mut keys = [[0u128; 2]; MAX_CELLS];
    let mut state = 0x5745_4951_4731_3238u64; // "WEIQI128"
    let mut i = 0;
    while i < MAX_CELLS {
        let mut c = 0;
        while c < 2 {
            let (s1, hi) = splitmix64(state);
            let (s2, lo) = splitmix64(s1);
            state = s2;
            keys[i][c] = ((hi as u128) << 64) | lo as u128;
            c += 1;
        }
        i += 1;
    }
    keys
}

/// `KEYS[cell][colour index]`.
pub(crate) static KEYS: [[u128; 2]; MAX_CELLS] = make_keys();

/// Hash of the empty board (non-zero so that zero can mark an empty slot).
pub(crate) const EMPTY_BOARD: u128 = 0x243F_6A88_85A3_08D3_1319_8A2E_0370_7344;

/// Mixed in for "White to move" by situational superko.
pub(crate) const WHITE_TO_MOVE: u128 = 0xA409_3822_299F_31D0_082E_FA98_EC4E_6C89;
