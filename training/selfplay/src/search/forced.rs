//! KataGo's forced playouts and policy target pruning (Wu, "Accelerating Self-Play
//! Learning in Go", 2019, section 3.1; `SearchConfig::forced_playouts`): at the root of a
//! self-play search every move the noise made interesting gets at least
//! sqrt(k * P * total) visits, and the policy target then takes back the visits that only
//! the forcing gave, so the network does not learn the noise.

use super::Tree;

/// KataGo's k: a move with prior P is forced to sqrt(k * P * total visits).
pub(super) const FORCED_K: f32 = 2.0;

/// The visits `forced_visits` guarantees a root move of prior `prior` after `total` root
/// simulations.
pub(super) fn forced_visits(prior: f32, total: u32) -> f32 {
    (FORCED_K * prior * total as f32).sqrt()
}

impl Tree {
    /// The root edge a simulation must take because it has fewer than its forced visits
    /// (the first such, in edge order); None when every move has its share. Only moves
    /// the search has tried are forced (KataGo: "any given child that receives any visits
    /// at all"): forcing untried ones would spend the budget on every legal move once.
    pub(super) fn forced_pick(&self) -> Option<u32> {
        let root = self.nodes[0];
        let total = self.root_visits();
        (root.first..root.first + root.len).find(|&e| {
            let ed = &self.edges[e as usize];
            ed.n > 0 && (ed.n as f32) < forced_visits(ed.prior, total)
        })
    }

    /// The root's visits with the forced ones pruned: every move but the most visited loses
    /// up to its forced visits, as long as that leaves its PUCT value below the best move's
    /// (so the search would still have chosen it that often without the forcing); a move
    /// left with a single visit gets none. By root edge, in order.
    pub(super) fn pruned_root_visits(&self, c_puct: f32) -> Vec<f32> {
        let root = self.nodes[0];
        let edges = &self.edges[root.first as usize..(root.first + root.len) as usize];
        let visits: Vec<f32> = edges.iter().map(|e| e.n as f32).collect();
        let Some(best) = (0..edges.len()).max_by(|&a, &b| {
            (edges[a].n, edges[a].prior)
                .partial_cmp(&(edges[b].n, edges[b].prior))
                .unwrap_or(std::cmp::Ordering::Equal)
        }) else {
            return visits;
        };
        let total = self.root_visits();
        let sqrt_n = (root.n.max(1) as f32).sqrt();
        let puct = |q: f32, prior: f32, n: f32| q + c_puct * prior * sqrt_n / (1.0 + n);
        let b = &edges[best];
        if b.n == 0 {
            return visits;
        }
        let best_puct = puct(b.w / b.n as f32, b.prior, b.n as f32);
        edges
            .iter()
            .enumerate()
            .map(|(i, e)| {
                if i == best || e.n == 0 {
                    return e.n as f32;
                }
                let q = e.w / e.n as f32;
                let gap = best_puct - q;
                // The fewest visits at which this move's PUCT value stays below the best's:
                // q + c P sqrt(N) / (1 + n') < best, so n' > c P sqrt(N) / gap - 1.
                let keep_at_least = if gap > 0.0 {
                    (c_puct * e.prior * sqrt_n / gap - 1.0).floor() + 1.0
                } else {
                    e.n as f32
                };
                let floor = (e.n as f32 - forced_visits(e.prior, total).floor()).max(0.0);
                let kept = keep_at_least.max(floor).clamp(0.0, e.n as f32);
                if kept <= 1.0 { 0.0 } else { kept }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use weiqi_rules::{Move, Point};

    use super::super::{Edge, NONE, Node};
    use super::*;

    /// A root with the given (prior, visits, mean value) edges.
    fn root(edges: &[(f32, u32, f32)]) -> Tree {
        let total: u32 = edges.iter().map(|e| e.1).sum();
        Tree {
            nodes: vec![Node {
                first: 0,
                len: edges.len() as u32,
                n: total + 1,
                w: 0.0,
                expanded: true,
            }],
            edges: edges
                .iter()
                .enumerate()
                .map(|(i, &(prior, n, q))| Edge {
                    mv: Move::Place(Point::new(i as u8, 0)),
                    prior,
                    n,
                    w: q * n as f32,
                    child: NONE,
                })
                .collect(),
            gumbel: None,
        }
    }

    /// Hand-checked: 100 root simulations, c_puct 1.5, sqrt(N) = sqrt(101).
    /// - A (best): 70 visits, q 0.2, P 0.5: PUCT 0.2 + 1.5 * 0.5 * 10.05 / 71 = 0.3062.
    /// - B: 20 visits, q 0.1, P 0.3: forced sqrt(2 * 0.3 * 100) = 7.75, floor 20 - 7 = 13;
    ///   its PUCT stays below A's only for n' > 1.5 * 0.3 * 10.05 / 0.2062 - 1 = 20.94, so it
    ///   keeps all 20 (the search chose it on merit).
    /// - C: 8 visits, q -0.5, P 0.15: the gap is 0.8062, so n' > 2.81 - 1 = 1.81 (2), but the
    ///   forcing gave at most floor(5.48) = 5: 3 visits kept.
    /// - D: 2 visits, q -0.9, P 0.05: forced sqrt(10) = 3.16, more than it has; n' > -0.38:
    ///   nothing kept.
    #[test]
    fn pruning_takes_back_only_what_the_forcing_gave() {
        let t = root(&[(0.5, 70, 0.2), (0.3, 20, 0.1), (0.15, 8, -0.5), (0.05, 2, -0.9)]);
        assert_eq!(t.pruned_root_visits(1.5), vec![70.0, 20.0, 3.0, 0.0]);
    }

    /// A move left with one visit is pruned to none; an unvisited one stays at none.
    #[test]
    fn single_visits_are_pruned() {
        let t = root(&[(0.6, 30, 0.3), (0.2, 2, -0.8), (0.2, 0, 0.0)]);
        assert_eq!(t.pruned_root_visits(1.5), vec![30.0, 0.0, 0.0]);
    }

    /// Tried moves below sqrt(2 P total) are picked first, in order; then none is forced.
    /// A move never tried is not forced, however large its share.
    #[test]
    fn forced_moves_are_picked_until_they_have_their_share() {
        let t = root(&[(0.5, 70, 0.2), (0.3, 20, 0.1), (0.15, 4, -0.5), (0.05, 6, -0.9)]);
        // C needs sqrt(2 * 0.15 * 100) = 5.48 > 4; D needs 3.16 <= 6.
        assert_eq!(t.forced_pick(), Some(2));
        let t = root(&[(0.5, 70, 0.2), (0.3, 20, 0.1), (0.15, 6, -0.5), (0.05, 4, -0.9)]);
        assert_eq!(t.forced_pick(), None);
        let t = root(&[(0.4, 0, 0.0), (0.3, 90, 0.1), (0.25, 10, -0.5), (0.05, 0, 0.0)]);
        // A (0.4) and D are untried: C (needs 7.07, has 10) and B are not short either.
        assert_eq!(t.forced_pick(), None);
    }
}
