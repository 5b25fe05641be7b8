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
        // (Items without an event tell of a seat's presence.)
        let Some(e) = item.event else { continue };
        seen.push(e.seq);
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
        // (Items without an event tell of a seat's presence.)
        let Some(e) = item.event else { continue };
        seen.push(e.seq);
    }
    // And live events keep coming on the same stream.
    play(&mut c, &g, &g.white, 3, 0).await.unwrap();
    let (e, live) = loop {
        let live = w.message().await.unwrap().unwrap();
        if let Some(e) = live.event {
            break (e, live.state.unwrap());
        }
    };
    assert_eq!(e.kind, "move_played");
    assert_eq!(live.move_number, 4);
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

/// A crowd of watchers with slow readers mixed in, under a game played as fast as it
/// goes: every watcher ends with every event once and in order, each the stored one. The
/// slow readers (connections whose HTTP/2 window holds about one item, read with a pause
/// after each) fall more than the game's channel behind and catch up from the log, as the
/// server's counter shows; no buffer grows for them. Half the crowd (and one slow
/// connection) watches through the spectators' listener (issue 50), whose runtime also
/// tells the game's watchers of each item: a thread of the server at nice 19.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crowd_with_slow_readers_sees_every_event_once_in_order() {
    use std::sync::Arc;
    use weiqi_proto::v1 as pb;
    let srv = Server::fresh_with(
        "crowd",
        &[
            ("WEIQI__LIMITS__WATCH_STREAMS_PER_CLIENT", "0"),
            ("WEIQI__SPECTATORS_LISTEN", "127.0.0.1:0"),
        ],
    );
    let spectators = srv.spectators.clone().expect("the spectators' listener");
    #[cfg(target_os = "linux")]
    assert_eq!(
        thread_nice(srv.child.id(), "weiqi-spectator"),
        Some(19),
        "the spectators' thread runs at the lowest priority"
    );
    let mut c = srv.client().await;
    let g = Arc::new(new_game(&mut c, 19, None).await);
    // The spectators' listener answers WatchGame and health alone: a call that could start a
    // timer or hold a game's lock at nice 19 is refused, naming the address to use.
    let mut at_spectators = GameServiceClient::connect(format!("http://{spectators}"))
        .await
        .unwrap();
    let refused = at_spectators
        .get_game(pb::GetGameRequest { game_id: g.id.clone() })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::Unimplemented, "{refused:?}");
    assert!(refused.message().contains("WatchGame only"), "{refused:?}");
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{spectators}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut health = tonic_health::pb::health_client::HealthClient::new(channel);
    let serving = health
        .check(tonic_health::pb::HealthCheckRequest::default())
        .await
        .unwrap()
        .into_inner()
        .status;
    assert_eq!(
        serving,
        tonic_health::pb::health_check_response::ServingStatus::Serving as i32
    );
    let endpoint = |addr: &str, window: Option<u32>| {
        tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
            .unwrap()
            .initial_stream_window_size(window)
    };
    // 400 watchers over 4 connections, 12 slow ones over 2 more; of each, half on the
    // players' listener and half on the spectators'.
    let mut fast_conns = Vec::new();
    let mut slow_conns = Vec::new();
    for addr in [&srv.addr, &spectators] {
        for _ in 0..2 {
            fast_conns.push(endpoint(addr, None).connect().await.unwrap());
        }
        slow_conns.push(endpoint(addr, Some(1000)).connect().await.unwrap());
    }
    // Black on rows 0, 4, 8, ..., White on rows 2, 6, ...: no stone is ever captured.
    let moves: Vec<(u32, u32)> = (0..160u32)
        .map(|k| {
            let i = k / 2;
            (i % 19, (i / 19) * 4 + (k % 2) * 2)
        })
        .collect();
    // The last event's number, known once play is over.
    let (final_tx, final_rx) = tokio::sync::watch::channel(None::<u64>);
    let open = |chan: Channel| {
        let id = g.id.clone();
        async move {
            let mut c = GameServiceClient::new(chan);
            watch(&mut c, &id, 0).await
        }
    };
    // Reads a stream until it has the last event (a slow reader pauses after each item).
    let read = |mut w: tonic::Streaming<pb::WatchGameResponse>, slow: bool| {
        let mut final_rx = final_rx.clone();
        tokio::spawn(async move {
            let mut seen: Vec<pb::Event> = Vec::new();
            let reading = async {
                loop {
                    let last = *final_rx.borrow_and_update();
                    if last.is_some_and(|l| seen.last().is_some_and(|e| e.seq >= l)) {
                        return;
                    }
                    tokio::select! {
                        item = w.message() => {
                            seen.extend(item.unwrap().unwrap().event);
                            if slow {
                                tokio::time::sleep(Duration::from_millis(40)).await;
                            }
                        }
                        _ = final_rx.changed() => {}
                    }
                }
            };
            tokio::time::timeout(Duration::from_secs(90), reading)
                .await
                .expect("a watcher did not get every event within 90 s");
            seen
        })
    };
    let mut fast = Vec::new();
    for k in 0..400 {
        fast.push(read(open(fast_conns[k % 4].clone()).await, false));
    }
    // Black's own stream, told by the players' herald (the others by the spectators').
    let black = watch_as(&mut GameServiceClient::new(fast_conns[0].clone()), &g.id, 0, &g.black).await;
    fast.push(read(black, false));
    let mut slow = Vec::new();
    for k in 0..12 {
        slow.push(read(open(slow_conns[k % 2].clone()).await, true));
    }
    let lagged_before = srv.metric("weiqi_watch_catch_ups_total").await;
    for (k, &(x, y)) in moves.iter().enumerate() {
        let token = if k % 2 == 0 { &g.black } else { &g.white };
        play(&mut c, &g, token, x, y).await.unwrap();
    }
    let stored = state(&mut c, &g.id).await.seq;
    final_tx.send(Some(stored)).unwrap();
    // Every event as stored: a replay from the start, read after play.
    let mut w = watch(&mut c, &g.id, 0).await;
    let mut log = Vec::new();
    while log.len() < stored as usize {
        log.extend(w.message().await.unwrap().unwrap().event);
    }
    drop(w);
    for (k, t) in fast.into_iter().chain(slow).enumerate() {
        let seen = t.await.unwrap();
        assert_eq!(seen.len(), log.len(), "watcher {k}: every event once");
        assert_eq!(seen, log, "watcher {k}: in order, each the stored one");
    }
    let lagged = srv.metric("weiqi_watch_catch_ups_total").await - lagged_before;
    assert!(lagged >= 1.0, "the slow readers fell behind and caught up ({lagged})");
    eprintln!("400 watchers and 12 slow ones, {stored} events: {lagged} catch-ups from the log");
}

/// The nice value of the thread of process `pid` whose name starts with `name` (the
/// kernel keeps 15 bytes of a thread's name), from `/proc`.
#[cfg(target_os = "linux")]
fn thread_nice(pid: u32, name: &str) -> Option<i64> {
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).ok()? {
        let task = task.ok()?.path();
        let comm = std::fs::read_to_string(task.join("comm")).ok()?;
        if comm.trim_end().starts_with(name) {
            // The fields after the name's closing parenthesis; nice is the 19th of the line.
            let stat = std::fs::read_to_string(task.join("stat")).ok()?;
            let rest = &stat[stat.rfind(')')? + 2..];
            return rest.split(' ').nth(16)?.parse().ok();
        }
    }
    None
}
