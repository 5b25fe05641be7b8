//! Score estimates for players during a game (EstimateScore): the rules engine's
//! estimate of a position, run off the runtime's threads, a bounded number at once.
//! Each is a few milliseconds of a core (`weiqi_rules::estimate::ESTIMATE_BUDGET`); the
//! edge takes a per-client quota first (`limits.estimates_per_minute`), and here at most
//! `limits.concurrent_estimates` run at once (one per core by default), the rest waiting
//! their turn, so that estimates never take every core from the games.

use std::sync::Arc;

use tokio::sync::Semaphore;
use weiqi_rules::State;
use weiqi_rules::estimate::{Estimate, estimate};
use weiqi_rules::score::ScoreError;

/// The server's estimator.
#[derive(Clone)]
pub struct Estimates {
    running: Arc<Semaphore>,
}

/// Why an estimate was not made.
#[derive(Debug, thiserror::Error)]
pub enum EstimateError {
    /// The position cannot be counted (never for a game's own board).
    #[error("the position cannot be counted: {0}")]
    Count(#[from] ScoreError),
    /// The server is stopping (its blocking threads are gone).
    #[error("the server is stopping")]
    Stopping,
}

impl Estimates {
    /// At most `at_once` estimates at a time; 0: one per core.
    pub fn new(at_once: u32) -> Estimates {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let n = if at_once == 0 { cores } else { at_once as usize };
        Estimates {
            running: Arc::new(Semaphore::new(n)),
        }
    }

    /// The estimate of `state`, on a blocking thread once a place is free.
    pub async fn estimate(&self, state: State) -> Result<Estimate, EstimateError> {
        let permit = self
            .running
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| EstimateError::Stopping)?;
        let done = tokio::task::spawn_blocking(move || {
            let _running = permit;
            estimate(&state)
        })
        .await
        .map_err(|_| EstimateError::Stopping)?;
        Ok(done?)
    }
}
