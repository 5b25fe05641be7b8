//! Seat tokens: random or derived from the request id (so a retried CreateGame/JoinGame
//! returns the same token), and stored only as SHA-256 hashes; and a call's bearer
//! credential.

use sha2::{Digest, Sha256};
use tonic::metadata::MetadataMap;
use tonic::{Request, Status};
use weiqi_players::PlayerRecord;

use crate::players::Players;

pub use weiqi_game::{sha256_hex, sha256_hex_array};

/// HMAC-SHA256 (RFC 2104).
fn hmac(key: &[u8], msg: &[u8]) -> [u8; 32] {
    let mut k = [0u8; 64];
    if key.len() > 64 {
        k[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha256::new();
    inner.update(k.map(|b| b ^ 0x36));
    inner.update(msg);
    let mut outer = Sha256::new();
    outer.update(k.map(|b| b ^ 0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
}

/// A keyed value that only the server can compute.
pub fn derive(secret: &[u8], parts: &[&str]) -> String {
    hex::encode(hmac(secret, parts.join("\u{1f}").as_bytes()))
}

pub fn random_hex(bytes: usize) -> String {
    let mut b = vec![0u8; bytes];
    rand::fill(&mut b[..]);
    hex::encode(b)
}

/// The bearer token of a call, if any.
pub fn bearer(meta: &MetadataMap) -> Option<String> {
    let v = meta.get("authorization")?.to_str().ok()?;
    let t = v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer "))?;
    Some(t.trim().to_string())
}

/// The player a call's bearer credential names (for the player and tournament services);
/// UNAUTHENTICATED without a valid one.
pub async fn signed_in<T>(players: &Players, request: &Request<T>, now_ms: u64) -> Result<PlayerRecord, Status> {
    Ok(players.signed_in(bearer(request.metadata()).as_deref(), now_ms).await?)
}

#[cfg(test)]
mod tests {
    #[test]
    fn hex_on_the_stack_is_the_stored_form() {
        let h = super::sha256_hex_array(b"token");
        assert_eq!(&h[..], super::sha256_hex(b"token").as_bytes());
    }

    #[test]
    fn hmac_rfc4231_case_2() {
        let mac = super::hmac(b"Jefe", b"what do ya want for nothing?");
        assert_eq!(
            hex::encode(mac),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
