//! What the end-to-end tests share: the real `weiqi serve` binary on a loopback port, and
//! a real gRPC client (tonic) with helpers for the calls they make.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use tonic::metadata::MetadataValue;
use tonic::transport::Channel;
use tonic::{Request, Status};
use tonic_types::StatusExt;
use weiqi_proto::v1 as pb;
use weiqi_proto::v1::game_service_client::GameServiceClient;

/// Runs the `weiqi` binary to completion: its exit code, standard output and error.
pub fn weiqi(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_weiqi"))
        .args(args)
        .output()
        .expect("run weiqi");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

pub struct Server {
    pub child: Child,
    pub addr: String,
    /// `host:port` of its Prometheus endpoint.
    pub metrics: String,
    /// `host:port` of its web app (and gRPC-Web on the same origin).
    pub web: String,
    /// `host:port` of its spectators' listener, when the test asked for one
    /// (`WEIQI__SPECTATORS_LISTEN`).
    pub spectators: Option<String>,
    pub dir: PathBuf,
}

impl Server {
    pub fn start(dir: PathBuf) -> Server {
        Server::start_with(dir, &[])
    }

    /// With extra environment (configuration) for the server.
    pub fn start_with(dir: PathBuf, env: &[(&str, &str)]) -> Server {
        Server::start_on(dir, "127.0.0.1:0", env)
    }

    /// Listening on `listen` (a fixed port, so that clients reconnect to a restarted one).
    pub fn start_on(dir: PathBuf, listen: &str, env: &[(&str, &str)]) -> Server {
        std::fs::create_dir_all(&dir).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_weiqi"))
            .args([
                "serve",
                "--listen",
                listen,
                "--metrics-listen",
                "127.0.0.1:0",
                "--web-listen",
                "127.0.0.1:0",
                "--data-dir",
            ])
            .arg(&dir)
            .env("WEIQI__HEARTBEAT_MS", "100")
            // Every test's client is 127.0.0.1: per-client quotas off unless a test sets them.
            .env("WEIQI__LIMITS__CREATES_PER_MINUTE", "0")
            .env("WEIQI__LIMITS__WATCH_STREAMS_PER_CLIENT", "0")
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn weiqi serve");
        let mut out = BufReader::new(child.stdout.as_mut().unwrap());
        let mut line = |prefix: &str, suffix: &str| {
            let mut line = String::new();
            out.read_line(&mut line).unwrap();
            line.trim()
                .strip_prefix(prefix)
                .and_then(|l| l.strip_suffix(suffix))
                .unwrap_or_else(|| panic!("unexpected: {line:?}"))
                .to_string()
        };
        let addr = line("listening on ", "");
        let metrics = line("metrics on http://", "/metrics");
        let web = line("web app on http://", "/");
        let spectators = env
            .iter()
            .any(|(k, _)| *k == "WEIQI__SPECTATORS_LISTEN")
            .then(|| line("spectators on ", ""));
        Server {
            child,
            addr,
            metrics,
            web,
            spectators,
            dir,
        }
    }

    pub fn fresh(name: &str) -> Server {
        Server::fresh_with(name, &[])
    }

    /// A server on a new data folder, with extra environment (configuration).
    pub fn fresh_with(name: &str, env: &[(&str, &str)]) -> Server {
        let dir = std::env::temp_dir().join(format!("weiqi-e2e-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Server::start_with(dir, env)
    }

    pub async fn client(&self) -> GameServiceClient<Channel> {
        GameServiceClient::connect(format!("http://{}", self.addr))
            .await
            .unwrap()
    }

    /// The Prometheus text of the metrics endpoint (headers included).
    pub async fn metrics_text(&self) -> String {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut stream = tokio::net::TcpStream::connect(&self.metrics).await.unwrap();
        let head = format!(
            "GET /metrics HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            self.metrics
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).await.unwrap();
        text
    }

    /// The value of a counter or gauge (`name{labels}` as exposed), 0 when absent.
    pub async fn metric(&self, series: &str) -> f64 {
        let text = self.metrics_text().await;
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
            .unwrap_or(0.0)
    }

    /// Kills the process without any shutdown (a crash).
    pub fn crash(mut self) -> PathBuf {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        std::mem::take(&mut self.dir)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn authed<T>(msg: T, token: &str) -> Request<T> {
    let mut r = Request::new(msg);
    r.metadata_mut().insert(
        "authorization",
        MetadataValue::try_from(format!("Bearer {token}")).unwrap(),
    );
    r
}

pub fn m(game: &str, rid: &str) -> Option<pb::Mutation> {
    Some(pb::Mutation {
        game_id: game.into(),
        request_id: rid.into(),
        expected_move_number: None,
        ..Default::default()
    })
}

pub fn pt(x: u32, y: u32) -> Option<pb::Point> {
    Some(pb::Point { x, y })
}

pub struct Game {
    pub id: String,
    pub black: String,
    pub white: String,
}

/// Creates a game and takes its second seat.
pub async fn create_and_join(
    c: &mut GameServiceClient<Channel>,
    create: pb::CreateGameRequest,
) -> (pb::CreateGameResponse, pb::JoinGameResponse) {
    let created = c.create_game(create).await.unwrap().into_inner();
    let joined = c
        .join_game(pb::JoinGameRequest {
            game_id: created.game_id.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    (created, joined)
}

pub async fn new_game(c: &mut GameServiceClient<Channel>, size: u32, time: Option<pb::TimeControl>) -> Game {
    let settings = pb::GameSettings {
        board_size: size,
        rules: "chinese".into(),
        komi: Some(0.5),
        time_control: time,
        color_choice: pb::ColorChoice::HostBlack as i32,
        ..Default::default()
    };
    game_with(c, settings).await
}

/// A game of `settings` created and joined, in play: the host's seat and the guest's.
pub async fn game_with(c: &mut GameServiceClient<Channel>, settings: pb::GameSettings) -> Game {
    let (created, joined) = create_and_join(
        c,
        pb::CreateGameRequest {
            settings: Some(settings),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(joined.state.unwrap().phase, pb::Phase::Playing as i32);
    Game {
        id: created.game_id,
        black: created.seat_token,
        white: joined.seat_token,
    }
}

pub async fn play(
    c: &mut GameServiceClient<Channel>,
    g: &Game,
    token: &str,
    x: u32,
    y: u32,
) -> Result<pb::CommandResult, Status> {
    let r = c
        .play(authed(
            pb::PlayRequest {
                mutation: m(&g.id, ""),
                point: pt(x, y),
                lag_ms: 0,
            },
            token,
        ))
        .await?;
    Ok(r.into_inner().result.unwrap())
}

/// A game nobody has joined yet (its id).
pub async fn open_game(c: &mut GameServiceClient<Channel>) -> String {
    c.create_game(pb::CreateGameRequest::default())
        .await
        .unwrap()
        .into_inner()
        .game_id
}

/// A move with a request id and the move number the player expects.
pub async fn play_as(
    c: &mut GameServiceClient<Channel>,
    g: &Game,
    token: &str,
    (x, y): (u32, u32),
    rid: &str,
    expected: u32,
) -> Result<pb::CommandResult, Status> {
    let mutation = pb::Mutation {
        game_id: g.id.clone(),
        request_id: rid.into(),
        expected_move_number: Some(expected),
        ..Default::default()
    };
    let req = pb::PlayRequest {
        mutation: Some(mutation),
        point: pt(x, y),
        lag_ms: 0,
    };
    Ok(c.play(authed(req, token)).await?.into_inner().result.unwrap())
}

/// A seat checks in to a scheduled game: the game after it.
pub async fn check_in(c: &mut GameServiceClient<Channel>, game_id: &str, token: &str) -> pb::GameState {
    c.check_in(authed(
        pb::CheckInRequest {
            mutation: m(game_id, ""),
        },
        token,
    ))
    .await
    .unwrap()
    .into_inner()
    .result
    .unwrap()
    .state
    .unwrap()
}

pub async fn pass(c: &mut GameServiceClient<Channel>, g: &Game, token: &str) -> pb::CommandResult {
    c.pass(authed(
        pb::PassRequest {
            mutation: m(&g.id, ""),
            lag_ms: 0,
        },
        token,
    ))
    .await
    .unwrap()
    .into_inner()
    .result
    .unwrap()
}

/// A WatchGame stream from `since_seq`.
pub async fn watch(
    c: &mut GameServiceClient<Channel>,
    id: &str,
    since_seq: u64,
) -> tonic::Streaming<pb::WatchGameResponse> {
    c.watch_game(pb::WatchGameRequest {
        game_id: id.into(),
        since_seq,
    })
    .await
    .unwrap()
    .into_inner()
}

/// WatchGame as a seat: with its token, the stream that makes its player present.
pub async fn watch_as(
    c: &mut GameServiceClient<Channel>,
    id: &str,
    since_seq: u64,
    token: &str,
) -> tonic::Streaming<pb::WatchGameResponse> {
    let req = pb::WatchGameRequest {
        game_id: id.into(),
        since_seq,
    };
    c.watch_game(authed(req, token)).await.unwrap().into_inner()
}

pub async fn sgf(c: &mut GameServiceClient<Channel>, id: &str) -> String {
    c.export_sgf(pb::ExportSgfRequest { game_id: id.into() })
        .await
        .unwrap()
        .into_inner()
        .sgf
}

pub async fn state(c: &mut GameServiceClient<Channel>, id: &str) -> pb::GameState {
    c.get_game(pb::GetGameRequest { game_id: id.into() })
        .await
        .unwrap()
        .into_inner()
        .state
        .unwrap()
}

/// The game's state once it is finished, looked at every 25 ms (the server's timers, a
/// claim by another replica); panics with the last state if it is not within `within`.
pub async fn until_finished(
    c: &mut GameServiceClient<Channel>,
    id: &str,
    within: std::time::Duration,
) -> pb::GameState {
    let deadline = std::time::Instant::now() + within;
    loop {
        let st = state(c, id).await;
        if st.phase == pb::Phase::Finished as i32 {
            return st;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not finished within {within:?}: {st:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
}

pub fn reason(s: &Status) -> String {
    s.get_details_error_info().map(|i| i.reason).unwrap_or_default()
}

/// A fresh PostgreSQL database, or `None` (skipped) without a server: as in the store's
/// tests, `WEIQI_TEST_POSTGRES_URL` names a database whose user may create databases, and
/// CI sets `WEIQI_REQUIRE_POSTGRES=1` so that a missing server fails instead.
pub async fn pg(name: &str) -> Option<String> {
    let Ok(admin) = std::env::var("WEIQI_TEST_POSTGRES_URL") else {
        assert!(
            std::env::var_os("WEIQI_REQUIRE_POSTGRES").is_none(),
            "WEIQI_REQUIRE_POSTGRES is set but WEIQI_TEST_POSTGRES_URL is not"
        );
        eprintln!("skipped: set WEIQI_TEST_POSTGRES_URL to run against PostgreSQL");
        return None;
    };
    use sqlx::{Connection, Executor};
    let db = format!("weiqi_e2e_{}_{name}", std::process::id());
    let mut conn = sqlx::PgConnection::connect(&admin).await.expect("PostgreSQL");
    conn.execute(format!("DROP DATABASE IF EXISTS {db}").as_str())
        .await
        .unwrap();
    conn.execute(format!("CREATE DATABASE {db}").as_str()).await.unwrap();
    let (server, _) = admin.split('?').next().unwrap().rsplit_once('/').unwrap();
    Some(format!("{server}/{db}"))
}
