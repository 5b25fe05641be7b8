//! Elo from a table of match results: the Bradley-Terry model fitted by maximum likelihood
//! with Hunter's MM iteration ("MM algorithms for generalized Bradley-Terry models", 2004),
//! as BayesElo and KataGo's Elo tooling do for a pool of engines. A draw counts as half a
//! win to each side. Each player gets one virtual draw against the anchor, a weak prior
//! that keeps a player who won (or lost) every game at a finite rating.

/// `games` games between players `a` and `b`, of which `a` scored `a_score` (wins plus half
/// the draws).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HeadToHead {
    pub a: usize,
    pub b: usize,
    pub a_score: f64,
    pub games: f64,
}

/// Ratings of `players` players, in Elo points, with `anchor`'s at 0. Pairings that name a
/// player out of range, or have no games, are ignored.
pub fn fit(players: usize, results: &[HeadToHead], anchor: usize) -> Vec<f64> {
    if players == 0 || anchor >= players {
        return vec![0.0; players];
    }
    // The prior: one draw of each player against the anchor.
    let prior = (0..players).filter(|&p| p != anchor).map(|p| HeadToHead {
        a: p,
        b: anchor,
        a_score: 0.5,
        games: 1.0,
    });
    let table: Vec<HeadToHead> = results
        .iter()
        .copied()
        .filter(|r| r.a < players && r.b < players && r.a != r.b && r.games > 0.0)
        .map(|r| HeadToHead {
            a_score: r.a_score.clamp(0.0, r.games),
            ..r
        })
        .chain(prior)
        .collect();
    let mut wins = vec![0.0; players];
    for r in &table {
        wins[r.a] += r.a_score;
        wins[r.b] += r.games - r.a_score;
    }
    let mut gamma = vec![1.0f64; players];
    for _ in 0..10_000 {
        let mut denom = vec![0.0; players];
        for r in &table {
            let d = r.games / (gamma[r.a] + gamma[r.b]);
            denom[r.a] += d;
            denom[r.b] += d;
        }
        let mut change = 0.0f64;
        for p in 0..players {
            if denom[p] > 0.0 {
                let next = (wins[p] / denom[p]).max(1e-12);
                change = change.max((next / gamma[p]).ln().abs());
                gamma[p] = next;
            }
        }
        let g0 = gamma[anchor];
        gamma.iter_mut().for_each(|g| *g /= g0);
        if change < 1e-10 {
            break;
        }
    }
    gamma.iter().map(|g| 400.0 * g.log10()).collect()
}

/// The score a player rated `diff` Elo above its opponent expects, per game.
pub fn expected(diff: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-diff / 400.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_the_ratings_behind_expected_scores() {
        let truth = [0.0, 200.0, 400.0, -150.0];
        let mut results = Vec::new();
        for a in 0..truth.len() {
            for b in a + 1..truth.len() {
                let games = 10_000.0;
                results.push(HeadToHead {
                    a,
                    b,
                    a_score: games * expected(truth[a] - truth[b]),
                    games,
                });
            }
        }
        let fitted = fit(truth.len(), &results, 0);
        for (f, t) in fitted.iter().zip(truth) {
            assert!((f - t).abs() < 2.0, "{fitted:?}");
        }
    }

    #[test]
    fn a_clean_sweep_stays_finite_and_on_top() {
        let results = [
            HeadToHead {
                a: 1,
                b: 0,
                a_score: 20.0,
                games: 20.0,
            },
            HeadToHead {
                a: 2,
                b: 1,
                a_score: 10.0,
                games: 20.0,
            },
        ];
        let r = fit(3, &results, 0);
        assert_eq!(r[0], 0.0);
        assert!(r[1].is_finite() && r[1] > 300.0, "{r:?}");
        assert!((r[2] - r[1]).abs() < 60.0, "{r:?}");
        assert_eq!(fit(2, &[], 0), vec![0.0, 0.0]);
        assert_eq!(fit(0, &[], 0), Vec::<f64>::new());
    }
}
