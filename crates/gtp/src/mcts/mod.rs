//! A Monte Carlo tree search player without a network: UCT with RAVE (all-moves-as-first
//! statistics, MoGo's blend) over the rules crate's playouts (light or heavy, simple ko),
//! priors from the heavy policy's tactics (Pachi's and Fuego's way of ordering new moves),
//! root parallelism over threads, the tree kept between moves, and a pass and resign policy.
//! With advisors (`MctsPlayer::with_advisors`) it is the hybrid engine: a network's move
//! probabilities as priors and its value mixed with the playouts' results (`hybrid`).

use std::time::Instant;

use rand::SeedableRng;
use rand::rngs::SmallRng;
use weiqi_rules::{Color, DeadEstimate, Move, Playout, PlayoutOptions, Point, Policy, State};

use crate::analysis::Candidate;
use crate::hybrid::{Advisor, HybridSettings, mixed_result};
use crate::player::{Choice, Player, to_move};
use crate::timing::Budget;

mod advice;
mod node;
mod shapes;
#[cfg(test)]
mod tests;

use advice::{Advising, AdvisorSlot};
use node::{Node, PRIOR_NEAR};
pub use shapes::{ShapeCounts, ShapeTable, ShapeTableError};

/// How the search is bounded and when it gives up.
#[derive(Debug, Clone, Copy)]
pub struct MctsSettings {
    /// Playouts per move over all threads (0: only the time budget bounds it).
    pub playouts: u32,
    pub threads: usize,
    pub seed: u64,
    /// The playouts' policy (light or heavy); they check simple ko only, as search engines'
    /// playouts do (the tree's moves are checked by the exact rules).
    pub policy: Policy,
    /// Resign below this win rate at the root (after at least [`RESIGN_MIN_VISITS`]).
    pub resign_below: f64,
    /// Virtual wins for a new move whose shape was always played, scaled by the square
    /// root of its learned share ([`ShapeTable::builtin`]); 0 turns the learned shapes off.
    pub shape_prior: f32,
}

/// [`MctsSettings::shape_prior`]'s default: off. The built-in table (GNU Go's 9x9
/// self-play) gained nothing measurable on 9x9 at 100 (Michi's weight for its large
/// patterns) or 30 (docs/cli.md, "How strong the tree search is"); the option stays for
/// tables from other records and for larger boards.
pub const DEFAULT_SHAPE_PRIOR: f32 = 0.0;

/// Simulations through a leaf before it gets children (each expansion lists every legal
/// move; most leaves are never visited again).
const EXPAND_VISITS: u32 = 2;
/// Visits before a resignation can be trusted.
const RESIGN_MIN_VISITS: u32 = 500;
/// A tree stops growing at this many nodes (memory bound: 40 bytes a node, about 160 MB
/// per thread); it keeps searching with the nodes it has. The tree is compacted to the
/// subtree of the position reached after every move, so a new move starts well below it.
const MAX_NODES: usize = 4_000_000;

/// The root's place in a tree's arena.
const ROOT: u32 = 0;

/// One search tree over the game from its root position.
struct Tree {
    /// The arena; the root is always node [`ROOT`] (a move compacts the tree to it).
    nodes: Vec<Node>,
    /// The game the tree is of (its board's size and starting position), and the moves
    /// from there to the root: a position is the root's or below it only if its game and
    /// the start of its moves are these.
    game: (u8, u8, u128),
    root_moves: Vec<(Color, Move)>,
    rng: SmallRng,
    playout: Playout,
    /// The position being searched, reused by every simulation (`State::clone_from`).
    scratch: Option<State>,
    /// Scratch for backing up all-moves-as-first statistics: per point (`amaf_key`), the
    /// colour (1 Black, 2 White) that played there first at or after the depth being
    /// backed up, 0 for none. Only the first play at a point counts, as in MoGo.
    first: Vec<u8>,
    /// The board's width, for `amaf_key`.
    width: usize,
    /// [`MctsSettings::shape_prior`].
    shape_prior: f32,
}

/// What identifies a game apart from its moves: the board's size and starting position.
fn game_of(state: &State) -> (u8, u8, u128) {
    let b = state.initial_board();
    (b.width(), b.height(), b.hash())
}

impl Tree {
    fn new(state: &State, seed: u64, policy: Policy, shape_prior: f32) -> Tree {
        let root = Node::new(Move::Pass, state.to_move().opponent());
        let size = state.board().width().max(state.board().height());
        let options = PlayoutOptions {
            // The moves are kept: all-moves-as-first needs them.
            record: true,
            ..PlayoutOptions::fast(policy, size)
        };
        Tree {
            nodes: vec![root],
            game: game_of(state),
            root_moves: state.moves().to_vec(),
            rng: SmallRng::seed_from_u64(seed),
            playout: Playout::new(options),
            scratch: None,
            first: vec![0; state.board().area() as usize],
            width: state.board().width() as usize,
            shape_prior,
        }
    }

    /// The place of point `p` in `first`.
    fn amaf_key(&self, p: Point) -> usize {
        p.y as usize * self.width + p.x as usize
    }

    /// Moves the root down along the moves played since (tree reuse) and drops the rest of
    /// the tree; false when the tree does not lead there.
    fn advance_to(&mut self, state: &State) -> bool {
        let n = self.root_moves.len();
        if game_of(state) != self.game || !state.moves().starts_with(&self.root_moves) {
            return false;
        }
        let mut node = ROOT;
        for &(_, mv) in &state.moves()[n..] {
            let nd = &self.nodes[node as usize];
            let found = (nd.first..nd.first + nd.count).find(|&k| self.nodes[k as usize].mv == mv);
            match found {
                Some(k) => node = k,
                None => return false,
            }
        }
        self.compact(node);
        self.root_moves = state.moves().to_vec();
        true
    }

    /// Keeps only the subtree under `root`, copied breadth first into a fresh arena (each
    /// node's children stay one contiguous block), which becomes the whole tree.
    fn compact(&mut self, root: u32) {
        if root == ROOT {
            return;
        }
        let mut kept = Vec::with_capacity(self.nodes.len() / 4);
        kept.push(self.nodes[root as usize].clone());
        let mut k = 0;
        while k < kept.len() {
            let (first, count) = (kept[k].first as usize, kept[k].count as usize);
            if kept[k].expanded {
                kept[k].first = kept.len() as u32;
                kept.extend_from_slice(&self.nodes[first..first + count]);
            }
            k += 1;
        }
        self.nodes = kept;
    }

    fn expand(&mut self, node: u32, state: &State) {
        let c = state.to_move();
        let first = self.nodes.len() as u32;
        let mut count = 0;
        if !state.is_over() {
            let near = state.last_move_distances(PRIOR_NEAR.len() as u8);
            let shapes = (self.shape_prior > 0.0).then(ShapeTable::builtin);
            for p in state.board().empty_points() {
                // (Filling one's own true eye is never useful; a false one may connect.)
                if shapes::candidate(state, p) {
                    let shape = shapes
                        .and_then(|t| t.probability(state.board().shape_key(p, c)))
                        .map_or(0.0, |share| self.shape_prior * share.sqrt());
                    let prior = Node::with_prior(Move::Place(p), c, state.move_hints(p), near.of(p), shape);
                    self.nodes.push(prior);
                    count += 1;
                }
            }
            self.nodes.push(Node::new(Move::Pass, c));
            count += 1;
        }
        let nd = &mut self.nodes[node as usize];
        (nd.first, nd.count, nd.expanded) = (first, count, true);
    }

    /// One simulation from the root: select and expand down the tree, play out, back up;
    /// with an advisor, the hybrid's priors and value mixing.
    fn simulate(&mut self, root_state: &State, cleanup: bool, mut advising: Option<&mut Advising<'_>>) {
        let mut state = match self.scratch.take() {
            Some(mut s) => {
                s.clone_from(root_state);
                s
            }
            None => root_state.clone(),
        };
        let mut node = ROOT;
        // The nodes selected, root first (the last is the leaf).
        let mut path = vec![node];
        // (colour, point) of every move after the root, for the AMAF statistics.
        let mut played: Vec<(Color, Move)> = Vec::new();
        // The deepest advised node's value, whether Black moves there, and its depth.
        let mut advised: Option<(f32, bool, usize)> = None;
        loop {
            if !self.nodes[node as usize].expanded {
                let ripe = node == ROOT || self.nodes[node as usize].visits >= EXPAND_VISITS;
                if ripe && self.nodes.len() < MAX_NODES {
                    self.expand(node, &state);
                }
                break;
            }
            if let Some(a) = advising.as_deref_mut() {
                self.advise(node, &state, a);
            }
            let v = self.nodes[node as usize].net_value;
            if !v.is_nan() {
                advised = Some((v, state.to_move() == Color::Black, path.len() - 1));
            }
            let nd = &self.nodes[node as usize];
            if nd.count == 0 {
                break;
            }
            let ln_parent = (nd.visits.max(1) as f64).ln();
            let skip_pass = cleanup && node == ROOT && nd.count > 1;
            let mut best = None;
            let mut best_score = f64::NEG_INFINITY;
            for k in nd.first..nd.first + nd.count {
                let child = &self.nodes[k as usize];
                if skip_pass && child.mv == Move::Pass {
                    continue;
                }
                let score = child.score(ln_parent);
                if score > best_score {
                    (best, best_score) = (Some(k), score);
                }
            }
            let Some(best) = best else { break };
            let child = &self.nodes[best as usize];
            played.push((child.by, child.mv));
            if state.play(child.mv).is_err() {
                // (Children are legal when made; a superko ban by another path can differ.)
                break;
            }
            node = best;
            path.push(node);
        }
        // Playout to the end (simple ko), then the count by area with every stone alive:
        // playouts that fill no eyes end with the dead captured.
        self.playout.run(&state, &mut self.rng);
        let mut c = state.to_move();
        for &m in self.playout.moves() {
            played.push((c, m));
            c = c.opponent();
        }
        let [b, w] = weiqi_rules::score::tromp_taylor(self.playout.board());
        let wmb = w as f64 + state.white_bonus() - b as f64;
        let black_playout = if wmb > 0.0 {
            0.0
        } else if wmb < 0.0 {
            1.0
        } else {
            0.5
        };
        // The hybrid's mix goes to the advised node and the nodes above it; the nodes below
        // it (not yet advised) get the playout alone, so their siblings' differences are
        // not flattened by a value they all share.
        let (black, mixed_to) = match (&advising, advised) {
            (Some(a), Some((v, black_to_move, depth))) => (
                mixed_result(black_playout, Some((v, black_to_move)), a.settings.value_weight),
                Some(depth),
            ),
            _ => (black_playout, None),
        };
        self.backup(&path, black, black_playout, mixed_to, &played);
        self.scratch = Some(state);
    }

    /// Backs a result up `path` (root first). `black` is Black's share (1 won, 0 lost, 0.5
    /// drawn, or between for the hybrid's mix) for the nodes at depths up to `mixed_to`;
    /// deeper nodes and the all-moves-as-first statistics get the playout's,
    /// `black_playout` (without a mix: every node). The AMAF set of the node at depth `d`
    /// is what was played after it, `played[d..]`: marked in `seen` from the leaf up, so
    /// each child is checked with one lookup.
    fn backup(
        &mut self,
        path: &[u32],
        black: f32,
        black_playout: f32,
        mixed_to: Option<usize>,
        played: &[(Color, Move)],
    ) {
        let share = |b: f32, c: Color| if c == Color::Black { b } else { 1.0 - b };
        self.first.fill(0);
        let leaf_depth = path.len() - 1;
        // Latest first, so that an earlier play at a point overwrites a later one.
        for &(c, m) in played[leaf_depth.min(played.len())..].iter().rev() {
            self.mark(c, m);
        }
        for (depth, &node) in path.iter().enumerate().rev() {
            if depth < leaf_depth {
                let (c, m) = played[depth];
                self.mark(c, m);
            }
            let own = if mixed_to.is_some_and(|m| depth <= m) {
                black
            } else {
                black_playout
            };
            let nd = &mut self.nodes[node as usize];
            nd.visits += 1;
            nd.wins += share(own, nd.by);
            let (first, count) = (nd.first, nd.count);
            for k in first..first + count {
                let child = &self.nodes[k as usize];
                let Move::Place(p) = child.mv else { continue };
                let by = child.by;
                if self.first[self.amaf_key(p)] == by.index() as u8 + 1 {
                    let child = &mut self.nodes[k as usize];
                    child.amaf_visits += 1;
                    child.amaf_wins += share(black_playout, by);
                }
            }
        }
    }

    fn mark(&mut self, c: Color, m: Move) {
        if let Move::Place(p) = m {
            let k = self.amaf_key(p);
            self.first[k] = c.index() as u8 + 1;
        }
    }

    /// The visits of the root's move `mv`.
    fn visits_of(&self, mv: Move) -> u32 {
        self.root_stats().iter().find(|x| x.0 == mv).map_or(0, |x| x.1)
    }

    /// The principal variation from the root's move `mv`: at each node on, its most
    /// visited child, at most `len` moves.
    fn pv(&self, mv: Move, len: usize) -> Vec<Move> {
        let r = &self.nodes[ROOT as usize];
        let mut node = (r.first..r.first + r.count).find(|&k| self.nodes[k as usize].mv == mv);
        let mut pv = Vec::new();
        while let Some(k) = node {
            let n = &self.nodes[k as usize];
            pv.push(n.mv);
            if pv.len() >= len {
                break;
            }
            node = (n.first..n.first + n.count)
                .filter(|&c| self.nodes[c as usize].visits > 0)
                .max_by_key(|&c| self.nodes[c as usize].visits);
        }
        if pv.is_empty() {
            pv.push(mv);
        }
        pv
    }

    /// Visits and wins of each root move.
    fn root_stats(&self) -> Vec<(Move, u32, f32)> {
        let r = &self.nodes[ROOT as usize];
        (r.first..r.first + r.count)
            .map(|k| {
                let n = &self.nodes[k as usize];
                (n.mv, n.visits, n.wins)
            })
            .collect()
    }
}

/// The MCTS player.
pub struct MctsPlayer {
    settings: MctsSettings,
    trees: Vec<Tree>,
    moves_made: u64,
    /// The hybrid's advisors, one per search thread (none: playouts alone).
    advisors: Vec<AdvisorSlot>,
    hybrid: HybridSettings,
}

impl MctsPlayer {
    pub fn new(settings: MctsSettings) -> MctsPlayer {
        if settings.shape_prior > 0.0 {
            // Parsed here rather than in the first move's search, whose time it would take.
            ShapeTable::builtin();
        }
        MctsPlayer {
            settings: MctsSettings {
                threads: settings.threads.max(1),
                ..settings
            },
            trees: Vec::new(),
            moves_made: 0,
            advisors: Vec::new(),
            hybrid: HybridSettings::default(),
        }
    }

    /// The hybrid engine: one advisor per search thread (the search runs as many
    /// threads as advisors given).
    pub fn with_advisors(mut self, advisors: Vec<Box<dyn Advisor>>, hybrid: HybridSettings) -> MctsPlayer {
        self.settings.threads = advisors.len().max(1);
        self.advisors = advisors
            .into_iter()
            .map(|advisor| AdvisorSlot { advisor, failed: None })
            .collect();
        self.hybrid = hybrid;
        self
    }

    /// Runs the threads' searches, each with its advisor when the player has them.
    fn run(&mut self, trees: &mut [Tree], root: &State, per_thread: usize, deadline: Instant, cleanup: bool) {
        let hybrid = self.hybrid;
        let mut slots: Vec<Option<&mut AdvisorSlot>> = self.advisors.iter_mut().map(Some).collect();
        slots.resize_with(trees.len(), || None);
        std::thread::scope(|s| {
            for (t, slot) in trees.iter_mut().zip(slots) {
                s.spawn(move || {
                    let mut advising = slot.map(|slot| Advising { slot, settings: hybrid });
                    let mut done = 0;
                    while (per_thread == 0 || done < per_thread) && (done % 16 != 0 || Instant::now() < deadline) {
                        t.simulate(root, cleanup, advising.as_mut());
                        done += 1;
                    }
                });
            }
        });
    }
}

impl MctsPlayer {
    /// The threads' trees for a search of `root` (`state` with the colour asked for to
    /// move): each kept when it leads to this position, a fresh one otherwise.
    fn trees_for(&mut self, state: &State, root: &State) -> Vec<Tree> {
        let threads = self.settings.threads;
        let old = std::mem::take(&mut self.trees);
        let mut trees: Vec<Tree> = old
            .into_iter()
            .filter_map(|mut t| (root.to_move() == state.to_move() && t.advance_to(root)).then_some(t))
            .collect();
        while trees.len() < threads {
            let seed = self.settings.seed ^ (self.moves_made << 8) ^ trees.len() as u64;
            trees.push(Tree::new(root, seed, self.settings.policy, self.settings.shape_prior));
        }
        trees.truncate(threads);
        trees
    }
}

/// Root parallelism: the threads' root statistics summed by move.
fn merged(trees: &[Tree]) -> Vec<(Move, u32, f32)> {
    let mut total: Vec<(Move, u32, f32)> = Vec::new();
    for t in trees {
        for (mv, n, w) in t.root_stats() {
            match total.iter_mut().find(|x| x.0 == mv) {
                Some(x) => (x.1, x.2) = (x.1 + n, x.2 + w),
                None => total.push((mv, n, w)),
            }
        }
    }
    total
}

impl MctsPlayer {
    /// The candidates for `color` in `state` after a search of the settings' playouts (a
    /// review's fixed budget per position; at least one), best first. The trees are kept
    /// for the next position of the game.
    pub fn candidates(&mut self, state: &State, color: Color) -> Vec<Candidate> {
        let per_thread = (self.settings.playouts.max(1) as usize).div_ceil(self.settings.threads);
        self.search_candidates(state, color, per_thread, Instant::now() + UNBOUNDED)
    }

    /// Searches `state` for `color` (`per_thread` simulations a tree, 0: until the
    /// deadline) with the kept trees, and gives the root's candidates, best first.
    fn search_candidates(
        &mut self,
        state: &State,
        color: Color,
        per_thread: usize,
        deadline: Instant,
    ) -> Vec<Candidate> {
        let root = to_move(state, color);
        let mut trees = self.trees_for(state, &root);
        self.run(&mut trees, &root, per_thread, deadline, false);
        let found = candidates_of(&trees);
        self.trees = trees;
        found
    }
}

/// A search bounded by its playouts alone.
const UNBOUNDED: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// The trees' root moves as candidates, most visited first, each with its principal
/// variation from the tree that searched it most.
fn candidates_of(trees: &[Tree]) -> Vec<Candidate> {
    let mut total = merged(trees);
    total.sort_by_key(|x| std::cmp::Reverse(x.1));
    total
        .into_iter()
        .map(|(mv, n, w)| {
            let pv = trees
                .iter()
                .max_by_key(|t| t.visits_of(mv))
                .map_or_else(|| vec![mv], |t| t.pv(mv, crate::analysis::PV_LENGTH));
            Candidate {
                mv,
                visits: n,
                winrate: if n > 0 { w as f64 / n as f64 } else { 0.0 },
                prior: 0.0,
                pv,
            }
        })
        .collect()
}

impl Player for MctsPlayer {
    fn analyze(&mut self, state: &State, color: Color, slice: std::time::Duration) -> Option<Vec<Candidate>> {
        Some(self.search_candidates(state, color, 0, Instant::now() + slice))
    }

    fn name(&self) -> String {
        if self.advisors.is_empty() { "mcts" } else { "mcts+net" }.into()
    }

    /// Why an advisor stopped (the hybrid then searched on with playouts alone).
    fn failure(&self) -> Option<String> {
        self.advisors.iter().find_map(|a| a.failed.clone())
    }

    fn genmove(&mut self, state: &State, color: Color, budget: Budget, cleanup: bool) -> Choice {
        self.search_and_choose(state, color, budget, cleanup, false).0
    }
}

impl MctsPlayer {
    /// [`Player::genmove`]'s choice, with the root's candidates it chose from (none when
    /// there was nothing to search): what a teacher records as the policy target.
    pub fn decide(&mut self, state: &State, color: Color, budget: Budget, cleanup: bool) -> (Choice, Vec<Candidate>) {
        self.search_and_choose(state, color, budget, cleanup, true)
    }

    /// Searches and chooses; the candidates (principal variations included) only when
    /// `with_candidates`.
    fn search_and_choose(
        &mut self,
        state: &State,
        color: Color,
        budget: Budget,
        cleanup: bool,
        with_candidates: bool,
    ) -> (Choice, Vec<Candidate>) {
        let root = to_move(state, color);
        if root.legal_moves().len() <= 1 {
            return (Choice::Play(Move::Pass), Vec::new());
        }
        let mut trees = self.trees_for(state, &root);
        self.moves_made += 1;
        let per_thread = (self.settings.playouts as usize).div_ceil(self.settings.threads);
        self.run(&mut trees, &root, per_thread, Instant::now() + budget.time, cleanup);
        let found = if with_candidates {
            candidates_of(&trees)
        } else {
            Vec::new()
        };
        let choice = self.choose(state, color, &root, &trees, cleanup);
        self.trees = trees;
        (choice, found)
    }

    /// The move, resignation or pass after a search of `root` by `trees`.
    fn choose(&self, state: &State, color: Color, root: &State, trees: &[Tree], cleanup: bool) -> Choice {
        let total = merged(trees);
        let visits: u32 = total.iter().map(|x| x.1).sum();
        let Some(&(best, n, w)) = total
            .iter()
            .filter(|x| !(cleanup && x.0 == Move::Pass && total.len() > 1))
            .max_by_key(|x| x.1)
        else {
            return Choice::Play(Move::Pass);
        };
        let rate = if n > 0 { w as f64 / n as f64 } else { 0.5 };
        if visits >= RESIGN_MIN_VISITS && rate < self.settings.resign_below && !cleanup {
            return Choice::Resign;
        }
        // After the opponent passed, pass too when that wins: ending now is as good as
        // playing on, and no one keeps filling the board.
        // (The opponent's own pass, not the one `to_move` adds when asked for the other colour.)
        let opponent_passed = matches!(state.moves().last(), Some(&(c, Move::Pass)) if c != color);
        if opponent_passed && !cleanup {
            let dead = DeadEstimate::default().estimate(root);
            let wmb = root.area_score(&dead).map_or(0.0, |s| s.white_minus_black);
            if (color == Color::White) == (wmb > 0.0) && wmb != 0.0 {
                return Choice::Play(Move::Pass);
            }
        }
        Choice::Play(best)
    }
}
