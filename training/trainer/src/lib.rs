//! # weiqi-trainer
//!
//! Turns self-play data into a bot. With the cargo feature `tch` (libtorch through tch):
//! a residual policy/value/ownership network ([`net`]), training on `.npz` shards with
//! masked policy cross-entropy, value MSE and ownership loss ([`train`]), checkpoints as
//! safetensors (PyTorch-loadable) with the architecture beside them in JSON, and a
//! network player with a small batched search. Without the feature, [`arena`] still pits
//! the search-free policies against each other.

pub mod arena;
#[cfg(feature = "tch")]
pub mod net;
pub mod publish;
#[cfg(feature = "tch")]
pub mod train;

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
