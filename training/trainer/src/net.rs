//! The residual policy/value/ownership network, its player, and checkpoints.

use std::path::Path;
use std::sync::Mutex;

use rand::SeedableRng;
use rand::rngs::SmallRng;
use tch::nn::{self, OptimizerConfig};
use tch::{Device, Kind, Tensor};
use weiqi_gtp::{Advice, Advisor, Budget, Choice};
use weiqi_rules::{Color, Move, State};
use weiqi_selfplay::{Eval, EvalError, Evaluator, PLANES, SearchConfig, move_index, search_until};

use crate::Error;
use crate::arena::Player;

/// Network shape. Tiny by default so it trains on two CPU cores. The options are KataGo's
/// (Wu 2019); a checkpoint written before them reads as without them.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct NetConfig {
    pub size: i64,
    pub blocks: i64,
    pub channels: i64,
    /// Global pooling in every residual block: the mean and the maximum of each channel
    /// over the board, after the block's first convolution, become a bias on every
    /// channel (the whole board's state, such as ko fights and who is ahead, reaches every
    /// point in one layer).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub global_pooling: bool,
    /// A score head beside the value head: the final margin from the mover's view, an
    /// auxiliary target (its loss shapes the tower; the search does not use it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub score_head: bool,
    /// An opponent-reply head beside the policy head: the move the opponent played next,
    /// an auxiliary target (KataGo's; the search does not use it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub opponent_head: bool,
}

impl NetConfig {
    pub fn tiny(size: i64) -> NetConfig {
        NetConfig {
            size,
            blocks: 3,
            channels: 32,
            global_pooling: false,
            score_head: false,
            opponent_head: false,
        }
    }
}

struct Block {
    c1: nn::Conv2D,
    b1: nn::BatchNorm,
    c2: nn::Conv2D,
    b2: nn::BatchNorm,
    /// With global pooling: [mean, max] of the first convolution's channels to a bias on
    /// each.
    pool: Option<nn::Linear>,
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
    /// The opponent-reply head's layer, over the policy head's features.
    q_fc: Option<nn::Linear>,
    v_conv: nn::Conv2D,
    v_bn: nn::BatchNorm,
    v_fc1: nn::Linear,
    v_fc2: nn::Linear,
    o_conv: nn::Conv2D,
    s_fc: Option<nn::Linear>,
}

/// Network outputs for a batch.
pub struct Output {
    /// Policy logits [b, N*N+1].
    pub logits: Tensor,
    /// Value in [-1, 1] from the mover's view [b].
    pub value: Tensor,
    /// Ownership in [-1, 1] from the mover's view [b, N, N].
    pub ownership: Tensor,
    /// With the score head: the final margin from the mover's view, in units of the
    /// board's width (points / N) [b].
    pub score: Option<Tensor>,
    /// With the opponent-reply head: logits of the opponent's reply [b, N*N+1].
    pub opponent: Option<Tensor>,
}

impl Net {
    /// Random weights on the CPU.
    pub fn new(config: NetConfig) -> Net {
        Net::new_on(config, Device::Cpu)
    }

    /// Random weights on `device`.
    pub fn new_on(config: NetConfig, device: Device) -> Net {
        let vs = nn::VarStore::new(device);
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
                    pool: config
                        .global_pooling
                        .then(|| nn::linear(&p / "pool", 2 * c, c, Default::default())),
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
            s_fc: config
                .score_head
                .then(|| nn::linear(&root / "s_fc", 64, 1, Default::default())),
            // (Made last, so that the other layers' random weights are those of a network
            // without it.)
            q_fc: config
                .opponent_head
                .then(|| nn::linear(&root / "q_fc", 2 * area, area + 1, Default::default())),
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
            let r = h.apply(&blk.c1).apply_t(&blk.b1, train).relu();
            // (A new tensor, not in place: ReLU's backward pass reads its output.)
            let r = match &blk.pool {
                Some(pool) => {
                    let mean = r.mean_dim([2i64, 3].as_slice(), false, Kind::Float);
                    let max = r.amax([2i64, 3].as_slice(), false);
                    let bias = Tensor::cat(&[mean, max], 1).apply(pool);
                    r + bias.unsqueeze(-1).unsqueeze(-1)
                }
                None => r,
            };
            let r = r.apply(&blk.c2).apply_t(&blk.b2, train);
            h = (r + h).relu();
        }
        let policy_features = h.apply(&self.p_conv).apply_t(&self.p_bn, train).relu().view([b, -1]);
        let logits = policy_features.apply(&self.p_fc);
        let opponent = self.q_fc.as_ref().map(|q| policy_features.apply(q));
        let hidden = h
            .apply(&self.v_conv)
            .apply_t(&self.v_bn, train)
            .relu()
            .view([b, -1])
            .apply(&self.v_fc1)
            .relu();
        let value = hidden.apply(&self.v_fc2).tanh().view([b]);
        let score = self.s_fc.as_ref().map(|s| hidden.apply(s).view([b]));
        let n = self.config.size;
        let ownership = h.apply(&self.o_conv).tanh().view([b, n, n]);
        Output {
            logits,
            value,
            ownership,
            score,
            opponent,
        }
    }

    /// Saves weights as safetensors and the shape as JSON beside them (`.json`).
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        self.vs.save(path)?;
        std::fs::write(path.with_extension("json"), serde_json::to_string_pretty(&self.config)?)?;
        Ok(())
    }

    /// A checkpoint, on the CPU.
    pub fn load(path: &Path) -> Result<Net, Error> {
        Net::load_on(path, Device::Cpu)
    }

    /// A checkpoint, on `device` (the weights are copied there as they load).
    pub fn load_on(path: &Path, device: Device) -> Result<Net, Error> {
        let config: NetConfig = serde_json::from_str(&std::fs::read_to_string(path.with_extension("json"))?)?;
        let mut net = Net::new_on(config, device);
        net.vs.load(path)?;
        Ok(net)
    }

    pub fn device(&self) -> Device {
        self.vs.device()
    }

    pub fn optimizer(&self, lr: f64) -> Result<nn::Optimizer, Error> {
        Ok(nn::Adam::default().build(&self.vs, lr)?)
    }
}

/// One network per search lane, each loaded from `path` onto `device`, with one libtorch
/// thread each (the lanes use the cores); when `size` is given, the network must be for
/// that board. The one way self-play and the loop load their networks.
pub fn load_lanes(path: &Path, device: Device, lanes: usize, size: Option<u8>) -> Result<Vec<Mutex<Net>>, Error> {
    tch::set_num_threads(1);
    let nets: Vec<Mutex<Net>> = (0..lanes.max(1))
        .map(|_| Net::load_on(path, device).map(Mutex::new))
        .collect::<Result<_, _>>()?;
    if let (Some(size), Some(net)) = (size, nets.first()) {
        let n = net
            .lock()
            .map_err(|_| Error::Invalid("network lock".into()))?
            .config
            .size;
        if n != i64::from(size) {
            return Err(Error::Invalid(format!("the network is for {n}x{n}, not {size}x{size}")));
        }
    }
    Ok(nets)
}

impl Evaluator for Net {
    /// One forward pass for the whole batch, in evaluation mode. A result that cannot be
    /// read back, or of the wrong size, is an error (never uniform priors).
    fn evaluate(&mut self, features: &[u8], batch: usize) -> Result<Vec<Eval>, EvalError> {
        let n = self.config.size;
        let area = (n * n) as usize;
        if batch == 0 {
            return Ok(Vec::new());
        }
        // The planes travel as bytes (a quarter of floats), and only the policy and value
        // come back.
        let x = Tensor::from_slice(features)
            .view([batch as i64, PLANES as i64, n, n])
            .to_device(self.device())
            .to_kind(Kind::Float);
        let out = tch::no_grad(|| self.forward(&x, false));
        let read = |t: &Tensor, what: &str| {
            Vec::<f32>::try_from(t.to_device(Device::Cpu).contiguous().view([-1]))
                .map_err(|e| EvalError(format!("{what}: {e}")))
        };
        let logits = read(&out.logits, "policy logits")?;
        let values = read(&out.value, "values")?;
        if logits.len() != batch * (area + 1) || values.len() != batch {
            return Err(EvalError(format!(
                "{} logits and {} values for {batch} positions of {area} points",
                logits.len(),
                values.len()
            )));
        }
        Ok(logits
            .chunks_exact(area + 1)
            .zip(values)
            .map(|(l, value)| Eval {
                logits: l.to_vec(),
                value,
            })
            .collect())
    }
}

/// Plays with the network and PUCT search (`visits` simulations, one evaluation each;
/// no noise, the most visited move).
pub struct NetPlayer {
    pub net: Net,
    pub search: SearchConfig,
    pub label: String,
    /// The search's root noise and sampling (seeded: a run is repeatable).
    pub rng: SmallRng,
    /// Why the network stopped evaluating (it passes from then on, and its games are no
    /// measurement: see [`Player::failure`]).
    pub failed: Option<String>,
    /// Whether the move's time budget may stop the search before `visits` (a GTP engine
    /// on a clock). Off in the arena and the loop, whose budget is nominal: there a search
    /// is its visits, whatever the machine's speed, so results repeat.
    pub timed: bool,
}

impl NetPlayer {
    pub fn load(path: &Path, visits: u32) -> Result<NetPlayer, Error> {
        NetPlayer::load_on(path, visits, Device::Cpu)
    }

    pub fn load_on(path: &Path, visits: u32, device: Device) -> Result<NetPlayer, Error> {
        let net = Net::load_on(path, device)?;
        Ok(NetPlayer {
            search: SearchConfig::for_play(net.config.size as u8, visits),
            net,
            label: format!("net:{}@{visits}", path.display()),
            rng: SmallRng::seed_from_u64(0),
            failed: None,
            timed: false,
        })
    }
}

impl Player for NetPlayer {
    fn genmove(&mut self, state: &State, color: Color, budget: Budget, _cleanup: bool) -> Choice {
        // (Searched by visits, stopped early by the move's time when timed; asked for the
        // colour not to move, as if the other had passed, as GTP has it.)
        if self.failed.is_some() {
            return Choice::Play(Move::Pass);
        }
        let state = &weiqi_gtp::to_move(state, color);
        let deadline = std::time::Instant::now() + budget.time;
        let timed = self.timed;
        match search_until(
            state,
            &weiqi_selfplay::recent_boards(state, 8),
            &self.search,
            &mut self.net,
            &mut self.rng,
            &mut || timed && std::time::Instant::now() >= deadline,
        ) {
            Ok(r) => Choice::Play(r.mv),
            Err(e) => {
                self.failed = Some(format!("{}: {e}", self.label));
                Choice::Fail(e.to_string())
            }
        }
    }
    fn name(&self) -> String {
        self.label.clone()
    }
    fn failure(&self) -> Option<String> {
        self.failed.clone()
    }
}

/// The network as the hybrid engine's advisor (`weiqi gtp --player hybrid:PATH`): its
/// policy over the legal moves and its value, for the tree search of `weiqi_gtp`.
pub struct NetAdvisor {
    pub net: Net,
}

impl NetAdvisor {
    pub fn load(path: &Path) -> Result<NetAdvisor, Error> {
        Ok(NetAdvisor { net: Net::load(path)? })
    }
}

impl Advisor for NetAdvisor {
    fn advise(&mut self, state: &State) -> Result<Advice, String> {
        let n = self.net.config.size as usize;
        if state.board().width() as usize != n || state.board().height() as usize != n {
            return Err(format!("the network is for {n}x{n}"));
        }
        let mut features = vec![0u8; PLANES * n * n];
        weiqi_selfplay::encode_planes(
            &weiqi_selfplay::recent_boards(state, 8),
            state.to_move() == Color::Black,
            n * n,
            &mut features,
        );
        let eval = self
            .net
            .evaluate(&features, 1)
            .map_err(|e| e.to_string())?
            .pop()
            .ok_or("no evaluation")?;
        // Over the legal moves only, as the network's own search reads it.
        let legal = state.legal_moves();
        let mut priors = vec![0.0f32; n * n + 1];
        for (&m, p) in legal.iter().zip(weiqi_selfplay::legal_priors(&eval.logits, &legal, n)) {
            priors[move_index(m, n)] = p;
        }
        Ok(Advice {
            priors,
            value: eval.value,
        })
    }
}
