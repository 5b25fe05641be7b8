//! Self-play of seed 002's variant (see `weiqi_game::variant`): four seat stones placed
//! at random (Black, White, Black, White), then each side bids the komi it would give as
//! Black; the higher bid plays Black and gives that komi (equal bids: a coin). Each run
//! also writes `variant/shard-NNNNN.jsonl` (one a shard), one line per game with its seat stones, bids, komi and
//! result, so that researchers can study the variant's fair komi.
//!
//! The bidding policy: both sides estimate the fair komi as Black's mean area margin over
//! `bid_playouts` light playouts from the seat-stone position, then each adds its own
//! uniform noise in ±`bid_noise` points (players judge differently) and rounds to the bid
//! grid (n + 0.5 with `half_point_bids`, else any multiple of 0.5).

use rand::Rng;
use rand::rngs::SmallRng;
use serde::{Deserialize, Serialize};
use weiqi_rules::{Color, Move, Point, Policy, Rules, State};

/// The largest bid either way (as the referee's).
pub const MAX_BID: f64 = 361.0;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FreeSeatsConfig {
    /// No seat stone on the first line.
    pub no_first_line: bool,
    /// Bids are n + 0.5 (no draws).
    pub half_point_bids: bool,
    /// Light playouts behind each side's estimate of the fair komi.
    pub bid_playouts: u32,
    /// Each side's judgement differs from the estimate by up to this many points.
    pub bid_noise: f64,
}

impl Default for FreeSeatsConfig {
    fn default() -> FreeSeatsConfig {
        FreeSeatsConfig {
            no_first_line: false,
            half_point_bids: true,
            bid_playouts: 64,
            bid_noise: 3.0,
        }
    }
}

/// How a variant game opened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Opening {
    /// In order: Black, White, Black, White.
    pub seat_stones: Vec<(Color, Point)>,
    /// The fair komi both sides started from (Black's mean margin in the playouts).
    pub estimate: f64,
    /// The two sides' bids: the side that placed Black's seat stones first.
    pub bids: [f64; 2],
    /// The higher bid, which Black gives.
    pub komi: f64,
    /// Which side plays Black (0: the one that placed Black's seat stones).
    pub black: usize,
    pub by_lot: bool,
}

/// Rounds `x` to the bid grid, within bounds.
pub fn round_bid(x: f64, half_point_bids: bool) -> f64 {
    let x = x.clamp(-MAX_BID + 1.0, MAX_BID - 1.0);
    if half_point_bids {
        x.floor() + 0.5
    } else {
        (x * 2.0).round() / 2.0
    }
}

/// The seat stones, the bids and the position Black moves first in (komi set).
pub fn open(size: u8, rules: Rules, cfg: &FreeSeatsConfig, rng: &mut SmallRng) -> (State, Opening) {
    let mut state = State::new(size, rules.with_komi(0.0)).expect("size checked by the caller");
    let mut seat_stones = Vec::with_capacity(4);
    for k in 0..4 {
        let color = if k % 2 == 0 { Color::Black } else { Color::White };
        let free: Vec<Point> = state
            .board()
            .points()
            .filter(|p| {
                let edge = p.x == 0 || p.y == 0 || p.x + 1 == size || p.y + 1 == size;
                !(cfg.no_first_line && edge) && state.board().get(*p).is_none()
            })
            .filter(|p| state.clone().play_color(color, Move::Place(*p)).is_ok())
            .collect();
        let Some(&p) = free.get(rng.random_range(0..free.len().max(1))) else {
            break;
        };
        let mut next = state.clone();
        next.play_color(color, Move::Place(p)).expect("checked above");
        state = State::from_board(next.board().clone(), color.opponent(), *state.rules());
        seat_stones.push((color, p));
    }
    let estimate = fair_komi(&state, cfg.bid_playouts, rng);
    let noise = |rng: &mut SmallRng| {
        if cfg.bid_noise > 0.0 {
            rng.random_range(-cfg.bid_noise..=cfg.bid_noise)
        } else {
            0.0
        }
    };
    let bids = [
        round_bid(estimate + noise(rng), cfg.half_point_bids),
        round_bid(estimate + noise(rng), cfg.half_point_bids),
    ];
    let (black, by_lot) = if bids[0] > bids[1] {
        (0, false)
    } else if bids[1] > bids[0] {
        (1, false)
    } else {
        (rng.random_range(0..2), true)
    };
    let komi = bids[0].max(bids[1]);
    let mut start = State::from_board(state.board().clone(), Color::Black, rules.with_komi(komi));
    start.set_komi(komi);
    let opening = Opening {
        seat_stones,
        estimate,
        bids,
        komi,
        black,
        by_lot,
    };
    (start, opening)
}

/// Black's mean area margin (no komi) over `playouts` light playouts from `state`.
pub fn fair_komi(state: &State, playouts: u32, rng: &mut SmallRng) -> f64 {
    if playouts == 0 {
        return 0.0;
    }
    let n = state.board().width() as usize;
    let cap = 3 * n * n;
    let mut total = 0.0;
    for _ in 0..playouts {
        let mut s = state.clone();
        s.set_komi(0.0);
        while !s.is_over() && s.move_number() < cap {
            let mv = s.choose_random(Policy::Light, rng);
            if s.play(mv).is_err() {
                s.pass();
            }
        }
        total -= s.tromp_taylor_score().white_minus_black;
    }
    total / f64::from(playouts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn bids_sit_on_the_grid() {
        assert_eq!(round_bid(7.2, true), 7.5);
        assert_eq!(round_bid(-0.3, true), -0.5);
        assert_eq!(round_bid(7.2, false), 7.0);
        assert_eq!(round_bid(7.3, false), 7.5);
        assert_eq!(round_bid(1e9, true), MAX_BID - 0.5);
    }

    #[test]
    fn an_opening_has_four_seat_stones_and_the_higher_bid_as_komi() {
        let mut rng = SmallRng::seed_from_u64(3);
        let cfg = FreeSeatsConfig {
            no_first_line: true,
            bid_playouts: 8,
            ..FreeSeatsConfig::default()
        };
        for _ in 0..20 {
            let (state, o) = open(9, Rules::default(), &cfg, &mut rng);
            let colours: Vec<Color> = o.seat_stones.iter().map(|s| s.0).collect();
            assert_eq!(colours, [Color::Black, Color::White, Color::Black, Color::White]);
            assert!(
                o.seat_stones
                    .iter()
                    .all(|(_, p)| p.x > 0 && p.y > 0 && p.x < 8 && p.y < 8)
            );
            assert_eq!(o.komi, o.bids[0].max(o.bids[1]));
            assert!(o.bids.iter().all(|b| (b * 2.0).rem_euclid(2.0) == 1.0), "{:?}", o.bids);
            assert_eq!(
                (state.to_move(), state.rules().komi, state.moves().len()),
                (Color::Black, o.komi, 0)
            );
        }
    }
}
