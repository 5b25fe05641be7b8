//! End-to-end: watching games on the real `weiqi serve` binary: reconnecting without a
//! gap, and streams that end with their clients.

mod support;
use std::time::Duration;
use support::*;
use tonic::transport::Channel;
use weiqi_proto::v1::game_service_client::GameServiceClient;

/// WatchGame: reconnecting with since_seq replays exactly what was missed.
#[tokio::test]
async fn watch_reconnects_without_missing_events() {
    let srv = Server::fresh("watch");
    let mut c = srv.client().await;
    let g = new_game(&mut c, 9, None).await;
    play(&mut c, &g, &g.black, 0, 0).await.unwrap();
    let mut w = watch(&mut c, &g.id, 0).await;
    let mut seen = Vec::new();
    while seen.len() < 5 {
        let item = w.message().await.unwrap().unwrap();
        seen.push(item.event.unwrap().seq);
    }
    drop(w);
    // Moves while disconnected.
    play(&mut c, &g, &g.white, 1, 0).await.unwrap();
    play(&mut c, &g, &g.black, 2, 0).await.unwrap();
    let last = *seen.last().unwrap();
    let mut w = watch(&mut c, &g.id, last).await;
    let target = state(&mut c, &g.id).await.seq;
    while *seen.last().unwrap() < target {
        let item = w.message().await.unwrap().unwrap();
        seen.push(item.event.unwrap().seq);
    }
    // And live events keep coming on the same stream.
    play(&mut c, &g, &g.white, 3, 0).await.unwrap();
    let live = w.message().await.unwrap().unwrap();
    let e = live.event.unwrap();
    assert_eq!(e.kind, "move_played");
    assert_eq!(live.state.unwrap().move_number, 4);
    seen.push(e.seq);
    assert_eq!(
        seen,
        (1..=seen.len() as u64).collect::<Vec<_>>(),
        "contiguous, no gaps, no repeats"
    );
}

/// Streams end when their clients go away, whatever the game does: watchers of a quiet
/// game that cancel their calls or close their connections stop being counted at once,
/// and the server's memory does not grow with them.
#[tokio::test]
async fn watch_streams_end_with_their_clients() {
    let srv = Server::fresh("dead-watchers");
    let mut c = srv.client().await;
    let g = new_game(&mut c, 9, None).await;
    play(&mut c, &g, &g.black, 2, 2).await.unwrap();
    let baseline = srv.metric("weiqi_open_streams").await;
    // One round: `n` watchers over `conns` connections of their own, each having read
    // the game's backlog; then half are cancelled (streams dropped on open connections)
    // and the other half lose their connections. The game stays quiet throughout.
    let round = |n: usize| {
        let addr = format!("http://{}", srv.addr);
        let id = g.id.clone();
        async move {
            let mut channels = Vec::new();
            let mut streams = Vec::new();
            for i in 0..n {
                if i % 10 == 0 {
                    channels.push(Channel::from_shared(addr.clone()).unwrap().connect().await.unwrap());
                }
                let mut client = GameServiceClient::new(channels.last().unwrap().clone());
                let mut s = watch(&mut client, &id, 0).await;
                assert!(s.message().await.unwrap().is_some(), "the backlog arrives");
                streams.push(s);
            }
            (channels, streams)
        }
    };
    let open = |target: f64| {
        let srv = &srv;
        async move {
            let started = std::time::Instant::now();
            loop {
                let now = srv.metric("weiqi_open_streams").await;
                if now == target || started.elapsed() > Duration::from_secs(3) {
                    return now;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    };
    let (channels, mut streams) = round(200).await;
    assert_eq!(open(baseline + 200.0).await, baseline + 200.0);
    // Cancelled: half the streams are dropped, their connections stay up.
    streams.truncate(100);
    assert_eq!(open(baseline + 100.0).await, baseline + 100.0, "cancelled streams end");
    // Connections closed (the clients' sockets go away with the last handle).
    drop(streams);
    drop(channels);
    assert_eq!(open(baseline).await, baseline, "streams of closed connections end");
    // Memory: after a first round has warmed the allocator, five more rounds of 300
    // watchers leave the server's resident memory where it was, give or take the
    // allocator's noise (-8..+2 MiB measured). Dead streams, each holding its task, its
    // channel and its buffered backlog (about 27 KiB), grew it 7-9 MiB a round: 37 MiB.
    let rss = || {
        let status = std::fs::read_to_string(format!("/proc/{}/status", srv.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .unwrap()
    };
    drop(round(300).await);
    assert_eq!(open(baseline).await, baseline);
    let warm = rss();
    for _ in 0..5 {
        drop(round(300).await);
        assert_eq!(open(baseline).await, baseline);
    }
    let grown = rss().saturating_sub(warm);
    assert!(
        grown < 16 * 1024,
        "resident memory grew by {grown} KiB over 1,500 dropped watchers"
    );
}
