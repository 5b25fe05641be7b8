//! Live analysis for GUIs: `lz-analyze` and `kata-analyze`, Leela Zero's and KataGo's GTP
//! extensions as KataGo's `docs/GTP_Extensions.md` specifies them, so that Sabaki and
//! Lizzie show weiqi's search as they show those engines'. The command answers `=` at
//! once, then a line of candidate moves every interval, until the controller sends
//! anything (a new command, or an empty line), which ends the answer with its empty line.
//!
//! What the tree search knows is given; what it does not is left out rather than made
//! up: no score lead (the playouts count wins, not points), and a prior of 0 (its priors
//! are virtual visits, not a policy). `kata-analyze ... ownership true` adds each point's
//! ownership from the rules engine's estimate.

use std::time::Duration;

use weiqi_rules::{Color, Move};

/// One candidate move of the search, from the point of view of the player it is for.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub mv: Move,
    pub visits: u32,
    /// The share of its simulations won, 0..=1.
    pub winrate: f64,
    /// The policy's prior, 0..=1 (0 where the search has none).
    pub prior: f64,
    /// The principal variation from this move on (the move first).
    pub pv: Vec<Move>,
}

/// Which engine's output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// Leela Zero's: win rates and priors as integers in 0..=10000.
    Lz,
    /// KataGo's: floats in 0..=1, utility, and ownership when asked.
    Kata,
}

/// What an analyze command asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The colour analyzed (none: the player to move).
    pub color: Option<Color>,
    pub interval: Duration,
    /// At least this many moves in each line, when there are (moves without visits then).
    pub min_moves: usize,
    /// At most this many moves in each line.
    pub max_moves: Option<usize>,
    pub ownership: bool,
    pub dialect: Dialect,
}

/// The interval when the command gives none: a second.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);
/// The shortest interval taken (a centisecond asked for is searched for this long).
pub const MIN_INTERVAL: Duration = Duration::from_millis(10);
/// The longest principal variation given.
pub const PV_LENGTH: usize = 15;

impl Request {
    /// The command's arguments: `[player] [interval] [key value]...`, the interval in
    /// centiseconds; the keys `interval`, `minmoves`, `maxmoves` and (kata) `ownership`.
    pub fn parse(args: &[String], dialect: Dialect) -> Result<Request, String> {
        let mut req = Request {
            color: None,
            interval: DEFAULT_INTERVAL,
            min_moves: 0,
            max_moves: None,
            ownership: false,
            dialect,
        };
        let mut rest = args;
        if let Some(c) = rest.first().and_then(|a| Color::parse(a)) {
            req.color = Some(c);
            rest = &rest[1..];
        }
        let centis = |s: &str| -> Result<Duration, String> {
            let cs: u64 = s
                .parse()
                .map_err(|_| format!("syntax error: interval {s:?} (centiseconds)"))?;
            Ok(Duration::from_millis(cs.saturating_mul(10)).max(MIN_INTERVAL))
        };
        if let Some(first) = rest.first()
            && first.chars().all(|c| c.is_ascii_digit())
        {
            req.interval = centis(first)?;
            rest = &rest[1..];
        }
        let mut pairs = rest.chunks(2);
        for pair in &mut pairs {
            let [key, value] = pair else {
                return Err(format!("syntax error: {:?} has no value", pair[0]));
            };
            let count = || {
                value
                    .parse::<usize>()
                    .map_err(|_| format!("syntax error: {key} {value:?}"))
            };
            match key.as_str() {
                "interval" => req.interval = centis(value)?,
                "minmoves" => req.min_moves = count()?,
                "maxmoves" => req.max_moves = Some(count()?),
                "ownership" if dialect == Dialect::Kata => {
                    req.ownership = match value.as_str() {
                        "true" => true,
                        "false" => false,
                        _ => return Err(format!("syntax error: ownership {value:?} (true or false)")),
                    }
                }
                _ => return Err(format!("unsupported analysis option {key:?}")),
            }
        }
        Ok(req)
    }

    /// One line of output: the candidates, best first, as many as asked for, and the
    /// ownership (from the analyzed player's point of view, row by row from the top) when
    /// asked for.
    pub fn line(&self, candidates: &[Candidate], ownership: Option<&[f32]>, height: u8) -> String {
        let shown = candidates
            .iter()
            .enumerate()
            .filter(|(k, c)| c.visits > 0 || *k < self.min_moves)
            .take(self.max_moves.unwrap_or(usize::MAX));
        let mut out = Vec::new();
        for (order, c) in shown {
            let lcb = lower_bound(c.winrate, c.visits);
            let mut words = vec![format!("info move {} visits {}", c.mv.to_gtp(height), c.visits)];
            match self.dialect {
                Dialect::Lz => words.push(format!(
                    "winrate {} prior {} lcb {}",
                    per_10k(c.winrate),
                    per_10k(c.prior),
                    per_10k(lcb)
                )),
                Dialect::Kata => words.push(format!(
                    "utility {:.6} winrate {:.6} prior {:.6} lcb {:.6} utilityLcb {:.6}",
                    2.0 * c.winrate - 1.0,
                    c.winrate,
                    c.prior,
                    lcb,
                    2.0 * lcb - 1.0
                )),
            }
            let pv: Vec<String> = c.pv.iter().take(PV_LENGTH).map(|m| m.to_gtp(height)).collect();
            words.push(format!("order {order} pv {}", pv.join(" ")));
            out.push(words.join(" "));
        }
        if let Some(own) = ownership.filter(|_| self.ownership) {
            let values: Vec<String> = own.iter().map(|v| format!("{v:.6}")).collect();
            out.push(format!("ownership {}", values.join(" ")));
        }
        out.join(" ")
    }
}

/// A share as Leela Zero writes it: an integer in 0..=10000.
fn per_10k(share: f64) -> u32 {
    (share.clamp(0.0, 1.0) * 10_000.0).round() as u32
}

/// The win rate's lower confidence bound (a normal approximation at 95%, clamped to
/// 0..=1): what GUIs rank by once visits differ (Leela Zero's `lcb`).
pub fn lower_bound(winrate: f64, visits: u32) -> f64 {
    if visits == 0 {
        return 0.0;
    }
    let sd = (winrate * (1.0 - winrate) / visits as f64).sqrt();
    (winrate - 1.96 * sd).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use weiqi_rules::Point;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn arguments_as_leela_zero_and_katago_take_them() {
        let r = Request::parse(&args("b 50"), Dialect::Lz).unwrap();
        assert_eq!((r.color, r.interval), (Some(Color::Black), Duration::from_millis(500)));
        let r = Request::parse(&args("interval 20 maxmoves 3 minmoves 2 ownership true"), Dialect::Kata).unwrap();
        assert_eq!(
            (r.color, r.interval, r.max_moves, r.min_moves, r.ownership),
            (None, Duration::from_millis(200), Some(3), 2, true)
        );
        assert_eq!(Request::parse(&[], Dialect::Lz).unwrap().interval, DEFAULT_INTERVAL);
        assert_eq!(Request::parse(&args("0"), Dialect::Lz).unwrap().interval, MIN_INTERVAL);
        assert!(
            Request::parse(&args("ownership true"), Dialect::Lz).is_err(),
            "kata's only"
        );
        assert!(Request::parse(&args("interval"), Dialect::Lz).is_err());
        assert!(Request::parse(&args("avoid b D4 1"), Dialect::Kata).is_err());
    }

    #[test]
    fn lines_in_each_dialect() {
        let c = |x, visits, winrate| Candidate {
            mv: Move::Place(Point::new(x, 5)),
            visits,
            winrate,
            prior: 0.0,
            pv: vec![Move::Place(Point::new(x, 5)), Move::Pass],
        };
        let cands = [c(3, 100, 0.5), c(4, 0, 0.0)];
        let lz = Request::parse(&[], Dialect::Lz).unwrap();
        assert_eq!(
            lz.line(&cands, None, 9),
            "info move D4 visits 100 winrate 5000 prior 0 lcb 4020 order 0 pv D4 pass"
        );
        let kata = Request::parse(&args("minmoves 2 ownership true"), Dialect::Kata).unwrap();
        assert_eq!(
            kata.line(&cands, Some(&[1.0, -0.5]), 9),
            "info move D4 visits 100 utility 0.000000 winrate 0.500000 prior 0.000000 lcb 0.402000 \
             utilityLcb -0.196000 order 0 pv D4 pass info move E4 visits 0 utility -1.000000 winrate \
             0.000000 prior 0.000000 lcb 0.000000 utilityLcb -1.000000 order 1 pv E4 pass ownership \
             1.000000 -0.500000"
        );
    }
}
