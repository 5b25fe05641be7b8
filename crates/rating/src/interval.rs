//! How sure a match's score is: the 95% Wilson score interval, used by every match runner
//! (`weiqi match`, the trainer's arena and gating).

/// z for a two-sided 95% interval.
const Z95: f64 = 1.959_964;

/// The 95% Wilson score interval of a rate of `score` out of `n` games (draws counted as
/// halves by the caller); `(0, 1)` before any game.
pub fn wilson95(score: f64, n: f64) -> (f64, f64) {
    if n <= 0.0 {
        return (0.0, 1.0);
    }
    let z = Z95;
    let p = score / n;
    let denom = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denom;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_holds_the_rate_and_narrows_with_games() {
        assert_eq!(wilson95(0.0, 0.0), (0.0, 1.0));
        let (lo, hi) = wilson95(5.0, 10.0);
        assert!(lo < 0.5 && 0.5 < hi);
        // 50 of 100: 0.404..0.596 (the textbook figures).
        let (lo, hi) = wilson95(50.0, 100.0);
        assert!((lo - 0.4038).abs() < 1e-3 && (hi - 0.5962).abs() < 1e-3, "{lo} {hi}");
        let (lo2, hi2) = wilson95(500.0, 1000.0);
        assert!(hi2 - lo2 < hi - lo);
        let (lo, hi) = wilson95(10.0, 10.0);
        assert!(lo > 0.65 && hi > 0.999, "{lo} {hi}");
    }
}
