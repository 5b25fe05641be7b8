//! The PostgreSQL store, for several replicas: the contract, and what only a shared store
//! does (claims, the shared lobby, grouped appends, renamed phases). Runs when
//! `WEIQI_TEST_POSTGRES_URL` names a database whose user may create databases (CI sets it,
//! with `WEIQI_REQUIRE_POSTGRES=1` so that a missing server fails instead of skipping).

mod contract;

use contract::*;
use weiqi_game::Phase;
use weiqi_store::{Claim, Cluster, EventLog, Liveness, PgStore, StoreError};

#[tokio::test]
async fn postgres_barrier_settles_cancelled_appends() {
    let Some(url) = pg("barrier").await else { return };
    barrier_settles_cancelled_appends_on(PgStore::open(&url).await.unwrap()).await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_players_and_ratings() {
    let Some(url) = pg("players").await else { return };
    players_on(PgStore::open(&url).await.unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_challenges_seeks_and_feeds() {
    let Some(url) = pg("matchmaking").await else { return };
    matchmaking_on(PgStore::open(&url).await.unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_tournaments_and_their_pairings() {
    let Some(url) = pg("tournaments").await else { return };
    tournaments_on(PgStore::open(&url).await.unwrap()).await;
}
