//! # weiqi-trainer
//!
//! Turns self-play data into a bot. With the cargo feature `tch` (libtorch through tch):
//! a residual policy/value/ownership network ([`net`]), training on `.npz` shards with
//! masked policy cross-entropy, value MSE and ownership loss ([`train`]), checkpoints as
//! safetensors (PyTorch-loadable) with the architecture beside them in JSON, and a
//! network player with a small batched search, and the generation loop researchers run
//! (`pipeline`: self-play, train, gate, Elo anchors, resumable). Without the feature,
//! [`arena`] still pits the search-free policies against each other, and [`generations`]
//! and [`report`] read a loop's record and plot it. [`runs`] is what the `weiqi` tool runs
//! (self-play, training into a store, the arena's players by name).

pub mod arena;
#[cfg(feature = "tch")]
pub mod device;
pub mod generations;
#[cfg(feature = "tch")]
pub mod net;
#[cfg(feature = "tch")]
pub mod pipeline;
pub mod publish;
pub mod report;
pub mod runs;
pub mod schedule;
pub mod teacher;
#[cfg(feature = "tch")]
pub mod train;

/// Losses at one logging point.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Losses {
    pub step: usize,
    pub policy: f64,
    pub value: f64,
    pub ownership: f64,
    /// The score head's loss (0 without one, and in records written before it).
    #[serde(default)]
    pub score: f64,
    /// The opponent-reply head's loss (0 without one, and in records written before it).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub opponent: f64,
    pub seconds: f64,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// Trainer failures.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("io: {0}")]
    Io(#[from] std::io::Error),
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
    #[error("self-play data: {0}")]
    Data(#[from] weiqi_selfplay::Error),
    #[cfg(feature = "tch")]
    #[error("torch: {0}")]
    Torch(#[from] tch::TchError),
    #[error("{0}")]
    Invalid(String),
}
