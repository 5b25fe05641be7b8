//! # weiqi-bot
//!
//! `weiqi bot`: any GTP engine plays on the service, as gtp2ogs brings engines onto OGS. A
//! gRPC client of the service and nothing else (the `weiqi` binary parses its flags,
//! [`BotArgs`], and calls [`run`]); an application, so its errors are `anyhow`'s.
//!
//! - `spec` — the games a bot seeks (`--seek SPEC`), the open games it joins (`--join`)
//!   and the challenges it accepts (`--challenges`);
//! - `challenges` — the bot's player feed: challenges received, accepted or declined with a
//!   machine-readable reason;
//! - `engine` — one engine process kept in step with the server's record of a game;
//! - `play` — one game driven from the server's event stream (moves, clocks, scoring,
//!   failures and reconnection).
//!
//! The crate's root finds games, runs up to `--max-games` drivers at once, stops taking games on
//! SIGTERM (or Ctrl-C), and prints a JSON summary when it is done. Logs are JSON lines on
//! standard error.

mod challenges;
mod engine;
mod play;
mod spec;

use std::collections::HashSet;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;
use tonic::metadata::MetadataValue;
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Request};
use weiqi_proto::v1 as pb;
use weiqi_proto::v1::game_service_client::GameServiceClient;

use engine::EngineProcess;
use play::{Finished, Seat};
use spec::JoinFilter;

#[derive(clap::Args)]
pub struct BotArgs {
    /// The service, e.g. http://127.0.0.1:50051.
    #[arg(long)]
    server: String,
    /// The engine's command line, e.g. "gnugo --mode gtp --level 10".
    #[arg(long)]
    engine: String,
    /// Create open games with these settings and wait for opponents, e.g.
    /// size=9,komi=7.5,time=byoyomi:600+3x30 (also rules=, color=black|white|random,
    /// handicap=, mode=casual|tournament; times in seconds).
    #[arg(long)]
    seek: Option<String>,
    /// Join open games that pass the filters below.
    #[arg(long)]
    join: bool,
    /// Accept challenges that pass the filters below (declining the others with the
    /// reason), listening on the player's feed; needs --player-token.
    #[arg(long)]
    challenges: bool,
    /// Join filter: board sizes.
    #[arg(long, value_delimiter = ',', default_value = "9,13,19")]
    sizes: Vec<u32>,
    /// Join filter: komi range.
    #[arg(long, default_value_t = -10.0, allow_hyphen_values = true)]
    komi_min: f64,
    #[arg(long, default_value_t = 10.0, allow_hyphen_values = true)]
    komi_max: f64,
    /// Join filter: rules presets.
    #[arg(long, value_delimiter = ',', default_value = "chinese")]
    rules: Vec<String>,
    /// Join filter: take games with a fixed handicap.
    #[arg(long)]
    handicap: bool,
    /// Join filter: longest main time, seconds.
    #[arg(long, default_value_t = 3600.0)]
    max_main_seconds: f64,
    /// Join filter: shortest time per move once main time is spent, seconds.
    #[arg(long, default_value_t = 5.0)]
    min_move_seconds: f64,
    /// Games in play at once.
    #[arg(long, default_value_t = 1)]
    max_games: usize,
    /// Exit (status 0) after this many finished games.
    #[arg(long)]
    games: Option<u64>,
    /// Share K engine processes among all games (the board reloaded before each move)
    /// instead of one process per game.
    #[arg(long)]
    pool: Option<usize>,
    /// Network margin taken off the clock the engine is told about, ms.
    #[arg(long, default_value_t = 1000)]
    lag_margin_ms: u64,
    /// Engine restarts per game before the bot resigns it.
    #[arg(long, default_value_t = 3)]
    max_restarts: u32,
    /// After SIGTERM, how long games in play may go on before they are resigned, seconds.
    #[arg(long, default_value_t = 60.0)]
    drain_seconds: f64,
    /// Longest wait for an engine's answer (genmove without a clock; other commands).
    #[arg(long, default_value_t = 60.0)]
    engine_timeout: f64,
    /// Write each game's GTP transcript to DIR/<game id>.gtp.
    #[arg(long)]
    transcripts: Option<PathBuf>,
    /// How often to look for games, ms.
    #[arg(long, default_value_t = 500)]
    poll_ms: u64,
    /// The bot's player credential (a guest token or the platform's JWT for a bot
    /// account), sent when it creates or joins a game so the seat names it; rated games
    /// need one. Also read from WEIQI_PLAYER_TOKEN.
    #[arg(long, env = "WEIQI_PLAYER_TOKEN", hide_env_values = true)]
    player_token: Option<String>,
}

/// What every game driver shares.
pub struct Ctx {
    client: GameServiceClient<Channel>,
    draining: watch::Receiver<bool>,
    drain: Duration,
    lag_margin: Duration,
    max_restarts: u32,
    transcripts: Option<PathBuf>,
}

/// Engines shared by all games (`--pool`).
struct Pool {
    free: Mutex<Vec<EngineProcess>>,
    permits: Semaphore,
}

/// The engine a game uses: its own process, or one from the pool for each call.
pub struct Engines {
    own: Option<EngineProcess>,
    pool: Option<Arc<Pool>>,
    transcript: Vec<String>,
}

impl Engines {
    /// Runs `f` on an engine, on a blocking thread (engine calls wait on a child process).
    async fn with<R: Send + 'static>(&mut self, f: impl FnOnce(&mut EngineProcess) -> R + Send + 'static) -> R {
        let (permit, engine) = match &self.pool {
            None => (None, self.own.take().expect("the game's engine is in place")),
            Some(pool) => {
                let permit = pool.permits.acquire().await.expect("the pool is never closed");
                let e = pool
                    .free
                    .lock()
                    .expect("pool lock")
                    .pop()
                    .expect("a permit means a free engine");
                (Some(permit), e)
            }
        };
        let (mut engine, r) = tokio::task::spawn_blocking(move || {
            let mut e = engine;
            let r = f(&mut e);
            (e, r)
        })
        .await
        .expect("engine calls do not panic");
        self.transcript.extend(engine.take_transcript());
        match &self.pool {
            None => self.own = Some(engine),
            Some(pool) => pool.free.lock().expect("pool lock").push(engine),
        }
        drop(permit);
        r
    }

    fn take_transcript(&mut self) -> Vec<String> {
        std::mem::take(&mut self.transcript)
    }
}

/// One JSON log line on standard error.
pub fn log(event: &str, game_id: &str, detail: &str) {
    let ts = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    eprintln!(
        "{}",
        serde_json::json!({"ts_ms": ts, "event": event, "game_id": game_id, "detail": detail})
    );
}

fn authed<T>(msg: T, token: &str) -> Request<T> {
    let mut r = Request::new(msg);
    if let Ok(v) = MetadataValue::try_from(format!("Bearer {token}")) {
        r.metadata_mut().insert("authorization", v);
    }
    r
}

/// A call about a game: the seat's token, and the game's id in `x-weiqi-game`, so that a
/// proxy routing by game (deploy/nginx/weiqi.conf) sends it to the game's replica.
fn routed<T>(msg: T, (token, game_id): (impl AsRef<str>, impl AsRef<str>)) -> Request<T> {
    let mut r = authed(msg, token.as_ref());
    if let Ok(v) = MetadataValue::try_from(game_id.as_ref()) {
        r.metadata_mut().insert("x-weiqi-game", v);
    }
    r
}

pub fn run(args: BotArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        args.seek.is_some() || args.join || args.challenges,
        "give --seek SPEC, --join or --challenges (or several)"
    );
    anyhow::ensure!(
        !args.challenges || args.player_token.is_some(),
        "--challenges needs --player-token (challenges are made to a player)"
    );
    anyhow::ensure!(args.max_games >= 1, "--max-games is at least 1");
    anyhow::ensure!(args.pool.is_none_or(|k| k >= 1), "--pool is at least 1");
    anyhow::ensure!(
        args.drain_seconds >= 0.0 && args.engine_timeout > 0.0,
        "--drain-seconds and --engine-timeout are positive"
    );
    let seek = args.seek.as_deref().map(spec::parse_seek).transpose()?;
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    rt.block_on(serve(args, seek))
}

async fn serve(args: BotArgs, seek: Option<pb::GameSettings>) -> anyhow::Result<ExitCode> {
    // Lazy: the channel connects (and reconnects) when called, so a server that is not up
    // yet, or restarts, is retried rather than fatal.
    let channel = Endpoint::from_shared(args.server.clone())
        .context("--server is not a URL")?
        .connect_timeout(Duration::from_secs(5))
        .connect_lazy();
    let client = GameServiceClient::new(channel.clone());
    let (challenge_tx, mut challenges) = tokio::sync::mpsc::channel::<pb::ChallengeInfo>(16);
    if args.challenges
        && let Some(token) = &args.player_token
    {
        tokio::spawn(challenges::listen(channel.clone(), token.clone(), challenge_tx));
    }
    let players = weiqi_proto::v1::player_service_client::PlayerServiceClient::new(channel);
    let (drain_tx, draining) = watch::channel(false);
    tokio::spawn(async move {
        stop_signal().await;
        log("draining", "", "no new games; games in play finish");
        let _ = drain_tx.send(true);
    });
    let ctx = Arc::new(Ctx {
        client: client.clone(),
        draining: draining.clone(),
        drain: Duration::from_secs_f64(args.drain_seconds),
        lag_margin: Duration::from_millis(args.lag_margin_ms),
        max_restarts: args.max_restarts,
        transcripts: args.transcripts.clone(),
    });
    if let Some(dir) = &args.transcripts {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let timeout = Duration::from_secs_f64(args.engine_timeout);
    let pool = args.pool.map(|k| {
        Arc::new(Pool {
            free: Mutex::new((0..k).map(|_| EngineProcess::new(&args.engine, timeout)).collect()),
            permits: Semaphore::new(k),
        })
    });
    let engines = || Engines {
        own: pool.is_none().then(|| EngineProcess::new(&args.engine, timeout)),
        pool: pool.clone(),
        transcript: Vec::new(),
    };
    let filter = JoinFilter {
        sizes: args.sizes.clone(),
        komi: (args.komi_min, args.komi_max),
        rules: args.rules.clone(),
        handicap: args.handicap,
        max_main_s: args.max_main_seconds,
        min_move_s: args.min_move_seconds,
    };
    let mut tasks: JoinSet<Finished> = JoinSet::new();
    let mut ours: HashSet<String> = HashSet::new();
    let mut open_seek: Option<String> = None;
    let mut finished: Vec<Finished> = Vec::new();
    let mut c = client;
    loop {
        let is_draining = *draining.borrow();
        let counted = finished.iter().filter(|f| !f.result.is_empty()).count() as u64;
        if args.games.is_some_and(|n| counted >= n) || (is_draining && tasks.is_empty()) {
            break;
        }
        let may_start = !is_draining
            && tasks.len() < args.max_games
            && args.games.is_none_or(|n| counted + (tasks.len() as u64) < n);
        if may_start && let Some(settings) = &seek {
            let waiting = match &open_seek {
                Some(id) => still_open(&mut c, id).await,
                None => false,
            };
            if !waiting {
                match create(&mut c, settings, args.player_token.as_deref()).await {
                    Ok(seat) => {
                        log("seeking", &seat.game_id, "");
                        ours.insert(seat.game_id.clone());
                        open_seek = Some(seat.game_id.clone());
                        tasks.spawn(play::drive(ctx.clone(), seat, engines()));
                    }
                    Err(e) => log("seek_failed", "", &e.to_string()),
                }
            }
        }
        if may_start
            && tasks.len() < args.max_games
            && args.join
            && let Some(seat) = join_one(&mut c, &filter, &ours, args.player_token.as_deref()).await
        {
            log("joined", &seat.game_id, "");
            tasks.spawn(play::drive(ctx.clone(), seat, engines()));
        }
        let mut changed = draining.clone();
        tokio::select! {
            Some(c) = challenges.recv() => {
                let busy = is_draining || !may_start || tasks.len() >= args.max_games;
                let token = args.player_token.as_deref().unwrap_or_default();
                if let Some(seat) = challenges::answer(players.clone(), token, &c, &filter, busy).await {
                    log("accepted", &seat.game_id, &c.challenge_id);
                    ours.insert(seat.game_id.clone());
                    tasks.spawn(play::drive(ctx.clone(), seat, engines()));
                }
            }
            Some(done) = tasks.join_next() => match done {
                Ok(f) => finished.push(f),
                Err(e) => log("driver_failed", "", &e.to_string()),
            },
            _ = tokio::time::sleep(Duration::from_millis(args.poll_ms)) => {}
            _ = changed.changed() => {}
        }
    }
    tasks.shutdown().await;
    let games: Vec<serde_json::Value> = finished
        .iter()
        .map(|f| {
            serde_json::json!({
                "game_id": f.game_id,
                "color": f.color.map(|c| c.to_string()),
                "result": f.result,
                "moves": f.moves,
            })
        })
        .collect();
    let counted = finished.iter().filter(|f| !f.result.is_empty()).count();
    println!("{}", serde_json::json!({"finished": counted, "games": games}));
    Ok(ExitCode::SUCCESS)
}

/// SIGTERM or Ctrl-C.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let Ok(mut term) = signal(SignalKind::terminate()) else {
            let _ = tokio::signal::ctrl_c().await;
            return;
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}

async fn still_open(c: &mut GameServiceClient<Channel>, id: &str) -> bool {
    match c.get_game(pb::GetGameRequest { game_id: id.into() }).await {
        Ok(r) => r
            .into_inner()
            .state
            .is_some_and(|s| s.phase == pb::Phase::WaitingForOpponent as i32),
        // Unknown while the server is away: do not open another.
        Err(s) => s.code() != Code::NotFound,
    }
}

/// A request with the bot's player credential, when it has one.
fn signed<T>(msg: T, player: Option<&str>) -> Request<T> {
    match player {
        Some(token) => authed(msg, token),
        None => Request::new(msg),
    }
}

async fn create(
    c: &mut GameServiceClient<Channel>,
    settings: &pb::GameSettings,
    player: Option<&str>,
) -> Result<Seat, tonic::Status> {
    let r = c
        .create_game(signed(
            pb::CreateGameRequest {
                settings: Some(settings.clone()),
                request_id: format!("bot:create:{}", rand::random::<u64>()),
                nigiri_commitment: String::new(),
            },
            player,
        ))
        .await?
        .into_inner();
    Ok(Seat {
        game_id: r.game_id,
        token: r.seat_token,
        host: true,
    })
}

/// Joins the oldest open game that passes the filter (none of the bot's own).
async fn join_one(
    c: &mut GameServiceClient<Channel>,
    filter: &JoinFilter,
    ours: &HashSet<String>,
    player: Option<&str>,
) -> Option<Seat> {
    let list = c
        .list_games(pb::ListGamesRequest { limit: 100 })
        .await
        .ok()?
        .into_inner();
    for summary in list.open.iter().rev().filter(|s| !ours.contains(&s.game_id)) {
        let Ok(r) = c
            .get_game(pb::GetGameRequest {
                game_id: summary.game_id.clone(),
            })
            .await
        else {
            continue;
        };
        let Some(settings) = r.into_inner().state.and_then(|s| s.settings) else {
            continue;
        };
        if let Some(why) = filter.refuses(&settings) {
            log("skipped", &summary.game_id, &why.why);
            continue;
        }
        let joined = c
            .join_game(signed(
                pb::JoinGameRequest {
                    game_id: summary.game_id.clone(),
                    request_id: format!("bot:join:{}", rand::random::<u64>()),
                    nigiri_guess: 0,
                },
                player,
            ))
            .await;
        match joined {
            Ok(r) => {
                return Some(Seat {
                    game_id: summary.game_id.clone(),
                    token: r.into_inner().seat_token,
                    host: false,
                });
            }
            Err(s) => log("join_failed", &summary.game_id, s.message()),
        }
    }
    None
}
