//! The server's timers through the real binary (issue 43), many games at once: absent
//! players at a scheduled start forfeit on time with nobody calling, whatever the memory
//! settings, across a restart and when their replica dies; play starts at the scheduled
//! start, never before; a withheld step of the variant forfeits at the game's own
//! timeout, which a client can set and see.
//!
//! The defect these catch woke a game's timer at the last allowed millisecond of
//! lateness, where nothing was due yet, and never woke it again: whether a game ended
//! depended on where within a millisecond the timer fired, so it failed for some games of
//! every batch and not for others. Each batch here is dozens of games at once, with their
//! starts spread over a millisecond's fractions.

mod support;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use support::*;
use tonic::transport::Channel;
use weiqi_proto::v1 as pb;
use weiqi_proto::v1::game_service_client::GameServiceClient;

/// Games per batch.
const GAMES: usize = 40;
/// The allowed lateness of the batches' games.
const LATENESS_MS: u64 = 1_000;
/// How late after its forfeit was due a game may still be seen unfinished: the test's
/// own polling and a loaded machine. (The server's timer is due at the millisecond.)
const SLACK: Duration = Duration::from_millis(2_000);

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
}

fn scheduled(start_ms: u64) -> pb::GameSettings {
    pb::GameSettings {
        board_size: 9,
        time_control: Some(pb::TimeControl {
            kind: Some(pb::time_control::Kind::Absolute(pb::time_control::Absolute {
                main_ms: 600_000,
            })),
        }),
        scheduled_start_ms: Some(start_ms),
        max_lateness_ms: LATENESS_MS,
        ..Default::default()
    }
}

/// A scheduled game, created and joined: (game id, host token, guest token).
async fn scheduled_game(c: &mut GameServiceClient<Channel>, start_ms: u64) -> (String, String, String) {
    let (created, joined) = create_and_join(
        c,
        pb::CreateGameRequest {
            settings: Some(scheduled(start_ms)),
            ..Default::default()
        },
    )
    .await;
    let st = joined.state.unwrap();
    assert_eq!(st.phase, pb::Phase::Scheduled as i32);
    assert_eq!(st.forfeit_at_ms, Some((start_ms + LATENESS_MS + 1) as i64));
    (created.game_id, created.seat_token, joined.seat_token)
}

/// A batch of scheduled games starting `lead` from now, a millisecond's fraction apart;
/// in every third the host checks in (a single forfeit), the others nobody (a double
/// one). Returns each game with the result it must end with, and when its forfeit is due.
async fn batch(c: &mut GameServiceClient<Channel>, lead: Duration) -> (Vec<(String, pb::EndReason)>, u64) {
    let start = now_ms() + lead.as_millis() as u64;
    let mut games = Vec::new();
    let mut last_due = 0;
    for i in 0..GAMES {
        // Starts 0..3 ms apart: the timers fall at every fraction of a millisecond.
        let start = start + (i % 4) as u64;
        let (id, host, _) = scheduled_game(c, start).await;
        let want = if i % 3 == 0 {
            check_in(c, &id, &host).await;
            pb::EndReason::Forfeit
        } else {
            pb::EndReason::DoubleForfeit
        };
        last_due = last_due.max(start + LATENESS_MS + 1);
        games.push((id, want));
    }
    (games, last_due)
}

/// Every game of a batch ended as it must, none later than `SLACK` after the last was due;
/// every result is stamped at or after the game's own forfeit time.
async fn all_forfeited(c: &mut GameServiceClient<Channel>, games: &[(String, pb::EndReason)], due: u64, what: &str) {
    let wait = (due + SLACK.as_millis() as u64).saturating_sub(now_ms());
    tokio::time::sleep(Duration::from_millis(wait)).await;
    let mut unfinished = Vec::new();
    for (id, want) in games {
        let st = state(c, id).await;
        if st.phase != pb::Phase::Finished as i32 {
            unfinished.push(id.clone());
            continue;
        }
        let r = st.result.unwrap();
        assert_eq!(r.reason, *want as i32, "{what}: game {id}");
        if *want == pb::EndReason::Forfeit {
            assert_eq!(r.winner, pb::Color::Black as i32, "{what}: the host checked in");
        }
    }
    assert!(
        unfinished.is_empty(),
        "{what}: {} of {} games still unfinished {SLACK:?} after their forfeit was due: {unfinished:?}",
        unfinished.len(),
        games.len()
    );
}

/// C4: absent players forfeit on time with nobody calling, in every game of a batch, under
/// the default memory settings, with idle games evicted at once (`idle_evict_ms` 0 turns
/// eviction off; 1 evicts whatever it can), and with games packed at once or never.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn absent_players_forfeit_on_time_in_every_game() {
    let configs: [(&str, &[(&str, &str)]); 5] = [
        ("default", &[]),
        ("evict-off", &[("WEIQI__IDLE_EVICT_MS", "0")]),
        ("evict-at-once", &[("WEIQI__IDLE_EVICT_MS", "1")]),
        ("park-at-once", &[("WEIQI__PARK_AFTER_MS", "0")]),
        ("park-never", &[("WEIQI__PARK_AFTER_MS", "100000")]),
    ];
    for (name, env) in configs {
        let server = Server::fresh_with(&format!("timers-{name}"), env);
        let mut c = server.client().await;
        let (games, due) = batch(&mut c, Duration::from_millis(500)).await;
        all_forfeited(&mut c, &games, due, name).await;
    }
}

/// C4 across a restart: games whose forfeit fell due while the server was down end as
/// soon as it is back, and games due after it end on time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn absent_players_forfeit_across_a_restart() {
    let server = Server::fresh("timers-restart");
    let listen = server.addr.clone();
    let mut c = server.client().await;
    // Due while the server is down.
    let (down, due_down) = batch(&mut c, Duration::from_millis(300)).await;
    // Due after it is back.
    let start = now_ms() + 4_000;
    let (later, _, _) = scheduled_game(&mut c, start).await;
    let dir = server.crash();
    tokio::time::sleep(Duration::from_millis(due_down.saturating_sub(now_ms()) + 200)).await;
    let server = Server::start_on(dir, &listen, &[]);
    let mut c = server.client().await;
    all_forfeited(&mut c, &down, now_ms(), "due while down").await;
    all_forfeited(
        &mut c,
        &[(later, pb::EndReason::DoubleForfeit)],
        start + LATENESS_MS + 1,
        "due after the restart",
    )
    .await;
}

/// C4 with replicas: a scheduled game whose server died is forfeited by another replica,
/// which never held it, once its forfeit is overdue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn absent_players_forfeit_when_their_replica_dies() {
    let Some(url) = pg("timers_replica").await else { return };
    let dir = |r: &str| std::env::temp_dir().join(format!("weiqi-e2e-{}-timers-{r}", std::process::id()));
    let env = [("WEIQI__DATABASE_URL", url.as_str())];
    let a = Server::start_with(dir("a"), &env);
    let b = Server::start_with(dir("b"), &env);
    let mut ca = a.client().await;
    let (games, due) = batch(&mut ca, Duration::from_millis(500)).await;
    let _ = a.crash();
    let mut cb = b.client().await;
    // B claims overdue games half a second past their due time, four times a second.
    all_forfeited(&mut cb, &games, due + 750, "claimed by the other replica").await;
}

/// C4: two players who check in three seconds early do not start early. The game stays
/// scheduled, then play starts at the start by itself, stamped with it, and Black's clock
/// runs from the start, not from the second check-in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn play_starts_at_the_scheduled_start_not_before() {
    let server = Server::fresh("timers-start");
    let mut c = server.client().await;
    let start = now_ms() + 3_000;
    let games: Vec<_> = checked_in_early(start, &mut c).await;
    for (id, _, _) in &games {
        let st = state(&mut c, id).await;
        assert_eq!(st.phase, pb::Phase::Scheduled as i32, "checked in early: not started");
        assert_eq!(st.forfeit_at_ms, None, "both are present: nobody can forfeit");
    }
    tokio::time::sleep(Duration::from_millis((start + 500).saturating_sub(now_ms()))).await;
    for (id, _, _) in &games {
        let st = state(&mut c, id).await;
        assert_eq!(st.phase, pb::Phase::Playing as i32);
        // Black's clock ran from the start: about 500 ms used, not 3.5 s.
        let used = 600_000 - st.black_clock.unwrap().main_ms as i64;
        let since_start = st.server_time_ms - start as i64;
        assert_eq!(used, since_start, "game {id}: charged from the start");
        let started = replay(&mut c, id)
            .await
            .into_iter()
            .find(|e| e.kind == "play_started")
            .unwrap();
        assert_eq!(started.time_ms, start as i64, "stamped with the start");
    }
}

/// Ten scheduled games whose players both check in at once (three seconds early).
async fn checked_in_early(start: u64, c: &mut GameServiceClient<Channel>) -> Vec<(String, String, String)> {
    let mut games = Vec::new();
    for _ in 0..10 {
        let (id, host, guest) = scheduled_game(c, start).await;
        check_in(c, &id, &host).await;
        let st = check_in(c, &id, &guest).await;
        assert_eq!(st.phase, pb::Phase::Scheduled as i32);
        games.push((id, host, guest));
    }
    games
}

/// The game's events so far (a watch that is closed once they are replayed).
async fn replay(c: &mut GameServiceClient<Channel>, id: &str) -> Vec<pb::Event> {
    let seq = state(c, id).await.seq;
    let mut stream = c
        .watch_game(pb::WatchGameRequest {
            game_id: id.into(),
            since_seq: 0,
        })
        .await
        .unwrap()
        .into_inner();
    let mut events = Vec::new();
    while let Some(msg) = stream.message().await.unwrap() {
        let Some(e) = msg.event else { continue };
        let done = e.seq >= seq;
        events.push(e);
        if done {
            break;
        }
    }
    events
}

/// The variant (seed 002): a withheld seat stone forfeits at the game's own step timeout
/// (`nigiri_timeout_ms`, set here to 1.5 s; 5 minutes unless set), shown beforehand in
/// `forfeit_at_ms`; the settings echo it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_withheld_variant_step_forfeits_at_the_games_timeout() {
    let server = Server::fresh("timers-variant");
    let mut c = server.client().await;
    let settings = |timeout: Option<u64>| pb::GameSettings {
        board_size: 9,
        free_seats: Some(pb::FreeSeats::default()),
        nigiri_timeout_ms: timeout,
        ..Default::default()
    };
    let (_, joined) = create_and_join(
        &mut c,
        pb::CreateGameRequest {
            settings: Some(settings(None)),
            ..Default::default()
        },
    )
    .await;
    let st = joined.state.unwrap();
    assert_eq!(
        st.settings.unwrap().nigiri_timeout_ms,
        Some(300_000),
        "the default: 5 minutes"
    );

    let mut games = Vec::new();
    for _ in 0..10 {
        let (_, joined) = create_and_join(
            &mut c,
            pb::CreateGameRequest {
                settings: Some(settings(Some(1_500))),
                ..Default::default()
            },
        )
        .await;
        let st = joined.state.unwrap();
        assert_eq!(st.phase, pb::Phase::SeatStones as i32);
        let due = st.forfeit_at_ms.expect("a countdown");
        assert_eq!(due - st.server_time_ms, 1_500, "due the timeout after the join");
        games.push((st.game_id, due as u64));
    }
    let due = games.iter().map(|(_, d)| *d).max().unwrap();
    tokio::time::sleep(Duration::from_millis(
        due.saturating_sub(now_ms()) + SLACK.as_millis() as u64,
    ))
    .await;
    for (id, _) in &games {
        let st = state(&mut c, id).await;
        assert_eq!(st.phase, pb::Phase::Finished as i32, "game {id}");
        let r = st.result.unwrap();
        // The host owed Black's first seat stone: the guest takes Black and wins.
        assert_eq!(
            (r.reason, r.winner),
            (pb::EndReason::Forfeit as i32, pb::Color::Black as i32)
        );
        assert_eq!(st.black_seat, pb::Seat::Guest as i32);
    }
}
