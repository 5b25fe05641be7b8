//! A teacher for the loop's first generation (issue 48, `LoopConfig::teacher`): instead
//! of light random playouts, generation 0 plays the project's own tree search
//! ([`weiqi_gtp::MctsPlayer`], heavy playouts), and records its root visits as the
//! policy targets. The first network then starts from a player of GNU Go's strength
//! rather than from random play: the cheapest knowledge per CPU second there is here
//! (the search needs no network), as bootstrapping from an existing engine's games is in
//! supervised-then-reinforced Go programs.

use rand::Rng;
use rand::rngs::SmallRng;
use weiqi_gtp::{Budget, Choice, MctsPlayer, MctsSettings};
use weiqi_rules::{Move, Policy, Rules, State};
use weiqi_selfplay::{GameData, move_index, play_game_with};

/// One game of the tree search against itself, `playouts` a move, seeded by `id`: the
/// first `sampled_plies` moves drawn in proportion to the root's visits (so games differ),
/// then the search's own choice, passes and all; every position recorded with the root's
/// visit distribution as its target.
pub fn teacher_game(
    size: u8,
    rules: Rules,
    playouts: u32,
    id: u64,
    max_moves: usize,
    sampled_plies: usize,
) -> GameData {
    let mut player = MctsPlayer::new(MctsSettings {
        playouts,
        threads: 1,
        seed: id,
        policy: Policy::Heavy,
        // Played out to the end: the value target is the counted result.
        resign_below: 0.0,
        shape_prior: weiqi_gtp::DEFAULT_SHAPE_PRIOR,
    });
    let n = size as usize;
    play_game_with(
        size,
        rules,
        id,
        id,
        max_moves,
        false,
        &mut |state: &mut State, _, rng: &mut SmallRng| {
            // (Bounded by its playouts, not by time.)
            let budget = Budget {
                time: std::time::Duration::from_secs(24 * 3600),
            };
            let (choice, candidates) = player.decide(state, state.to_move(), budget, false);
            let total: u32 = candidates.iter().map(|c| c.visits).sum();
            let mv = match choice {
                Choice::Play(mv) if state.move_number() >= sampled_plies || total == 0 => mv,
                Choice::Play(_) => {
                    let mut x = rng.random_range(0..total);
                    candidates
                        .iter()
                        .find(|c| {
                            let hit = x < c.visits;
                            x = x.saturating_sub(c.visits);
                            hit
                        })
                        .map_or(Move::Pass, |c| c.mv)
                }
                // (Never: it does not resign; a failure passes.)
                _ => Move::Pass,
            };
            if total == 0 {
                return (mv, None);
            }
            let mut target = vec![0.0f32; n * n + 1];
            for c in &candidates {
                target[move_index(c.mv, n)] = c.visits as f32 / total as f32;
            }
            (mv, Some(target))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use weiqi_rules::Preset;

    /// A teacher game on 5x5 is legal to the end, ends by two passes, and its targets are
    /// visit distributions over legal moves whose mass sits on the move played after the
    /// sampled opening.
    #[test]
    fn teacher_games_are_legal_with_visit_targets() {
        let rules = Preset::Chinese.rules().with_komi(0.5);
        let g = teacher_game(5, rules, 64, 3, 100, 2);
        assert!(g.positions > 4 && g.scored);
        let mut agree = 0;
        for i in 0..g.positions {
            let p = &g.policy[i * 26..(i + 1) * 26];
            let l = &g.legal[i * 26..(i + 1) * 26];
            assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-4);
            assert!(p.iter().zip(l).all(|(&p, &l)| p == 0.0 || l == 1));
            let spread = p.iter().filter(|&&x| x > 0.0).count();
            agree += (spread > 1) as usize;
        }
        assert!(agree > 0, "visit distributions, not one-hot");
        // Seeded: the same id, the same game.
        assert_eq!(teacher_game(5, rules, 64, 3, 100, 2).policy, g.policy);
    }
}
