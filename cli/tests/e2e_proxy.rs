//! Three replicas on one PostgreSQL behind a real nginx that routes by game
//! (`deploy/nginx/weiqi.conf`): games play through the proxy, one replica is killed with
//! SIGKILL under load, its games go on through the others, and no acknowledged move is
//! lost (every game read back). Needs nginx (Debian's `nginx-light`): skipped without it,
//! unless `WEIQI_REQUIRE_PROXY=1` (as CI sets).

mod support;

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand::rngs::SmallRng;
use support::*;
use tonic::Code;
use tonic::metadata::MetadataValue;
use tonic::transport::Channel;
use weiqi_proto::v1 as pb;
use weiqi_proto::v1::game_service_client::GameServiceClient;
use weiqi_rules::{Move, Policy, Rules, State};

fn nginx() -> Option<String> {
    let found = [
        "/usr/sbin/nginx",
        "/usr/local/sbin/nginx",
        "/usr/local/nginx/sbin/nginx",
    ]
    .into_iter()
    .find(|p| std::path::Path::new(p).exists())
    .map(String::from);
    if found.is_none() {
        assert!(
            std::env::var_os("WEIQI_REQUIRE_PROXY").is_none(),
            "WEIQI_REQUIRE_PROXY is set but nginx is not installed"
        );
        eprintln!("skipped: install nginx to run the proxy test");
    }
    found
}

struct Proxy {
    child: Child,
    addr: String,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        // TERM, not KILL: the master then stops its workers (a killed master leaves them).
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// nginx with the shipped configuration, its upstreams replaced by `replicas` and its
/// spectators' upstream by `spectators` (the replicas' spectators' listeners).
fn start_proxy(bin: &str, replicas: &[&str], spectators: &[&str]) -> Proxy {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // A folder of its own: the tests of this file run at once, each with its nginx.
    let dir = std::env::temp_dir().join(format!("weiqi-e2e-{}-nginx-{port}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("logs")).unwrap();
    let shipped = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../deploy/nginx/weiqi.conf")).unwrap();
    let mut http = String::new();
    let (mut replaced, mut spectators_replaced) = (false, false);
    for line in shipped.lines() {
        let t = line.trim_start();
        for (prefix, done, list) in [
            ("server 127.0.0.1:5005", &mut replaced, replicas),
            ("server 127.0.0.1:5006", &mut spectators_replaced, spectators),
        ] {
            if t.starts_with(prefix) && !*done {
                for r in list {
                    http.push_str(&format!("    server {r} max_fails=1 fail_timeout=10s;\n"));
                }
                *done = true;
            }
        }
        if t.starts_with("server 127.0.0.1:500") {
            continue;
        }
        http.push_str(&line.replace("listen 50050 http2", &format!("listen 127.0.0.1:{port} http2")));
        http.push('\n');
    }
    assert!(
        replaced && spectators_replaced,
        "the shipped configuration lists its upstreams"
    );
    let conf = format!(
        "daemon off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log stderr warn;\n\
         events {{ worker_connections 4096; }}\n\
         http {{\n access_log off;\n client_body_temp_path {d}/body;\n proxy_temp_path {d}/proxy;\n\
         fastcgi_temp_path {d}/fastcgi;\n uwsgi_temp_path {d}/uwsgi;\n scgi_temp_path {d}/scgi;\n{http}}}\n",
        d = dir.display()
    );
    let path = dir.join("nginx.conf");
    std::fs::write(&path, conf).unwrap();
    let child = Command::new(bin)
        .arg("-p")
        .arg(&dir)
        .arg("-c")
        .arg(&path)
        .arg("-e")
        .arg("stderr")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn nginx");
    let addr = format!("127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(&addr).is_err() {
        assert!(Instant::now() < deadline, "nginx did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    Proxy { child, addr }
}

/// A request with the header the proxy routes by: the game's id.
fn with_route<T>(mut r: tonic::Request<T>, game: &str) -> tonic::Request<T> {
    r.metadata_mut()
        .insert("x-weiqi-game", MetadataValue::try_from(game).unwrap());
    r
}

/// A call about `game` with no credential, routed by the proxy.
fn about<T>(msg: T, game: &str) -> tonic::Request<T> {
    with_route(tonic::Request::new(msg), game)
}

/// A seat's call about `game`, routed by the proxy.
fn routed<T>(msg: T, game: &str, token: &str) -> tonic::Request<T> {
    with_route(authed(msg, token), game)
}

/// A game created through the proxy (on any replica) and joined on its own replica: its
/// id and its seats' tokens, host first.
async fn new_routed_game(
    c: &mut GameServiceClient<Channel>,
    settings: pb::GameSettings,
) -> Result<(String, [String; 2]), tonic::Status> {
    let created = c
        .create_game(pb::CreateGameRequest {
            settings: Some(settings),
            ..Default::default()
        })
        .await?
        .into_inner();
    let id = created.game_id;
    let join = about(
        pb::JoinGameRequest {
            game_id: id.clone(),
            ..Default::default()
        },
        &id,
    );
    let joined = c.join_game(join).await?.into_inner();
    Ok((id, [created.seat_token, joined.seat_token]))
}

/// Games played one after another through the proxy until `stop`. (A 19x19 game of
/// random moves ends after about 450 moves, a few seconds at full speed: one game per task
/// could end before the kill, leaving nothing to go on after it.)
async fn play(c: Channel, task: u64, stop: Arc<AtomicBool>, moves: Arc<AtomicU64>) -> Vec<(String, State)> {
    let mut played = Vec::new();
    for k in 0.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        match play_game(c.clone(), task * 1000 + k, stop.clone(), moves.clone()).await {
            Some(game) => played.push(game),
            // Set-up failed (its replica was just killed): no move of it was acknowledged.
            None => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    played
}

/// One game played through the proxy until it ends or `stop`: random legal moves for both
/// seats, each retried with its request id until answered (a killed replica's calls fail,
/// and the retry reaches another). Returns the game and the moves acknowledged, or `None`
/// when the game could not be created and joined.
async fn play_game(c: Channel, seed: u64, stop: Arc<AtomicBool>, moves: Arc<AtomicU64>) -> Option<(String, State)> {
    let mut c = GameServiceClient::new(c);
    let settings = pb::GameSettings {
        board_size: 19,
        komi: Some(7.5),
        color_choice: pb::ColorChoice::HostBlack as i32,
        ..Default::default()
    };
    let (id, tokens) = new_routed_game(&mut c, settings).await.ok()?;
    let mut state = State::new(19, Rules::default()).unwrap();
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut k = 0;
    while !stop.load(Ordering::Relaxed) {
        let mv = state.choose_random(Policy::Light, &mut rng);
        let Move::Place(p) = mv else { break };
        let seat = state.to_move().index();
        k += 1;
        let rid = format!("{seed}-{k}");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let req = pb::PlayRequest {
                mutation: Some(pb::Mutation {
                    game_id: id.clone(),
                    request_id: rid.clone(),
                    expected_move_number: Some(state.move_number() as u32),
                    ..Default::default()
                }),
                point: pt(p.x.into(), p.y.into()),
                lag_ms: 0,
            };
            match c.play(routed(req, &id, &tokens[seat])).await {
                Ok(_) => break,
                Err(e) => {
                    assert!(Instant::now() < deadline, "move {k} of {id} never answered: {e:?}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
        state.play(mv).unwrap();
        moves.fetch_add(1, Ordering::Relaxed);
    }
    Some((id, state))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_killed_under_load_behind_the_proxy_loses_no_move() {
    let Some(bin) = nginx() else { return };
    let Some(url) = pg("proxy").await else { return };
    let replica = |k: usize| {
        let dir = std::env::temp_dir().join(format!("weiqi-e2e-{}-proxy-{k}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Server::start_with(dir, &[("WEIQI__DATABASE_URL", url.as_str())])
    };
    let mut replicas: Vec<Option<Server>> = (0..3).map(|k| Some(replica(k))).collect();
    let addrs: Vec<String> = replicas.iter().map(|r| r.as_ref().unwrap().addr.clone()).collect();
    let addrs: Vec<&str> = addrs.iter().map(String::as_str).collect();
    // (Spectators, none here, would watch through the players' listeners.)
    let proxy = start_proxy(&bin, &addrs, &addrs);
    let channel = Channel::from_shared(format!("http://{}", proxy.addr))
        .unwrap()
        .connect()
        .await
        .unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let moves = Arc::new(AtomicU64::new(0));
    let games: Vec<_> = (0..24)
        .map(|g| tokio::spawn(play(channel.clone(), g, stop.clone(), moves.clone())))
        .collect();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let before = moves.load(Ordering::Relaxed);
    // SIGKILL one replica under load.
    let killed = replicas[1].take().unwrap();
    let t_kill = Instant::now();
    let _ = killed.crash();
    // Moves in each second after the kill (the failover stalls play for a few seconds).
    let mut per_second = Vec::new();
    let mut last = before;
    for _ in 0..4 {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let now = moves.load(Ordering::Relaxed);
        per_second.push(now - last);
        last = now;
    }
    eprintln!("moves in each second after the kill: {per_second:?}");
    let after = moves.load(Ordering::Relaxed) - before;
    stop.store(true, Ordering::Relaxed);
    let mut played = Vec::new();
    for g in games {
        played.extend(g.await.unwrap());
    }
    eprintln!(
        "through nginx: {:.0} moves/s before the kill, {:.0} moves/s in the {:.1} s after it",
        before as f64 / 3.0,
        after as f64 / t_kill.elapsed().as_secs_f64(),
        t_kill.elapsed().as_secs_f64()
    );
    assert!(after > 0, "play went on after the kill");
    // Every acknowledged move is there, read back through the proxy.
    let mut c = GameServiceClient::new(channel);
    for (id, state) in &played {
        // (Read as a client does: a connection the proxy closed while the killed replica's
        // connections were being cleaned up is tried again, as the retry policy says.)
        let mut tries = 0;
        let s = loop {
            let req = about(pb::GetGameRequest { game_id: id.clone() }, id);
            match c.get_game(req).await {
                Ok(r) => break r.into_inner().state.unwrap(),
                Err(e) if tries < 5 && matches!(e.code(), Code::Cancelled | Code::Unavailable | Code::Unknown) => {
                    tries += 1;
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Err(e) => panic!("game {id}: {e:?}"),
            }
        };
        assert_eq!(s.move_number as usize, state.move_number(), "game {id}");
        let rows: Vec<String> = (0..19)
            .map(|y| {
                (0..19)
                    .map(|x| match state.board().get(weiqi_rules::Point::new(x, y)) {
                        Some(weiqi_rules::Color::Black) => 'x',
                        Some(weiqi_rules::Color::White) => 'o',
                        None => '.',
                    })
                    .collect()
            })
            .collect();
        assert_eq!(s.board, rows, "game {id}");
    }
    drop(proxy);
}

/// Spectators (WatchGame without a seat's credential) spread over the replicas behind the
/// proxy, through their spectators' listeners, each replica following the game through the
/// database, while the players' calls go to the game's replica; every spectator gets every
/// move once and in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spectators_spread_over_the_replicas_and_each_sees_every_move() {
    let Some(bin) = nginx() else { return };
    let Some(url) = pg("proxy_spectators").await else {
        return;
    };
    let replicas: Vec<Server> = (0..3)
        .map(|k| {
            let dir = std::env::temp_dir().join(format!("weiqi-e2e-{}-spectators-{k}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            Server::start_with(
                dir,
                &[
                    ("WEIQI__DATABASE_URL", url.as_str()),
                    ("WEIQI__LIMITS__WATCH_STREAMS_PER_CLIENT", "0"),
                    ("WEIQI__SPECTATORS_LISTEN", "127.0.0.1:0"),
                ],
            )
        })
        .collect();
    let addrs: Vec<&str> = replicas.iter().map(|r| r.addr.as_str()).collect();
    let spectators: Vec<&str> = replicas.iter().map(|r| r.spectators.as_deref().unwrap()).collect();
    let proxy = start_proxy(&bin, &addrs, &spectators);
    let channel = Channel::from_shared(format!("http://{}", proxy.addr))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut c = GameServiceClient::new(channel.clone());
    let settings = pb::GameSettings {
        board_size: 9,
        color_choice: pb::ColorChoice::HostBlack as i32,
        ..Default::default()
    };
    let (id, tokens) = new_routed_game(&mut c, settings).await.unwrap();
    // 60 spectators, each call routed on its own by the proxy.
    let mut streams = Vec::new();
    for _ in 0..60 {
        let req = about(
            pb::WatchGameRequest {
                game_id: id.clone(),
                since_seq: 0,
            },
            &id,
        );
        streams.push(c.watch_game(req).await.unwrap().into_inner());
    }
    let mut per_replica = Vec::new();
    for r in &replicas {
        per_replica.push(r.metric("weiqi_open_streams").await);
    }
    assert_eq!(per_replica.iter().sum::<f64>(), 60.0, "{per_replica:?}");
    assert!(
        per_replica.iter().filter(|&&n| n > 0.0).count() >= 2,
        "the spectators spread over the replicas: {per_replica:?}"
    );
    // They came through the spectators' listeners: nginx holds connections to them.
    #[cfg(target_os = "linux")]
    {
        let ports: Vec<u16> = spectators
            .iter()
            .map(|a| a.rsplit(':').next().unwrap().parse().unwrap())
            .collect();
        let held = established_to(&ports);
        assert!(
            held.iter().filter(|&&n| n > 0).count() >= 2,
            "nginx's connections to the spectators' listeners: {held:?}"
        );
    }
    // 20 moves, each to the game's replica.
    for k in 0..20u32 {
        let req = pb::PlayRequest {
            mutation: m(&id, ""),
            // Black on rows 0 and 4, White on rows 2 and 6: nothing is captured.
            point: pt((k / 2) % 9, (k / 18) * 4 + (k % 2) * 2),
            lag_ms: 0,
        };
        c.play(routed(req, &id, &tokens[(k % 2) as usize])).await.unwrap();
    }
    let req = about(pb::GetGameRequest { game_id: id.clone() }, &id);
    let last = c.get_game(req).await.unwrap().into_inner().state.unwrap().seq;
    let started = Instant::now();
    for (k, mut s) in streams.into_iter().enumerate() {
        let mut seqs = Vec::new();
        while seqs.last().is_none_or(|&q| q < last) {
            let item = tokio::time::timeout(Duration::from_secs(10), s.message())
                .await
                .expect("a spectator waited 10 s")
                .unwrap()
                .unwrap();
            seqs.extend(item.event.map(|e| e.seq));
        }
        assert_eq!(seqs, (1..=last).collect::<Vec<_>>(), "spectator {k}");
    }
    eprintln!(
        "60 spectators over the replicas {per_replica:?}: all {last} events each, the last read {:.0} ms after the last move",
        started.elapsed().as_secs_f64() * 1e3
    );
    drop(proxy);
}

/// How many established TCP connections (IPv4) each of `ports` has accepted, from
/// `/proc/net/tcp` (a local address `0100007F:PORT` in hex, state `01`).
#[cfg(target_os = "linux")]
fn established_to(ports: &[u16]) -> Vec<usize> {
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap();
    ports
        .iter()
        .map(|&port| {
            table
                .lines()
                .skip(1)
                .filter(|l| {
                    let f: Vec<&str> = l.split_whitespace().collect();
                    f.len() > 3
                        && f[3] == "01"
                        && f[1].rsplit(':').next().and_then(|p| u16::from_str_radix(p, 16).ok()) == Some(port)
                })
                .count()
        })
        .collect()
}
