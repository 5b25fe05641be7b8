//! Dead-stone estimation for the scoring phase: Benson's pass-alive analysis, which is
//! certain, plus Monte Carlo ownership, which is a proposal players may change.
//!
//! From the final position we play `playouts` light-policy games to the end and count who
//! owns each point (area). Chains of one colour that share a liberty form a group. A chain
//! that is not pass-alive is proposed dead when the opponent owns its points, or its
//! group's on average, in at least `threshold` of the playouts, unless the group of an
//! opposing chain next to it is itself lost in at least `race` of them: a capturing race
//! too close for random play to call is not conceded for either side. (A chain in atari
//! races nothing, one move takes it whoever wins around it, unless a rival is in atari
//! too; nor does a chain race a rival with at least two liberties more.) A chain proposed
//! dead lives when it is safely linked to a living chain of its colour. Random play
//! leaves living groups with two eyes alive (light playouts never fill their own eyes) and
//! lets dead groups be captured, which is why engines from GNU Go to Pachi score this way.
//! The RNG is seeded from the position, so the proposal is deterministic.

use crate::benson;
use crate::color::Color;
use crate::coord::Point;
use crate::playout::{Playout, PlayoutOptions, Policy};
use crate::rng::SplitMix64;
use crate::score::region_reach;
use crate::state::State;

/// How dead stones are judged: how many playouts, with which policy, and the share of them
/// in which the opponent must own a chain's points. The server's proposal (C6) and `weiqi
/// gtp` (`final_score`, `final_status_list`) use [`DeadEstimate::default`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeadEstimate {
    pub playouts: u32,
    /// 0..=1.
    pub threshold: f64,
    /// Light or heavy (heavy never plays a self-atari of two stones or more, so a seki's
    /// chains, where either side's approach is such a self-atari, mostly survive).
    pub policy: Policy,
    /// A chain that would be proposed dead is left alive when the group of an opposing
    /// chain next to it is itself lost in at least this share of the playouts (the group:
    /// a lone stone random play often loses, whose group is safe, races nothing): a
    /// capturing race (or seki)
    /// too close for random play to call, which a player would not concede (unless the
    /// chain is in atari and no rival is: one move takes it, whoever wins the race; and
    /// not against a rival with at least two liberties more than the chain, which wins
    /// their race even when the chain moves first). Above 1: off.
    pub race: f64,
    /// A chain in seki ([`crate::seki_stones`]: both sides of chains that live on shared
    /// liberties neither side can fill) is never proposed dead: random play fills such
    /// liberties, a player does not.
    pub seki: bool,
    /// Chains of one colour that share a liberty (a one-point jump, a diagonal) make one
    /// group, and a chain is judged by the larger of its own loss and its group's (the
    /// size-weighted mean of its chains' losses): a stone beside a dead group shares its
    /// fate even where random play lets it run.
    pub groups: bool,
    /// A chain of two stones or more that would be proposed dead lives when it is safely
    /// linked to a chain of its colour that lives (by the playouts, Benson's analysis or
    /// this rule): through two shared liberties, or through one where an opposing stone
    /// would capture nothing and be left with at most one liberty (a self-atari its owner
    /// answers by capturing). Random play often cuts such a link; a player does not lose to
    /// the cut.
    pub links: bool,
}

impl Default for DeadEstimate {
    /// Chosen against GNU Go's `final_status_list dead` on GNU Go self-play games
    /// (`bench/dead_stones.py`; the figures are in docs/rules-engine.md).
    fn default() -> DeadEstimate {
        DeadEstimate {
            playouts: DEFAULT_DEAD_PLAYOUTS,
            threshold: DEFAULT_DEAD_THRESHOLD,
            policy: Policy::Light,
            race: DEFAULT_DEAD_RACE,
            seki: true,
            groups: true,
            links: true,
        }
    }
}

/// The default estimate's playouts: about 10 ms on 9x9 and 50 ms on 19x19 on one core.
pub const DEFAULT_DEAD_PLAYOUTS: u32 = 1000;
/// The default estimate's threshold.
pub const DEFAULT_DEAD_THRESHOLD: f64 = 0.5;
/// The default estimate's share at which a neighbouring chain's loss makes a race close.
pub const DEFAULT_DEAD_RACE: f64 = 0.35;

/// [`DeadEstimate::estimate`] with the given playouts and threshold, the rest default.
pub fn estimate_dead(state: &State, playouts: u32, threshold: f64) -> Vec<Point> {
    DeadEstimate {
        playouts,
        threshold,
        ..DeadEstimate::default()
    }
    .estimate(state)
}

impl DeadEstimate {
    /// Proposes the dead stones of a finished position: every stone inside the opponent's
    /// pass-alive territory, and every other chain (never a pass-alive one) whose points
    /// the opponent owns in at least `threshold` of `playouts` random continuations, unless
    /// it is in a close race (an opposing neighbour lost in at least `race` of them, with
    /// at most one liberty more than the chain), or safely linked to a living chain of its
    /// colour (see [`DeadEstimate::links`]). Deterministic: the generator is seeded from the
    /// position.
    pub fn estimate(&self, state: &State) -> Vec<Point> {
        self.judge(state).dead
    }

    /// [`DeadEstimate::estimate`], with the playouts' ownership it was judged by.
    pub(crate) fn judge(&self, state: &State) -> Judged {
        let board = state.board();
        let mut dead: Vec<Point> = benson::unconditionally_dead(board);
        // Stones whose fate Benson's analysis already decides (dead or pass-alive), by index.
        let mut settled = vec![false; board.cell_count()];
        for p in dead
            .iter()
            .chain(&benson::pass_alive(board, Color::Black).stones)
            .chain(&benson::pass_alive(board, Color::White).stones)
        {
            settled[board.index(*p)] = true;
        }
        // When every stone is settled (half of all finished random 9x9 games), the
        // playouts could change nothing, so none are played.
        let all_settled = board
            .indices()
            .all(|i| settled[i] || board.cell(i) == crate::board::EMPTY);
        let playouts = if all_settled { 0 } else { self.playouts };
        let owned = ownership(state, playouts, self.policy);
        // Every chain once, with the playouts that lose it (all of its points owned by the
        // opponent): all of them for Benson's dead, none for pass-alive chains.
        let mut chain_of = vec![usize::MAX; board.cell_count()];
        let mut chains: Vec<(Vec<Point>, u32, bool)> = Vec::new();
        for p in board.points() {
            let Some(c) = board.get(p) else { continue };
            if chain_of[board.index(p)] != usize::MAX {
                continue;
            }
            let chain = board.chain_points(p);
            let i = board.index(p);
            let lost = if dead.contains(&p) {
                playouts
            } else if settled[i] {
                0
            } else {
                let opp = c.opponent().index();
                chain.iter().map(|q| owned[board.index(*q)][opp]).min().unwrap_or(0)
            };
            for q in &chain {
                chain_of[board.index(*q)] = chains.len();
            }
            chains.push((chain, lost, settled[i]));
        }
        let group_lost = if self.groups {
            group_losses(board, &chain_of, &chains)
        } else {
            chains.iter().map(|c| c.1 as f64).collect()
        };
        let need = (self.threshold * playouts as f64).ceil() as u32;
        let close = self.race * playouts as f64;
        // The seki test, run once and only when some chain is proposed.
        let mut seki: Option<Vec<Point>> = None;
        let mut proposed = vec![false; chains.len()];
        for (k, (chain, lost, settled)) in chains.iter().enumerate() {
            if *settled || playouts == 0 || (*lost as f64).max(group_lost[k]) < need as f64 {
                continue;
            }
            let own = board.cell(board.index(chain[0]));
            // The opposing chains next to this one, by where each has a stone.
            let rivals = || {
                chain
                    .iter()
                    .flat_map(|q| board.neighbors(board.index(*q)))
                    .filter(|&n| {
                        let v = board.cell(n);
                        v != own && chain_of[n] != usize::MAX
                    })
            };
            // A chain in atari races nothing (one move takes it, whoever wins around it)
            // unless a rival is in atari too: then whoever moves first captures.
            let libs = board.liberties(chain[0]);
            let racing = libs > 1 || rivals().any(|n| board.liberties(board.point(n)) == 1);
            // (A rival's group, not the rival alone: a stone that random play loses but
            // whose group is safe races nothing. Nor does a rival with at least two liberties
            // more than this chain: one more already wins a plain race with the chain to
            // move; the second is a margin for what a count misses, a capture or a
            // connection that gains the chain a liberty. Without it, `close_race_gnugo.sgf`'s
            // B9 is called dead.)
            let close_race = racing
                && rivals().any(|n| group_lost[chain_of[n]] >= close && board.liberties(board.point(n)) <= libs + 1);
            if close_race {
                continue;
            }
            if self.seki {
                let seki = seki.get_or_insert_with(|| crate::seki::seki_stones(board));
                if seki.contains(&chain[0]) {
                    continue;
                }
            }
            proposed[k] = true;
        }
        if self.links {
            // Living chains: not proposed, and either lost in fewer than `need` playouts or
            // pass-alive (Benson's dead are lost in all of them).
            let mut alive: Vec<bool> = chains
                .iter()
                .enumerate()
                .map(|(k, (_, lost, settled))| {
                    !proposed[k]
                        && if *settled {
                            *lost == 0
                        } else {
                            (*lost as f64).max(group_lost[k]) < need as f64
                        }
                })
                .collect();
            rescue_linked(board, &chain_of, &chains, &mut proposed, &mut alive);
        }
        for (k, (chain, _, _)) in chains.iter().enumerate() {
            if proposed[k] {
                dead.extend(chain);
            }
        }
        dead.sort_by_key(|p| (p.y, p.x));
        dead.dedup();
        Judged { dead, owned, playouts }
    }
}

/// What an estimate found: the dead stones, and how often Black and White owned each point
/// (by padded index) in the playouts it ran (none when Benson's analysis settled every
/// stone).
pub(crate) struct Judged {
    pub dead: Vec<Point>,
    pub owned: Vec<[u32; 2]>,
    pub playouts: u32,
}

/// Un-proposes every proposed chain safely linked (see [`DeadEstimate::links`]) to a
/// living chain of its colour, transitively: a rescued chain lives and may rescue others.
fn rescue_linked(
    board: &crate::Board,
    chain_of: &[usize],
    chains: &[(Vec<Point>, u32, bool)],
    proposed: &mut [bool],
    alive: &mut [bool],
) {
    if !proposed.contains(&true) {
        return;
    }
    // Each chain's liberties, once: the board does not change while chains are rescued.
    let libs: Vec<Vec<usize>> = chains
        .iter()
        .map(|(points, _, _)| board.liberty_cells(points[0]))
        .collect();
    // Whether an opposing stone on empty `i` (next to chains of `own`) would capture
    // nothing and keep at most one liberty.
    let cut_is_self_atari = |i: usize, own: u8| -> bool {
        // The cut's liberties: its empty neighbours and those of the opposing chains it
        // joins, all but `i` itself.
        let mut cut_libs: Vec<usize> = Vec::new();
        let mut seen: Vec<usize> = Vec::new();
        for n in board.neighbors(i) {
            let v = board.cell(n);
            if v == crate::board::EMPTY {
                if !cut_libs.contains(&n) {
                    cut_libs.push(n);
                }
            } else if chain_of[n] != usize::MAX && !seen.contains(&chain_of[n]) {
                seen.push(chain_of[n]);
                let theirs = &libs[chain_of[n]];
                if v == own {
                    if theirs.len() == 1 {
                        return false; // the cut captures
                    }
                } else {
                    for &l in theirs {
                        if l != i && !cut_libs.contains(&l) {
                            cut_libs.push(l);
                        }
                    }
                }
            }
        }
        cut_libs.len() <= 1
    };
    let mut changed = true;
    while changed {
        changed = false;
        for k in 0..chains.len() {
            // A lone stone is left to its fate: a player gives one up rather than answer
            // every threat to it (GNU Go's lists agree, `close_race_gnugo.sgf`'s B3).
            if !proposed[k] || chains[k].0.len() < 2 {
                continue;
            }
            let own = board.cell(board.index(chains[k].0[0]));
            let mine = &libs[k];
            let linked = mine.iter().any(|&i| {
                board.neighbors(i).into_iter().any(|n| {
                    let j = chain_of[n];
                    j != usize::MAX && j != k && board.cell(n) == own && alive[j] && {
                        let shared = libs[j].iter().filter(|l| mine.contains(l)).count();
                        shared >= 2 || cut_is_self_atari(i, own)
                    }
                })
            });
            if linked {
                proposed[k] = false;
                alive[k] = true;
                changed = true;
            }
        }
    }
}

/// Each chain's group loss: the size-weighted mean of the losses of the chains of its
/// colour that it is linked to through shared liberties (transitively).
fn group_losses(board: &crate::Board, chain_of: &[usize], chains: &[(Vec<Point>, u32, bool)]) -> Vec<f64> {
    let mut parent: Vec<usize> = (0..chains.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for i in board.indices() {
        if board.cell(i) != crate::board::EMPTY {
            continue;
        }
        // The chains of each colour around this empty point join one group.
        let mut first = [usize::MAX; 2];
        for n in board.neighbors(i) {
            let c = chain_of[n];
            if c == usize::MAX {
                continue;
            }
            let colour = usize::from(board.cell(n) == crate::board::WHITE);
            if first[colour] == usize::MAX {
                first[colour] = c;
            } else {
                let (a, b) = (root(&mut parent, first[colour]), root(&mut parent, c));
                parent[a] = b;
            }
        }
    }
    let mut sum = vec![(0.0f64, 0usize); chains.len()];
    for (k, (points, lost, _)) in chains.iter().enumerate() {
        let r = root(&mut parent, k);
        sum[r].0 += *lost as f64 * points.len() as f64;
        sum[r].1 += points.len();
    }
    (0..chains.len())
        .map(|k| {
            let (total, stones) = sum[root(&mut parent, k)];
            total / stones as f64
        })
        .collect()
}

/// How often Black and White own each point (by padded index) at the end of `playouts`
/// continuations of the position. They run on the simple-ko playout runner from the
/// position alone, without the game's history: this is an estimate, and copying a long
/// history (and its superko set) into every playout cost more than the playout itself.
fn ownership(state: &State, playouts: u32, policy: Policy) -> Vec<[u32; 2]> {
    let board = state.board();
    let mut owned = vec![[0u32; 2]; board.cell_count()];
    let mut rng = SplitMix64(board.hash() as u64 ^ (board.hash() >> 64) as u64);
    // Rebuilt, not copied: the empty-point list and chain heads then depend on the stones
    // alone, not on the order of the moves that made them (or on whether the state was
    // packed at rest), and so do the playouts and the estimate.
    let mut canonical = board.clone();
    canonical.rebuild();
    let start = State::from_board(canonical, state.to_move(), *state.rules());
    let mut runner = Playout::new(PlayoutOptions::fast(policy, board.width().max(board.height())));
    for _ in 0..playouts {
        runner.run(&start, &mut rng);
        let b = runner.board();
        let reach = region_reach(b);
        for i in b.indices() {
            match b.cell(i) {
                crate::board::BLACK => owned[i][0] += 1,
                crate::board::WHITE => owned[i][1] += 1,
                _ => match reach[i] {
                    1 => owned[i][0] += 1,
                    2 => owned[i][1] += 1,
                    _ => {}
                },
            }
        }
    }
    owned
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Board, Rules};

    #[test]
    fn a_lone_stone_in_enemy_territory_is_dead_and_living_groups_are_not() {
        // White lives in the top right; a black stone inside White's area; Black's wall.
        let b = Board::from_rows(&[
            ".....o.o.",
            ".....oooo",
            "xxxxxo...",
            "....xo.x.",
            "....xoooo",
            "....xxxxx",
            ".........",
            ".........",
            ".........",
        ])
        .unwrap();
        let s = State::from_board(b, Color::Black, Rules::default());
        let dead = estimate_dead(&s, 64, 0.9);
        assert_eq!(dead, vec![Point::new(7, 3)]);
        assert_eq!(estimate_dead(&s, 64, 0.9), dead, "deterministic");
    }

    #[test]
    fn chains_sharing_a_liberty_share_the_size_weighted_mean_loss() {
        // Black A5-A4 and C5 share B5 (a group); White B4 touches B5 too but joins no
        // black group; Black E3 is on its own.
        let b = Board::from_rows(&["x.x..", "xo...", "....x", ".....", "....."]).unwrap();
        let mut chain_of = vec![usize::MAX; b.cell_count()];
        let chains: Vec<(Vec<Point>, u32, bool)> = [
            (vec![Point::new(0, 0), Point::new(0, 1)], 100),
            (vec![Point::new(2, 0)], 400),
            (vec![Point::new(1, 1)], 10),
            (vec![Point::new(4, 2)], 50),
        ]
        .into_iter()
        .enumerate()
        .map(|(k, (points, lost))| {
            for p in &points {
                chain_of[b.index(*p)] = k;
            }
            (points, lost, false)
        })
        .collect();
        assert_eq!(group_losses(&b, &chain_of, &chains), vec![200.0, 200.0, 10.0, 50.0]);
    }

    #[test]
    fn a_position_benson_settles_needs_no_playouts() {
        // Black's wall is pass-alive; the white stone in its eye is unconditionally dead.
        // With or without playouts, the same answer.
        let b = Board::from_rows(&["o.x.x", "xxxxx", ".....", ".....", "....."]).unwrap();
        let s = State::from_board(b, Color::Black, Rules::default());
        assert_eq!(estimate_dead(&s, 64, 0.9), vec![Point::new(0, 0)]);
        assert_eq!(estimate_dead(&s, 0, 0.9), vec![Point::new(0, 0)]);
    }
}
