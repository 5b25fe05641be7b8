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
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use support::*;
use tokio::net::{TcpListener, TcpStream};
use tonic::Code;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_types::StatusExt;
use weiqi_proto::v1 as pb;

/// A TCP link to `upstream` that can be cut and mended.
struct Link {
    addr: String,
    cut: Arc<AtomicBool>,
    /// The forwarding tasks of the connections through it (aborted by a cut).
    conns: Arc<std::sync::Mutex<Vec<tokio::task::AbortHandle>>>,
}

impl Link {
    async fn new(upstream: String) -> Link {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let cut = Arc::new(AtomicBool::new(false));
        let conns = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (c, k) = (cut.clone(), conns.clone());
        tokio::spawn(async move {
            let mut held = Vec::new();
            loop {
                let Ok((mut down, _)) = listener.accept().await else {
                    return;
                };
                if c.load(Ordering::SeqCst) {
                    // Cut: the connection is accepted and never answered.
                    held.push(down);
                    continue;
                }
                held.clear();
                let upstream = upstream.clone();
                let task = tokio::spawn(async move {
                    if let Ok(mut up) = TcpStream::connect(&upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut down, &mut up).await;
                    }
                });
                k.lock().unwrap().push(task.abort_handle());
            }
        });
        Link { addr, cut, conns }
    }

    fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        for t in self.conns.lock().unwrap().drain(..) {
            t.abort();
        }
    }

    fn mend(&self) {
        self.cut.store(false, Ordering::SeqCst);
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
