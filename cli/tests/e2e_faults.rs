//! Faults as operators meet them (issue 49), through the real binaries: one replica cut
//! off from PostgreSQL while the other is not. The cut-off replica turns unready in the
//! health service, answers calls that need the database at once with UNAVAILABLE and a
//! RetryInfo (retryable, where it used to hang until the client's deadline), the game goes
//! on through the other replica, and when the link returns the replica is ready again,
//! catches up, and nothing acknowledged is lost or stored twice.
//!
//! The link is a TCP forwarder between the replica and the database that the test cuts
//! and mends: cutting resets the connections through it and leaves new ones unanswered,
//! as a partition does.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use support::*;
use tokio::net::{TcpListener, TcpStream};
use tonic::Code;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_types::StatusExt;
use weiqi_proto::v1 as pb;

/// What a [`Link`] does with the bytes and connections through it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Open,
    /// Bytes are held, not forwarded, on every connection old and new: a database paused
    /// (SIGSTOP), or a network that stopped delivering.
    Stalled,
    /// Every connection through it is reset, new ones are accepted and never answered: a
    /// partition.
    Cut,
    /// Every connection through it is reset, new ones closed at once: a database
    /// restarting.
    Down,
}

/// A TCP link to `upstream` that the test can stall, cut, take down and mend.
struct Link {
    addr: String,
    mode: tokio::sync::watch::Sender<Mode>,
    /// The forwarding tasks of the connections through it (aborted by a cut).
    conns: Arc<std::sync::Mutex<Vec<tokio::task::AbortHandle>>>,
}

/// Forwards `from` to `to`, holding the bytes while the link is stalled.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut mode: tokio::sync::watch::Receiver<Mode>,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buf = vec![0; 16 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if mode.wait_for(|m| *m != Mode::Stalled).await.is_err() || to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

impl Link {
    async fn new(upstream: String) -> Link {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let (mode, _) = tokio::sync::watch::channel(Mode::Open);
        let conns = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (m, k) = (mode.clone(), conns.clone());
        tokio::spawn(async move {
            let mut held = Vec::new();
            loop {
                let Ok((down, _)) = listener.accept().await else {
                    return;
                };
                match *m.borrow() {
                    Mode::Cut => {
                        held.push(down);
                        continue;
                    }
                    Mode::Down => continue,
                    Mode::Open | Mode::Stalled => held.clear(),
                }
                let (upstream, rx) = (upstream.clone(), m.subscribe());
                let task = tokio::spawn(async move {
                    let Ok(up) = TcpStream::connect(&upstream).await else {
                        return;
                    };
                    let ((dr, dw), (ur, uw)) = (down.into_split(), up.into_split());
                    tokio::join!(pump(dr, uw, rx.clone()), pump(ur, dw, rx));
                });
                k.lock().unwrap().push(task.abort_handle());
            }
        });
        Link { addr, mode, conns }
    }

    fn set(&self, mode: Mode) {
        self.mode.send_replace(mode);
        if matches!(mode, Mode::Cut | Mode::Down) {
            for t in self.conns.lock().unwrap().drain(..) {
                t.abort();
            }
        }
    }

    fn cut(&self) {
        self.set(Mode::Cut);
    }

    fn mend(&self) {
        self.set(Mode::Open);
    }
}

async fn readiness(server: &Server) -> ServingStatus {
    let channel = tonic::transport::Channel::from_shared(format!("http://{}", server.addr))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut h = HealthClient::new(channel);
    let r = h
        .check(tonic_health::pb::HealthCheckRequest {
            service: "weiqi.v1.GameService".into(),
        })
        .await
        .unwrap()
        .into_inner();
    ServingStatus::try_from(r.status).unwrap()
}

/// Polls readiness until it is `want`; how long that took.
async fn until_readiness(server: &Server, want: ServingStatus, within: Duration) -> Duration {
    let started = Instant::now();
    loop {
        if readiness(server).await == want {
            return started.elapsed();
        }
        assert!(started.elapsed() < within, "readiness not {want:?} within {within:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_cut_off_from_its_database_turns_unready_and_catches_up() {
    let Some(url) = pg("faults_partition").await else {
        return;
    };
    // postgres://user@host:port/db: replica A reaches it through the link.
    let (scheme_user, rest) = url.split_once('@').unwrap();
    let (host_port, db) = rest.split_once('/').unwrap();
    let link = Link::new(host_port.to_string()).await;
    let via_link = format!("{scheme_user}@{}/{db}", link.addr);
    let dir = |r: &str| std::env::temp_dir().join(format!("weiqi-e2e-{}-faults-{r}", std::process::id()));
    let a = Server::start_with(dir("a"), &[("WEIQI__DATABASE_URL", via_link.as_str())]);
    let b = Server::start_with(dir("b"), &[("WEIQI__DATABASE_URL", url.as_str())]);
    let (mut ca, mut cb) = (a.client().await, b.client().await);
    assert_eq!(readiness(&a).await, ServingStatus::Serving);

    // A game begun on A: two moves acknowledged there.
    let g = new_game(&mut ca, 9, None).await;
    play(&mut ca, &g, &g.black, 2, 2).await.unwrap();
    play(&mut ca, &g, &g.white, 6, 6).await.unwrap();

    link.cut();
    let unready = until_readiness(&a, ServingStatus::NotServing, Duration::from_secs(10)).await;
    eprintln!("A unready {unready:?} after the cut");
    // A call that needs the database fails at once, retryable, instead of hanging.
    let started = Instant::now();
    let mut req = tonic::Request::new(pb::CreateGameRequest::default());
    req.set_timeout(Duration::from_secs(20));
    let err = ca.create_game(req).await.unwrap_err();
    let took = started.elapsed();
    assert_eq!(err.code(), Code::Unavailable, "{err:?}");
    assert_eq!(reason(&err), "storage_unavailable");
    assert!(err.get_details_retry_info().is_some(), "RetryInfo: {err:?}");
    assert!(took < Duration::from_secs(5), "answered after {took:?}");
    // B is not cut off: the game goes on there.
    assert_eq!(readiness(&b).await, ServingStatus::Serving);
    play(&mut cb, &g, &g.black, 2, 6).await.unwrap();
    play(&mut cb, &g, &g.white, 6, 2).await.unwrap();

    link.mend();
    let ready = until_readiness(&a, ServingStatus::Serving, Duration::from_secs(10)).await;
    eprintln!("A ready again {ready:?} after the mend");
    // A catches up with B's moves and goes on.
    let st = play(&mut ca, &g, &g.black, 4, 4).await.unwrap().state.unwrap();
    assert_eq!(st.move_number, 5);
    // Every acknowledged move once, at its number, and the same log on both replicas.
    let (la, lb) = (log(&mut ca, &g.id, st.seq).await, log(&mut cb, &g.id, st.seq).await);
    assert_eq!(la, lb);
    let moves: Vec<(u32, u32)> = la
        .iter()
        .filter(|(_, kind, _)| kind == "move_played")
        .map(|(_, _, p)| p.unwrap())
        .collect();
    assert_eq!(moves, [(2, 2), (6, 6), (2, 6), (6, 2), (4, 4)]);
    let seqs: Vec<u64> = la.iter().map(|(seq, _, _)| *seq).collect();
    assert_eq!(seqs, (1..=st.seq).collect::<Vec<_>>(), "one event at each number");
}

/// A game's log as a replica replays it: (seq, kind, point) up to `last`.
async fn log(
    c: &mut weiqi_proto::v1::game_service_client::GameServiceClient<tonic::transport::Channel>,
    id: &str,
    last: u64,
) -> Vec<(u64, String, Option<(u32, u32)>)> {
    let mut stream = watch(c, id, 0).await;
    let mut out = Vec::new();
    while let Some(msg) = stream.message().await.unwrap() {
        let Some(e) = msg.event else { continue };
        out.push((e.seq, e.kind.clone(), e.point.map(|p| (p.x, p.y))));
        if e.seq >= last {
            break;
        }
    }
    out
}

/// A replica paused (SIGSTOP) while a client's calls on a shared connection time out and
/// are reset, then woken: the connection and its watch streams live on. (With h2's default
/// of 20 remotely reset streams pending accept, the woken server answered with
/// `GOAWAY too_many_resets` and every stream on the connection ended UNAVAILABLE.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_server_keeps_its_clients_connections() {
    let server = Server::fresh("faults-pause");
    // One connection for everything, as behind a proxy.
    let channel = tonic::transport::Channel::from_shared(format!("http://{}", server.addr))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut c = weiqi_proto::v1::game_service_client::GameServiceClient::new(channel.clone());
    let g = new_game(&mut c, 9, None).await;
    let mut watchers = Vec::new();
    for _ in 0..12 {
        watchers.push(watch(&mut c, &g.id, 0).await);
    }
    let pid = server.child.id().to_string();
    let signal = |sig: &str| {
        assert!(
            std::process::Command::new("kill")
                .args([sig, &pid])
                .status()
                .unwrap()
                .success()
        );
    };
    signal("-STOP");
    // Calls that give up while the server sleeps: each is reset by the client.
    let mut gave_up = Vec::new();
    for _ in 0..100 {
        let mut c = c.clone();
        let id = g.id.clone();
        gave_up.push(tokio::spawn(async move {
            let mut req = tonic::Request::new(pb::GetGameRequest { game_id: id });
            req.set_timeout(Duration::from_millis(200));
            c.get_game(req).await
        }));
    }
    for t in gave_up {
        assert!(t.await.unwrap().is_err(), "answered while stopped");
    }
    signal("-CONT");
    // The same connection serves on, and every watcher gets the next move.
    let st = play(&mut c, &g, &g.black, 4, 4).await.unwrap().state.unwrap();
    for (i, w) in watchers.iter_mut().enumerate() {
        loop {
            let msg = tokio::time::timeout(Duration::from_secs(10), w.message())
                .await
                .expect("a watcher waited in vain")
                .unwrap_or_else(|e| panic!("watcher {i} ended: {e:?}"))
                .unwrap_or_else(|| panic!("watcher {i} ended"));
            if msg.event.is_some_and(|e| e.seq >= st.seq) {
                break;
            }
        }
    }
}

/// What a game's player had acknowledged: each move's point, in order.
type Acked = Vec<(u32, u32)>;

/// An event as a reader saw it: (seq, kind, point).
type Seen = (u64, String, Option<(u32, u32)>);

/// A spectator of game `id` through whatever happens: reads its events, and when the
/// stream fails or ends, reads again from the last one it saw, until `stop`. Everything it
/// was sent, in order.
async fn watch_through_faults(
    mut c: weiqi_proto::v1::game_service_client::GameServiceClient<tonic::transport::Channel>,
    id: String,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> Vec<Seen> {
    let mut seen = Vec::new();
    let mut last = 0;
    while !*stop.borrow() {
        if let Ok(stream) = c
            .watch_game(pb::WatchGameRequest {
                game_id: id.clone(),
                since_seq: last,
            })
            .await
        {
            let mut stream = stream.into_inner();
            loop {
                tokio::select! {
                    msg = stream.message() => match msg {
                        Ok(Some(m)) => if let Some(e) = m.event {
                            last = last.max(e.seq);
                            seen.push((e.seq, e.kind, e.point.map(|p| (p.x, p.y))));
                        },
                        // Ended or failed: read again from the last event seen.
                        _ => break,
                    },
                    _ = stop.changed() => return seen,
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    seen
}

/// Plays `moves` moves in each of `games` games on `server` at once, as a careful client
/// does: every move with a request id and the move number it expects, tried again on a
/// retryable failure (the published policy's codes, and DEADLINE_EXCEEDED: the answer may
/// have been lost) until acknowledged, `think` between moves. Returns each game with its
/// acknowledged moves, what a spectator of it saw meanwhile ([`watch_through_faults`]),
/// the longest a move waited for its acknowledgement (the outage as players saw it) and
/// how many tries failed.
async fn play_under_load(
    server: &Server,
    games: usize,
    moves: u32,
    think: Duration,
) -> (Vec<(Game, Acked)>, Vec<Vec<Seen>>, Duration, u32) {
    let mut c = server.client().await;
    let mut tasks = Vec::new();
    for gi in 0..games {
        let g = new_game(&mut c, 9, None).await;
        let mut c = c.clone();
        tasks.push(tokio::spawn(async move {
            let (stop, stopped) = tokio::sync::watch::channel(false);
            let spectator = tokio::spawn(watch_through_faults(c.clone(), g.id.clone(), stopped));
            let mut acked = Vec::new();
            let (mut longest, mut failed) = (Duration::ZERO, 0);
            for n in 0..moves {
                // Distinct points, row by row: no captures, every move legal.
                let p = (n % 9, n / 9);
                let token = if n % 2 == 0 { &g.black } else { &g.white };
                let rid = format!("load-{gi}-{n}");
                let asked = Instant::now();
                loop {
                    let mut req = tonic::Request::new(pb::PlayRequest {
                        mutation: Some(pb::Mutation {
                            game_id: g.id.clone(),
                            request_id: rid.clone(),
                            expected_move_number: Some(n),
                            ..Default::default()
                        }),
                        point: pt(p.0, p.1),
                        lag_ms: 0,
                    });
                    req.set_timeout(Duration::from_secs(5));
                    let req = {
                        let mut r = req;
                        r.metadata_mut()
                            .insert("authorization", format!("Bearer {token}").parse().unwrap());
                        r
                    };
                    match c.play(req).await {
                        Ok(_) => break,
                        Err(s) if matches!(s.code(), Code::Unavailable | Code::DeadlineExceeded | Code::Cancelled) => {
                            failed += 1;
                            tokio::time::sleep(Duration::from_millis(100)).await;
                        }
                        Err(s) => panic!("game {gi} move {n}: {s:?}"),
                    }
                }
                acked.push(p);
                longest = longest.max(asked.elapsed());
                tokio::time::sleep(think).await;
            }
            // (The spectator catches up with the last move before it stops.)
            tokio::time::sleep(Duration::from_millis(300)).await;
            let _ = stop.send(true);
            (g, acked, spectator.await.unwrap(), longest, failed)
        }));
    }
    let (mut out, mut watched) = (Vec::new(), Vec::new());
    let (mut longest, mut failed) = (Duration::ZERO, 0);
    for t in tasks {
        let (g, acked, seen, l, f) = t.await.unwrap();
        longest = longest.max(l);
        failed += f;
        out.push((g, acked));
        watched.push(seen);
    }
    (out, watched, longest, failed)
}

/// Every acknowledged move is in the game's log once, at its number, and nothing else is;
/// and every event a spectator was sent is the stored one at its number (no reader saw
/// two different events at one sequence number).
async fn every_acked_move_stored_once(server: &Server, games: &[(Game, Acked)], watched: &[Vec<Seen>]) {
    let mut c = server.client().await;
    for (i, (g, acked)) in games.iter().enumerate() {
        let st = state(&mut c, &g.id).await;
        assert_eq!(st.move_number as usize, acked.len(), "game {}", g.id);
        let logged = log(&mut c, &g.id, st.seq).await;
        let seqs: Vec<u64> = logged.iter().map(|(seq, _, _)| *seq).collect();
        assert_eq!(seqs, (1..=st.seq).collect::<Vec<_>>(), "one event at each number");
        let moves: Vec<(u32, u32)> = logged
            .iter()
            .filter(|(_, kind, _)| kind == "move_played")
            .map(|(_, _, p)| p.unwrap())
            .collect();
        assert_eq!(&moves, acked, "game {}", g.id);
        if let Some(seen) = watched.get(i) {
            assert!(!seen.is_empty(), "the spectator of {} saw nothing", g.id);
            for e in seen {
                assert_eq!(
                    e,
                    &logged[e.0 as usize - 1],
                    "game {}: a reader saw another event",
                    g.id
                );
            }
        }
    }
}

/// PostgreSQL's backends killed three times under load (every connection of the server's
/// database terminated, as by an operator or a failover): the server answers UNAVAILABLE
/// meanwhile, clients retry with their request ids, and every acknowledged move is stored
/// once at its number.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_backends_killed_under_load_lose_nothing() {
    use sqlx::{Connection, Executor};
    let Some(url) = pg("faults_kill").await else { return };
    let dir = std::env::temp_dir().join(format!("weiqi-e2e-{}-faults-kill", std::process::id()));
    let server = Server::start_with(dir, &[("WEIQI__DATABASE_URL", url.as_str())]);
    let load = play_under_load(&server, 8, 80, Duration::from_millis(25));
    let kills = async {
        let mut admin = sqlx::PgConnection::connect(&url).await.unwrap();
        let mut killed = Vec::new();
        for _ in 0..3 {
            tokio::time::sleep(Duration::from_millis(400)).await;
            let rows = admin
                .fetch_all(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                     WHERE datname = current_database() AND pid <> pg_backend_pid()",
                )
                .await
                .unwrap();
            killed.push(rows.len());
        }
        killed
    };
    let ((games, watched, longest, failed), killed) = tokio::join!(load, kills);
    eprintln!("backends killed {killed:?} at a time: {failed} tries failed, the longest a move waited was {longest:?}");
    assert!(
        killed.iter().all(|&k| k > 0),
        "every kill found the server's connections: {killed:?}"
    );
    assert!(longest < Duration::from_secs(10), "recovered after {longest:?}");
    every_acked_move_stored_once(&server, &games, &watched).await;
}

/// PostgreSQL paused for 3 s under load (nothing it was sent is answered, new connections
/// hang), then restarted (every connection reset, new ones refused for a second), seen from
/// the server through a link: calls fail as retryable or wait, clients retry with their
/// request ids, the server is unready meanwhile, and every acknowledged move is stored once
/// at its number.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_paused_then_restarted_under_load_loses_nothing() {
    let Some(url) = pg("faults_pause").await else { return };
    let (scheme_user, rest) = url.split_once('@').unwrap();
    let (host_port, db) = rest.split_once('/').unwrap();
    let link = Link::new(host_port.to_string()).await;
    let via_link = format!("{scheme_user}@{}/{db}", link.addr);
    let dir = std::env::temp_dir().join(format!("weiqi-e2e-{}-faults-pgpause", std::process::id()));
    let server = Server::start_with(dir, &[("WEIQI__DATABASE_URL", via_link.as_str())]);
    let load = play_under_load(&server, 8, 80, Duration::from_millis(25));
    let faults = async {
        tokio::time::sleep(Duration::from_millis(400)).await;
        link.set(Mode::Stalled);
        let unready = until_readiness(&server, ServingStatus::NotServing, Duration::from_secs(10)).await;
        tokio::time::sleep(Duration::from_secs(3).saturating_sub(unready)).await;
        link.set(Mode::Open);
        let ready = until_readiness(&server, ServingStatus::Serving, Duration::from_secs(10)).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        link.set(Mode::Down);
        tokio::time::sleep(Duration::from_secs(1)).await;
        link.set(Mode::Open);
        (unready, ready)
    };
    let ((games, watched, longest, failed), (unready, ready)) = tokio::join!(load, faults);
    eprintln!(
        "paused 3 s then down 1 s: unready {unready:?} into the pause, ready {ready:?} after it; \
         {failed} tries failed, the longest a move waited was {longest:?}"
    );
    assert!(longest < Duration::from_secs(12), "recovered after {longest:?}");
    every_acked_move_stored_once(&server, &games, &watched).await;
}

/// The embedded SQLite store on a disk that takes no more writes (the server's file-size
/// limit lowered to 1 byte with prlimit, as a full disk or a quota would): calls that
/// write fail at once as UNAVAILABLE, the server turns unready and lives on; when the
/// space returns it is ready again, the same calls go through with their request ids, and
/// every acknowledged move is stored once at its number, also after a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_on_a_full_disk_fails_cleanly_and_comes_back() {
    let server = Server::fresh("faults-full");
    let pid = server.child.id().to_string();
    let prlimit = |fsize: &str| {
        let ok = std::process::Command::new("prlimit")
            .args(["--pid", &pid, &format!("--fsize={fsize}")])
            .status()
            .expect("prlimit (util-linux)")
            .success();
        assert!(ok, "prlimit --fsize={fsize}");
    };
    let (mut games, watched, _, _) = play_under_load(&server, 4, 10, Duration::ZERO).await;
    let mut c = server.client().await;

    // (The soft limit only: raising a hard one back needs CAP_SYS_RESOURCE.)
    prlimit("1:unlimited");
    let unready = until_readiness(&server, ServingStatus::NotServing, Duration::from_secs(10)).await;
    let (g, acked) = &mut games[0];
    let move_at = |n: u32| (n % 9, n / 9);
    let n = acked.len() as u32;
    let play = |c: &mut weiqi_proto::v1::game_service_client::GameServiceClient<tonic::transport::Channel>| {
        let mut c = c.clone();
        let (id, token) = (
            g.id.clone(),
            if n.is_multiple_of(2) {
                g.black.clone()
            } else {
                g.white.clone()
            },
        );
        async move {
            let mut req = authed(
                pb::PlayRequest {
                    mutation: Some(pb::Mutation {
                        game_id: id,
                        request_id: format!("full-{n}"),
                        expected_move_number: Some(n),
                        ..Default::default()
                    }),
                    point: pt(move_at(n).0, move_at(n).1),
                    lag_ms: 0,
                },
                &token,
            );
            req.set_timeout(Duration::from_secs(20));
            let started = Instant::now();
            (c.play(req).await, started.elapsed())
        }
    };
    let (refused, took) = play(&mut c).await;
    let err = refused.expect_err("a write on a full disk");
    assert_eq!(
        (err.code(), reason(&err).as_str()),
        (Code::Unavailable, "storage_unavailable"),
        "{err:?}"
    );
    assert!(took < Duration::from_secs(5), "answered after {took:?}");

    prlimit("unlimited:unlimited");
    let ready = until_readiness(&server, ServingStatus::Serving, Duration::from_secs(10)).await;
    let (done, _) = play(&mut c).await;
    done.expect("the same call once the space is back");
    acked.push(move_at(n));
    eprintln!(
        "full disk: unready {unready:?} after it filled, the refused write answered in {took:?}, ready {ready:?} after space returned"
    );
    every_acked_move_stored_once(&server, &games, &watched).await;
    let dir = server.crash();
    let server = Server::start(dir);
    every_acked_move_stored_once(&server, &games, &watched).await;
}
