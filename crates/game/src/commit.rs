//! SHA-256 commitments for nigiri (C1) and sealed moves (C3).

use sha2::{Digest, Sha256};
use weiqi_rules::Move;

/// Lower-case hex of SHA-256 of `data` (commitments here; the server's token hashes too).
pub fn sha256_hex(data: impl AsRef<[u8]>) -> String {
    hex::encode(Sha256::digest(data.as_ref()))
}

/// [`sha256_hex`] on the stack: the server hashes a token on every mutating call to compare
/// it with the stored hashes, and needs no allocation for that.
pub fn sha256_hex_array(data: &[u8]) -> [u8; 64] {
    let mut hex = [0u8; 64];
    // (64 bytes are exactly what 32 need: encoding cannot fail.)
    let _ = hex::encode_to_slice(Sha256::digest(data), &mut hex);
    hex
}

/// The canonical text of a move inside a commitment: SGF coordinates, `pass` for a pass.
pub fn move_text(m: Move) -> String {
    match m {
        Move::Place(p) => p.to_sgf(),
        Move::Pass => "pass".into(),
    }
}

/// Commitment to a sealed move: `sha256("<move>:<nonce>")`.
pub fn seal_commitment(m: Move, nonce: &str) -> String {
    sha256_hex(format!("{}:{nonce}", move_text(m)))
}

/// Commitment to a nigiri handful: `sha256("<stones>:<nonce>")`.
pub fn nigiri_commitment(stones: u32, nonce: &str) -> String {
    sha256_hex(format!("{stones}:{nonce}"))
}

/// Whether `s` looks like a SHA-256 hex digest.
pub fn is_digest(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_vector() {
        assert_eq!(
            super::sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
