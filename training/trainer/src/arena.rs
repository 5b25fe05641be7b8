//! Pitting two players against each other: win rate with a confidence interval. The
//! players are `weiqi-gtp`'s one [`Player`] trait, and each game is refereed by
//! [`weiqi_gtp::play_out`], as `weiqi match` referees engines: an illegal move or a
//! failing player forfeits, a resignation loses, the end is counted by area.

use std::time::Duration;

use rand::SeedableRng;
use rand::rngs::SmallRng;
use weiqi_gtp::{MatchSettings, play_out};
use weiqi_rules::{Color, Rules, State};

pub use weiqi_gtp::{EnginePlayer, Player, RandomPlayer};

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
/// games), refereed by `play_out` (counted by area). The first `opening` plies of every game
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
    // Untimed: the arena's players search by visits, play at once, or are engines with
    // their own time settings.
    let m = MatchSettings {
        max_moves: weiqi_rules::move_cap(size),
        opening,
        seconds_per_move: None,
        lag: Duration::ZERO,
    };
    for g in 0..games {
        let mut rng = SmallRng::seed_from_u64(seed.wrapping_add(g as u64));
        let start = State::new(size, rules).expect("size");
        let a_black = g % 2 == 0;
        let (black, white): (&mut dyn Player, &mut dyn Player) = if a_black {
            (&mut *a, &mut *b)
        } else {
            (&mut *b, &mut *a)
        };
        let played = play_out(black, white, start, &m, &mut rng);
        match played.winner {
            Some(c) if (c == Color::Black) == a_black => aw += 1,
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
    use weiqi_rules::Policy;

    #[test]
    fn wilson_interval() {
        let (lo, hi) = weiqi_rating::wilson95(95.0, 100.0);
        assert!(lo > 0.88 && lo < 0.9 && hi > 0.97 && hi < 0.99, "{lo} {hi}");
        assert_eq!(weiqi_rating::wilson95(0.0, 0.0), (0.0, 1.0));
    }

    #[test]
    fn light_beats_uniform() {
        let r = arena(
            &mut RandomPlayer::new(Policy::Light, 1),
            &mut RandomPlayer::new(Policy::Uniform, 2),
            40,
            7,
            Rules::default().with_komi(0.5),
            1,
            0,
        );
        assert_eq!(r.a_wins + r.b_wins + r.draws, 40);
        assert!(r.a_rate > 0.6, "{r:?}");
    }

    /// GNU Go (CI installs it) against uniform random play on 7x7: whole games, every
    /// move in step, and GNU Go wins.
    #[test]
    fn a_gtp_engine_plays_whole_games_in_step_with_the_arena() {
        let Some(gnugo) = ["/usr/games/gnugo", "/usr/bin/gnugo"]
            .into_iter()
            .find(|p| std::path::Path::new(p).exists())
        else {
            assert!(
                std::env::var_os("WEIQI_REQUIRE_GNUGO").is_none(),
                "WEIQI_REQUIRE_GNUGO is set but gnugo is not installed"
            );
            eprintln!("SKIPPED: gnugo not installed");
            return;
        };
        let timeout = Duration::from_secs(30);
        let mut engine = EnginePlayer::spawn(&format!("{gnugo} --mode gtp --level 0"), timeout).unwrap();
        let r = arena(
            &mut engine,
            &mut RandomPlayer::new(Policy::Uniform, 3),
            4,
            7,
            Rules::default().with_komi(0.5),
            3,
            2,
        );
        assert_eq!(engine.failure(), None);
        assert_eq!(r.games, 4);
        assert!(r.a_wins >= 3, "GNU Go loses to uniform random play: {r:?}");
        // A command that is not a GTP engine is an error naming it.
        assert!(EnginePlayer::spawn("true", Duration::from_secs(5)).is_err());
    }
}
