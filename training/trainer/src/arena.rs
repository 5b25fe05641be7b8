//! Pitting two players against each other: win rate with a confidence interval.

use rand::SeedableRng;
use rand::rngs::SmallRng;
use weiqi_rules::{Color, Move, Policy, Rules, State};

/// Something that picks moves.
pub trait Player {
    /// A move for the player to move; `history` holds the boards so far (as
    /// [`weiqi_selfplay::cells`]), the current one last.
    fn choose(&mut self, state: &State, history: &[Vec<u8>], rng: &mut SmallRng) -> Move;
    fn name(&self) -> String;
    /// Why the player stopped choosing real moves (an external engine that failed): its
    /// games' results are then not a measurement.
    fn failure(&self) -> Option<String> {
        None
    }
}

/// A search-free random policy.
pub struct RandomPlayer(pub Policy);

impl Player for RandomPlayer {
    fn choose(&mut self, state: &State, _history: &[Vec<u8>], rng: &mut SmallRng) -> Move {
        state.clone().choose_random(self.0, rng)
    }
    fn name(&self) -> String {
        format!("{:?}", self.0).to_lowercase()
    }
}

/// Result of an arena run, from player A's side.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ArenaResult {
    pub a: String,
    pub b: String,
    pub games: u32,
    pub a_wins: u32,
    pub b_wins: u32,
    pub draws: u32,
    /// A's score rate (draws count half).
    pub a_rate: f64,
    /// 95% Wilson score interval of A's rate.
    pub ci95: (f64, f64),
}

/// Plays `games` games between `a` and `b`, alternating colours (A is Black in even
/// games), scored by area with every stone alive. The first `opening` plies of every game
/// are random (light policy, seeded per game): two deterministic players would otherwise
/// replay the same two games over and over.
pub fn arena(
    a: &mut dyn Player,
    b: &mut dyn Player,
    games: u32,
    size: u8,
    rules: Rules,
    seed: u64,
    opening: usize,
) -> ArenaResult {
    let (mut aw, mut bw, mut dr) = (0, 0, 0);
    let max_moves = weiqi_rules::move_cap(size);
    for g in 0..games {
        let mut rng = SmallRng::seed_from_u64(seed.wrapping_add(g as u64));
        let mut state = State::new(size, rules).expect("size");
        let mut history = vec![weiqi_selfplay::cells(&state, size as usize)];
        let a_color = if g % 2 == 0 { Color::Black } else { Color::White };
        while !state.is_over() && state.move_number() < max_moves {
            let mover: &mut dyn Player = if state.to_move() == a_color { &mut *a } else { &mut *b };
            let mv = if state.move_number() < opening {
                state.clone().choose_random(Policy::Light, &mut rng)
            } else {
                mover.choose(&state, &history, &mut rng)
            };
            let mv = if state.is_legal(mv) { mv } else { Move::Pass };
            state.play(mv).expect("legal");
            history.push(weiqi_selfplay::cells(&state, size as usize));
        }
        match state.tromp_taylor_score().outcome.winner() {
            Some(c) if c == a_color => aw += 1,
            Some(_) => bw += 1,
            None => dr += 1,
        }
    }
    let rate = (aw as f64 + 0.5 * dr as f64) / games.max(1) as f64;
    ArenaResult {
        a: a.name(),
        b: b.name(),
        games,
        a_wins: aw,
        b_wins: bw,
        draws: dr,
        a_rate: rate,
        ci95: weiqi_rating::wilson95(aw as f64 + 0.5 * dr as f64, games as f64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_interval() {
        let (lo, hi) = weiqi_rating::wilson95(95.0, 100.0);
        assert!(lo > 0.88 && lo < 0.9 && hi > 0.97 && hi < 0.99, "{lo} {hi}");
        assert_eq!(weiqi_rating::wilson95(0.0, 0.0), (0.0, 1.0));
    }

    #[test]
    fn light_beats_uniform() {
        let r = arena(
            &mut RandomPlayer(Policy::Light),
            &mut RandomPlayer(Policy::Uniform),
            40,
            7,
            Rules::default().with_komi(0.5),
            1,
            0,
        );
        assert_eq!(r.a_wins + r.b_wins + r.draws, 40);
        assert!(r.a_rate > 0.6, "{r:?}");
    }
}
