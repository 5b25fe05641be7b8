//! # weiqi-selfplay
//!
//! Massively parallel, rule-validated self-play for researchers. Every move goes through
//! `weiqi-rules`; games run one per rayon task with one seeded RNG each, so the same seed
//! gives the same games and byte-identical shards whatever the thread count.
//!
//! Output (`schema_version` 1), per position:
//! `features` u8 [n, 17, N, N] (AlphaGo Zero planes: 8 positions of the mover's stones,
//! 8 of the opponent's, newest first, then 1 plane that is all ones when Black is to move),
//! `policy` f32 [n, N*N+1] (the move played, one-hot; index N*N is pass), `legal` u8
//! [n, N*N+1], `value` f32 [n] (final outcome from the mover's view: 1, -1, 0),
//! `ownership` i8 [n, N, N] (final area owner from the mover's view), `score` f32 [n]
//! (final margin from the mover's view, komi included), `game_id` u64 [n],
//! `move_number` u16 [n], `scored` u8 [n] (1 when the game ended by two passes and
//! `ownership`/`score` are its scored result; 0 after a resignation, when they are the area
//! count at resignation and a trainer should mask them), `next_move` i16 [n] (the
//! opponent's reply: the policy index of the move after this position's, -1 when the game
//! ended first; optional within schema version 2: shards written before it read as all
//! -1). Games end by two passes and are
//! scored by area with every stone alive (Tromp-Taylor), which is what random play and
//! self-play converge to; with a search, a player may resign by value threshold.
//!
//! With a network, [`play_games`] runs PUCT search ([`SearchConfig`]: visits, Dirichlet
//! noise at the root, visit counts as the policy target) over many games in flight, and
//! sends the leaves of all of them to the [`Evaluator`] as one batch.

mod batch;
pub mod env;
pub mod index;
pub mod objects;
mod play;
mod search;
mod shard;
#[cfg(feature = "tch")]
mod tensors;
pub mod variant;

pub use batch::{Batch, Batches, symmetry_permutation};
pub use objects::Objects;
pub use play::{
    Chooser, GameData, PlayPolicy, cells, encode_planes, index_move, move_index, play_game, play_game_from,
    play_game_with, play_policy_from, recent_boards,
};
pub use search::{
    Eval, EvalError, Evaluator, Leaf, PlayoutCap, RootResult, SearchConfig, Tree, UniformEvaluator, legal_priors,
    play_games, search, search_until,
};
pub use shard::{
    Manifest, Partition, Results, Shard, ShardInfo, pending, read_shard, run, run_search, run_with, shard_bytes,
    shard_file, shard_from_bytes,
};
#[cfg(feature = "tch")]
pub use tensors::TensorBatch;

/// Version of the shard layout described above (2 added `scored`).
pub const SCHEMA_VERSION: u32 = 2;

/// Feature planes per position.
pub const PLANES: usize = 17;

/// Self-play settings.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Config {
    pub size: u8,
    pub games: u64,
    pub seed: u64,
    pub policy: PlayPolicy,
    /// Rules preset name (chinese, tromp-taylor, ...).
    pub rules: String,
    pub komi: f64,
    /// Games per shard file.
    pub games_per_shard: u64,
    /// Safety cap on plies per game.
    pub max_moves: usize,
    /// Also write `games/<game_id>.sgf`.
    pub sgf: bool,
    /// A custom player that chose the moves instead of `policy` (e.g. `net:PATH`).
    #[serde(default)]
    pub player: Option<String>,
    /// The search the player used, if any.
    #[serde(default)]
    pub search: Option<SearchConfig>,
    /// Seed 002's variant: free seat stones and bid komi (see [`variant`]); `komi` is
    /// then unused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<variant::FreeSeatsConfig>,
    /// This process's share of the run ([`Partition`]): all of it by default.
    #[serde(default)]
    pub partition: Partition,
}

/// Self-play failures.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("io: {0}")]
    Io(#[from] std::io::Error),
    #[error("npz: {0}")]
    Npz(String),
    #[error("invalid settings: {0}")]
    Invalid(String),
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
    /// The network failed to evaluate: the run stops (its shards so far are kept).
    #[error(transparent)]
    Eval(#[from] EvalError),
    /// A shard or manifest that fails its checks (see [`index`]).
    #[error("{path}: {why}")]
    BadShard { path: String, why: String },
    /// A store that refused a read or a write, naming the object.
    #[error("{object}: {why}")]
    Store { object: String, why: String },
}

/// The deterministic id of game `index` of a run seeded with `seed`.
pub fn game_id(seed: u64, index: u64) -> u64 {
    weiqi_rules::rng::mix64(seed ^ index.wrapping_mul(weiqi_rules::rng::GAMMA))
}
