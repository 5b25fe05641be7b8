//! A node of the search tree and the statistics a new move starts with: the priors from
//! the rules crate's hints, the distance to the last move and the learned shapes, and the
//! UCT-RAVE value that chooses among siblings.

use weiqi_rules::{Color, Move, MoveHints};

/// RAVE's equivalence parameter: at this many visits a node's own statistics and its
/// all-moves-as-first statistics weigh the same (MoGo used about 1,000).
const RAVE_EQUIVALENCE: f64 = 1000.0;
/// UCB's exploration constant (small: RAVE and the priors do most of the exploring). An
/// unvisited move is valued by its all-moves-as-first statistics (priors included) alone:
/// a first-play bonus above every visited move would make each node try all its moves
/// once before any twice, a full-width search two or three plies deep.
const EXPLORATION: f64 = 0.1;
/// Virtual all-moves-as-first visits every new move starts with, half of them won (an
/// "even game" prior).
const PRIOR_EVEN: f32 = 10.0;
/// Virtual visits, all won, for a capture or a rescue from atari; half that for a 3x3
/// pattern next to the last move.
const PRIOR_GOOD: f32 = 20.0;
/// Virtual visits, all lost, for a self-atari of two stones or more; half that for a
/// one-stone self-atari or a first- or second-line move in an empty area.
const PRIOR_BAD: f32 = 20.0;
/// Virtual visits, all won, for a move at common-fate-graph distance 1, 2 and 3 from the
/// last move (Michi's values: answers near the last move are usually the urgent ones).
pub(super) const PRIOR_NEAR: [f32; 3] = [24.0, 22.0, 8.0];
/// Virtual visits, all won, for a third-line move with no stone within two points.
const PRIOR_THIRD_LINE: f32 = 10.0;
/// The value of a pass no simulation has tried yet (below an even move: passing is rarely
/// right until the end).
const PASS_UNTRIED: f64 = 0.3;

#[derive(Clone)]
pub(super) struct Node {
    pub(super) mv: Move,
    /// The colour that played `mv` into this node.
    pub(super) by: Color,
    /// Children: `first..first + count` in the arena, once expanded.
    pub(super) first: u32,
    pub(super) count: u32,
    pub(super) expanded: bool,
    pub(super) visits: u32,
    /// Wins of `by` through this node.
    pub(super) wins: f32,
    pub(super) amaf_visits: u32,
    pub(super) amaf_wins: f32,
    /// The advisor's value of this position, from its player to move's view; NaN until
    /// advised (hybrid search only).
    pub(super) net_value: f32,
}

impl Node {
    pub(super) fn new(mv: Move, by: Color) -> Node {
        Node {
            mv,
            by,
            first: 0,
            count: 0,
            expanded: false,
            visits: 0,
            wins: 0.0,
            amaf_visits: 0,
            amaf_wins: 0.0,
            net_value: f32::NAN,
        }
    }

    /// A new move with the statistics its hints, its distance from the last move (1 to
    /// 3, or none) and its shape (virtual wins) are worth.
    pub(super) fn with_prior(mv: Move, by: Color, h: MoveHints, near: Option<u8>, shape: f32) -> Node {
        let mut n = Node::new(mv, by);
        let (mut visits, mut wins) = (PRIOR_EVEN, PRIOR_EVEN / 2.0);
        let mut add = |v: f32, w: f32| {
            visits += v;
            wins += w;
        };
        if h.captures || h.saves {
            add(PRIOR_GOOD, PRIOR_GOOD);
        }
        if h.pattern {
            add(PRIOR_GOOD / 2.0, PRIOR_GOOD / 2.0);
        }
        match h.self_atari {
            Some(k) if k >= 2 => add(PRIOR_BAD, 0.0),
            Some(_) => add(PRIOR_BAD / 2.0, 0.0),
            None => {}
        }
        if h.edge_in_empty_area {
            add(PRIOR_BAD / 2.0, 0.0);
        }
        if h.third_line_in_empty_area {
            add(PRIOR_THIRD_LINE, PRIOR_THIRD_LINE);
        }
        if let Some(d @ 1..=3) = near {
            let v = PRIOR_NEAR[d as usize - 1];
            add(v, v);
        }
        add(shape, shape);
        // Rounded: the shape prior is fractional, and truncation would drop visits but not wins.
        n.amaf_visits = visits.round() as u32;
        n.amaf_wins = wins;
        n
    }

    /// UCT-RAVE value for choosing among siblings; `ln_parent` is the log of the parent's
    /// visits (computed once for all the siblings).
    pub(super) fn score(&self, ln_parent: f64) -> f64 {
        let (n, an) = (self.visits as f64, self.amaf_visits as f64);
        if n == 0.0 && self.mv == Move::Pass {
            return PASS_UNTRIED;
        }
        let q = if n > 0.0 { self.wins as f64 / n } else { 0.5 };
        let aq = if an > 0.0 { self.amaf_wins as f64 / an } else { 0.5 };
        // A pass has no all-moves-as-first statistics (a pass is not a point).
        let beta = if self.mv == Move::Pass {
            0.0
        } else {
            (RAVE_EQUIVALENCE / (3.0 * n + RAVE_EQUIVALENCE)).sqrt()
        };
        let value = (1.0 - beta) * q + beta * aq;
        let explore = if n > 0.0 {
            EXPLORATION * (ln_parent / n).sqrt()
        } else {
            0.0
        };
        value + explore
    }
}
