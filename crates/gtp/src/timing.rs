//! The clock as the controller tells it (`time_settings`, `kgs-time_settings`,
//! `time_left`), turned into a budget for the next move.

use std::time::Duration;

/// The time system of the game, in seconds as GTP gives them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TimeSettings {
    /// No clock: the engine's own per-move limit applies.
    None,
    /// Main time, then nothing.
    Absolute { main: f64 },
    /// Main time, then `periods` periods of `period` seconds each (Japanese byo-yomi).
    ByoYomi { main: f64, period: f64, periods: u32 },
    /// Main time, then `stones` moves in every `period` seconds (Canadian; GTP's
    /// `time_settings`).
    Canadian { main: f64, period: f64, stones: u32 },
}

/// What the controller last said is left for one colour (`time_left`): seconds, and stones
/// (0 in main time; in byo-yomi, the periods left as KGS sends them).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Left {
    pub seconds: f64,
    pub stones: u32,
}

/// How long the next move may take.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    pub time: Duration,
}

/// The share of main time one move takes: a game of about this many moves more.
const MOVES_LEFT: f64 = 30.0;

/// Kept back from every budget for the answer to reach the controller.
const MARGIN: f64 = 0.2;

impl TimeSettings {
    /// GTP's `time_settings main byo stones`: byo 0 is absolute time, stones 0 no limit.
    pub fn from_gtp(main: f64, period: f64, stones: u32) -> TimeSettings {
        if period > 0.0 && stones == 0 {
            TimeSettings::None
        } else if period <= 0.0 {
            TimeSettings::Absolute { main }
        } else {
            TimeSettings::Canadian { main, period, stones }
        }
    }

    /// The budget for the next move: at most `cap` (the engine's own limit), less when the
    /// clock says so. With no `time_left` yet, the settings' own start is assumed.
    pub fn budget(&self, left: Option<Left>, cap: Duration) -> Budget {
        let cap_s = cap.as_secs_f64();
        let from_clock = match (*self, left) {
            (TimeSettings::None, _) => None,
            (TimeSettings::Absolute { main }, l) => Some(l.map_or(main, |l| l.seconds) / MOVES_LEFT),
            (TimeSettings::ByoYomi { main, period, .. }, l) => Some(match l {
                // In main time: a share of it, but never less than a period's worth.
                Some(Left { seconds, stones: 0 }) => (seconds / MOVES_LEFT).max(period),
                Some(Left { seconds, .. }) => seconds.min(period),
                None => (main / MOVES_LEFT).max(period),
            }),
            (TimeSettings::Canadian { main, period, stones }, l) => Some(match l {
                Some(Left { seconds, stones: 0 }) => seconds / MOVES_LEFT,
                Some(Left { seconds, stones }) => seconds / stones.max(1) as f64,
                None if main > 0.0 => main / MOVES_LEFT,
                None => period / stones.max(1) as f64,
            }),
        };
        // The margin (for answering and the network) comes off a clock's time, not off
        // the engine's own cap.
        let seconds = from_clock.map_or(cap_s, |s| (s - MARGIN).min(cap_s)).max(0.01);
        Budget {
            time: Duration::from_secs_f64(seconds),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAP: Duration = Duration::from_secs(10);

    #[test]
    fn budgets_follow_the_clock_and_never_exceed_the_cap() {
        let secs = |t: TimeSettings, l: Option<Left>| t.budget(l, CAP).time.as_secs_f64();
        assert_eq!(secs(TimeSettings::None, None), 10.0);
        assert_eq!(
            TimeSettings::from_gtp(300.0, 0.0, 0),
            TimeSettings::Absolute { main: 300.0 }
        );
        assert_eq!(TimeSettings::from_gtp(0.0, 10.0, 0), TimeSettings::None);
        let abs = TimeSettings::Absolute { main: 300.0 };
        assert!(
            (secs(
                abs,
                Some(Left {
                    seconds: 60.0,
                    stones: 0
                })
            ) - (2.0 - MARGIN))
                .abs()
                < 1e-9
        );
        let byo = TimeSettings::ByoYomi {
            main: 0.0,
            period: 5.0,
            periods: 3,
        };
        assert!(
            (secs(
                byo,
                Some(Left {
                    seconds: 5.0,
                    stones: 3
                })
            ) - (5.0 - MARGIN))
                .abs()
                < 1e-9
        );
        let canadian = TimeSettings::from_gtp(0.0, 60.0, 20);
        assert!(
            (secs(
                canadian,
                Some(Left {
                    seconds: 30.0,
                    stones: 10
                })
            ) - (3.0 - MARGIN))
                .abs()
                < 1e-9
        );
        // Almost out of time: the smallest budget, not a negative one.
        assert_eq!(
            secs(
                abs,
                Some(Left {
                    seconds: 0.1,
                    stones: 0
                })
            ),
            0.01
        );
    }
}
