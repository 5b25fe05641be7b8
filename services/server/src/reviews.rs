//! Game reviews for players (ReviewGame, GetReview): a finished game judged move by move
//! by the tree search (`weiqi_gtp::review`), on a bounded pool. At most `workers` reviews
//! run at once, each on a blocking thread with its own search (`threads`, `visits` a
//! position); at most `queue` more wait, first come first served, and past that a request
//! is refused (the edge answers RESOURCE_EXHAUSTED with RetryInfo). A game has one review
//! in the making however many ask (each later asker watches the same one), and once done
//! it is stored (the first stored stays, whichever replica made it) and served from the
//! store. A review goes on when its watchers leave, and is given up when the server stops.
//! Games longer than `max_moves` are refused, and each client may ask for a few reviews a
//! minute (the edge's quota, `limits.reviews_per_minute`).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Deserialize;
use tokio::sync::watch;
use weiqi_gtp::{GameReview, MctsPlayer, MctsSettings, review_until};
use weiqi_rules::{Policy, State};
use weiqi_store::{Accounts, StoreError};

use crate::hub::TimeSource;

/// The review pool (`[review]` in the file, `WEIQI__REVIEW__*` in the environment).
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct ReviewConfig {
    /// Reviews computed at once (each takes `threads` cores while it runs).
    pub workers: u32,
    /// Reviews that may wait for a worker; more are refused until one starts.
    pub queue: u32,
    /// Simulations of the tree search per position: 1000 reviews a 60-move 9x9 game in
    /// about 2.4 s of one core, a 250-move 19x19 game in about 43 s.
    pub visits: u32,
    /// Search threads of one review.
    pub threads: u32,
    /// Longest game reviewed, in moves (passes included); longer ones are refused.
    pub max_moves: u32,
}

impl Default for ReviewConfig {
    fn default() -> ReviewConfig {
        ReviewConfig {
            workers: 1,
            queue: 16,
            visits: 1000,
            threads: 1,
            max_moves: 1000,
        }
    }
}

/// Where a review stands, as its watchers see it.
#[derive(Debug, Clone)]
pub enum Step {
    /// Waiting for a worker, with this many reviews to run before it.
    Queued {
        ahead: u32,
    },
    /// Positions searched so far, of `total`.
    Running {
        done: u32,
        total: u32,
    },
    Done(Arc<GameReview>),
    Failed(Arc<ReviewError>),
}

/// Why a review was not made or not kept.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    /// As many reviews are running and waiting as the server takes.
    #[error("the server has {waiting} reviews waiting; retry later")]
    QueueFull { waiting: u32, retry_after: Duration },
    /// The game is longer than the server reviews.
    #[error("the game has {moves} moves; this server reviews games of at most {max}")]
    TooLong { moves: usize, max: u32 },
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The search failed (a bug: it is logged).
    #[error("the review failed")]
    Failed,
    /// The server is stopping.
    #[error("the server is stopping")]
    Stopping,
}

/// The server's reviews.
pub struct Reviews {
    store: Arc<dyn Accounts>,
    config: ReviewConfig,
    time: TimeSource,
    stop: watch::Receiver<bool>,
    jobs: Mutex<Jobs>,
}

#[derive(Default)]
struct Jobs {
    /// Every review running or waiting, by game: its watchers' channel.
    by_game: HashMap<String, watch::Sender<Step>>,
    /// The reviews waiting, first to run first.
    waiting: VecDeque<(String, State)>,
    running: usize,
}

impl Reviews {
    pub fn new(
        store: Arc<dyn Accounts>,
        config: ReviewConfig,
        time: TimeSource,
        stop: watch::Receiver<bool>,
    ) -> Arc<Reviews> {
        Arc::new(Reviews {
            store,
            config,
            time,
            stop,
            jobs: Mutex::new(Jobs::default()),
        })
    }

    /// The game's stored review, if it has one.
    pub async fn stored(&self, game_id: &str) -> Result<Option<GameReview>, ReviewError> {
        Ok(self.store.review(game_id.to_string()).await?)
    }

    /// Joins the review of `game_id` in the making, or starts one of `end` (the game's final
    /// position, moves and all). The caller answers a stored review itself ([`stored`]).
    ///
    /// [`stored`]: Reviews::stored
    pub fn review(self: &Arc<Self>, game_id: &str, end: State) -> Result<watch::Receiver<Step>, ReviewError> {
        let max = self.config.max_moves;
        if end.moves().len() > max as usize {
            return Err(ReviewError::TooLong {
                moves: end.moves().len(),
                max,
            });
        }
        let mut jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(job) = jobs.by_game.get(game_id) {
            return Ok(job.subscribe());
        }
        let (workers, queue) = (self.config.workers.max(1) as usize, self.config.queue as usize);
        if jobs.running >= workers && jobs.waiting.len() >= queue {
            // A place frees when the oldest running review ends: a few seconds for most.
            return Err(ReviewError::QueueFull {
                waiting: jobs.waiting.len() as u32,
                retry_after: Duration::from_secs(5),
            });
        }
        let (tx, rx) = watch::channel(Step::Queued {
            ahead: jobs.waiting.len() as u32,
        });
        jobs.by_game.insert(game_id.to_string(), tx);
        if jobs.running < workers {
            jobs.running += 1;
            drop(jobs);
            self.clone().start(game_id.to_string(), end);
        } else {
            jobs.waiting.push_back((game_id.to_string(), end));
        }
        Ok(rx)
    }

    /// Runs one review on a blocking thread, stores it, tells its watchers, and starts the
    /// next one waiting.
    fn start(self: Arc<Self>, game_id: String, end: State) {
        tokio::spawn(async move {
            let step = self.run(&game_id, end).await;
            let mut jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(tx) = jobs.by_game.remove(&game_id) {
                tx.send_replace(step);
            }
            jobs.running -= 1;
            if let Some((next, end)) = jobs.waiting.pop_front() {
                jobs.running += 1;
                for (ahead, (waiting, _)) in jobs.waiting.iter().enumerate() {
                    if let Some(tx) = jobs.by_game.get(waiting) {
                        tx.send_replace(Step::Queued { ahead: ahead as u32 });
                    }
                }
                drop(jobs);
                self.clone().start(next, end);
            }
        });
    }

    async fn run(&self, game_id: &str, end: State) -> Step {
        let tx = {
            let jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
            jobs.by_game.get(game_id).cloned()
        };
        let Some(tx) = tx else {
            return Step::Failed(Arc::new(ReviewError::Stopping));
        };
        // Stored meanwhile (another replica's, or a job that ended between the asker's
        // look at the store and its look at the jobs): served, not searched again.
        match self.stored(game_id).await {
            Ok(Some(done)) => return Step::Done(Arc::new(done)),
            Ok(None) => {}
            Err(e) => return Step::Failed(Arc::new(e)),
        }
        let settings = MctsSettings {
            playouts: self.config.visits.max(1),
            threads: self.config.threads.max(1) as usize,
            seed: 1,
            policy: Policy::Heavy,
            resign_below: 0.0,
            shape_prior: weiqi_gtp::DEFAULT_SHAPE_PRIOR,
        };
        let visits = settings.playouts;
        let stop = self.stop.clone();
        let searched = tokio::task::spawn_blocking(move || {
            let mut player = MctsPlayer::new(settings);
            review_until(
                &end,
                &mut player,
                |done, total| {
                    tx.send_replace(Step::Running {
                        done: done as u32,
                        total: total as u32,
                    });
                },
                || *stop.borrow(),
            )
        })
        .await;
        let Ok(Some(moves)) = searched else {
            return Step::Failed(Arc::new(ReviewError::Stopping));
        };
        let review = GameReview { visits, moves };
        match self
            .store
            .put_review(game_id.to_string(), review, self.time.now_ms())
            .await
        {
            Ok(kept) => Step::Done(Arc::new(kept)),
            Err(e) => Step::Failed(Arc::new(e.into())),
        }
    }
}
