//! The knockout: who goes on from the groups, in which bracket order, and the coins that
//! pick colours and settle what replays could not.

use crate::schedule::SplitMix64;

/// The knockout's first round, from each group's first and second (`None` where a group
/// has no such player). Cross pairings keep a group's two qualifiers apart until the
/// final: A1-B2, B1-A2, C1-D2, D1-C2, ...; one group plays its final at once (A1-A2).
pub fn first_round(qualifiers: &[[Option<String>; 2]]) -> Vec<Option<String>> {
    if qualifiers.len() == 1 {
        return qualifiers[0].to_vec();
    }
    let mut out = Vec::with_capacity(qualifiers.len() * 2);
    for pair in qualifiers.chunks(2) {
        let (a, b) = (&pair[0], pair.get(1).unwrap_or(&[None, None]).clone());
        out.extend([a[0].clone(), b[1].clone(), b[0].clone(), a[1].clone()]);
    }
    out
}

/// A fair coin from the published seed for a knockout board: anyone can redo it.
pub fn coin(seed: u64, round: u32, slot: u32, salt: u64) -> bool {
    let mut rng = SplitMix64(seed ^ (u64::from(round) << 40) ^ (u64::from(slot) << 8) ^ salt);
    rng.next_value() & 1 == 0
}

/// Salts, so that colours and lots are independent coins.
pub const COLOURS: u64 = 0x636f_6c6f_7572;
pub const LOTS: u64 = 0x6c6f_7473;

/// The smallest komi of the form n + 0.5 at least `komi`: a knockout game cannot end in a
/// draw on the board.
pub fn half_point_komi(komi: f64) -> f64 {
    (komi - 0.5).ceil() + 0.5
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(g: &str) -> [Option<String>; 2] {
        [Some(format!("{g}1")), Some(format!("{g}2"))]
    }

    #[test]
    fn cross_pairings_keep_a_groups_qualifiers_apart() {
        let s = |v: Vec<Option<String>>| v.into_iter().map(|x| x.unwrap_or_default()).collect::<Vec<_>>();
        assert_eq!(s(first_round(&[q("A")])), ["A1", "A2"]);
        assert_eq!(s(first_round(&[q("A"), q("B")])), ["A1", "B2", "B1", "A2"]);
        assert_eq!(
            s(first_round(&[q("A"), q("B"), q("C"), q("D")])),
            ["A1", "B2", "B1", "A2", "C1", "D2", "D1", "C2"]
        );
    }

    /// C9 + the issue: a knockout game must produce a winner, so its komi is a half point.
    #[test]
    fn knockout_komi_is_a_half_point() {
        assert_eq!(half_point_komi(7.5), 7.5);
        assert_eq!(half_point_komi(7.0), 7.5);
        assert_eq!(half_point_komi(6.8), 7.5);
        assert_eq!(half_point_komi(0.0), 0.5);
        assert_eq!(half_point_komi(-3.0), -2.5);
    }

    #[test]
    fn coins_are_fair_enough_and_repeatable() {
        let heads = (0..1000).filter(|&s| coin(s, 5, 1, COLOURS)).count();
        assert!((400..600).contains(&heads), "{heads}");
        assert_eq!(coin(7, 5, 1, COLOURS), coin(7, 5, 1, COLOURS));
    }
}
