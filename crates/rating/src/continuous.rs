//! Rating every game as it ends, as a server must, the way Lichess does (lila's
//! `PerfsUpdater.computeGlicko` calls scalachess's `GlickoCalculator.computeGame` with
//! `skipDeviationIncrease = true`): each game is a rating period of one game for both
//! players, rated with both players' ratings from before it. A rating's deviation first
//! grows with the time since that player's last rated game,
//! `phi' = sqrt(phi^2 + sigma^2 t)` for `t` periods of [`Period::length_ms`] (step 6 of
//! Glicko-2 for the elapsed fraction of a period), up to the deviation of a new player;
//! the game's own step 6 then adds nothing more (0 elapsed periods), since that time is
//! already counted.

use crate::glicko2::{PeriodGame, Rating, update_over};

/// How continuous rating is set up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Period {
    /// The time over which an idle player's deviation grows as over one Glicko-2 rating
    /// period.
    pub length_ms: u64,
    /// Glicko-2's system constant.
    pub tau: f64,
    /// The deviation never grows above this (a new player's).
    pub max_deviation: f64,
    /// Nor falls below this, so that a rating keeps moving after many games.
    pub min_deviation: f64,
}

impl Default for Period {
    /// A period of about 4.7 days (Lichess's 0.21436 periods a day), tau 0.75 (Lichess's),
    /// deviation 45..=350.
    fn default() -> Period {
        Period {
            length_ms: (86_400_000.0 / 0.21436) as u64,
            tau: 0.75,
            max_deviation: 350.0,
            min_deviation: 45.0,
        }
    }
}

impl Period {
    /// `r` as it stands at `now_ms` when the player's last rated game ended at `last_ms`.
    pub fn aged(&self, r: Rating, last_ms: Option<u64>, now_ms: u64) -> Rating {
        let Some(last) = last_ms else { return r };
        let t = now_ms.saturating_sub(last) as f64 / self.length_ms.max(1) as f64;
        let phi = r.deviation / 173.7178;
        let grown = (phi * phi + r.volatility * r.volatility * t).sqrt() * 173.7178;
        Rating {
            deviation: grown.min(self.max_deviation),
            ..r
        }
    }
}

/// One side of a rated game: its rating and when its last rated game ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Side {
    pub rating: Rating,
    pub last_ms: Option<u64>,
}

/// Rates a game that ended at `now_ms`; `score_a` is A's score (1 win, 0.5 draw, 0 loss).
/// Returns both new ratings.
pub fn rate_game(a: Side, b: Side, score_a: f64, now_ms: u64, period: &Period) -> (Rating, Rating) {
    let ra = period.aged(a.rating, a.last_ms, now_ms);
    let rb = period.aged(b.rating, b.last_ms, now_ms);
    let clamp = |r: Rating| Rating {
        deviation: r.deviation.clamp(period.min_deviation, period.max_deviation),
        ..r
    };
    let na = update_over(
        ra,
        &[PeriodGame {
            opponent: rb,
            score: score_a,
        }],
        period.tau,
        0.0,
    );
    let nb = update_over(
        rb,
        &[PeriodGame {
            opponent: ra,
            score: 1.0 - score_a,
        }],
        period.tau,
        0.0,
    );
    (clamp(na), clamp(nb))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_time_widens_the_deviation_up_to_a_new_players() {
        let p = Period::default();
        let r = Rating {
            deviation: 60.0,
            ..Rating::default()
        };
        assert_eq!(p.aged(r, None, 10).deviation, 60.0);
        let week = p.aged(r, Some(0), 7 * 86_400_000).deviation;
        let year = p.aged(r, Some(0), 365 * 86_400_000).deviation;
        assert!(60.0 < week && week < year && year <= 350.0, "{week} {year}");
        assert_eq!(p.aged(r, Some(0), u64::MAX).deviation, 350.0);
    }

    #[test]
    fn a_game_moves_both_ratings_by_opposite_amounts_when_they_are_alike() {
        let side = Side {
            rating: Rating::default(),
            last_ms: None,
        };
        let (a, b) = rate_game(side, side, 1.0, 0, &Period::default());
        assert!(a.rating > 1500.0 && b.rating < 1500.0);
        assert!((a.rating - 1500.0 - (1500.0 - b.rating)).abs() < 1e-6);
        assert!(a.deviation < 350.0 && a.deviation >= 45.0);
    }

    /// Lichess's numbers for a first game between two new players (scalachess's
    /// `GlickoCalculatorTest`, "default deviation: white wins", no colour advantage):
    /// 1662.21 and 1337.79, both deviations 290.23. (A full period in the game's own step 6,
    /// as before issue 43, gave 290.32.)
    #[test]
    fn a_first_game_rates_as_lichess_does() {
        let new = Side {
            rating: Rating::default(),
            last_ms: None,
        };
        let (w, b) = rate_game(new, new, 1.0, 0, &Period::default());
        assert!((w.rating - 1662.21).abs() < 0.005, "{w:?}");
        assert!((b.rating - 1337.79).abs() < 0.005, "{b:?}");
        assert!((w.deviation - 290.23).abs() < 0.005, "{w:?}");
        assert!((b.deviation - 290.23).abs() < 0.005, "{b:?}");
        assert!((w.volatility - 0.0599993).abs() < 1e-7, "{w:?}");
    }
}
