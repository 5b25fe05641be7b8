//! Commands whose append does not finish: the call is cancelled while its events are on
//! their way to the store (a client deadline, a reset stream), or the store fails. The game
//! in memory must end up as the store has it, whichever way the write went, and play goes
//! on. Nothing half-applied is ever shown.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::watch;
use weiqi_game::{Actor, Command, Settings};
use weiqi_rules::Point;
use weiqi_server::hub::{Hub, Mutation};
use weiqi_server::metrics::Metrics;
use weiqi_store::{Append, EventLog, Liveness, MemoryStore, StoreError, StoredGame};

/// A store whose appends go on without their caller, like SQLite's writer thread: slowly
/// when `slow` is set, and refused when `fail` is set.
#[derive(Clone, Default)]
struct Flaky {
    inner: MemoryStore,
    slow: Arc<AtomicBool>,
    fail: Arc<AtomicBool>,
    /// Each append on its way holds a read guard; the barrier takes the write lock, so it
    /// returns once every append submitted before it is done (tokio's lock is fair).
    in_flight: Arc<tokio::sync::RwLock<()>>,
}

impl EventLog for Flaky {
    async fn append(&self, append: Append) -> Result<(), StoreError> {
        if self.fail.load(Ordering::SeqCst) {
            return Err(StoreError::Closed);
        }
        let (inner, slow) = (self.inner.clone(), self.slow.load(Ordering::SeqCst));
        let on_its_way = self.in_flight.clone().read_owned().await;
        tokio::spawn(async move {
            let _on_its_way = on_its_way;
            if slow {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            inner.append(append).await
        })
        .await
        .expect("append task")
    }
    async fn load_unfinished(&self) -> Result<Vec<StoredGame>, StoreError> {
        self.inner.load_unfinished().await
    }
    async fn load(&self, game_id: &str) -> Result<Option<StoredGame>, StoreError> {
        self.inner.load(game_id).await
    }
    async fn barrier(&self) -> Result<(), StoreError> {
        drop(self.in_flight.write().await);
        Ok(())
    }
}

impl Liveness for Flaky {
    async fn heartbeat(&self, now_ms: u64) -> Result<(), StoreError> {
        self.inner.heartbeat(now_ms).await
    }
    async fn last_heartbeat(&self) -> Result<Option<u64>, StoreError> {
        self.inner.last_heartbeat().await
    }
    async fn probe(&self, now_ms: u64, payload: &[u8]) -> Result<(), StoreError> {
        self.inner.probe(now_ms, payload).await
    }
}

async fn game() -> (Arc<Hub<Flaky>>, Flaky, String, watch::Sender<bool>) {
    let (stop, rx) = watch::channel(false);
    let store = Flaky::default();
    let hub = Arc::new(Hub::new(store.clone(), vec![7; 32], Metrics::new(), rx));
    let id = hub.create(Settings::casual(9), None, None, "").await.unwrap().game_id;
    hub.join(&id, None, None, "").await.unwrap();
    (hub, store, id, stop)
}

fn play(x: u8, y: u8) -> Command {
    Command::Play {
        point: Point::new(x, y),
        lag_ms: 0,
    }
}

fn at(move_number: u32) -> Mutation {
    Mutation {
        request_id: format!("m{move_number}"),
        expected_move_number: Some(move_number),
    }
}

/// What the hub shows and what the store holds: move number and last sequence number.
async fn shown_and_stored(h: &Arc<Hub<Flaky>>, store: &Flaky, id: &str) -> ((usize, u64), (usize, u64)) {
    let mut e = h.lock(id).await.unwrap();
    let shown = (e.game.get().move_number(), e.game.get().seq());
    let stored = store.load(id).await.unwrap().unwrap();
    let g = weiqi_game::Game::from_events(&stored.events).unwrap();
    (shown, (g.move_number(), g.seq()))
}

/// R3/C5: a move whose call was cancelled but whose events reached the store counts; the
/// game in memory catches up before anyone sees it, and the retry is answered from the log.
#[tokio::test(start_paused = true)]
async fn cancelled_call_whose_append_lands() {
    let (h, store, id, _stop) = game().await;
    store.slow.store(true, Ordering::SeqCst);
    let cancelled = tokio::time::timeout(Duration::from_millis(10), h.run(&id, Actor::Host, play(2, 2), at(0))).await;
    assert!(cancelled.is_err(), "the call was cut off mid-append");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (shown, stored) = shown_and_stored(&h, &store, &id).await;
    assert_eq!(shown, stored);
    assert_eq!(shown.0, 1, "the move reached the store, so it was played");
    store.slow.store(false, Ordering::SeqCst);
    // The client's retry gets the first answer; play continues.
    let retry = h.run(&id, Actor::Host, play(2, 2), at(0)).await.unwrap();
    assert_eq!(retry.game.move_number, 1);
    let next = h.run(&id, Actor::Guest, play(6, 6), at(1)).await.unwrap();
    assert_eq!(next.game.move_number, 2);
}

/// A move the store refused is not played, although it was decided on the game in memory.
#[tokio::test(start_paused = true)]
async fn refused_append_changes_nothing() {
    let (h, store, id, _stop) = game().await;
    store.fail.store(true, Ordering::SeqCst);
    let refused = h.run(&id, Actor::Host, play(2, 2), at(0)).await.unwrap_err();
    assert_eq!(tonic::Status::from(refused).code(), tonic::Code::Unavailable);
    store.fail.store(false, Ordering::SeqCst);
    let (shown, stored) = shown_and_stored(&h, &store, &id).await;
    assert_eq!(shown, stored);
    assert_eq!(shown.0, 0, "the store refused it: not played");
    let ok = h.run(&id, Actor::Host, play(2, 2), at(0)).await.unwrap();
    assert_eq!(ok.game.move_number, 1);
}
