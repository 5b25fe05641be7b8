//! Players' feeds: one reader per server follows the store's `player_events` (every
//! server's writes, so a challenge made on one replica reaches a player watching on
//! another) and hands each event to the streams of its player open here. The same reader
//! keeps those players online in the store.
//!
//! PostgreSQL numbers events when they are inserted, not when they commit, so a reader can
//! see event N+1 before N. The reader keeps the numbers it has delivered above the last
//! one it knows it has all of, and waits for a hole to fill (`HOLE_WAIT`) before taking it
//! for a rolled-back insert and moving on.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{Notify, broadcast, watch};
use weiqi_players::PlayerEvent;
use weiqi_store::{Accounts, StoreError};

use crate::hub::TimeSource;

/// How often the reader looks without being woken (events other servers wrote).
pub const POLL: Duration = Duration::from_millis(250);
/// A player with a feed open is online this long after each refresh, refreshed every
/// `PRESENCE_EVERY`: a player whose server died is offline within `PRESENCE_TTL_MS`.
pub const PRESENCE_TTL_MS: u64 = 30_000;
pub const PRESENCE_EVERY: Duration = Duration::from_secs(10);
const HOLE_WAIT: Duration = Duration::from_secs(2);
const BATCH: usize = 500;
/// Events queued for one slow stream before it misses some (it can resume by seq).
const STREAM_BUFFER: usize = 64;

pub type FeedItem = Arc<PlayerEvent>;

pub struct Feed {
    accounts: Arc<dyn Accounts>,
    time: TimeSource,
    /// Woken by writers on this server.
    pub wake: Arc<Notify>,
    subscribers: Mutex<HashMap<String, broadcast::Sender<FeedItem>>>,
}

/// Which events the reader has delivered: all up to `floor`, and those in `ahead`.
#[derive(Default)]
struct Cursor {
    floor: u64,
    ahead: BTreeSet<u64>,
    hole_since: Option<(u64, Instant)>,
}

impl Cursor {
    /// Whether `seq` is new (and now counted as delivered).
    fn take(&mut self, seq: u64) -> bool {
        seq > self.floor && self.ahead.insert(seq)
    }

    /// Moves the floor over what is complete; a hole open longer than `HOLE_WAIT` is
    /// skipped.
    fn settle(&mut self, now: Instant) {
        loop {
            while self.ahead.first() == Some(&(self.floor + 1)) {
                self.ahead.pop_first();
                self.floor += 1;
            }
            let Some(&next) = self.ahead.first() else {
                self.hole_since = None;
                return;
            };
            match self.hole_since {
                Some((hole, since)) if hole == self.floor + 1 && now.duration_since(since) >= HOLE_WAIT => {
                    self.floor = next - 1;
                    self.hole_since = None;
                }
                Some((hole, _)) if hole == self.floor + 1 => return,
                _ => {
                    self.hole_since = Some((self.floor + 1, now));
                    return;
                }
            }
        }
    }
}

impl Feed {
    pub fn new(accounts: Arc<dyn Accounts>, time: TimeSource, wake: Arc<Notify>) -> Feed {
        Feed {
            accounts,
            time,
            wake,
            subscribers: Mutex::new(HashMap::new()),
        }
    }

    /// A player's live events from now on; the player is online from here (written
    /// before this returns, so a challenge made after the stream's `subscribed` finds
    /// them online).
    pub async fn subscribe(&self, player_id: &str) -> Result<broadcast::Receiver<FeedItem>, StoreError> {
        let rx = {
            let mut subs = self.subscribers.lock().expect("lock");
            subs.entry(player_id.to_string())
                .or_insert_with(|| broadcast::channel(STREAM_BUFFER).0)
                .subscribe()
        };
        self.accounts
            .seen(vec![player_id.to_string()], self.time.now_ms() + PRESENCE_TTL_MS)
            .await?;
        Ok(rx)
    }

    /// Reads and hands out events until `stop`.
    pub async fn run(self: Arc<Self>, mut stop: watch::Receiver<bool>) {
        let mut cursor = Cursor {
            floor: loop {
                match self.accounts.last_player_event().await {
                    Ok(seq) => break seq,
                    Err(e) => {
                        tracing::warn!(error = %e, "player feed: reading the last event failed");
                        tokio::time::sleep(POLL).await;
                    }
                }
            },
            ..Cursor::default()
        };
        let mut last_presence = Instant::now();
        loop {
            tokio::select! {
                _ = tokio::time::sleep(POLL) => {}
                _ = self.wake.notified() => {}
                _ = stop.changed() => return,
            }
            if let Err(e) = self.poll(&mut cursor).await {
                tracing::warn!(error = %e, "player feed: reading events failed");
            }
            if last_presence.elapsed() >= PRESENCE_EVERY {
                last_presence = Instant::now();
                let online = self.online_here();
                if !online.is_empty()
                    && let Err(e) = self.accounts.seen(online, self.time.now_ms() + PRESENCE_TTL_MS).await
                {
                    tracing::warn!(error = %e, "player feed: presence refresh failed");
                }
            }
        }
    }

    async fn poll(&self, cursor: &mut Cursor) -> Result<(), StoreError> {
        loop {
            let events = self.accounts.player_events_after(cursor.floor, BATCH).await?;
            let full = events.len() == BATCH;
            let mut fresh = 0;
            {
                let subs = self.subscribers.lock().expect("lock");
                for e in events {
                    if !cursor.take(e.seq) {
                        continue;
                    }
                    fresh += 1;
                    if let Some(tx) = subs.get(&e.player_id) {
                        let _ = tx.send(Arc::new(e));
                    }
                }
            }
            cursor.settle(Instant::now());
            // (A full batch of only old events means a hole holds the floor back: wait.)
            if !full || fresh == 0 {
                return Ok(());
            }
        }
    }

    /// Players with a stream open here (closed streams' players are forgotten).
    fn online_here(&self) -> Vec<String> {
        let mut subs = self.subscribers.lock().expect("lock");
        subs.retain(|_, tx| tx.receiver_count() > 0);
        subs.keys().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cursor_waits_for_a_hole_then_skips_it() {
        let t0 = Instant::now();
        let mut c = Cursor::default();
        assert!(c.take(1) && c.take(3));
        assert!(!c.take(1), "delivered once");
        c.settle(t0);
        assert_eq!(c.floor, 1);
        // 2 may still commit: it is delivered when it comes.
        c.settle(t0 + Duration::from_secs(1));
        assert_eq!(c.floor, 1);
        assert!(c.take(2));
        c.settle(t0 + Duration::from_secs(1));
        assert_eq!((c.floor, c.ahead.len()), (3, 0));
        // 4 never commits: after the wait the floor moves past it.
        assert!(c.take(5));
        c.settle(t0);
        c.settle(t0 + HOLE_WAIT);
        assert_eq!(c.floor, 5);
    }
}
