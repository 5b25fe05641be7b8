//! Idempotency fingerprints: what makes two calls the same command.

use sha2::Digest;
use weiqi_rules::{Move, Point};

use crate::types::Command;

impl Command {
    /// What makes two calls the same command, for idempotency keys: 16 hex digits of the
    /// SHA-256 of a canonical text of the command, leaving out what a retry may change
    /// (the lag it measured) and what the server supplies (a seal's nonce, a join's
    /// entropy). Stable across versions: it is stored with the request id.
    pub fn fingerprint(&self) -> String {
        let pt = |p: &Point| format!("{},{}", p.x, p.y);
        let mv = |m: &Move| match m {
            Move::Place(p) => pt(p),
            Move::Pass => "pass".into(),
        };
        let pts = |ps: &[Point]| ps.iter().map(pt).collect::<Vec<_>>().join(";");
        let text = match self {
            Command::Create { .. } => "create".to_string(),
            Command::Join {
                player, nigiri_guess, ..
            } => {
                format!("join {nigiri_guess:?} {:?}", player.as_ref().map(|p| &p.id))
            }
            Command::RevealNigiri { stones, nonce } => format!("reveal {stones} {nonce}"),
            Command::CheckIn => "check_in".into(),
            Command::PlaceSeatStone { point } => format!("seat_stone {}", pt(point)),
            Command::CommitBid { commitment } => format!("commit_bid {commitment}"),
            Command::RevealBid { komi, nonce } => format!("reveal_bid {komi} {nonce}"),
            Command::PlaceHandicap { points } => format!("place_handicap {}", pts(points)),
            Command::Play { point, .. } => format!("play {}", pt(point)),
            Command::Pass { .. } => "pass".into(),
            Command::Resign => "resign".into(),
            Command::Cancel => "cancel".into(),
            Command::DeclareEnd => "declare_end".into(),
            Command::ProposeDead { stones } => format!("propose_dead {}", pts(stones)),
            Command::AcceptScore => "accept_score".into(),
            Command::DisputeScore => "dispute_score".into(),
            Command::RequestUndo => "request_undo".into(),
            Command::AnswerUndo { accept } => format!("answer_undo {accept}"),
            Command::OfferDraw => "offer_draw".into(),
            Command::AnswerDraw { accept } => format!("answer_draw {accept}"),
            Command::Seal { mv: m, .. } => format!("seal {}", mv(m)),
            Command::Resume => "resume".into(),
            Command::ClaimTimeout => "claim_timeout".into(),
            Command::Tick => "tick".into(),
            Command::CreditTime { ms } => format!("credit {ms}"),
            Command::Forfeit { seat } => format!("forfeit {seat:?}"),
            Command::ClaimAbandoned { draw } => format!("claim_abandoned {draw}"),
        };
        // The first 8 bytes of the digest, as 16 hex digits.
        hex::encode(&sha2::Sha256::digest(text.as_bytes())[..8])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fingerprint_is_the_first_16_hex_digits_of_the_commands_sha256() {
        // Stored with every request id: the value must never change for a command.
        // (python3 -c 'import hashlib; print(hashlib.sha256(b"resign").hexdigest()[:16])')
        assert_eq!(Command::Resign.fingerprint(), "06028c9760f4dfd1");
        assert_eq!(Command::Resign.fingerprint(), crate::commit::sha256_hex("resign")[..16]);
    }
}
