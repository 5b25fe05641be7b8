//! Training batches from shards, with random 8-fold symmetry augmentation.

use ndarray::{Array1, Array2, Array3, Array4, Axis};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use weiqi_rules::{Point, Symmetry};

use crate::shard::Shard;

/// `perm[i]` = where point index `i` goes under symmetry `s` on an `n` x `n` board.
pub fn symmetry_permutation(s: usize, n: usize) -> Vec<usize> {
    let sym = Symmetry::ALL[s % 8];
    (0..n * n)
        .map(|i| {
            let p = sym.apply(Point::new((i % n) as u8, (i / n) as u8), n as u8, n as u8);
            p.y as usize * n + p.x as usize
        })
        .collect()
}

/// A batch of training samples (same layout as a shard).
#[derive(Debug, Clone)]
pub struct Batch {
    pub features: Array4<u8>,
    pub policy: Array2<f32>,
    pub legal: Array2<u8>,
    pub value: Array1<f32>,
    pub ownership: Array3<i8>,
    pub score: Array1<f32>,
    /// 1 where `ownership` and `score` are a scored result (0 after a resignation).
    pub scored: Array1<u8>,
    /// The opponent's reply as a policy index under the sample's symmetry, -1 for none.
    pub next_move: Array1<i16>,
}

/// Shuffled batches over all positions of some shards, each sample under a random board
/// symmetry (the pass index stays fixed). Deterministic for a given seed.
pub struct Batches<'a> {
    shards: &'a [Shard],
    order: Vec<(usize, usize)>,
    next: usize,
    batch: usize,
    augment: bool,
    rng: SmallRng,
    perms: Vec<Vec<usize>>,
}

impl<'a> Batches<'a> {
    pub fn new(shards: &'a [Shard], batch: usize, seed: u64, augment: bool) -> Batches<'a> {
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut order: Vec<(usize, usize)> = shards
            .iter()
            .enumerate()
            .flat_map(|(s, sh)| (0..sh.len()).map(move |i| (s, i)))
            .collect();
        order.shuffle(&mut rng);
        let n = shards.first().map_or(0, Shard::size);
        let perms = (0..8).map(|s| symmetry_permutation(s, n)).collect();
        Batches {
            shards,
            order,
            next: 0,
            batch: batch.max(1),
            augment,
            rng,
            perms,
        }
    }
}

impl Iterator for Batches<'_> {
    type Item = Batch;

    fn next(&mut self) -> Option<Batch> {
        if self.next >= self.order.len() {
            return None;
        }
        let take = &self.order[self.next..(self.next + self.batch).min(self.order.len())];
        self.next += take.len();
        let b = take.len();
        let n = self.shards[0].size();
        let area = n * n;
        let planes = self.shards[0].features.shape()[1];
        let mut out = Batch {
            features: Array4::zeros((b, planes, n, n)),
            policy: Array2::zeros((b, area + 1)),
            legal: Array2::zeros((b, area + 1)),
            value: Array1::zeros(b),
            ownership: Array3::zeros((b, n, n)),
            score: Array1::zeros(b),
            scored: Array1::zeros(b),
            next_move: Array1::zeros(b),
        };
        for (k, &(s, i)) in take.iter().enumerate() {
            let sh = &self.shards[s];
            let sym = if self.augment { self.rng.random_range(0..8) } else { 0 };
            let perm = &self.perms[sym];
            let src_f = sh.features.index_axis(Axis(0), i);
            let mut dst_f = out.features.index_axis_mut(Axis(0), k);
            for c in 0..planes {
                let src = src_f.index_axis(Axis(0), c);
                let mut dst = dst_f.index_axis_mut(Axis(0), c);
                for (j, v) in src.iter().enumerate() {
                    let t = perm[j];
                    dst[[t / n, t % n]] = *v;
                }
            }
            let src_o = sh.ownership.index_axis(Axis(0), i);
            for (j, v) in src_o.iter().enumerate() {
                let t = perm[j];
                out.ownership[[k, t / n, t % n]] = *v;
            }
            for (j, &t) in perm.iter().enumerate() {
                out.policy[[k, t]] = sh.policy[[i, j]];
                out.legal[[k, t]] = sh.legal[[i, j]];
            }
            out.policy[[k, area]] = sh.policy[[i, area]];
            out.legal[[k, area]] = sh.legal[[i, area]];
            out.value[k] = sh.value[i];
            out.score[k] = sh.score[i];
            out.scored[k] = sh.scored[i];
            out.next_move[k] = match sh.next_move[i] {
                m if (0..area as i16).contains(&m) => perm[m as usize] as i16,
                m => m,
            };
        }
        Some(out)
    }
}
