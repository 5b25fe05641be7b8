//! Playout settings: which policy, how much of the ko rule a playout checks, how long.

use super::Policy;

/// How much of the repetition rule a playout enforces.
///
/// Search engines (Pachi, libego, Fuego) check superko in the tree and only simple ko in
/// playouts: a playout's result is a statistic, and exact superko needs every earlier
/// position. `Simple` follows them; `Exact` plays through [`crate::State`] with the game's
/// own rule (superko included) and records the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum KoCheck {
    /// Only the immediate recapture of a single stone is refused; a longer cycle that
    /// superko forbids may be played (the only difference from `Exact`).
    Simple,
    /// The game's rules exactly, superko included.
    #[default]
    Exact,
}

/// A ko mode name that is neither `simple` nor `exact`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown ko check {0:?} (simple or exact)")]
pub struct BadKoCheck(pub String);

impl std::str::FromStr for KoCheck {
    type Err = BadKoCheck;
    fn from_str(s: &str) -> Result<KoCheck, BadKoCheck> {
        match s {
            "simple" => Ok(KoCheck::Simple),
            "exact" => Ok(KoCheck::Exact),
            _ => Err(BadKoCheck(s.to_string())),
        }
    }
}

impl std::fmt::Display for KoCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            KoCheck::Simple => "simple",
            KoCheck::Exact => "exact",
        })
    }
}

/// Everything a [`super::Playout`] needs to know besides the start position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlayoutOptions {
    pub policy: Policy,
    pub ko: KoCheck,
    /// Most plies one playout may play (passes included).
    pub max_moves: usize,
    /// Keep the moves played (for replaying them; costs a push per move).
    pub record: bool,
}

/// The most plies a game played out by programs may take on a `size`x`size` board: four
/// per point (light games end near one ply per point, so only a cycle reaches it). The one
/// cap for playouts, self-play, matches and the arena.
pub const fn move_cap(size: u8) -> usize {
    4 * size as usize * size as usize
}

impl PlayoutOptions {
    /// `policy` with simple ko, no record, and the [`move_cap`] of a `size`x`size` board.
    pub fn fast(policy: Policy, size: u8) -> PlayoutOptions {
        PlayoutOptions {
            policy,
            ko: KoCheck::Simple,
            max_moves: move_cap(size),
            record: false,
        }
    }
}
