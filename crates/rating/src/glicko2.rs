//! Glicko-2, step by step as in Glickman's paper ("Example of the Glicko-2 system",
//! 2012). Ratings are on the Glicko scale (1500 / 350); the update works on the Glicko-2
//! scale (divided by 173.7178).

use serde::{Deserialize, Serialize};

/// The Glicko-2 scale factor: 400 / ln(10).
const SCALE: f64 = 173.7178;
/// Convergence tolerance of the volatility iteration (the paper's epsilon).
const EPSILON: f64 = 0.000_001;
/// Most iterations of the volatility search (it converges in a handful; a bound on work).
const MAX_ITERATIONS: usize = 100;

/// A player's rating, deviation and volatility (Glicko scale).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    pub rating: f64,
    pub deviation: f64,
    pub volatility: f64,
}

impl Default for Rating {
    /// A new player: 1500, deviation 350, volatility 0.06 (the paper's suggestions).
    fn default() -> Rating {
        Rating {
            rating: 1500.0,
            deviation: 350.0,
            volatility: 0.06,
        }
    }
}

/// One game of the period: the opponent's rating before it, and the score (1 win, 0.5
/// draw, 0 loss).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PeriodGame {
    pub opponent: Rating,
    pub score: f64,
}

fn g(phi: f64) -> f64 {
    1.0 / (1.0 + 3.0 * phi * phi / (std::f64::consts::PI * std::f64::consts::PI)).sqrt()
}

fn expected(mu: f64, mu_j: f64, phi_j: f64) -> f64 {
    1.0 / (1.0 + (-g(phi_j) * (mu - mu_j)).exp())
}

/// The rating after a period with these games, with system constant `tau` (0.3..1.2; the
/// smaller, the less volatility changes). With no games only the deviation grows (step 6).
pub fn update(player: Rating, games: &[PeriodGame], tau: f64) -> Rating {
    update_over(player, games, tau, 1.0)
}

/// [`update`] with step 6 widening the deviation for `elapsed_periods` rating periods
/// instead of one (Lichess's `elapsedRatingPeriods`): 0 when the time since the player's
/// last game was already accounted for, as continuous rating does.
pub fn update_over(player: Rating, games: &[PeriodGame], tau: f64, elapsed_periods: f64) -> Rating {
    let mu = (player.rating - 1500.0) / SCALE;
    let phi = player.deviation / SCALE;
    let sigma = player.volatility;
    if games.is_empty() {
        return Rating {
            deviation: (phi * phi + elapsed_periods * sigma * sigma).sqrt() * SCALE,
            ..player
        };
    }
    // Steps 3 and 4: the estimated variance and the improvement.
    let mut v_inv = 0.0;
    let mut sum = 0.0;
    for game in games {
        let mu_j = (game.opponent.rating - 1500.0) / SCALE;
        let phi_j = game.opponent.deviation / SCALE;
        let e = expected(mu, mu_j, phi_j);
        let gj = g(phi_j);
        v_inv += gj * gj * e * (1.0 - e);
        sum += gj * (game.score - e);
    }
    let v = 1.0 / v_inv;
    let delta = v * sum;
    // Step 5: the new volatility (the Illinois algorithm).
    let sigma_new = volatility(delta, phi, v, sigma, tau);
    // Steps 6 to 8.
    let phi_star = (phi * phi + elapsed_periods * sigma_new * sigma_new).sqrt();
    let phi_new = 1.0 / (1.0 / (phi_star * phi_star) + 1.0 / v).sqrt();
    let mu_new = mu + phi_new * phi_new * sum;
    Rating {
        rating: SCALE * mu_new + 1500.0,
        deviation: SCALE * phi_new,
        volatility: sigma_new,
    }
}

fn volatility(delta: f64, phi: f64, v: f64, sigma: f64, tau: f64) -> f64 {
    let a = (sigma * sigma).ln();
    let (d2, p2) = (delta * delta, phi * phi);
    let f = |x: f64| {
        let ex = x.exp();
        ex * (d2 - p2 - v - ex) / (2.0 * (p2 + v + ex).powi(2)) - (x - a) / (tau * tau)
    };
    let mut big_a = a;
    let mut big_b = if d2 > p2 + v {
        (d2 - p2 - v).ln()
    } else {
        let mut k = 1.0;
        while f(a - k * tau) < 0.0 && k < MAX_ITERATIONS as f64 {
            k += 1.0;
        }
        a - k * tau
    };
    let (mut fa, mut fb) = (f(big_a), f(big_b));
    for _ in 0..MAX_ITERATIONS {
        if (big_b - big_a).abs() <= EPSILON {
            break;
        }
        let c = big_a + (big_a - big_b) * fa / (fb - fa);
        let fc = f(c);
        if fc * fb <= 0.0 {
            big_a = big_b;
            fa = fb;
        } else {
            fa /= 2.0;
        }
        big_b = c;
        fb = fc;
    }
    (big_a / 2.0).exp()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(rating: f64, deviation: f64) -> Rating {
        Rating {
            rating,
            deviation,
            volatility: 0.06,
        }
    }

    #[test]
    fn glickmans_worked_example() {
        let games = [
            PeriodGame {
                opponent: r(1400.0, 30.0),
                score: 1.0,
            },
            PeriodGame {
                opponent: r(1550.0, 100.0),
                score: 0.0,
            },
            PeriodGame {
                opponent: r(1700.0, 300.0),
                score: 0.0,
            },
        ];
        let after = update(r(1500.0, 200.0), &games, 0.5);
        assert!((after.rating - 1464.06).abs() < 0.01, "{after:?}");
        assert!((after.deviation - 151.52).abs() < 0.01, "{after:?}");
        assert!((after.volatility - 0.05999).abs() < 0.00001, "{after:?}");
    }

    #[test]
    fn a_period_without_games_only_widens_the_deviation() {
        let after = update(r(1500.0, 200.0), &[], 0.5);
        assert_eq!(after.rating, 1500.0);
        assert!((after.deviation - 200.2714).abs() < 0.001, "{after:?}");
    }

    #[test]
    fn wins_raise_and_losses_lower() {
        let opp = r(1500.0, 100.0);
        let win = update(
            Rating::default(),
            &[PeriodGame {
                opponent: opp,
                score: 1.0,
            }],
            0.5,
        );
        let loss = update(
            Rating::default(),
            &[PeriodGame {
                opponent: opp,
                score: 0.0,
            }],
            0.5,
        );
        let draw = update(
            Rating::default(),
            &[PeriodGame {
                opponent: opp,
                score: 0.5,
            }],
            0.5,
        );
        assert!(win.rating > 1500.0 && loss.rating < 1500.0);
        assert!((draw.rating - 1500.0).abs() < 1e-9);
        assert!((win.rating - 1500.0 + loss.rating - 1500.0).abs() < 1e-9, "symmetric");
    }
}
