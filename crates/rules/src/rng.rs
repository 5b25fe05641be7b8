//! SplitMix64 (Steele, Lea and Flood, 2014), the project's one small deterministic
//! generator: Zobrist keys at compile time, the dead-stone estimate's playouts, tournament
//! draws anyone can redo from their seed, and self-play's game ids. Its outputs are part
//! of stored and published data (hashes, draws, ids): they never change.

use rand_core::{RngCore, impls};

/// The golden-ratio increment.
pub const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's output function: a bijective mix of 64 bits.
pub const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One step from `state`: the next state and the output (usable in `const` code).
pub const fn step(state: u64) -> (u64, u64) {
    let s = state.wrapping_add(GAMMA);
    (s, mix64(s))
}

/// The generator; also a [`RngCore`].
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_value(&mut self) -> u64 {
        let (s, out) = step(self.0);
        self.0 = s;
        out
    }

    /// Uniform in `0..n` (n > 0), by rejection.
    pub fn below(&mut self, n: u64) -> u64 {
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let x = self.next_value();
            if x < zone {
                return x % n;
            }
        }
    }
}

impl RngCore for SplitMix64 {
    fn next_u32(&mut self) -> u32 {
        (self.next_value() >> 32) as u32
    }
    fn next_u64(&mut self) -> u64 {
        self.next_value()
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        impls::fill_bytes_via_next(self, dest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference sequence from seed 1234567 (Vigna's splitmix64.c): stored hashes,
    /// published draws and game ids depend on these never changing.
    #[test]
    fn the_outputs_are_the_reference_ones() {
        let mut r = SplitMix64(1234567);
        let got: Vec<u64> = (0..5).map(|_| r.next_value()).collect();
        assert_eq!(
            got,
            [
                6457827717110365317,
                3203168211198807973,
                9817491932198370423,
                4593380528125082431,
                16408922859458223821
            ]
        );
    }
}
