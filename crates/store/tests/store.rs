//! The stores: append and load, optimistic concurrency, durability across reopen. The
//! contract tests run on SQLite always, and on PostgreSQL when `WEIQI_TEST_POSTGRES_URL`
//! names a database whose user may create databases (CI sets it, with
//! `WEIQI_REQUIRE_POSTGRES=1` so that a missing server fails instead of skipping).

use weiqi_game::{Actor, Command, Event, Game, Phase, Settings};
use weiqi_store::{
    Append, Claim, Cluster, EventLog, EventStore, Liveness, MemoryStore, PgStore, SqliteStore, StoreError, Summary,
};

fn summary() -> Summary {
    Summary {
        phase: Phase::Playing,
        board_size: 9,
        move_number: 0,
        rules: "chinese".into(),
        finished: false,
    }
}

fn created() -> Vec<Event> {
    let cmd = Command::Create {
        settings: Settings::casual(9),
        nigiri_commitment: None,
    };
    Game::new().decide(Actor::Host, &cmd, 0).unwrap()
}

/// The events of the guest joining a game that holds `log`, at time `at`.
fn joined(log: &[Event], at: u64) -> Vec<Event> {
    let cmd = Command::Join {
        nigiri_guess: None,
        entropy: 0,
    };
    Game::from_events(log).unwrap().decide(Actor::Guest, &cmd, at).unwrap()
}

fn append(id: &str, expected: u64, events: Vec<Event>) -> Append {
    Append {
        game_id: id.into(),
        expected_seq: expected,
        events,
        host_token_hash: Some("h".into()),
        guest_token_hash: None,
        request_id: Some(format!("req-{expected}")),
        summary: Some(summary()),
        move_number: 0,
        wake_ms: None,
        now_ms: 1,
    }
}

async fn open(name: &str) -> (SqliteStore, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("weiqi-store-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("db.sqlite3");
    (SqliteStore::open(&path).await.unwrap(), path)
}

#[tokio::test]
async fn append_load_and_conflicts() {
    let (store, path) = open("basic").await;
    append_load_and_conflicts_on(store, async move |s| {
        drop(s);
        SqliteStore::open(&path).await.unwrap()
    })
    .await;
}

/// The contract every store keeps: optimistic concurrency, request ids, heartbeat, and
/// everything acknowledged still there after reopening.
async fn append_load_and_conflicts_on<S: EventStore>(store: S, reopen: impl AsyncFnOnce(S) -> S) {
    let events = created();
    store.append(append("g1", 0, events.clone())).await.unwrap();
    // Creating the same game again conflicts.
    assert!(matches!(
        store.append(append("g1", 0, events.clone())).await,
        Err(StoreError::Conflict { .. })
    ));
    // The right append succeeds; the same again, now at a stale seq, conflicts.
    let join = joined(&events, 5);
    store.append(append("g1", 1, join.clone())).await.unwrap();
    assert!(matches!(
        store.append(append("g1", 1, join.clone())).await,
        Err(StoreError::Conflict { expected: 1, .. })
    ));
    let loaded = store.load("g1").await.unwrap().unwrap();
    assert_eq!(loaded.events.len(), 1 + join.len());
    assert_eq!(loaded.responses.len(), 2);
    assert!(store.load("nope").await.unwrap().is_none());
    // Events that do not number on from the expected sequence number are refused, and
    // nothing is stored.
    let mut gap = joined(&events, 6);
    gap[0].seq += 1;
    assert!(matches!(
        store.append(append("g1", 1 + join.len() as u64, gap)).await,
        Err(StoreError::Corrupt { .. })
    ));
    assert_eq!(store.load("g1").await.unwrap().unwrap().events, loaded.events);
    // Catching up reads what follows a sequence number, with its request ids and the
    // game's token hashes.
    let since = store.load_since("g1", 1).await.unwrap().unwrap();
    assert_eq!(since.events, loaded.events[1..]);
    assert_eq!(since.responses, [("req-1".to_string(), 2)]);
    assert_eq!(since.host_token_hash.as_deref(), Some("h"));
    let none_newer = store.load_since("g1", 1 + join.len() as u64).await.unwrap().unwrap();
    assert!(none_newer.events.is_empty() && none_newer.responses.is_empty());
    assert!(store.load_since("nope", 0).await.unwrap().is_none());
    store.heartbeat(42).await.unwrap();
    assert_eq!(store.last_heartbeat().await.unwrap(), Some(42));
    // Everything acknowledged is there after reopening.
    let store = reopen(store).await;
    let unfinished = store.load_unfinished().await.unwrap();
    assert_eq!(unfinished.len(), 1);
    assert_eq!(
        Game::from_events(&unfinished[0].events).unwrap().seq(),
        1 + join.len() as u64
    );
    assert_eq!(store.last_heartbeat().await.unwrap(), Some(42));
}

/// The barrier: appends whose callers gave up on them (cancelled after a few
/// microseconds, as a client deadline does) are settled, committed or refused, once it
/// returns; nothing more lands afterwards.
async fn barrier_settles_cancelled_appends_on<S: EventStore + Clone>(store: S) {
    let join = joined(&created(), 5);
    // Enough that the writers are still busy when the barrier is called.
    let n = 1000;
    let mut creates = Vec::new();
    for i in 0..n {
        let s = store.clone();
        creates.push(tokio::spawn(async move {
            s.append(append(&format!("b{i}"), 0, created())).await
        }));
    }
    for t in creates {
        t.await.unwrap().unwrap();
    }
    let mut tasks = Vec::new();
    for i in 0..n {
        let (s, join) = (store.clone(), join.clone());
        tasks.push(tokio::spawn(async move {
            let a = append(&format!("b{i}"), 1, join);
            let _ = tokio::time::timeout(std::time::Duration::from_micros(i % 50), s.append(a)).await;
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    store.barrier().await.unwrap();
    let seqs = |store: S| async move {
        let mut out = Vec::new();
        for i in 0..n {
            let g = store.load(&format!("b{i}")).await.unwrap().unwrap();
            out.push(g.events.last().unwrap().seq);
        }
        out
    };
    let settled = seqs(store.clone()).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(seqs(store).await, settled, "an append landed after the barrier");
}

#[tokio::test]
async fn barrier_settles_cancelled_appends() {
    barrier_settles_cancelled_appends_on(open("barrier").await.0).await;
    barrier_settles_cancelled_appends_on(MemoryStore::new()).await;
}

#[tokio::test]
async fn postgres_barrier_settles_cancelled_appends() {
    let Some(url) = pg("barrier").await else { return };
    barrier_settles_cancelled_appends_on(PgStore::open(&url).await.unwrap()).await;
}

/// The contracts on the reference store too: what the databases must do, `MemoryStore`
/// does (a reopened memory store is the same store: memory is its own durability).
#[tokio::test]
async fn memory_store_keeps_the_contracts() {
    append_load_and_conflicts_on(MemoryStore::new(), async |s| s).await;
    concurrent_appends_on(MemoryStore::new()).await;
    interleaved_games_load_apart_on(MemoryStore::new(), async |s| s).await;
}

/// Many concurrent appends, some conflicting: each is answered on its own; the batch
/// commits the others.
#[tokio::test]
async fn concurrent_appends_group_commit() {
    concurrent_appends_on(open("group").await.0).await;
}

async fn concurrent_appends_on<S: EventStore + Clone>(store: S) {
    let mut tasks = Vec::new();
    for i in 0..200 {
        let s = store.clone();
        tasks.push(tokio::spawn(async move {
            // Two writers race for every game id: exactly one wins.
            s.append(append(&format!("g{}", i / 2), 0, created())).await
        }));
    }
    let mut ok = 0;
    let mut conflicts = 0;
    for t in tasks {
        match t.await.unwrap() {
            Ok(()) => ok += 1,
            Err(StoreError::Conflict { .. }) => conflicts += 1,
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!((ok, conflicts), (100, 100));
    assert_eq!(store.load_unfinished().await.unwrap().len(), 100);
    // Then two guests race to join every game (appends to existing games, written in
    // groups: the two appends of one game may meet in one group): one wins per game.
    let join = joined(&created(), 5);
    let mut tasks = Vec::new();
    for i in 0..200 {
        let (s, join) = (store.clone(), join.clone());
        tasks.push(tokio::spawn(async move {
            let mut a = append(&format!("g{}", i / 2), 1, join);
            a.request_id = Some(format!("join-{i}"));
            s.append(a).await.map(|()| i)
        }));
    }
    let mut winners = Vec::new();
    for t in tasks {
        match t.await.unwrap() {
            Ok(i) => winners.push(i),
            Err(StoreError::Conflict { expected: 1, .. }) => {}
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(winners.len(), 100);
    for i in winners {
        let g = store.load(&format!("g{}", i / 2)).await.unwrap().unwrap();
        assert_eq!(g.events.len(), 1 + join.len(), "game g{}", i / 2);
        // The winner's request id is the one stored.
        assert!(g.responses.contains(&(format!("join-{i}"), 2)), "{:?}", g.responses);
    }
}

/// Games whose appends interleave load apart, each with its own events (in order) and
/// request ids; only unfinished ones come back on restart.
#[tokio::test]
async fn interleaved_games_load_apart() {
    let (store, path) = open("interleaved").await;
    interleaved_games_load_apart_on(store, async move |s| {
        drop(s);
        SqliteStore::open(&path).await.unwrap()
    })
    .await;
}

async fn interleaved_games_load_apart_on<S: EventStore>(store: S, reopen: impl AsyncFnOnce(S) -> S) {
    let ids: Vec<String> = (0..5).map(|i| format!("game-{i}")).collect();
    let mut logs: Vec<Vec<Event>> = Vec::new();
    for id in &ids {
        let events = created();
        store.append(append(id, 0, events.clone())).await.unwrap();
        logs.push(events);
    }
    for (k, id) in ids.iter().enumerate() {
        let join = joined(&logs[k], 10 + k as u64);
        let mut a = append(id, logs[k].len() as u64, join.clone());
        // The last game is over (its summary says so).
        a.summary = Some(Summary {
            finished: k == 4,
            ..summary()
        });
        store.append(a).await.unwrap();
        logs[k].extend(join);
    }
    let store = reopen(store).await;
    let mut unfinished = store.load_unfinished().await.unwrap();
    unfinished.sort_by(|a, b| a.game_id.cmp(&b.game_id));
    assert_eq!(
        unfinished.iter().map(|g| g.game_id.as_str()).collect::<Vec<_>>(),
        ["game-0", "game-1", "game-2", "game-3"]
    );
    for (k, g) in unfinished.iter().enumerate() {
        assert_eq!(g.events, logs[k], "{}", g.game_id);
        assert_eq!(g.responses, vec![("req-0".to_string(), 1), ("req-1".to_string(), 2)]);
        assert_eq!(g.host_token_hash.as_deref(), Some("h"));
    }
    let finished = store.load("game-4").await.unwrap().expect("kept");
    assert_eq!(finished.events, logs[4]);
}

/// A database from before integer game keys is migrated on open, keeping every event,
/// request id and summary; the games go on from where they were.
#[tokio::test]
async fn migrates_databases_keyed_by_game_id() {
    use sqlx::Connection;
    let dir = std::env::temp_dir().join(format!("weiqi-store-{}-migrate", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("db.sqlite3");
    {
        let url = format!("sqlite://{}?mode=rwc", path.display());
        let mut c = sqlx::SqliteConnection::connect(&url).await.unwrap();
        for stmt in [
            "CREATE TABLE games (game_id TEXT PRIMARY KEY, host_token_hash TEXT, guest_token_hash TEXT,
                last_seq INTEGER NOT NULL, phase TEXT NOT NULL, board_size INTEGER NOT NULL,
                move_number INTEGER NOT NULL, rules TEXT NOT NULL, finished INTEGER NOT NULL,
                updated_ms INTEGER NOT NULL)",
            "CREATE TABLE events (game_id TEXT NOT NULL, seq INTEGER NOT NULL, request_id TEXT, body TEXT NOT NULL)",
            "CREATE UNIQUE INDEX events_by_game ON events (game_id, seq)",
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
            "CREATE INDEX games_unfinished ON games (finished, updated_ms)",
            "INSERT INTO games VALUES ('old', 'hh', NULL, 1, 'PHASE_WAITING_FOR_OPPONENT', 9, 0, 'chinese', 0, 5)",
        ] {
            sqlx::query(stmt).execute(&mut c).await.unwrap();
        }
        let body = serde_json::to_string(&created()[0]).unwrap();
        sqlx::query("INSERT INTO events VALUES ('old', 1, 'create-1', ?)")
            .bind(body)
            .execute(&mut c)
            .await
            .unwrap();
    }
    let store = SqliteStore::open(&path).await.unwrap();
    let g = store.load("old").await.unwrap().expect("migrated");
    assert_eq!(g.events.len(), 1);
    assert_eq!(g.host_token_hash.as_deref(), Some("hh"));
    assert_eq!(g.responses, vec![("create-1".to_string(), 1)]);
    assert_eq!(store.load_unfinished().await.unwrap().len(), 1);
    // Phases were stored by their protobuf names then: now by the domain's.
    let url = format!("sqlite://{}", path.display());
    let mut c = <sqlx::SqliteConnection as sqlx::Connection>::connect(&url)
        .await
        .unwrap();
    let phase: String = sqlx::query_scalar("SELECT phase FROM games WHERE game_id = 'old'")
        .fetch_one(&mut c)
        .await
        .unwrap();
    assert_eq!(phase, "waiting_for_opponent");
    drop(c);
    // The game goes on; a new game gets its own key.
    let join = joined(&g.events, 2);
    let total = 1 + join.len();
    store.append(append("old", 1, join.clone())).await.unwrap();
    store.append(append("new", 0, created())).await.unwrap();
    assert!(matches!(
        store.append(append("old", 1, join)).await,
        Err(StoreError::Conflict { .. })
    ));
    drop(store);
    let store = SqliteStore::open(&path).await.unwrap();
    assert_eq!(store.load("old").await.unwrap().unwrap().events.len(), total);
    assert_eq!(store.load("new").await.unwrap().unwrap().events.len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// One process at a time: a second store on the same file is refused while the first is
/// open, and allowed once it has closed.
#[tokio::test]
async fn one_writer_per_database() {
    let (store, path) = open("lock").await;
    store.append(append("g", 0, created())).await.unwrap();
    let second = SqliteStore::open(&path).await;
    assert!(matches!(second, Err(StoreError::Locked(_))), "{:?}", second.err());
    drop(store);
    let again = SqliteStore::open(&path).await.unwrap();
    assert_eq!(again.load("g").await.unwrap().unwrap().events.len(), 1);
}

/// Durable pings: each is a row written through the group commit; only the last
/// `PROBE_SLOTS` are kept, and they interleave with appends in the same batches.
#[tokio::test]
async fn probes_are_rows_in_a_bounded_ring() {
    let (store, path) = open("probes").await;
    let mut tasks = Vec::new();
    for i in 0..1500u64 {
        let s = store.clone();
        tasks.push(tokio::spawn(async move { s.probe(i, &i.to_le_bytes()).await }));
    }
    store.append(append("g1", 0, created())).await.unwrap();
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    drop(store);
    let store = SqliteStore::open(&path).await.unwrap();
    assert_eq!(store.load_unfinished().await.unwrap().len(), 1);
    drop(store);
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    let (rows, max_slot): (i64, i64) = sqlx::query_as("SELECT count(*), max(slot) FROM probes")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(rows as u64, weiqi_store::PROBE_SLOTS);
    assert_eq!(max_slot as u64, weiqi_store::PROBE_SLOTS - 1);
}

/// Writes for `secs` from 32 tasks, each creating games one after another; returns how
/// many games were written.
async fn write_for(store: &SqliteStore, tag: &str, secs: f64) -> u64 {
    let until = std::time::Instant::now() + std::time::Duration::from_secs_f64(secs);
    let mut tasks = Vec::new();
    for t in 0..32 {
        let (s, tag) = (store.clone(), tag.to_string());
        tasks.push(tokio::spawn(async move {
            let mut i = 0;
            while std::time::Instant::now() < until {
                s.append(append(&format!("{tag}-{t}-{i}"), 0, created())).await.unwrap();
                i += 1;
            }
            i
        }));
    }
    let mut n = 0;
    for t in tasks {
        n += t.await.unwrap();
    }
    n
}

/// Under constant writes the WAL starts over (the writer finishes the checkpoint between
/// transactions, about every second) instead of growing with every write for as long as
/// the writes go on.
#[tokio::test]
async fn the_wal_starts_over_under_constant_writes() {
    let (store, path) = open("wal").await;
    let wal = path.with_extension("sqlite3-wal");
    let n1 = write_for(&store, "a", 2.0).await;
    let first = std::fs::metadata(&wal).unwrap().len();
    let n2 = write_for(&store, "b", 4.0).await;
    let second = std::fs::metadata(&wal).unwrap().len();
    // Bytes of WAL per game written so far: a WAL that never starts over keeps this
    // constant; one that starts over every second holds a second's worth at most.
    let (per_first, per_second) = (first as f64 / n1 as f64, second as f64 / (n1 + n2) as f64);
    assert!(first > 0 && n2 > 0);
    assert!(
        per_second < 0.6 * per_first,
        "{n1} games: WAL {first} bytes; {} games: WAL {second} bytes",
        n1 + n2
    );
}

/// A fresh PostgreSQL database for one test, or `None` (skipped) without a server.
async fn pg(name: &str) -> Option<String> {
    let Ok(admin) = std::env::var("WEIQI_TEST_POSTGRES_URL") else {
        assert!(
            std::env::var_os("WEIQI_REQUIRE_POSTGRES").is_none(),
            "WEIQI_REQUIRE_POSTGRES is set but WEIQI_TEST_POSTGRES_URL is not"
        );
        eprintln!("skipped: set WEIQI_TEST_POSTGRES_URL to run the PostgreSQL store tests");
        return None;
    };
    use sqlx::{Connection, Executor};
    let db = format!("weiqi_t_{}_{name}", std::process::id());
    let mut conn = sqlx::PgConnection::connect(&admin).await.expect("PostgreSQL");
    conn.execute(format!("DROP DATABASE IF EXISTS {db}").as_str())
        .await
        .unwrap();
    conn.execute(format!("CREATE DATABASE {db}").as_str()).await.unwrap();
    let base = admin.split('?').next().unwrap();
    let (server, _) = base.rsplit_once('/').expect("a database in the URL");
    Some(format!("{server}/{db}"))
}

#[tokio::test]
async fn postgres_append_load_and_conflicts() {
    let Some(url) = pg("basic").await else { return };
    let store = PgStore::open(&url).await.unwrap();
    append_load_and_conflicts_on(store, async move |s| {
        drop(s);
        PgStore::open(&url).await.unwrap()
    })
    .await;
}

#[tokio::test]
async fn postgres_concurrent_appends() {
    let Some(url) = pg("concurrent").await else { return };
    concurrent_appends_on(PgStore::open(&url).await.unwrap()).await;
}

#[tokio::test]
async fn postgres_interleaved_games_load_apart() {
    let Some(url) = pg("interleaved").await else { return };
    let store = PgStore::open(&url).await.unwrap();
    interleaved_games_load_apart_on(store, async move |s| {
        drop(s);
        PgStore::open(&url).await.unwrap()
    })
    .await;
}

/// Two replicas on one database: an append made through one is a conflict for the other
/// at the old sequence number; heartbeats only move forward; replicas opening the schema
/// together do not collide; probes are kept as rows.
#[tokio::test]
async fn postgres_replicas_share_one_database() {
    let Some(url) = pg("replicas").await else { return };
    let (a, b) = tokio::join!(PgStore::open(&url), PgStore::open(&url));
    let (a, b) = (a.unwrap(), b.unwrap());
    let events = created();
    a.append(append("g", 0, events.clone())).await.unwrap();
    let join = joined(&events, 5);
    b.append(append("g", 1, join.clone())).await.unwrap();
    assert!(matches!(
        a.append(append("g", 1, join.clone())).await,
        Err(StoreError::Conflict { expected: 1, .. })
    ));
    assert_eq!(
        a.load("g").await.unwrap().unwrap().events.len(),
        events.len() + join.len()
    );
    a.heartbeat(100).await.unwrap();
    b.heartbeat(90).await.unwrap();
    assert_eq!(b.last_heartbeat().await.unwrap(), Some(100));
    for i in 0..3 {
        a.probe(i, b"p").await.unwrap();
    }
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    let n: i64 = sqlx::query_scalar("SELECT count(*) FROM probes")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(n, 3);
}

/// Games overdue on their clocks are claimed by one server at a time: not before they are
/// due, not while another server's claim lasts, and again once it has run out.
#[tokio::test]
async fn postgres_overdue_games_are_claimed_once() {
    let Some(url) = pg("claims").await else { return };
    let (a, b) = tokio::join!(PgStore::open(&url), PgStore::open(&url));
    let (a, b) = (a.unwrap(), b.unwrap());
    for i in 0..20u64 {
        let mut created = append(&format!("g{i}"), 0, created());
        created.wake_ms = Some(1000 + i * 100);
        a.append(created).await.unwrap();
    }
    // Due by 1,450 ms: g0..g4. Two servers claim at once and split them.
    let (x, y) = tokio::join!(
        a.claim(Claim::Overdue { due_ms: 1450 }, 1500, 5000, 100),
        b.claim(Claim::Overdue { due_ms: 1450 }, 1500, 5000, 100)
    );
    let mut both: Vec<String> = x.unwrap().into_iter().chain(y.unwrap()).collect();
    both.sort();
    assert_eq!(both, ["g0", "g1", "g2", "g3", "g4"]);
    // Claimed until 5,000 ms: nobody gets them again before then, then someone does.
    assert!(
        b.claim(Claim::Overdue { due_ms: 1450 }, 4999, 9000, 100)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        b.claim(Claim::Overdue { due_ms: 1450 }, 5000, 9000, 100)
            .await
            .unwrap()
            .len(),
        5
    );
    // An append moves the wake-up: g5, due now, is put off.
    let join = joined(&created(), 5);
    let mut moved = append("g5", 1, join);
    moved.wake_ms = Some(60_000);
    a.append(moved).await.unwrap();
    assert_eq!(
        a.claim(Claim::Overdue { due_ms: 1550 }, 5000, 9000, 100).await.unwrap(),
        Vec::<String>::new()
    );
    assert_eq!(
        a.claim(Claim::Overdue { due_ms: 1650 }, 5000, 9000, 1).await.unwrap(),
        ["g6"]
    );
}

/// Open games nobody joined are claimed by one server at a time once old enough.
#[tokio::test]
async fn postgres_stale_open_games_are_claimed_once() {
    let Some(url) = pg("open_claims").await else { return };
    let store = PgStore::open(&url).await.unwrap();
    for (id, created_ms, phase) in [
        ("old", 1000, Phase::WaitingForOpponent),
        ("new", 5000, Phase::WaitingForOpponent),
        ("playing", 1000, Phase::Playing),
    ] {
        let mut a = append(id, 0, created());
        a.now_ms = created_ms;
        a.summary.as_mut().unwrap().phase = phase;
        store.append(a).await.unwrap();
    }
    assert_eq!(
        store
            .claim(Claim::OpenSince { created_ms: 2000 }, 10, 100, 100)
            .await
            .unwrap(),
        ["old"]
    );
    assert!(
        store
            .claim(Claim::OpenSince { created_ms: 2000 }, 50, 100, 100)
            .await
            .unwrap()
            .is_empty()
    );
    let mut both = store
        .claim(Claim::OpenSince { created_ms: 9000 }, 100, 200, 100)
        .await
        .unwrap();
    both.sort();
    assert_eq!(both, ["new", "old"]);
}

/// A group of PostgreSQL appends that fails as a whole (here one request id PostgreSQL
/// cannot store) is tried append by append: only the bad one fails.
#[tokio::test]
async fn postgres_a_bad_append_fails_alone() {
    let Some(url) = pg("bad_append").await else { return };
    let store = PgStore::open(&url).await.unwrap();
    for i in 0..40 {
        store.append(append(&format!("g{i}"), 0, created())).await.unwrap();
    }
    let join = joined(&created(), 5);
    let mut tasks = Vec::new();
    for i in 0..40 {
        let (s, join) = (store.clone(), join.clone());
        tasks.push(tokio::spawn(async move {
            let mut a = append(&format!("g{i}"), 1, join);
            a.request_id = Some(if i == 7 { "nul\0".into() } else { format!("join-{i}") });
            s.append(a).await
        }));
    }
    for (i, t) in tasks.into_iter().enumerate() {
        match (i, t.await.unwrap()) {
            (7, Err(StoreError::Db(_))) => {}
            (7, other) => panic!("the bad append: {other:?}"),
            (_, r) => r.unwrap(),
        }
    }
    assert_eq!(store.load("g7").await.unwrap().unwrap().events.len(), 1);
    assert_eq!(store.load("g8").await.unwrap().unwrap().events.len(), 1 + join.len());
}

/// Phases stored by their protobuf names (before the store kept domain names) are
/// renamed when PostgreSQL is opened, and the shared lobby reads them as phases.
#[tokio::test]
async fn postgres_renames_protobuf_phase_names() {
    use sqlx::Connection;
    let Some(url) = pg("phase_names").await else { return };
    let store = PgStore::open(&url).await.unwrap();
    let mut open = append("legacy-open", 0, created());
    open.summary.as_mut().unwrap().phase = Phase::WaitingForOpponent;
    store.append(open).await.unwrap();
    store.append(append("legacy-playing", 0, created())).await.unwrap();
    let mut c = sqlx::PgConnection::connect(&url).await.unwrap();
    for (id, old) in [
        ("legacy-open", "PHASE_WAITING_FOR_OPPONENT"),
        ("legacy-playing", "PHASE_PLAYING"),
    ] {
        sqlx::query("UPDATE games SET phase = $1 WHERE game_id = $2")
            .bind(old)
            .bind(id)
            .execute(&mut c)
            .await
            .unwrap();
    }
    drop(store);
    let store = PgStore::open(&url).await.unwrap();
    let lobby = store.lobby(10).await.unwrap();
    let rows = |l: &[weiqi_store::LobbyRow]| l.iter().map(|r| (r.game_id.clone(), r.phase)).collect::<Vec<_>>();
    assert_eq!(
        rows(&lobby.open),
        [("legacy-open".to_string(), Phase::WaitingForOpponent)]
    );
    assert_eq!(rows(&lobby.playing), [("legacy-playing".to_string(), Phase::Playing)]);
    let names: Vec<String> = sqlx::query_scalar("SELECT phase FROM games ORDER BY game_id")
        .fetch_all(&mut c)
        .await
        .unwrap();
    assert_eq!(names, ["waiting_for_opponent", "playing"]);
}
