//! An in-memory store with the same contract as SQLite: for tests (it does no IO, so
//! paused-time tests stay exact) and as the reference behaviour of the traits, the
//! accounts' included (`accounts.rs`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::{Append, EventLog, Liveness, StoreError, StoredGame};

mod accounts;

#[derive(Default, Clone)]
pub struct MemoryStore {
    inner: Arc<Mutex<Inner>>,
    /// Players, ratings, challenges, seeks, feeds and tournaments (`accounts.rs`).
    accounts: Arc<Mutex<accounts::Accounts>>,
}

#[derive(Default)]
struct Inner {
    games: HashMap<String, (StoredGame, bool)>,
    heartbeat: Option<u64>,
}

impl MemoryStore {
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }
}

impl EventLog for MemoryStore {
    async fn append(&self, a: Append) -> Result<(), StoreError> {
        crate::check_numbering(&a)?;
        let mut inner = self.inner.lock().expect("lock");
        let conflict = || StoreError::Conflict {
            game_id: a.game_id.clone(),
            expected: a.expected_seq,
        };
        let entry = inner.games.get_mut(&a.game_id);
        let last = entry.as_ref().map(|(g, _)| g.events.last().map_or(0, |e| e.seq));
        match (a.expected_seq, last) {
            (0, None) => {
                let g = StoredGame {
                    game_id: a.game_id.clone(),
                    host_token_hash: a.host_token_hash.clone(),
                    guest_token_hash: a.guest_token_hash.clone(),
                    events: a.events.clone(),
                    responses: a
                        .request_id
                        .clone()
                        .map(|r| (r, a.events.first().map_or(0, |e| e.seq)))
                        .into_iter()
                        .collect(),
                };
                inner
                    .games
                    .insert(a.game_id.clone(), (g, a.summary.as_ref().is_some_and(|s| s.finished)));
                Ok(())
            }
            (e, Some(l)) if e == l && e > 0 => {
                let (g, finished) = inner.games.get_mut(&a.game_id).expect("present");
                g.events.extend(a.events.iter().cloned());
                if a.guest_token_hash.is_some() {
                    g.guest_token_hash = a.guest_token_hash.clone();
                }
                if let Some(r) = &a.request_id {
                    g.responses.push((r.clone(), a.events.first().map_or(0, |e| e.seq)));
                }
                if let Some(s) = &a.summary {
                    *finished = s.finished;
                }
                Ok(())
            }
            _ => Err(conflict()),
        }
    }

    async fn load_unfinished(&self) -> Result<Vec<StoredGame>, StoreError> {
        let inner = self.inner.lock().expect("lock");
        Ok(inner
            .games
            .values()
            .filter(|(_, f)| !f)
            .map(|(g, _)| g.clone())
            .collect())
    }

    async fn load(&self, game_id: &str) -> Result<Option<StoredGame>, StoreError> {
        Ok(self
            .inner
            .lock()
            .expect("lock")
            .games
            .get(game_id)
            .map(|(g, _)| g.clone()))
    }

    async fn barrier(&self) -> Result<(), StoreError> {
        // An append is done within its first poll: none is ever on its way.
        Ok(())
    }
}

impl Liveness for MemoryStore {
    async fn heartbeat(&self, now_ms: u64) -> Result<(), StoreError> {
        self.inner.lock().expect("lock").heartbeat = Some(now_ms);
        Ok(())
    }

    async fn last_heartbeat(&self) -> Result<Option<u64>, StoreError> {
        Ok(self.inner.lock().expect("lock").heartbeat)
    }

    async fn probe(&self, _now_ms: u64, _payload: &[u8]) -> Result<(), StoreError> {
        Ok(())
    }
}
