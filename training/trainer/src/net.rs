//! The residual policy/value/ownership network, its player, and checkpoints.

use std::path::Path;

use rand::rngs::SmallRng;
use tch::nn::{self, OptimizerConfig};
use tch::{Device, Kind, Tensor};
use weiqi_rules::{Color, Move, State};
use weiqi_selfplay::{PLANES, encode_planes};

use crate::Error;
use crate::arena::Player;

/// Network shape. Tiny by default so it trains on two CPU cores.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct NetConfig {
    pub size: i64,
    pub blocks: i64,
    pub channels: i64,
}

impl NetConfig {
    pub fn tiny(size: i64) -> NetConfig {
        NetConfig {
            size,
            blocks: 3,
            channels: 32,
        }
    }
}

struct Block {
    c1: nn::Conv2D,
    b1: nn::BatchNorm,
    c2: nn::Conv2D,
    b2: nn::BatchNorm,
}

/// Residual tower with policy, value and ownership heads.
pub struct Net {
    pub vs: nn::VarStore,
    pub config: NetConfig,
    stem: nn::Conv2D,
    stem_bn: nn::BatchNorm,
    blocks: Vec<Block>,
    p_conv: nn::Conv2D,
    p_bn: nn::BatchNorm,
    p_fc: nn::Linear,
    v_conv: nn::Conv2D,
    v_bn: nn::BatchNorm,
    v_fc1: nn::Linear,
    v_fc2: nn::Linear,
    o_conv: nn::Conv2D,
}

/// Network outputs for a batch.
pub struct Output {
    /// Policy logits [b, N*N+1].
    pub logits: Tensor,
    /// Value in [-1, 1] from the mover's view [b].
    pub value: Tensor,
    /// Ownership in [-1, 1] from the mover's view [b, N, N].
    pub ownership: Tensor,
}

impl Net {
    pub fn new(config: NetConfig) -> Net {
        let vs = nn::VarStore::new(Device::Cpu);
        let root = vs.root();
        let c = config.channels;
        let area = config.size * config.size;
        let conv3 = nn::ConvConfig {
            padding: 1,
            bias: false,
            ..Default::default()
        };
        let conv1 = nn::ConvConfig {
            bias: false,
            ..Default::default()
        };
        let stem = nn::conv2d(&root / "stem", PLANES as i64, c, 3, conv3);
        let stem_bn = nn::batch_norm2d(&root / "stem_bn", c, Default::default());
        let blocks = (0..config.blocks)
            .map(|i| {
                let p = &root / format!("block{i}");
                Block {
                    c1: nn::conv2d(&p / "c1", c, c, 3, conv3),
                    b1: nn::batch_norm2d(&p / "b1", c, Default::default()),
                    c2: nn::conv2d(&p / "c2", c, c, 3, conv3),
                    b2: nn::batch_norm2d(&p / "b2", c, Default::default()),
                }
            })
            .collect();
        Net {
            p_conv: nn::conv2d(&root / "p_conv", c, 2, 1, conv1),
            p_bn: nn::batch_norm2d(&root / "p_bn", 2, Default::default()),
            p_fc: nn::linear(&root / "p_fc", 2 * area, area + 1, Default::default()),
            v_conv: nn::conv2d(&root / "v_conv", c, 1, 1, conv1),
            v_bn: nn::batch_norm2d(&root / "v_bn", 1, Default::default()),
            v_fc1: nn::linear(&root / "v_fc1", area, 64, Default::default()),
            v_fc2: nn::linear(&root / "v_fc2", 64, 1, Default::default()),
            o_conv: nn::conv2d(&root / "o_conv", c, 1, 1, nn::ConvConfig::default()),
            stem,
            stem_bn,
            blocks,
            vs,
            config,
        }
    }

    /// `x`: float [b, 17, N, N].
    pub fn forward(&self, x: &Tensor, train: bool) -> Output {
        let b = x.size()[0];
        let mut h = x.apply(&self.stem).apply_t(&self.stem_bn, train).relu();
        for blk in &self.blocks {
            let r = h
                .apply(&blk.c1)
                .apply_t(&blk.b1, train)
                .relu()
                .apply(&blk.c2)
                .apply_t(&blk.b2, train);
            h = (r + h).relu();
        }
        let logits = h
            .apply(&self.p_conv)
            .apply_t(&self.p_bn, train)
            .relu()
            .view([b, -1])
            .apply(&self.p_fc);
        let value = h
            .apply(&self.v_conv)
            .apply_t(&self.v_bn, train)
            .relu()
            .view([b, -1])
            .apply(&self.v_fc1)
            .relu()
            .apply(&self.v_fc2)
            .tanh()
            .view([b]);
        let n = self.config.size;
        let ownership = h.apply(&self.o_conv).tanh().view([b, n, n]);
        Output {
            logits,
            value,
            ownership,
        }
    }

    /// Saves weights as safetensors and the shape as JSON beside them (`.json`).
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        self.vs.save(path)?;
        std::fs::write(path.with_extension("json"), serde_json::to_string_pretty(&self.config)?)?;
        Ok(())
    }

    pub fn load(path: &Path) -> Result<Net, Error> {
        let config: NetConfig = serde_json::from_str(&std::fs::read_to_string(path.with_extension("json"))?)?;
        let mut net = Net::new(config);
        net.vs.load(path)?;
        Ok(net)
    }

    pub fn optimizer(&self, lr: f64) -> Result<nn::Optimizer, Error> {
        Ok(nn::Adam::default().build(&self.vs, lr)?)
    }
}

/// Plays with the network and a small search: every legal move's resulting position is
/// evaluated by the value head in one batch (a full-width one-ply search) and the best
/// one is played.
pub struct NetPlayer {
    pub net: Net,
    pub label: String,
}

impl NetPlayer {
    pub fn load(path: &Path) -> Result<NetPlayer, Error> {
        Ok(NetPlayer {
            net: Net::load(path)?,
            label: format!("net:{}", path.display()),
        })
    }
}

impl Player for NetPlayer {
    fn choose(&mut self, state: &State, history: &[Vec<u8>], _rng: &mut SmallRng) -> Move {
        let n = self.net.config.size as usize;
        let area = n * n;
        let mut moves: Vec<Move> = state.legal_moves();
        if moves.len() <= 1 {
            return Move::Pass;
        }
        // Passing early is rarely best; keep it only when few moves remain.
        if moves.len() > 4 {
            moves.retain(|m| *m != Move::Pass);
        }
        let mut planes = vec![0u8; moves.len() * PLANES * area];
        let mut hist: Vec<Vec<u8>> = history.iter().rev().take(7).rev().cloned().collect();
        for (k, &m) in moves.iter().enumerate() {
            let mut s = state.clone();
            s.play(m).expect("legal");
            hist.push(weiqi_selfplay::cells(&s, n));
            encode_planes(
                &hist,
                s.to_move() == Color::Black,
                area,
                &mut planes[k * PLANES * area..(k + 1) * PLANES * area],
            );
            hist.pop();
        }
        let x = Tensor::from_slice(&planes)
            .view([moves.len() as i64, PLANES as i64, n as i64, n as i64])
            .to_kind(Kind::Float);
        let out = tch::no_grad(|| self.net.forward(&x, false));
        // Children's values are from the opponent's view: negate.
        let values: Vec<f32> = Vec::<f32>::try_from(out.value.neg()).unwrap_or_default();
        let best = values
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map_or(0, |(i, _)| i);
        moves[best]
    }
    fn name(&self) -> String {
        self.label.clone()
    }
}
