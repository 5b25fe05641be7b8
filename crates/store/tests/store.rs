//! The embedded stores: the contract on SQLite and on `MemoryStore` (the reference), and
//! what only SQLite does (migrations, one writer per file, probes, the WAL).

mod contract;

use contract::*;
use weiqi_game::{Actor, Command, Event, Game};
use weiqi_store::{EventLog, Liveness, MemoryStore, SqliteStore, StoreError};

#[tokio::test]
async fn append_load_and_conflicts() {
    let (store, path) = open("basic").await;
    append_load_and_conflicts_on(store, async move |s| {
        drop(s);
        SqliteStore::open(&path).await.unwrap()
    })
    .await;
}

#[tokio::test]
async fn barrier_settles_cancelled_appends() {
    barrier_settles_cancelled_appends_on(open("barrier").await.0).await;
    barrier_settles_cancelled_appends_on(MemoryStore::new()).await;
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

/// `n` moves after `log` (a game both players joined), one every `gap` ms from `at`: the
/// player to move plays the board's points in turn, from the `first`-th up.
fn moves(log: &[Event], first: usize, n: usize, at: u64, gap: u64) -> Vec<(u64, Vec<Event>)> {
    let mut game = Game::from_events(log).unwrap();
    (first..first + n)
        .map(|k| {
            let color = game.to_move().expect("play is on");
            let actor = Actor::from(game.seat_of(color).expect("seated"));
            let point = weiqi_rules::Point::new((k % 9) as u8, (k / 9) as u8);
            let now = at + gap * (k - first) as u64;
            let events = game.decide(actor, &Command::Play { point, lag_ms: 0 }, now).unwrap();
            for e in &events {
                game.apply(e).unwrap();
            }
            (now, events)
        })
        .collect()
}

/// Rows of `table` in the database at `path`, read beside the open store.
async fn rows(path: &std::path::Path, table: &str) -> i64 {
    use sqlx::Connection;
    let mut c = sqlx::SqliteConnection::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    sqlx::query_scalar(&format!("SELECT count(*) FROM {table}"))
        .fetch_one(&mut c)
        .await
        .unwrap()
}

/// Games in quick play (their last appends less than 250 ms apart) write their events unindexed and
/// merge them into the indexed table in bulk; games at a human pace write theirs indexed
/// at once. Reads see every event in order before the merge, after it, and after a
/// restart (which merges what a stopped server left), the concurrency check holds for
/// events on either side (cached or looked up), and a store that closes merges first.
#[tokio::test]
async fn quick_games_merge_their_events_in_bulk() {
    let (store, path) = open("recent").await;
    let mut logs: Vec<Vec<Event>> = Vec::new();
    for (id, gap) in [("slow", 10_000), ("quick", 100)] {
        let mut log = created();
        store.append(at(append(id, 0, log.clone()), 0)).await.unwrap();
        let join = joined(&log, gap);
        store.append(at(append(id, 1, join.clone()), gap)).await.unwrap();
        log.extend(join);
        for (now, events) in moves(&log, 0, 6, 2 * gap, gap) {
            store
                .append(at(append(id, log.len() as u64, events.clone()), now))
                .await
                .unwrap();
            log.extend(events);
        }
        logs.push(log);
    }
    // The quick game's join came 100 ms after its creation, and each move 100 ms after
    // the one before: from the first move (two quick gaps in a row) its events wait in
    // `events_recent`. The slow game's did not.
    let quick_rows = (logs[1].len() - created().len() - joined(&created(), 0).len()) as i64;
    assert_eq!(rows(&path, "events_recent").await, quick_rows);
    for (id, log) in ["slow", "quick"].iter().zip(&logs) {
        assert_eq!(&store.load(id).await.unwrap().unwrap().events, log, "{id}");
    }
    // A quick game's next append is checked against the events not yet merged.
    let stale = at(append("quick", logs[1].len() as u64 - 1, Vec::new()), 2_000);
    assert!(matches!(store.append(stale).await, Err(StoreError::Conflict { .. })));
    // A merge runs after a commit once a second has passed (here a probe's commit).
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    store.probe(1, b"x").await.unwrap();
    store.barrier().await.unwrap();
    assert_eq!(rows(&path, "events_recent").await, 0);
    assert_eq!(rows(&path, "events").await, (logs[0].len() + logs[1].len()) as i64);
    for (id, log) in ["slow", "quick"].iter().zip(&logs) {
        assert_eq!(&store.load(id).await.unwrap().unwrap().events, log, "{id}");
    }
    // Two more quick moves, then a restart before they merge: they are read back from
    // the unindexed table after the restart, merged by the new writer, and the game goes on.
    let more = moves(&logs[1], 6, 3, 800, 100);
    for (now, events) in &more[..2] {
        let a = at(append("quick", logs[1].len() as u64, events.clone()), *now);
        store.append(a).await.unwrap();
        logs[1].extend(events.iter().cloned());
    }
    assert!(rows(&path, "events_recent").await > 0);
    drop(store);
    let store = SqliteStore::open(&path).await.unwrap();
    let unfinished = store.load_unfinished().await.unwrap();
    let quick = unfinished.iter().find(|g| g.game_id == "quick").expect("unfinished");
    assert_eq!(quick.events, logs[1]);
    let late = at(append("quick", logs[1].len() as u64 - 1, Vec::new()), 1_000);
    let r = store.append(late).await;
    assert!(matches!(r, Err(StoreError::Conflict { .. })), "{r:?}");
    let next = at(append("quick", logs[1].len() as u64, more[2].1.clone()), 1_000);
    store.append(next).await.unwrap();
    logs[1].extend(more[2].1.iter().cloned());
    assert_eq!(store.load("quick").await.unwrap().unwrap().events, logs[1]);
    assert_eq!(rows(&path, "events_recent").await, 0, "merged when the store opened");

    // A quick game that ends while its last events wait unmerged: the writer forgets a
    // finished game, so a late append looks it up, and must find its last event in the
    // unindexed table.
    let mut log = created();
    store.append(at(append("ended", 0, log.clone()), 5_000)).await.unwrap();
    let join = joined(&log, 5_100);
    store.append(at(append("ended", 1, join.clone()), 5_100)).await.unwrap();
    log.extend(join);
    let indexed = log.len() as u64;
    for (now, events) in moves(&log, 0, 3, 5_200, 100) {
        let a = at(append("ended", log.len() as u64, events.clone()), now);
        store.append(a).await.unwrap();
        log.extend(events);
    }
    let game = Game::from_events(&log).unwrap();
    let resigner = Actor::from(game.seat_of(game.to_move().unwrap()).unwrap());
    let resigned = game.decide(resigner, &Command::Resign, 5_500).unwrap();
    let mut end = at(append("ended", log.len() as u64, resigned.clone()), 5_500);
    end.summary.as_mut().unwrap().finished = true;
    store.append(end).await.unwrap();
    log.extend(resigned);
    assert!(
        rows(&path, "events_recent").await >= 2,
        "the last moves and the end wait"
    );
    // (At the length the indexed table alone shows: refused only if both are read.)
    let late = at(append("ended", indexed, Vec::new()), 5_600);
    let r = store.append(late).await;
    assert!(matches!(r, Err(StoreError::Conflict { .. })), "{r:?}");
    assert_eq!(store.load("ended").await.unwrap().unwrap().events, log);
    // Closing the store merges what waits (its writer, on the way out; not a later open).
    drop(store);
    let mut left = -1;
    for _ in 0..100 {
        left = rows(&path, "events_recent").await;
        if left == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(left, 0, "merged when the store closed");
}

/// `a` made at `now_ms`.
fn at(mut a: weiqi_store::Append, now_ms: u64) -> weiqi_store::Append {
    a.now_ms = now_ms;
    a
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
    // (Long enough for a few resets: a disk busy with other writes, as right after a
    // build, can hold a reset back to the writer's 3 s deadline.)
    let n2 = write_for(&store, "b", 8.0).await;
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

/// The accounts' contract on the reference store too (players, challenges, seeks, feeds,
/// pending ratings, tournaments).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_accounts_contract_holds_in_memory() {
    players_on(MemoryStore::new()).await;
    matchmaking_on(MemoryStore::new()).await;
    tournaments_on(MemoryStore::new()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn players_and_ratings() {
    let (store, _dir) = open("players").await;
    players_on(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn challenges_seeks_and_feeds() {
    let (store, _dir) = open("matchmaking").await;
    matchmaking_on(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tournaments_and_their_pairings() {
    let (store, _dir) = open("tournaments").await;
    tournaments_on(store).await;
}

/// Under load, group commits begin at most once per `commit_spacing`: a write right after
/// a commit began waits for the next one; after a quiet spell, a write commits at once.
#[tokio::test]
async fn commits_are_spaced_while_writes_keep_coming() {
    let dir = std::env::temp_dir().join(format!("weiqi-store-{}-spacing", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let spacing = weiqi_store::MAX_COMMIT_SPACING;
    let store = SqliteStore::open_with(&dir.join("db.sqlite3"), spacing).await.unwrap();
    let timed = async |ms: u64| {
        let t = std::time::Instant::now();
        store.probe(ms, b"x").await.unwrap();
        t.elapsed()
    };
    // Measured from before the first write: the second commit begins a spacing after the
    // first began, whatever either's disk sync took (the second write alone may take less
    // than a spacing when the first sync was slow).
    let start = std::time::Instant::now();
    let first = timed(1).await;
    timed(2).await;
    let both = start.elapsed();
    assert!(both >= spacing, "two writes in {both:?}");
    assert!(
        first < spacing,
        "the first write after opening waits for nothing: {first:?}"
    );
    tokio::time::sleep(spacing + std::time::Duration::from_millis(100)).await;
    let after_pause = timed(3).await;
    assert!(
        after_pause < spacing,
        "nor does one after a quiet spell: {after_pause:?}"
    );
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}
