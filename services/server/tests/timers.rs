//! Server-side clocks with paused tokio time: a game ends on time when nobody sends
//! anything, exactly at the deadline; byo-yomi calls arrive as events.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use weiqi_game::{LagComp, Settings, TimeControl};
use weiqi_proto::v1 as pb;
use weiqi_server::hub::{GameView, Hub};
use weiqi_server::metrics::Metrics;
use weiqi_store::MemoryStore;

/// The in-memory store does no IO, so paused time only moves when every task sleeps.
/// (SQLite's worker thread would let it jump hours ahead during a write.)
async fn hub() -> (Arc<Hub<MemoryStore>>, watch::Sender<bool>) {
    let (tx, rx) = watch::channel(false);
    (
        Arc::new(Hub::new(MemoryStore::new(), vec![7; 32], Metrics::new(), rx)),
        tx,
    )
}

async fn get(h: &Arc<Hub<MemoryStore>>, id: &str) -> pb::GameState {
    let mut e = h.lock(id).await.unwrap();
    weiqi_server::convert::view_to(&GameView::of(id, e.game.get(), h.time.now_ms()))
}

/// Polls while storage I/O completes (paused time advances whenever the runtime idles).
async fn settle(h: &Arc<Hub<MemoryStore>>, id: &str, phase: pb::Phase) -> pb::GameState {
    for _ in 0..1000 {
        let st = get(h, id).await;
        if st.phase == phase as i32 {
            return st;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    panic!("never reached {phase:?}");
}

#[tokio::test(start_paused = true)]
async fn game_ends_on_time_without_any_request() {
    let (h, _stop) = hub().await;
    let mut s = Settings::casual(9);
    s.time = TimeControl::Absolute { main_ms: 600_000 };
    s.lag = LagComp::OFF;
    let id = h.create(s, None, None, "").await.unwrap().game_id;
    h.join(&id, None, None, "").await.unwrap();
    let started = h.stored_log(&id).await.unwrap().last().unwrap().at;
    let deadline = started + 600_000;
    tokio::time::sleep(Duration::from_millis(deadline - 1 - h.time.now_ms())).await;
    assert_eq!(h.time.now_ms(), deadline - 1);
    assert_eq!(
        get(&h, &id).await.phase,
        pb::Phase::Playing as i32,
        "not a millisecond early"
    );
    tokio::time::sleep(Duration::from_millis(1)).await;
    let st = settle(&h, &id, pb::Phase::Finished).await;
    let r = st.result.unwrap();
    assert_eq!(
        (r.reason, r.winner),
        (pb::EndReason::Time as i32, pb::Color::White as i32)
    );
    // The timeout event is stamped exactly at the deadline.
    assert_eq!(h.stored_log(&id).await.unwrap().last().unwrap().at, started + 600_000);
}

#[tokio::test(start_paused = true)]
async fn byo_yomi_calls_are_events() {
    let (h, _stop) = hub().await;
    let mut s = Settings::casual(9);
    s.time = TimeControl::chinese(0, 1);
    s.lag = LagComp::OFF;
    let id = h.create(s, None, None, "").await.unwrap().game_id;
    h.join(&id, None, None, "").await.unwrap();
    tokio::time::sleep(Duration::from_secs(61)).await;
    settle(&h, &id, pb::Phase::Finished).await;
    let calls: Vec<String> = h
        .stored_log(&id)
        .await
        .unwrap()
        .iter()
        .filter_map(|ev| match &ev.kind {
            weiqi_game::EventKind::Announcement { seconds, count, .. } => Some(match count {
                Some(c) => c.to_string(),
                None => format!("{seconds}s"),
            }),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        ["30s", "40s", "50s", "1", "2", "3", "4", "5", "6", "7", "8", "9"]
    );
}

/// Memory: a game in play without a clock, untouched for the idle time, leaves memory but
/// not the store; the next call that names it brings it back where it was. Open games
/// (the lobby) and timed games stay.
#[tokio::test(start_paused = true)]
async fn idle_games_leave_memory_and_come_back() {
    let (h, _stop) = hub().await;
    let idle = h.create(Settings::casual(9), None, None, "").await.unwrap().game_id;
    h.join(&idle, None, None, "").await.unwrap();
    let open = h.create(Settings::casual(9), None, None, "").await.unwrap().game_id;
    let mut timed = Settings::casual(9);
    timed.time = TimeControl::Absolute { main_ms: 3_600_000 };
    let clocked = h.create(timed, None, None, "").await.unwrap().game_id;
    h.join(&clocked, None, None, "").await.unwrap();
    let before = get(&h, &idle).await;

    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(h.evict_idle(600_000), 0, "not idle long enough");
    tokio::time::sleep(Duration::from_secs(600)).await;
    assert_eq!(h.evict_idle(600_000), 1);
    let mut ids = h.game_ids();
    ids.sort();
    let mut want = vec![open.clone(), clocked.clone()];
    want.sort();
    assert_eq!(ids, want);

    // Loaded again on demand, unchanged, and kept in memory again.
    let after = get(&h, &idle).await;
    assert_eq!(after.seq, before.seq);
    assert_eq!(after.phase, pb::Phase::Playing as i32);
    assert_eq!(after.board, before.board);
    assert!(h.game_ids().contains(&idle));
}

/// C1: a host that withholds the nigiri reveal forfeits when the nigiri timeout passes,
/// with no request from anyone.
#[tokio::test(start_paused = true)]
async fn withheld_nigiri_reveal_forfeits() {
    let (h, _stop) = hub().await;
    let mut s = Settings::casual(9);
    s.colors = weiqi_game::ColorChoice::Nigiri;
    let timeout = s.nigiri_timeout_ms;
    let commitment = weiqi_game::nigiri_commitment(3, "n");
    let id = h.create(s, Some(commitment), None, "").await.unwrap().game_id;
    h.join(&id, Some(weiqi_game::Parity::Even), None, "").await.unwrap();
    assert_eq!(get(&h, &id).await.phase, pb::Phase::Nigiri as i32);
    tokio::time::sleep(Duration::from_millis(timeout - 1)).await;
    assert_eq!(get(&h, &id).await.phase, pb::Phase::Nigiri as i32, "not early");
    tokio::time::sleep(Duration::from_millis(2)).await;
    let st = settle(&h, &id, pb::Phase::Finished).await;
    let r = st.result.unwrap();
    // The guest takes Black and wins by forfeit.
    assert_eq!(
        (r.reason, r.winner, st.black_seat),
        (
            pb::EndReason::Forfeit as i32,
            pb::Color::Black as i32,
            pb::Seat::Guest as i32
        )
    );
}

/// Open games nobody joins within the TTL are cancelled by the server's sweep (and leave
/// memory and the lobby); a game created later, or joined, is kept.
#[tokio::test(start_paused = true)]
async fn open_games_nobody_joins_are_cancelled() {
    let (h, _stop) = hub().await;
    let ttl = 3_600_000;
    tokio::spawn(h.clone().open_ttl_loop(ttl));
    let old = h.create(Settings::casual(9), None, None, "").await.unwrap().game_id;
    let joined = h.create(Settings::casual(9), None, None, "").await.unwrap().game_id;
    h.join(&joined, None, None, "").await.unwrap();
    tokio::time::sleep(Duration::from_millis(ttl / 2)).await;
    let young = h.create(Settings::casual(9), None, None, "").await.unwrap().game_id;
    tokio::time::sleep(Duration::from_millis(ttl / 2 + 60_000)).await;

    let st = settle(&h, &old, pb::Phase::Finished).await;
    assert_eq!(st.result.unwrap().reason, pb::EndReason::Cancelled as i32);
    let lobby = h.lobby(10).await.unwrap();
    let open: Vec<&str> = lobby.open.iter().map(|r| r.game_id.as_str()).collect();
    let playing: Vec<&str> = lobby.playing.iter().map(|r| r.game_id.as_str()).collect();
    assert_eq!((open, playing), (vec![young.as_str()], vec![joined.as_str()]));
    assert!(!h.game_ids().contains(&old), "a cancelled game leaves memory");
}
