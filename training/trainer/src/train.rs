//! Training on self-play shards: masked policy cross-entropy, value MSE, ownership MSE.

use std::io::Write;
use std::path::{Path, PathBuf};

use tch::{Kind, Tensor};
use weiqi_selfplay::{Batches, Shard, TensorBatch};

use crate::Error;
use crate::net::{Net, NetConfig};

/// Training settings.
#[derive(Debug, Clone)]
pub struct TrainConfig {
    /// Self-play output, each a directory, `file://` or `s3://` prefix: a worker's (with
    /// its manifest.json) or a root above several workers'.
    pub data: Vec<String>,
    /// Checkpoint to write (`.safetensors`; the shape goes to `.json` beside it).
    pub out: PathBuf,
    /// Start from this checkpoint instead of random weights.
    pub init: Option<PathBuf>,
    pub blocks: i64,
    pub channels: i64,
    /// For a new network: KataGo's global pooling and score head (see [`NetConfig`]).
    pub global_pooling: bool,
    pub score_head: bool,
    /// For a new network: KataGo's opponent-reply head (see [`NetConfig`]).
    pub opponent_head: bool,
    pub steps: usize,
    pub batch: usize,
    pub lr: f64,
    /// How the rate moves over the `steps` (constant, or a cosine down from `lr`).
    pub lr_schedule: LrSchedule,
    pub seed: u64,
    /// Training curve: one CSV row per `log_every` steps.
    pub csv: PathBuf,
    pub log_every: usize,
    /// Stop early after this many seconds.
    pub max_seconds: f64,
    /// Where the network trains (see [`crate::device`]).
    pub device: tch::Device,
}

pub use crate::Losses;
pub use crate::schedule::LrSchedule;

/// The shards of every run directory under each of `dirs` (a worker's output, or the root
/// of several workers'), each checked as `weiqi data index` checks it.
fn load_data(roots: &[String]) -> Result<Vec<Shard>, Error> {
    let mut shards = Vec::new();
    for root in roots {
        let root = weiqi_selfplay::Objects::open(root)?;
        for found in weiqi_selfplay::index::run_dirs(&root)? {
            let m = &found.manifest;
            for s in &m.shards {
                shards.push(weiqi_selfplay::index::read_checked(
                    &root,
                    &found.key(&s.file),
                    m.board_size as usize,
                )?);
            }
        }
    }
    if shards.is_empty() {
        return Err(Error::Invalid("no shards found".into()));
    }
    Ok(shards)
}

/// Weight of the score head's loss in the total (KataGo weighs its score-belief losses
/// lightly: an auxiliary target, not the one the search uses).
pub const SCORE_WEIGHT: f64 = 0.1;

/// Weight of the opponent-reply head's loss in the total (KataGo's 0.15).
pub const OPPONENT_WEIGHT: f64 = 0.15;

/// One batch's losses: masked policy cross-entropy, value MSE, ownership MSE and, with the
/// score head, the score's Huber loss (in units of the board's width); with the
/// opponent-reply head, its cross-entropy against the move the opponent played next.
/// Ownership and score count only for positions of scored games (not resigned ones), the
/// reply only for positions that had one.
pub struct BatchLosses {
    pub policy: Tensor,
    pub value: Tensor,
    pub ownership: Tensor,
    pub score: Option<Tensor>,
    pub opponent: Option<Tensor>,
}

impl BatchLosses {
    /// What the optimiser minimises.
    pub fn total(&self) -> Tensor {
        let t = &self.policy + &self.value + 0.5 * &self.ownership;
        let t = match &self.score {
            Some(s) => t + SCORE_WEIGHT * s,
            None => t,
        };
        match &self.opponent {
            Some(o) => t + OPPONENT_WEIGHT * o,
            None => t,
        }
    }
}

/// The losses of one batch (see [`BatchLosses`]).
pub fn losses(net: &Net, b: &TensorBatch, train: bool) -> BatchLosses {
    let out = net.forward(&b.features, train);
    // Illegal moves get no probability: their logits are pushed far down.
    let logits = &out.logits + (&b.legal - 1.0) * 1e4;
    let logp = logits.log_softmax(-1, Kind::Float);
    let policy = -(&b.policy * logp)
        .sum_dim_intlist([1i64].as_slice(), false, Kind::Float)
        .mean(Kind::Float);
    let value = (out.value - &b.value).square().mean(Kind::Float);
    let per_position = (out.ownership - &b.ownership)
        .square()
        .mean_dim([1i64, 2].as_slice(), false, Kind::Float);
    let scored = b.scored.sum(Kind::Float).clamp_min(1.0);
    let ownership = (per_position * &b.scored).sum(Kind::Float) / &scored;
    let score = out.score.map(|s| {
        let target = &b.score / net.config.size as f64;
        let huber = s.huber_loss(&target, tch::Reduction::None, 1.0);
        (huber * &b.scored).sum(Kind::Float) / &scored
    });
    // The opponent's legal moves are those of the next position, which the sample does
    // not hold: the reply's softmax runs over every point and the pass.
    let opponent = out.opponent.map(|q| {
        let has = b.next_move.ge(0).to_kind(Kind::Float);
        let target = b.next_move.clamp_min(0).unsqueeze(1);
        let logp = q.log_softmax(-1, Kind::Float).gather(1, &target, false).squeeze_dim(1);
        -(logp * &has).sum(Kind::Float) / has.sum(Kind::Float).clamp_min(1.0)
    });
    BatchLosses {
        policy,
        value,
        ownership,
        score,
        opponent,
    }
}

/// Trains and writes the checkpoint; returns the logged losses.
pub fn train(cfg: &TrainConfig) -> Result<Vec<Losses>, Error> {
    tch::manual_seed(cfg.seed as i64);
    let shards = load_data(&cfg.data)?;
    let n = shards[0].size() as i64;
    let mut net = match &cfg.init {
        Some(p) => Net::load_on(p, cfg.device)?,
        None => Net::new_on(
            NetConfig {
                size: n,
                blocks: cfg.blocks,
                channels: cfg.channels,
                global_pooling: cfg.global_pooling,
                score_head: cfg.score_head,
                opponent_head: cfg.opponent_head,
            },
            cfg.device,
        ),
    };
    if net.config.size != n {
        return Err(Error::Invalid(format!(
            "the network is for {}x{}, the data {n}x{n}",
            net.config.size, net.config.size
        )));
    }
    let mut opt = net.optimizer(cfg.lr)?;
    let mut csv = std::fs::File::create(&cfg.csv)?;
    writeln!(
        csv,
        "step,seconds,policy_loss,value_loss,ownership_loss,score_loss,opponent_loss"
    )?;
    let t0 = std::time::Instant::now();
    let mut log = Vec::new();
    let (mut sp, mut sv, mut so, mut ss, mut sq, mut k) = (0.0, 0.0, 0.0, 0.0, 0.0, 0usize);
    let mut step = 0;
    let mut epoch = 0u64;
    'outer: loop {
        for batch in Batches::new(&shards, cfg.batch, cfg.seed.wrapping_add(epoch), true).tensors() {
            if step >= cfg.steps || t0.elapsed().as_secs_f64() > cfg.max_seconds {
                break 'outer;
            }
            opt.set_lr(cfg.lr_schedule.rate(cfg.lr, step, cfg.steps));
            let l = losses(&net, &batch.to_device(cfg.device), true);
            opt.backward_step(&l.total());
            sp += l.policy.double_value(&[]);
            sv += l.value.double_value(&[]);
            so += l.ownership.double_value(&[]);
            ss += l.score.as_ref().map_or(0.0, |s| s.double_value(&[]));
            sq += l.opponent.as_ref().map_or(0.0, |o| o.double_value(&[]));
            k += 1;
            step += 1;
            if !(sp + sv + so + ss + sq).is_finite() {
                // A diverged run writes no checkpoint, and no record can hold its losses.
                return Err(Error::Invalid(format!(
                    "training diverged at step {step} (a loss is not finite): lower the learning rate ({})",
                    cfg.lr
                )));
            }
            if step % cfg.log_every == 0 {
                let row = Losses {
                    step,
                    policy: sp / k as f64,
                    value: sv / k as f64,
                    ownership: so / k as f64,
                    score: ss / k as f64,
                    opponent: sq / k as f64,
                    seconds: t0.elapsed().as_secs_f64(),
                };
                writeln!(
                    csv,
                    "{},{:.1},{:.4},{:.4},{:.4},{:.4},{:.4}",
                    row.step, row.seconds, row.policy, row.value, row.ownership, row.score, row.opponent
                )?;
                eprintln!(
                    "step {:>6}  {:>6.1} s  policy {:.4}  value {:.4}  ownership {:.4}  score {:.4}  opponent {:.4}",
                    row.step, row.seconds, row.policy, row.value, row.ownership, row.score, row.opponent
                );
                log.push(row);
                (sp, sv, so, ss, sq, k) = (0.0, 0.0, 0.0, 0.0, 0.0, 0);
            }
        }
        epoch += 1;
    }
    net.vs.freeze();
    net.save(&cfg.out)?;
    Ok(log)
}

/// Mean losses of a checkpoint on some data (evaluation mode).
pub fn evaluate(model: &Path, data: &[String], batch: usize, device: tch::Device) -> Result<(f64, f64, f64), Error> {
    let net = Net::load_on(model, device)?;
    let shards = load_data(data)?;
    let (mut sp, mut sv, mut so, mut k) = (0.0, 0.0, 0.0, 0);
    tch::no_grad(|| {
        for b in Batches::new(&shards, batch, 0, false).tensors() {
            let l = losses(&net, &b.to_device(device), false);
            sp += l.policy.double_value(&[]);
            sv += l.value.double_value(&[]);
            so += l.ownership.double_value(&[]);
            k += 1;
        }
    });
    let k = k.max(1) as f64;
    Ok((sp / k, sv / k, so / k))
}
