//! PUCT search (AlphaGo Zero style) with a network's priors and values, and a driver that
//! plays many games at once so that the leaf evaluations of all games in flight go to the
//! evaluator as one batch, the way large self-play systems keep their hardware busy.
//!
//! Every move of every simulation goes through `weiqi-rules`, so the search never explores
//! an illegal move (superko included) and terminal positions are scored exactly.

use rand::Rng;
use rand::rngs::SmallRng;
use rand_distr::{Distribution, Gamma};
use weiqi_rules::{Color, Move, State};

mod driver;
mod forced;
mod gumbel;

pub use driver::play_games;

use gumbel::{GumbelRoot, considered_visits, gumbel_sample};

use crate::PLANES;
use crate::play::{cells, encode_planes, move_index, outcome_value};

/// An evaluator's answer for one position.
#[derive(Debug, Clone, PartialEq)]
pub struct Eval {
    /// Unnormalised log-probabilities over the N*N+1 moves (index N*N is pass); the search
    /// renormalises them over the legal moves.
    pub logits: Vec<f32>,
    /// Expected outcome in [-1, 1] from the view of the player to move.
    pub value: f32,
}

/// Evaluates positions in batches: a network, or [`UniformEvaluator`].
pub trait Evaluator {
    /// `features` holds `batch` positions of [`PLANES`] x N x N bytes, as written by
    /// [`encode_planes`]; the answer has one [`Eval`] per position, in order. A network
    /// that cannot evaluate says so: the search stops rather than go on with made-up
    /// priors.
    fn evaluate(&mut self, features: &[u8], batch: usize) -> Result<Vec<Eval>, EvalError>;
}

/// An evaluation that failed (a tensor that could not be read back, a wrong shape).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("the network could not evaluate: {0}")]
pub struct EvalError(pub String);

/// The answer of `evaluate` for `batch` positions, checked for one evaluation each.
fn checked(evals: Result<Vec<Eval>, EvalError>, batch: usize) -> Result<Vec<Eval>, EvalError> {
    let evals = evals?;
    if evals.len() != batch {
        return Err(EvalError(format!("{} evaluations for {batch} positions", evals.len())));
    }
    Ok(evals)
}

/// Uniform priors and value 0: the search then knows only the exact outcomes of the
/// terminal positions it reaches. A stand-in for tests and a baseline.
#[derive(Debug, Clone, Copy)]
pub struct UniformEvaluator {
    /// N*N of the board.
    pub area: usize,
}

impl Evaluator for UniformEvaluator {
    fn evaluate(&mut self, features: &[u8], batch: usize) -> Result<Vec<Eval>, EvalError> {
        debug_assert_eq!(features.len(), batch * PLANES * self.area);
        Ok(vec![
            Eval {
                logits: vec![0.0; self.area + 1],
                value: 0.0,
            };
            batch
        ])
    }
}

/// Search settings.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SearchConfig {
    /// Simulations per move (after the root's own evaluation).
    pub visits: u32,
    /// Exploration constant of the PUCT formula.
    pub c_puct: f32,
    /// Dirichlet noise at the root: concentration (0 = no noise) and mixing weight.
    pub dirichlet_alpha: f32,
    pub dirichlet_epsilon: f32,
    /// Plies during which the move is sampled in proportion to the visits (then the most
    /// visited move is played).
    pub temperature_plies: usize,
    /// Resign when the searched value of the best move, from the mover's view, falls below
    /// this (None: never resign).
    pub resign_threshold: Option<f32>,
    /// Fraction of games that never resign, to measure how often resigning would be wrong.
    pub resign_audit: f64,
    /// Games played at once by one driver; their leaves form one evaluation batch.
    pub in_flight: usize,
    /// Gumbel AlphaZero's root (Danihelka et al., ICLR 2022) instead of PUCT's: `m` root
    /// moves sampled without replacement by Gumbel-top-m, the budget spent on them by
    /// sequential halving, the move the survivor, and the completed-Q improved policy as
    /// the target. Learns at a handful of simulations where PUCT's visit counts cannot.
    /// Replaces the Dirichlet noise and the sampling temperature (the Gumbel noise is the
    /// exploration). None: PUCT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gumbel: Option<u32>,
    /// KataGo's forced playouts at a self-play root (every move gets sqrt(2 P N) visits,
    /// so the noise is explored) with policy target pruning (the target takes those
    /// visits back). Only with root noise (`dirichlet_alpha` > 0) and PUCT's root.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub forced_playouts: bool,
    /// KataGo's playout cap randomization in self-play: a share of the moves is searched
    /// fully and recorded, the others cheaply and not recorded. None: every move full.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub playout_cap: Option<PlayoutCap>,
}

/// Playout cap randomization (Wu 2019, section 3.1): more games for the value target
/// from the same compute, the policy target only from full searches.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PlayoutCap {
    /// Probability that a move is searched with the full `visits` (with the root's noise)
    /// and recorded as a training position.
    pub full_fraction: f64,
    /// Visits of the other moves' searches: no root noise, the move played and not
    /// recorded (KataGo: 600 and 100 of 1,000; the ratio matters more than the values).
    pub cheap_visits: u32,
}

impl PlayoutCap {
    /// Refuses a share outside 0..=1 or no cheap visits, naming the setting.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.full_fraction > 0.0 && self.full_fraction <= 1.0) {
            return Err(format!(
                "full fraction {}: a probability above 0 and at most 1 (0 records nothing)",
                self.full_fraction
            ));
        }
        if self.cheap_visits == 0 {
            return Err("cheap visits: at least 1".into());
        }
        Ok(())
    }
}

impl SearchConfig {
    /// AlphaZero-like defaults scaled to the board: alpha = 10 / (N*N) (0.03 on 19x19).
    pub fn for_size(size: u8, visits: u32) -> SearchConfig {
        let area = size as usize * size as usize;
        SearchConfig {
            visits,
            c_puct: 1.5,
            dirichlet_alpha: 10.0 / area as f32,
            dirichlet_epsilon: 0.25,
            temperature_plies: area / 8,
            resign_threshold: None,
            resign_audit: 0.1,
            in_flight: 64,
            gumbel: None,
            forced_playouts: false,
            playout_cap: None,
        }
    }

    /// For playing strength (arena): no noise, no sampling, no resignation.
    pub fn for_play(size: u8, visits: u32) -> SearchConfig {
        SearchConfig {
            dirichlet_alpha: 0.0,
            temperature_plies: 0,
            ..SearchConfig::for_size(size, visits)
        }
    }
}

const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Edge {
    mv: Move,
    prior: f32,
    n: u32,
    /// Sum of values from the view of the player choosing this edge.
    w: f32,
    child: u32,
}

#[derive(Debug, Clone, Copy, Default)]
struct Node {
    first: u32,
    len: u32,
    /// Visits, this node's own evaluation included.
    n: u32,
    /// Sum of values from the view of the player to move here.
    w: f32,
    expanded: bool,
}

/// A simulation's leaf waiting for its evaluation.
#[derive(Debug)]
pub struct Leaf {
    node: u32,
    /// (node, edge) pairs from the root down.
    path: Vec<(u32, u32)>,
    legal: Vec<Move>,
    /// The leaf's [`PLANES`] x N x N input.
    pub features: Vec<u8>,
}

/// What the search found at the root.
#[derive(Debug, Clone, PartialEq)]
pub struct RootResult {
    /// Visit distribution over the N*N+1 moves (the policy target).
    pub policy: Vec<f32>,
    /// The move to play.
    pub mv: Move,
    /// Searched value of the most visited move, from the mover's view.
    pub value: f32,
}

/// One search tree, rooted at the position to move from. Not reused across moves.
#[derive(Debug, Default)]
pub struct Tree {
    nodes: Vec<Node>,
    edges: Vec<Edge>,
    /// The Gumbel root's state, once the root is expanded with `SearchConfig::gumbel`.
    gumbel: Option<GumbelRoot>,
}

impl Tree {
    pub fn new() -> Tree {
        Tree {
            nodes: vec![Node::default()],
            edges: Vec::new(),
            gumbel: None,
        }
    }

    /// Root simulations so far (the root's own evaluation excluded).
    pub fn root_visits(&self) -> u32 {
        self.nodes[0].n.saturating_sub(1)
    }

    /// Whether the root has its evaluation and `visits` simulations (or no moves at all:
    /// the game is over).
    pub fn done(&self, visits: u32) -> bool {
        self.nodes[0].expanded && (self.root_visits() >= visits || self.nodes[0].len == 0)
    }

    /// Runs one simulation down from `root` (with its board history, current last) until
    /// it reaches an unevaluated node, which it returns, or a finished game, whose exact
    /// result it backs up (returning None).
    pub fn select(&mut self, root: &State, history: &[Vec<u8>], cfg: &SearchConfig, max_moves: usize) -> Option<Leaf> {
        let n = root.board().width() as usize;
        let area = n * n;
        let mut node = 0u32;
        let mut path: Vec<(u32, u32)> = Vec::new();
        let mut state = root.clone();
        let mut hist: Vec<Vec<u8>> = history.iter().rev().take(8).rev().cloned().collect();
        loop {
            if !self.nodes[node as usize].expanded {
                let mut features = vec![0u8; PLANES * area];
                encode_planes(&hist, state.to_move() == Color::Black, area, &mut features);
                return Some(Leaf {
                    node,
                    path,
                    legal: state.legal_moves(),
                    features,
                });
            }
            let e = match &self.gumbel {
                Some(g) if node == 0 => self.gumbel_pick(g),
                _ if node == 0 && forcing(cfg) => self.forced_pick().unwrap_or_else(|| self.pick(node, cfg.c_puct)),
                _ => self.pick(node, cfg.c_puct),
            };
            path.push((node, e));
            let mv = self.edges[e as usize].mv;
            state.play(mv).expect("edges hold legal moves");
            if state.is_over() || state.move_number() >= max_moves {
                // Exact result, from the view of the player to move there.
                let winner = state.tromp_taylor_score().outcome.winner();
                self.backup(&path, None, outcome_value(winner, state.to_move()));
                return None;
            }
            hist.push(cells(&state, n));
            if hist.len() > 8 {
                hist.remove(0);
            }
            let child = self.edges[e as usize].child;
            node = if child == NONE {
                let c = self.nodes.len() as u32;
                self.nodes.push(Node::default());
                self.edges[e as usize].child = c;
                c
            } else {
                child
            };
        }
    }

    /// The PUCT choice at an expanded node: Q + c * P * sqrt(N) / (1 + n), unvisited moves
    /// valued a little below the node's own value (first-play urgency).
    fn pick(&self, node: u32, c_puct: f32) -> u32 {
        let nd = self.nodes[node as usize];
        let sqrt_n = (nd.n.max(1) as f32).sqrt();
        let fpu = nd.w / nd.n.max(1) as f32 - 0.2;
        let mut best = nd.first;
        let mut best_score = f32::NEG_INFINITY;
        for e in nd.first..nd.first + nd.len {
            let ed = &self.edges[e as usize];
            let q = if ed.n > 0 { ed.w / ed.n as f32 } else { fpu };
            let s = q + c_puct * ed.prior * sqrt_n / (1.0 + ed.n as f32);
            if s > best_score {
                best_score = s;
                best = e;
            }
        }
        best
    }

    /// Expands a leaf with its evaluation and backs the value up. At the root, `noise`
    /// mixes Dirichlet noise into the priors.
    pub fn expand(&mut self, leaf: Leaf, eval: &Eval, cfg: &SearchConfig, noise: Option<&mut SmallRng>) {
        let n = (eval.logits.len().saturating_sub(1) as f64).sqrt() as usize;
        let first = self.edges.len() as u32;
        let mut priors = legal_priors(&eval.logits, &leaf.legal, n);
        let mut noise = noise;
        if leaf.node == 0
            && let Some(m) = cfg.gumbel
        {
            // Gumbel noise when the search explores (self-play: `dirichlet_alpha` > 0);
            // none when it plays for strength (`for_play`).
            let g: Vec<f32> = match noise.take() {
                Some(rng) if cfg.dirichlet_alpha > 0.0 => priors.iter().map(|_| gumbel_sample(rng)).collect(),
                _ => vec![0.0; priors.len()],
            };
            let value = if eval.value.is_finite() {
                eval.value.clamp(-1.0, 1.0)
            } else {
                0.0
            };
            self.gumbel = Some(GumbelRoot {
                g,
                raw_value: value,
                sequence: considered_visits(m.min(priors.len() as u32).max(1), cfg.visits),
            });
        }
        if let Some(rng) = noise
            && leaf.node == 0
            && cfg.dirichlet_alpha > 0.0
            && priors.len() > 1
            && let Ok(gamma) = Gamma::new(cfg.dirichlet_alpha, 1.0)
        {
            let eta: Vec<f32> = priors.iter().map(|_| gamma.sample(rng)).collect();
            let total: f32 = eta.iter().sum();
            if total > 0.0 {
                let eps = cfg.dirichlet_epsilon;
                for (p, g) in priors.iter_mut().zip(&eta) {
                    *p = (1.0 - eps) * *p + eps * g / total;
                }
            }
        }
        for (&mv, &prior) in leaf.legal.iter().zip(&priors) {
            self.edges.push(Edge {
                mv,
                prior,
                n: 0,
                w: 0.0,
                child: NONE,
            });
        }
        let nd = &mut self.nodes[leaf.node as usize];
        nd.first = first;
        nd.len = leaf.legal.len() as u32;
        nd.expanded = true;
        let v = if eval.value.is_finite() {
            eval.value.clamp(-1.0, 1.0)
        } else {
            0.0
        };
        self.backup(&leaf.path, Some(leaf.node), v);
    }

    /// `v` is from the view of the player to move at the end of `path`.
    fn backup(&mut self, path: &[(u32, u32)], leaf: Option<u32>, v: f32) {
        if let Some(l) = leaf {
            self.nodes[l as usize].n += 1;
            self.nodes[l as usize].w += v;
        }
        let mut cur = v;
        for &(node, e) in path.iter().rev() {
            cur = -cur;
            let ed = &mut self.edges[e as usize];
            ed.n += 1;
            ed.w += cur;
            let nd = &mut self.nodes[node as usize];
            nd.n += 1;
            nd.w += cur;
        }
    }

    /// The visit distribution and the move: sampled in proportion to the visits while
    /// `sample` holds, else the most visited (ties to the higher prior). With forced
    /// playouts, the distribution (and the sampling) uses the pruned visits.
    pub fn result(&self, n: usize, cfg: &SearchConfig, sample: Option<&mut SmallRng>) -> RootResult {
        let root = self.nodes[0];
        let edges = &self.edges[root.first as usize..(root.first + root.len) as usize];
        let mut policy = vec![0.0f32; n * n + 1];
        if edges.is_empty() {
            policy[n * n] = 1.0;
            return RootResult {
                policy,
                mv: Move::Pass,
                value: 0.0,
            };
        }
        if let Some(g) = &self.gumbel {
            return self.gumbel_result(g, n);
        }
        let visits: Vec<f32> = if forcing(cfg) {
            self.pruned_root_visits(cfg.c_puct)
        } else {
            edges.iter().map(|e| e.n as f32).collect()
        };
        let total: f32 = visits.iter().sum();
        let weights: Vec<f32> = edges
            .iter()
            .zip(&visits)
            .map(|(e, &v)| if total > 0.0 { v / total } else { e.prior })
            .collect();
        for (e, &w) in edges.iter().zip(&weights) {
            policy[move_index(e.mv, n)] = w;
        }
        let best = edges
            .iter()
            .max_by(|a, b| {
                (a.n, a.prior)
                    .partial_cmp(&(b.n, b.prior))
                    .unwrap_or(std::cmp::Ordering::Equal)
            })
            .expect("non-empty");
        let chosen = match sample {
            Some(rng) => {
                let mut x: f32 = rng.random::<f32>() * weights.iter().sum::<f32>();
                let mut pick = best;
                for (e, &w) in edges.iter().zip(&weights) {
                    x -= w;
                    if x <= 0.0 {
                        pick = e;
                        break;
                    }
                }
                pick
            }
            None => best,
        };
        let value = if best.n > 0 {
            best.w / best.n as f32
        } else {
            root.w / root.n.max(1) as f32
        };
        RootResult {
            policy,
            mv: chosen.mv,
            value,
        }
    }
}

/// The network's probabilities of the `legal` moves (in their order): the softmax of
/// their `logits` (N*N+1 of them, pass last) alone; uniform when those cannot be
/// normalised. The one way the search and the hybrid engine read a policy.
pub fn legal_priors(logits: &[f32], legal: &[Move], n: usize) -> Vec<f32> {
    let logit = |m: Move| logits.get(move_index(m, n)).copied().unwrap_or(0.0);
    let max = legal.iter().map(|&m| logit(m)).fold(f32::NEG_INFINITY, f32::max);
    let mut priors: Vec<f32> = legal.iter().map(|&m| (logit(m) - max).exp()).collect();
    let sum: f32 = priors.iter().sum();
    for p in &mut priors {
        *p = if sum > 0.0 && sum.is_finite() {
            *p / sum
        } else {
            1.0 / legal.len() as f32
        };
    }
    priors
}

/// Whether a search forces playouts at its root: asked for, with root noise (self-play),
/// and PUCT's root (Gumbel's sequential halving decides its own visits).
fn forcing(cfg: &SearchConfig) -> bool {
    cfg.forced_playouts && cfg.dirichlet_alpha > 0.0 && cfg.gumbel.is_none()
}

/// Searches one position with a batch of one per evaluation (for play, e.g. the arena).
pub fn search<E: Evaluator + ?Sized>(
    state: &State,
    history: &[Vec<u8>],
    cfg: &SearchConfig,
    eval: &mut E,
    rng: &mut SmallRng,
) -> Result<RootResult, EvalError> {
    search_until(state, history, cfg, eval, rng, &mut || false)
}

/// [`search`], stopped early when `stop` says so (a player's clock; asked after each
/// simulation once the root has one).
pub fn search_until<E: Evaluator + ?Sized>(
    state: &State,
    history: &[Vec<u8>],
    cfg: &SearchConfig,
    eval: &mut E,
    rng: &mut SmallRng,
    stop: &mut dyn FnMut() -> bool,
) -> Result<RootResult, EvalError> {
    let n = state.board().width() as usize;
    let max_moves = usize::MAX;
    let mut tree = Tree::new();
    while !tree.done(cfg.visits) && (tree.root_visits() == 0 || !stop()) {
        if let Some(leaf) = tree.select(state, history, cfg, max_moves) {
            let e = checked(eval.evaluate(&leaf.features, 1), 1)?.remove(0);
            tree.expand(leaf, &e, cfg, Some(&mut *rng));
        }
    }
    let sample = state.move_number() < cfg.temperature_plies;
    Ok(tree.result(n, cfg, if sample { Some(rng) } else { None }))
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use weiqi_rules::Rules;

    use super::*;

    fn root_priors(noise: bool) -> Vec<f32> {
        let s = State::new(5, Rules::default()).unwrap();
        let hist = vec![cells(&s, 5)];
        let cfg = SearchConfig::for_size(5, 1);
        let mut tree = Tree::new();
        let leaf = tree.select(&s, &hist, &cfg, 100).expect("the root needs an evaluation");
        let eval = UniformEvaluator { area: 25 }
            .evaluate(&leaf.features, 1)
            .unwrap()
            .remove(0);
        let mut rng = SmallRng::seed_from_u64(9);
        tree.expand(leaf, &eval, &cfg, if noise { Some(&mut rng) } else { None });
        tree.edges.iter().map(|e| e.prior).collect()
    }

    /// Dirichlet noise is mixed into the root priors, which stay a distribution.
    #[test]
    fn dirichlet_noise_at_the_root() {
        let plain = root_priors(false);
        let noisy = root_priors(true);
        assert_eq!(plain.len(), 26);
        assert!(plain.iter().all(|&p| (p - 1.0 / 26.0).abs() < 1e-6));
        assert!((noisy.iter().sum::<f32>() - 1.0).abs() < 1e-4);
        let spread = noisy.iter().cloned().fold(0.0f32, f32::max) - noisy.iter().cloned().fold(1.0f32, f32::min);
        assert!(spread > 0.01, "{noisy:?}");
        assert!(noisy.iter().all(|&p| p >= 0.75 / 26.0 - 1e-6), "noise weight is 0.25");
    }
}
