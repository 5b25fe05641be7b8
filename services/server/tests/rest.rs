//! Games at rest (issue 22): packed after a command at a human pace, left unpacked in quick
//! play until they pause, and the same game either way; the log stays in memory only while
//! the game is watched.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use weiqi_game::{Actor, Command, Game, Settings};
use weiqi_rules::{Color, Point};
use weiqi_server::hub::{Hub, Mutation};
use weiqi_server::metrics::Metrics;
use weiqi_store::MemoryStore;

struct Table {
    hub: Arc<Hub<MemoryStore>>,
    id: String,
    seats: [Actor; 2],
    moves: u8,
    _stop: watch::Sender<bool>,
}

impl Table {
    async fn new() -> Table {
        let (stop, rx) = watch::channel(false);
        let hub = Arc::new(Hub::new(MemoryStore::new(), vec![7; 32], Metrics::new(), rx));
        let id = hub.create(Settings::casual(19), None, None, "").await.unwrap().game_id;
        hub.join(&id, None, None, "").await.unwrap();
        let mut seats = [Actor::Host; 2];
        for (k, c) in [Color::Black, Color::White].into_iter().enumerate() {
            seats[k] = Actor::from(hub.lock(&id).await.unwrap().game.get().seat_of(c).unwrap());
        }
        Table {
            hub,
            id,
            seats,
            moves: 0,
            _stop: stop,
        }
    }

    /// The next move (Black on the top row, White on the bottom one).
    async fn play(&mut self) {
        let (k, x) = ((self.moves % 2) as usize, self.moves / 2);
        let point = Point::new(x, if k == 0 { 0 } else { 18 });
        self.hub
            .run(
                &self.id,
                self.seats[k],
                Command::Play { point, lag_ms: 0 },
                Mutation::default(),
            )
            .await
            .unwrap();
        self.moves += 1;
    }

    async fn live(&self) -> bool {
        self.hub.lock(&self.id).await.unwrap().game.is_live()
    }
}

#[tokio::test(start_paused = true)]
async fn games_rest_packed_at_a_human_pace_and_unpacked_in_quick_play() {
    let mut t = Table::new().await;
    // A move 2 s after the join: a human pace, so the game rests packed after it.
    tokio::time::sleep(Duration::from_secs(2)).await;
    t.play().await;
    assert!(!t.live().await, "a move at a human pace leaves the game packed");
    // Quick play: moves 100 ms apart keep it unpacked.
    for _ in 0..4 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        t.play().await;
        assert!(t.live().await, "quick play keeps the game unpacked");
    }
    // Not yet idle for a second: the periodic pass leaves it; then it packs it.
    assert_eq!(t.hub.park_idle(), 0);
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(t.hub.park_idle(), 1);
    assert!(!t.live().await);
    // Unpacked by the next move, which decides as on the live game; the game in memory is
    // the fold of the stored log.
    t.play().await;
    let log = t.hub.stored_log(&t.id).await.unwrap();
    let mut e = t.hub.lock(&t.id).await.unwrap();
    assert_eq!(e.game.get().move_number(), 6);
    assert_eq!(&Game::from_events(&log).unwrap(), e.game.get());
}

#[tokio::test(start_paused = true)]
async fn the_periodic_pass_visits_only_the_games_used_since_it_last_ran() {
    let mut t = Table::new().await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    t.hub.park_idle();
    assert_eq!(
        t.hub.park_list_len(),
        0,
        "a pass that packs every game empties its list"
    );
    // Ten more games, joined at once (quick play: left unpacked), then a pause.
    for _ in 0..10 {
        let id = t
            .hub
            .create(Settings::casual(19), None, None, "")
            .await
            .unwrap()
            .game_id;
        t.hub.join(&id, None, None, "").await.unwrap();
    }
    assert_eq!(t.hub.park_list_len(), 10);
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(t.hub.park_idle(), 10, "the ten, not the first game, packed since");
    assert_eq!(t.hub.park_list_len(), 0);
    // A read unpacks a game: listed once, however often it is read.
    t.hub.view(&t.id).await.unwrap();
    t.hub.view(&t.id).await.unwrap();
    assert_eq!(t.hub.park_list_len(), 1);
    {
        let _in_use = t.hub.lock(&t.id).await.unwrap();
        assert_eq!(t.hub.park_idle(), 0, "a game in use is left alone");
    }
    assert_eq!(t.hub.park_list_len(), 1, "and kept for the next pass");
    assert_eq!(t.hub.park_idle(), 1);
    assert_eq!(t.hub.park_list_len(), 0);
    // Quick play: used less than `park_after_ms` ago, kept unpacked and listed.
    t.play().await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    t.play().await;
    assert_eq!(t.hub.park_idle(), 0);
    assert_eq!(t.hub.park_list_len(), 1);
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(t.hub.park_idle(), 1);
    // Packed by its own move at a human pace: the next pass finds it packed and lets it go.
    tokio::time::sleep(Duration::from_secs(2)).await;
    t.play().await;
    assert_eq!(t.hub.park_list_len(), 1);
    assert_eq!(t.hub.park_idle(), 0);
    assert_eq!(t.hub.park_list_len(), 0);
    assert!(!t.live().await);
}

#[tokio::test(start_paused = true)]
async fn the_log_stays_in_memory_only_while_the_game_is_watched() {
    let mut t = Table::new().await;
    t.play().await;
    assert!(t.hub.lock(&t.id).await.unwrap().watched_log().is_none());
    let stream = t.hub.watch(&t.id, None, 0, 0).await.unwrap();
    t.play().await;
    t.play().await;
    {
        let e = t.hub.lock(&t.id).await.unwrap();
        let log = e.watched_log().expect("a watched game keeps its log");
        assert_eq!(log, t.hub.stored_log(&t.id).await.unwrap().as_slice());
    }
    // The watcher leaves; the next move lets the log go.
    drop(stream);
    tokio::time::sleep(Duration::from_millis(10)).await;
    t.play().await;
    assert!(t.hub.lock(&t.id).await.unwrap().watched_log().is_none());
}
