//! Gumbel AlphaZero's root (Danihelka et al., ICLR 2022; `SearchConfig::gumbel`): the
//! root's moves drawn by Gumbel-top-m, the simulations spent on them by sequential
//! halving, the survivor played and the completed-Q improved policy as the target. The
//! rest of the tree is [`super`]'s PUCT.

use rand::Rng;
use rand::rngs::SmallRng;

use super::{RootResult, Tree};
use crate::move_index;

/// The Gumbel root: each root move's Gumbel noise, the root's own evaluation, and the
/// schedule of sequential halving.
#[derive(Debug, Clone)]
pub(super) struct GumbelRoot {
    /// By root edge, in order.
    pub(super) g: Vec<f32>,
    /// The network's value of the root, from its mover's view.
    pub(super) raw_value: f32,
    /// Simulation k goes to a move with exactly `sequence[k]` visits (the considered moves
    /// are those with the most visits so far): mctx's table of considered visits.
    pub(super) sequence: Vec<u32>,
}

/// σ's constants (the paper's and mctx's defaults): `(c_visit + max_b N(b)) * c_scale * q`.
const GUMBEL_C_VISIT: f32 = 50.0;
const GUMBEL_C_SCALE: f32 = 0.1;

/// A standard Gumbel sample, -ln(-ln U).
pub(super) fn gumbel_sample(rng: &mut SmallRng) -> f32 {
    let u: f64 = rng.random::<f64>().clamp(1e-12, 1.0 - 1e-12);
    -(-u.ln()).ln() as f32
}

/// Sequential halving's schedule for `m` considered moves and `budget` simulations: the
/// visit count the move of each simulation must have, phase after phase (each of the
/// log2(m) phases gives every remaining move the same share of the budget, then the better
/// half goes on, never fewer than two). Exactly `budget` entries: the budget is spent to
/// the last simulation.
pub(super) fn considered_visits(m: u32, budget: u32) -> Vec<u32> {
    if m <= 1 {
        return (0..budget).collect();
    }
    let log2m = (m as f64).log2().ceil().max(1.0) as u32;
    let mut sequence = Vec::with_capacity(budget as usize);
    let mut visits = vec![0u32; m as usize];
    let mut considered = m;
    while (sequence.len() as u32) < budget {
        let extra = (budget / (log2m * considered)).max(1);
        for _ in 0..extra {
            sequence.extend_from_slice(&visits[..considered as usize]);
            for v in &mut visits[..considered as usize] {
                *v += 1;
            }
        }
        considered = (considered / 2).max(2);
    }
    sequence.truncate(budget as usize);
    sequence
}

impl Tree {
    /// σ(completed Q) of every root move: a visited move's mean value, an unvisited one's
    /// the mix of the root's value and the visited moves' values weighted by their priors
    /// (the paper's v_mix); rescaled to 0..1 over the root's moves, then scaled by
    /// `(c_visit + max N) * c_scale`.
    fn sigma_completed_q(&self, g: &GumbelRoot) -> Vec<f32> {
        let root = self.nodes[0];
        let edges = &self.edges[root.first as usize..(root.first + root.len) as usize];
        let visits: u32 = edges.iter().map(|e| e.n).sum();
        let (pq, p): (f32, f32) = edges
            .iter()
            .filter(|e| e.n > 0)
            .fold((0.0, 0.0), |(pq, p), e| (pq + e.prior * e.w / e.n as f32, p + e.prior));
        let v_mix = if p > 0.0 {
            (g.raw_value + visits as f32 * pq / p) / (visits as f32 + 1.0)
        } else {
            g.raw_value
        };
        let completed: Vec<f32> = edges
            .iter()
            .map(|e| if e.n > 0 { e.w / e.n as f32 } else { v_mix })
            .collect();
        let lo = completed.iter().cloned().fold(f32::INFINITY, f32::min);
        let hi = completed.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
        let max_n = edges.iter().map(|e| e.n).max().unwrap_or(0) as f32;
        let scale = (GUMBEL_C_VISIT + max_n) * GUMBEL_C_SCALE;
        completed
            .iter()
            .map(|q| scale * (q - lo) / (hi - lo).max(1e-8))
            .collect()
    }

    /// The root move of the next simulation: among the moves with the visit count the
    /// schedule names, the best by g + logit + σ(q̂).
    pub(super) fn gumbel_pick(&self, g: &GumbelRoot) -> u32 {
        let root = self.nodes[0];
        let edges = &self.edges[root.first as usize..(root.first + root.len) as usize];
        let k = self.root_visits() as usize;
        let wanted = g.sequence.get(k).copied();
        let sigma = self.sigma_completed_q(g);
        let score = |i: usize| g.g[i] + edges[i].prior.max(1e-30).ln() + sigma[i];
        // (A move with the named count always exists while the schedule runs; past it, or
        // if not, the best move with the fewest visits.)
        let min_n = edges.iter().map(|e| e.n).min().unwrap_or(0);
        let target = wanted.filter(|w| edges.iter().any(|e| e.n == *w)).unwrap_or(min_n);
        let best = (0..edges.len())
            .filter(|&i| edges[i].n == target)
            .max_by(|&a, &b| score(a).total_cmp(&score(b)))
            .unwrap_or(0);
        root.first + best as u32
    }

    /// The Gumbel root's answer: the improved policy softmax(logit + σ(completed Q)) as
    /// the target, and the best of the most visited moves by g + logit + σ(q̂).
    pub(super) fn gumbel_result(&self, g: &GumbelRoot, n: usize) -> RootResult {
        let root = self.nodes[0];
        let edges = &self.edges[root.first as usize..(root.first + root.len) as usize];
        let sigma = self.sigma_completed_q(g);
        let logits: Vec<f32> = edges
            .iter()
            .zip(&sigma)
            .map(|(e, s)| e.prior.max(1e-30).ln() + s)
            .collect();
        let max = logits.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
        let exp: Vec<f32> = logits.iter().map(|l| (l - max).exp()).collect();
        let sum: f32 = exp.iter().sum();
        let mut policy = vec![0.0f32; n * n + 1];
        for (e, x) in edges.iter().zip(&exp) {
            policy[move_index(e.mv, n)] = x / sum;
        }
        let most = edges.iter().map(|e| e.n).max().unwrap_or(0);
        let score = |i: usize| g.g[i] + edges[i].prior.max(1e-30).ln() + sigma[i];
        let best = (0..edges.len())
            .filter(|&i| edges[i].n == most)
            .max_by(|&a, &b| score(a).total_cmp(&score(b)))
            .unwrap_or(0);
        let e = edges[best];
        RootResult {
            policy,
            mv: e.mv,
            value: if e.n > 0 { e.w / e.n as f32 } else { g.raw_value },
        }
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use weiqi_rules::{Move, Rules, State};

    use super::super::{Edge, NONE, Node, SearchConfig, UniformEvaluator};
    use super::*;
    use crate::{Evaluator, cells};

    /// Sequential halving's schedule (mctx's table): m moves once each, then the better
    /// half twice each, ..., exactly the budget.
    #[test]
    fn sequential_halving_schedules_exactly_the_budget() {
        assert_eq!(considered_visits(4, 8), [0, 0, 0, 0, 1, 1, 2, 2]);
        assert_eq!(considered_visits(1, 3), [0, 1, 2]);
        assert_eq!(considered_visits(16, 4), [0, 0, 0, 0]);
        for m in 1..=32 {
            for budget in [0, 1, 2, 7, 16, 50, 200] {
                assert_eq!(
                    considered_visits(m, budget).len(),
                    budget as usize,
                    "m {m} budget {budget}"
                );
            }
        }
    }

    /// A Gumbel search spends exactly its simulations at the root, on at most m moves,
    /// whatever the budget, in self-play (with noise) and in play.
    #[test]
    fn a_gumbel_search_spends_exactly_the_budget() {
        let s = State::new(5, Rules::default()).unwrap();
        let hist = vec![cells(&s, 5)];
        for (m, visits, explore) in [(4, 8, true), (16, 16, true), (8, 50, false), (2, 3, true)] {
            let mut cfg = if explore {
                SearchConfig::for_size(5, visits)
            } else {
                SearchConfig::for_play(5, visits)
            };
            cfg.gumbel = Some(m);
            let mut tree = Tree::new();
            let mut rng = SmallRng::seed_from_u64(3);
            let mut eval = UniformEvaluator { area: 25 };
            while !tree.done(cfg.visits) {
                if let Some(leaf) = tree.select(&s, &hist, &cfg, 100) {
                    let e = eval.evaluate(&leaf.features, 1).unwrap().remove(0);
                    tree.expand(leaf, &e, &cfg, Some(&mut rng));
                }
            }
            let root = tree.nodes[0];
            let edges = &tree.edges[root.first as usize..(root.first + root.len) as usize];
            assert_eq!(tree.root_visits(), visits);
            assert_eq!(edges.iter().map(|e| e.n).sum::<u32>(), visits);
            let tried = edges.iter().filter(|e| e.n > 0).count() as u32;
            assert_eq!(tried, m.min(visits), "m {m} visits {visits}");
            let r = tree.result(5, &cfg, None);
            assert!((r.policy.iter().sum::<f32>() - 1.0).abs() < 1e-5);
            assert!(
                edges
                    .iter()
                    .any(|e| e.mv == r.mv && e.n == edges.iter().map(|e| e.n).max().unwrap())
            );
        }
    }

    /// The completed-Q improved policy of a hand-checked root: priors 0.5, 0.3, 0.2; the
    /// first move visited twice with mean 0.5, the second once with -0.5, the third never;
    /// the root's own value 0.2. By hand: v_mix = (0.2 + 3 * (0.5*0.5 - 0.3*0.5) / 0.8) / 4
    /// = 0.14375; completed Q = (0.5, -0.5, 0.14375), rescaled (1, 0, 0.64375), times
    /// (50 + 2) * 0.1 = (5.2, 0, 3.3475); softmax(ln p + that) = (0.93805, 0.00311, 0.05884).
    #[test]
    fn the_improved_policy_of_a_hand_checked_root() {
        let mv = |x| Move::Place(weiqi_rules::Point::new(x, 0));
        let edge = |x, prior, n, w| Edge {
            mv: mv(x),
            prior,
            n,
            w,
            child: NONE,
        };
        let tree = Tree {
            nodes: vec![Node {
                first: 0,
                len: 3,
                n: 4,
                w: 0.0,
                expanded: true,
            }],
            edges: vec![edge(0, 0.5, 2, 1.0), edge(1, 0.3, 1, -0.5), edge(2, 0.2, 0, 0.0)],
            gumbel: Some(GumbelRoot {
                g: vec![0.0; 3],
                raw_value: 0.2,
                sequence: considered_visits(3, 3),
            }),
        };
        let r = tree.result(5, &SearchConfig::for_play(5, 3), None);
        for (got, want) in r.policy[..3].iter().zip([0.93805, 0.00311, 0.05884]) {
            assert!((got - want).abs() < 1e-4, "{:?}", &r.policy[..3]);
        }
        assert!(r.policy[3..].iter().all(|&p| p == 0.0));
        // The move: the most visited, its value its mean.
        assert_eq!((r.mv, r.value), (mv(0), 0.5));
        // The next simulation (the schedule's fourth) goes to a move with the count it names.
        let next = tree.gumbel_pick(tree.gumbel.as_ref().unwrap());
        assert!(next < 3);
    }
}
