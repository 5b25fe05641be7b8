//! SHA-256 commitments for nigiri (C1) and sealed moves (C3).

use sha2::{Digest, Sha256};
use weiqi_rules::Move;

/// Lower-case hex of SHA-256 of `text`.
pub fn sha256_hex(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
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
    sha256_hex(&format!("{}:{nonce}", move_text(m)))
}

/// Commitment to a nigiri handful: `sha256("<stones>:<nonce>")`.
pub fn nigiri_commitment(stones: u32, nonce: &str) -> String {
    sha256_hex(&format!("{stones}:{nonce}"))
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
