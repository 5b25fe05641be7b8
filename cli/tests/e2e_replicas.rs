//! End-to-end: several real `weiqi serve` replicas sharing one PostgreSQL database
//! (`WEIQI_TEST_POSTGRES_URL`; skipped without it unless `WEIQI_REQUIRE_POSTGRES` is set).

mod support;
use std::time::Duration;
use support::*;
use tonic::Code;
use weiqi_proto::v1 as pb;

/// A fresh PostgreSQL database for servers to share (`None`: PostgreSQL tests are off).
struct SharedDatabase {
    url: String,
    name: &'static str,
}

impl SharedDatabase {
    async fn new(name: &'static str) -> Option<SharedDatabase> {
        Some(SharedDatabase {
            url: pg(name).await?,
            name,
        })
    }

    /// Starts (or restarts) the server `replica` on the database, with a data folder of its own.
    fn replica(&self, replica: &str) -> Server {
        self.replica_with(replica, &[])
    }

    /// As [`SharedDatabase::replica`], with more settings.
    fn replica_with(&self, replica: &str, env: &[(&str, &str)]) -> Server {
        let dir = std::env::temp_dir().join(format!("weiqi-e2e-{}-pg-{}-{replica}", std::process::id(), self.name));
        let mut env = env.to_vec();
        env.push(("WEIQI__DATABASE_URL", self.url.as_str()));
        Server::start_with(dir, &env)
    }
}

/// Two replicas on one PostgreSQL database: a game created on one is played on the
/// other, each catching up with the other's moves before it answers, a spectator on one
/// sees the other's moves live, and the lobby lists every replica's games; when the first
/// replica crashes, the other goes on with every acknowledged move.
#[tokio::test]
async fn postgres_replicas_share_games() {
    let Some(db) = SharedDatabase::new("replicas").await else {
        return;
    };
    let (a, b) = (db.replica("a"), db.replica("b"));
    let (mut ca, mut cb) = (a.client().await, b.client().await);
    let g = new_game(&mut ca, 9, None).await;
    play(&mut ca, &g, &g.black, 4, 4).await.unwrap();
    // B loads the game from the database on first use, and plays on it.
    play(&mut cb, &g, &g.white, 3, 3).await.unwrap();
    assert_eq!(state(&mut cb, &g.id).await.move_number, 2);
    // A's copy is behind B's move: A catches up before it answers (a stale copy would say
    // "not your turn").
    assert_eq!(state(&mut ca, &g.id).await.move_number, 2);
    play(&mut ca, &g, &g.black, 5, 5).await.unwrap();
    // Commands do not read the database first: a copy that is behind finds out when its
    // command fails (here "not your turn", or a stale move number, or a conflicting
    // append) and runs it again on the game as stored.
    play(&mut cb, &g, &g.white, 7, 7).await.unwrap();
    let caught_up = a.metric("weiqi_catch_ups_total").await;
    let first = play_as(&mut ca, &g, &g.black, (1, 1), "pg-b", 4).await.unwrap();
    assert_eq!(a.metric("weiqi_catch_ups_total").await, caught_up + 1.0);
    assert_eq!(first.state.as_ref().unwrap().move_number, 5);
    // The same request retried through B (whose copy is now behind) gets the first
    // answer, and nothing is played twice.
    let again = play_as(&mut cb, &g, &g.black, (1, 1), "pg-b", 4).await.unwrap();
    assert_eq!(again.state, first.state);
    assert_eq!(again.events.len(), first.events.len());
    // A stale move number is still refused when it is stale in the database too, with the
    // current state attached.
    let stale = play_as(&mut cb, &g, &g.white, (2, 7), "pg-w", 4).await.unwrap_err();
    assert_eq!(
        (stale.code(), reason(&stale)),
        (Code::FailedPrecondition, "stale".into())
    );
    // A spectator on B sees A's next move live (B polls the games watched there).
    let seq = state(&mut cb, &g.id).await.seq;
    let mut watch = watch(&mut cb, &g.id, seq).await;
    play(&mut ca, &g, &g.white, 6, 6).await.unwrap();
    let seen = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if let Some(e) = watch.message().await.unwrap().unwrap().event {
                return e;
            }
        }
    })
    .await
    .expect("the move reaches a watcher on the other replica");
    assert_eq!(seen.point, pt(6, 6));
    // The lobby is every replica's: B lists an open game created on A, and the game in
    // play at its current move.
    let open = open_game(&mut ca).await;
    let lobby = cb
        .list_games(pb::ListGamesRequest::default())
        .await
        .unwrap()
        .into_inner();
    let ids = |l: &[pb::GameSummary]| l.iter().map(|s| s.game_id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&lobby.open), vec![open]);
    assert_eq!(ids(&lobby.playing), vec![g.id.clone()]);
    assert_eq!(lobby.playing[0].move_number, 6);
    assert_eq!(lobby.playing[0].phase, pb::Phase::Playing as i32);
    // A crashes; B has every acknowledged move and goes on.
    let _ = a.crash();
    let st = state(&mut cb, &g.id).await;
    assert_eq!(st.move_number, 6);
    play(&mut cb, &g, &g.black, 2, 2).await.unwrap();
    // A restarted replica recovers the game from the database too.
    let a = db.replica("a");
    let mut ca = a.client().await;
    let st = state(&mut ca, &g.id).await;
    assert_eq!((st.move_number, st.board), (7, state(&mut cb, &g.id).await.board));
}

/// With PostgreSQL, a game whose server is gone still ends on time: another replica,
/// which never held the game, claims it once its clock is overdue and ticks it.
#[tokio::test]
async fn postgres_overdue_game_of_a_crashed_replica_ends_on_time() {
    let Some(db) = SharedDatabase::new("overdue").await else {
        return;
    };
    let (a, b) = (db.replica("a"), db.replica("b"));
    let mut ca = a.client().await;
    let time = pb::TimeControl {
        kind: Some(pb::time_control::Kind::Absolute(pb::time_control::Absolute {
            main_ms: 300,
        })),
    };
    let g = new_game(&mut ca, 9, Some(time)).await;
    // Black's clock started at the join, just before this: the lateness below is measured
    // from no earlier than the game's own start (creating and joining on a loaded
    // PostgreSQL is not counted against the claim).
    let started = std::time::Instant::now();
    let _ = a.crash();
    // On A, the game would have ended when Black's 300 ms and the lag allowance (1 s) ran
    // out. B claims games half a second past that, looking four times a second.
    let on_its_own = Duration::from_millis(1300);
    let mut cb = b.client().await;
    let st = until_finished(&mut cb, &g.id, Duration::from_secs(20)).await;
    // Within about a second of the game's own end: 750 ms of claim grace and period, the
    // claim's and the test's round trips, and slack for a loaded machine. (The old
    // claims, 2 s late at the least, fail this.)
    let late = started.elapsed().saturating_sub(on_its_own);
    assert!(
        late < Duration::from_millis(1500),
        "ended {late:?} after its own deadline"
    );
    let r = st.result.unwrap();
    assert_eq!(
        (r.reason, r.winner),
        (pb::EndReason::Time as i32, pb::Color::White as i32)
    );
    assert!(st.black_clock.unwrap().flagged);
    assert_eq!(b.metric("weiqi_claims_total{kind=\"overdue\"}").await, 1.0);
    assert_eq!(b.metric("weiqi_games_finished_total").await, 1.0);
}

/// With PostgreSQL, an open game nobody joins is cancelled even when its server is gone:
/// another replica, which never held it, claims and cancels it once it is too old.
#[tokio::test]
async fn postgres_open_game_of_a_crashed_replica_expires() {
    let Some(db) = SharedDatabase::new("open_ttl").await else {
        return;
    };
    let ttl = [("WEIQI__OPEN_GAME_TTL_MS", "1500")];
    let (a, b) = (db.replica_with("a", &ttl), db.replica_with("b", &ttl));
    let mut ca = a.client().await;
    let open = open_game(&mut ca).await;
    let _ = a.crash();
    // B's lobby is read from the database (listing loads no game into B's memory).
    let mut cb = b.client().await;
    let started = std::time::Instant::now();
    loop {
        let lobby = cb
            .list_games(pb::ListGamesRequest::default())
            .await
            .unwrap()
            .into_inner();
        if lobby.open.is_empty() {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "still open: {lobby:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let st = state(&mut cb, &open).await;
    assert_eq!(st.phase, pb::Phase::Finished as i32);
    assert_eq!(st.result.unwrap().reason, pb::EndReason::Cancelled as i32);
    assert_eq!(b.metric("weiqi_claims_total{kind=\"open\"}").await, 1.0);
}
