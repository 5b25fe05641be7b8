//! The learning rate's schedule over a training run's steps (no libtorch here: the loop's
//! record names it, and a record is read without the `tch` feature).

/// How the learning rate moves over a training run's steps. Each run (each generation of
/// the loop) starts the schedule again, with a fresh Adam.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LrSchedule {
    /// The same rate at every step.
    #[default]
    Constant,
    /// Half a cosine from the rate at the first step down to a tenth of it at the last
    /// (Loshchilov and Hutter's annealing, without restarts): large steps while the
    /// network moves far, small ones to settle.
    Cosine,
}

impl LrSchedule {
    /// Where the cosine ends, as a share of the starting rate.
    pub const COSINE_FLOOR: f64 = 0.1;

    /// The rate at `step` (0-based) of `steps`.
    pub fn rate(self, lr: f64, step: usize, steps: usize) -> f64 {
        match self {
            LrSchedule::Constant => lr,
            LrSchedule::Cosine => {
                let t = if steps > 1 {
                    step.min(steps - 1) as f64 / (steps - 1) as f64
                } else {
                    0.0
                };
                let floor = lr * Self::COSINE_FLOOR;
                floor + (lr - floor) * 0.5 * (1.0 + (std::f64::consts::PI * t).cos())
            }
        }
    }

    pub fn is_constant(&self) -> bool {
        *self == LrSchedule::Constant
    }
}

impl std::str::FromStr for LrSchedule {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "constant" => Ok(LrSchedule::Constant),
            "cosine" => Ok(LrSchedule::Cosine),
            _ => Err(format!("{s:?}: constant or cosine")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::LrSchedule;

    #[test]
    fn constant_keeps_the_rate() {
        for step in [0, 1, 500, 999, 5000] {
            assert_eq!(LrSchedule::Constant.rate(1e-3, step, 1000), 1e-3);
        }
    }

    #[test]
    fn cosine_falls_from_the_rate_to_a_tenth() {
        let r = |step| LrSchedule::Cosine.rate(1e-3, step, 1001);
        assert!((r(0) - 1e-3).abs() < 1e-12);
        // Halfway: the mean of the rate and its floor.
        assert!((r(500) - 0.55e-3).abs() < 1e-12);
        assert!((r(1000) - 1e-4).abs() < 1e-12);
        // Past the end (a run stopped by time does not get there): held at the floor.
        assert!((r(4000) - 1e-4).abs() < 1e-12);
        let rates: Vec<f64> = (0..=1000).map(r).collect();
        assert!(rates.windows(2).all(|w| w[1] <= w[0]), "never rises");
        // One step: the rate itself.
        assert_eq!(LrSchedule::Cosine.rate(1e-3, 0, 1), 1e-3);
    }

    #[test]
    fn parses_its_names_and_refuses_others() {
        assert_eq!("cosine".parse::<LrSchedule>(), Ok(LrSchedule::Cosine));
        assert_eq!("constant".parse::<LrSchedule>(), Ok(LrSchedule::Constant));
        assert!(
            "linear"
                .parse::<LrSchedule>()
                .unwrap_err()
                .contains("constant or cosine")
        );
    }
}
