//! weiqi-loadgen: N concurrent games of random legal moves against a weiqi server for a
//! bounded time; prints calls/s and latency p50/p99/p999 (hdrhistogram). With
//! `--compare`, first measures with the same concurrency and connections the trivial
//! `Ping` RPC (the ceiling of the stack) and a durable `Ping` (answered after the store's
//! group commit: the ceiling with every answer durable) and GetGame of each task's game (a
//! move's answer, the same game state, without deciding or writing anything), and prints
//! them side by side. With `--server-pid` it also prints the floor of a move's server CPU
//! that these imply: a read's plus what a durable row adds to a Ping.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;

// The server allocates per request (game clones, protobuf, JSON); glibc's malloc spent
// ~40% of its CPU time under load, mimalloc a fraction of that.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use tonic::metadata::MetadataValue;
use tonic::transport::{Channel, Endpoint};
use weiqi_proto::v1 as pb;
use weiqi_proto::v1::game_service_client::GameServiceClient;
use weiqi_rules::{Move, Policy, Rules, State};

mod report;
mod server_usage;
mod spectators;
use report::{Stats, Watch, add_error_kinds, count_error, new_hist, record_all};
use server_usage::{by_name, cpu_seconds, resident_bytes, thread_cpu_seconds};
use spectators::{watchers, watchers_runtime};

#[derive(Parser, Clone)]
#[command(name = "weiqi-loadgen", about = "Load generator for the weiqi game service")]
struct Args {
    /// Server address; several, comma-separated, for servers sharing one database: the
    /// connections are spread over them and the two players of a game use different ones
    /// (so each server sees the other's moves on every game).
    #[arg(long, default_value = "http://127.0.0.1:50051")]
    addr: String,
    /// Concurrent games (one client task each).
    #[arg(long, default_value_t = 1000)]
    games: usize,
    /// HTTP/2 connections shared by the tasks.
    #[arg(long, default_value_t = 8)]
    connections: usize,
    /// Seconds of measurement (after setup).
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Board size of the games.
    #[arg(long, default_value_t = 9)]
    size: u32,
    /// Play under a Fischer clock of this many seconds (plus 10 s a move), as timed
    /// games do (each move re-arms the game's timer on the server); 0 for no clock.
    #[arg(long, default_value_t = 0)]
    clock_s: u64,
    /// Also measure Ping and durable Ping first, as the ceilings, and GetGame of each game
    /// (a move's answer without the move); with `--server-pid`, prints a move's CPU floor.
    #[arg(long)]
    compare: bool,
    /// Open loop: moves arrive at this many per second in all (Poisson: each game's own
    /// arrivals, whatever the answers), and latency counts from the arrival, so a server
    /// that falls behind shows it (no coordinated omission). 0: closed loop.
    #[arg(long, default_value_t = 0.0)]
    rate: f64,
    /// Closed loop with a think time: each game waits this long after an answer before
    /// its next move, as a player does.
    #[arg(long, default_value_t = 0)]
    think_ms: u64,
    /// The server's process id, to report its resident memory (and per game) at the end.
    #[arg(long)]
    server_pid: Option<u32>,
    /// Spectators: this many WatchGame streams on the first game (the broadcast of a top
    /// game), spread over the connections; reports how late each move reached them, from
    /// the event's server time (start the server with
    /// `WEIQI__LIMITS__WATCH_STREAMS_PER_CLIENT=0`).
    #[arg(long, default_value_t = 0)]
    watchers: usize,
    /// The watchers' own connections (as real spectators, each on its own device, do not
    /// share the players'); 0: the watchers share the players' `--connections`.
    #[arg(long, default_value_t = 0)]
    watcher_connections: usize,
    /// The servers' spectators' listeners (`spectators_listen`; several, comma-separated,
    /// in the order of `--addr`): the watchers' own connections go there (64 of them
    /// unless `--watcher-connections` says otherwise).
    #[arg(long)]
    spectators_addr: Option<String>,
    /// Moves each game plays during setup, before the measurement: games in their middle
    /// game hold more (moves, repetition keys, clock readings) than fresh ones.
    #[arg(long, default_value_t = 0)]
    opening_moves: u32,
    /// Repeats the whole measurement this many times, each workload `--seconds` a round,
    /// and reports the sums: with `--compare` the workloads take turns, so a machine whose
    /// speed drifts (a shared host) weighs on all of them alike.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    rounds: u32,
    /// Moves ask for the basic view of the game in their answers (no board, no settings),
    /// as a client that keeps its own board does; the full view otherwise. (`--compare`'s
    /// reads, and so the floor it prints, still fetch the full state.)
    #[arg(long)]
    basic_answers: bool,
    /// Moves that fail as retryable are tried again as the published retry policy says
    /// (deploy/grpc/service-config.json: UNAVAILABLE, up to 5 tries), with the same request
    /// id, as a production client would; the latency then includes the waits. Off: every
    /// failure is counted by its kind (what a measurement wants to see).
    #[arg(long)]
    retry: bool,
    #[arg(long)]
    json: bool,
}

/// The `authorization` value of a seat token, built once per game (cloning it is cheap).
fn bearer(token: &str) -> anyhow::Result<MetadataValue<tonic::metadata::Ascii>> {
    Ok(MetadataValue::try_from(format!("Bearer {token}"))?)
}

/// A call about one game: the seat's token, and the game's id in `x-weiqi-game` so that a
/// proxy routing by game sends it to the game's replica.
fn authed<T>(
    msg: T,
    auth: &MetadataValue<tonic::metadata::Ascii>,
    route: &MetadataValue<tonic::metadata::Ascii>,
) -> tonic::Request<T> {
    let mut r = tonic::Request::new(msg);
    r.metadata_mut().insert("authorization", auth.clone());
    r.metadata_mut().insert("x-weiqi-game", route.clone());
    r
}

/// The connections, spread over the servers (`addrs`, comma-separated) in turn.
async fn channels(addrs: &str, connections: usize) -> anyhow::Result<Vec<Channel>> {
    let addrs: Vec<&str> = addrs.split(',').map(str::trim).collect();
    let mut out = Vec::new();
    for k in 0..connections.max(addrs.len()) {
        out.push(
            Endpoint::from_shared(addrs[k % addrs.len()].to_string())?
                .connect()
                .await?,
        );
    }
    Ok(out)
}

/// One client's game: creates and joins, then plays random legal moves for both seats
/// (the rules engine picks them); after two passes both accept the score (untimed, like
/// creating and joining) and a new game starts.
struct Player {
    /// Per seat (host, guest).
    clients: [GameServiceClient<Channel>; 2],
    /// Every game's settings.
    settings: pb::GameSettings,
    game_id: String,
    auth: [MetadataValue<tonic::metadata::Ascii>; 2],
    /// The game's id as the routing header's value.
    route: MetadataValue<tonic::metadata::Ascii>,
    state: State,
    rng: SmallRng,
    /// The view of the game a move's answer carries.
    view: pb::StateView,
    /// `--retry`: the published policy.
    retry: Option<weiqi_proto::retry::RetryPolicy>,
}

impl Player {
    async fn new(
        clients: [GameServiceClient<Channel>; 2],
        settings: pb::GameSettings,
        seed: u64,
        view: pb::StateView,
    ) -> anyhow::Result<Player> {
        let size = settings.board_size;
        let mut p = Player {
            clients,
            settings,
            game_id: String::new(),
            auth: [bearer("")?, bearer("")?],
            route: MetadataValue::from_static(""),
            state: State::new(size as u8, Rules::default())?,
            rng: SmallRng::seed_from_u64(seed),
            view,
            retry: None,
        };
        p.new_game().await?;
        Ok(p)
    }

    async fn new_game(&mut self) -> anyhow::Result<()> {
        let settings = self.settings.clone();
        let c = self.clients[0]
            .create_game(pb::CreateGameRequest {
                settings: Some(settings),
                request_id: String::new(),
                ..Default::default()
            })
            .await?
            .into_inner();
        self.route = MetadataValue::try_from(c.game_id.as_str())?;
        let mut join = tonic::Request::new(pb::JoinGameRequest {
            game_id: c.game_id.clone(),
            request_id: String::new(),
            ..Default::default()
        });
        join.metadata_mut().insert("x-weiqi-game", self.route.clone());
        let j = self.clients[1].join_game(join).await?.into_inner();
        self.game_id = c.game_id;
        self.auth = [bearer(&c.seat_token)?, bearer(&j.seat_token)?];
        self.state = State::new(self.settings.board_size as u8, Rules::default())?;
        Ok(())
    }

    /// Both players accept the referee's dead stones, so the game ends (and leaves the
    /// server's memory) as a real one would.
    async fn finish(&mut self) -> anyhow::Result<()> {
        for (client, auth) in self.clients.iter_mut().zip(self.auth.clone()) {
            let m = pb::Mutation {
                game_id: self.game_id.clone(),
                request_id: String::new(),
                expected_move_number: None,
                view: pb::StateView::Unspecified as i32,
            };
            client
                .accept_score(authed(pb::AcceptScoreRequest { mutation: Some(m) }, &auth, &self.route))
                .await?;
        }
        Ok(())
    }

    /// One timed RPC: the next move. Returns the latency, or an error.
    async fn step(&mut self, seq: &AtomicU64) -> anyhow::Result<Duration> {
        if self.state.is_over() {
            // Boxed: the two calls' futures would otherwise sit in every step's future.
            Box::pin(async {
                self.finish().await?;
                self.new_game().await
            })
            .await?;
        }
        // (The host plays Black: seat and colour share an index.)
        let seat = self.state.to_move().index();
        let token = &self.auth[seat];
        let mv = self.state.choose_random(Policy::Light, &mut self.rng);
        let rid = format!("lg-{}", seq.fetch_add(1, Ordering::Relaxed));
        let mutation = Some(pb::Mutation {
            game_id: self.game_id.clone(),
            request_id: rid,
            expected_move_number: Some(self.state.move_number() as u32),
            view: self.view as i32,
        });
        let t0 = Instant::now();
        for attempt in 1.. {
            let mutation = mutation.clone();
            let sent = match mv {
                Move::Place(p) => {
                    let req = pb::PlayRequest {
                        mutation,
                        point: Some(pb::Point {
                            x: p.x as u32,
                            y: p.y as u32,
                        }),
                        lag_ms: 0,
                    };
                    self.clients[seat]
                        .play(authed(req, token, &self.route))
                        .await
                        .map(|_| ())
                }
                Move::Pass => self.clients[seat]
                    .pass(authed(pb::PassRequest { mutation, lag_ms: 0 }, token, &self.route))
                    .await
                    .map(|_| ()),
            };
            match (sent, &self.retry) {
                (Err(s), Some(policy)) if attempt < policy.max_attempts && policy.retryable(s.code()) => {
                    tokio::time::sleep(policy.backoff(attempt)).await;
                }
                (sent, _) => {
                    sent?;
                    break;
                }
            }
        }
        let dt = t0.elapsed();
        self.state.play(mv).map_err(|e| anyhow::anyhow!("local replay: {e}"))?;
        Ok(dt)
    }

    /// One timed RPC: GetGame of this game, the same game state a move answers with.
    async fn read(&mut self) -> anyhow::Result<Duration> {
        let mut req = tonic::Request::new(pb::GetGameRequest {
            game_id: self.game_id.clone(),
        });
        req.metadata_mut().insert("x-weiqi-game", self.route.clone());
        let t0 = Instant::now();
        self.clients[0].get_game(req).await?;
        Ok(t0.elapsed())
    }
}

/// What the client tasks call in a measurement.
#[derive(Clone, Copy, PartialEq)]
enum Workload {
    Ping,
    /// Ping answered after the store's group commit.
    DurablePing,
    /// GetGame of each task's game: a move's answer without the move.
    Reads,
    Moves,
}

async fn run(args: &Args, workload: Workload) -> anyhow::Result<Stats> {
    let ping = matches!(workload, Workload::Ping | Workload::DurablePing);
    let durable = workload == Workload::DurablePing;
    let chans = channels(&args.addr, args.connections).await?;
    let stop = Arc::new(AtomicBool::new(false));
    let seq = Arc::new(AtomicU64::new(0));
    let mut players = Vec::new();
    let mut setup_errors = 0;
    // The setup's errors by kind; the run's are added to them.
    let mut setup_kinds = std::collections::BTreeMap::new();
    if !ping {
        // Setup (not measured): every task gets its game.
        let mut setup = Vec::new();
        let settings = pb::GameSettings {
            board_size: args.size,
            time_control: (args.clock_s > 0).then(|| pb::TimeControl {
                kind: Some(pb::time_control::Kind::Fischer(pb::time_control::Fischer {
                    main_ms: args.clock_s * 1000,
                    increment_ms: 10_000,
                    cap_ms: None,
                })),
            }),
            ..Default::default()
        };
        // With several servers the guest's connection is the next one, on the next server.
        let guest_offset = usize::from(args.addr.contains(','));
        let view = if args.basic_answers {
            pb::StateView::Basic
        } else {
            pb::StateView::Full
        };
        for i in 0..args.games {
            let client = |k: usize| GameServiceClient::new(chans[k % chans.len()].clone());
            let clients = [client(i), client(i + guest_offset)];
            let (settings, seq, opening, retry) = (settings.clone(), seq.clone(), args.opening_moves, args.retry);
            setup.push(tokio::spawn(async move {
                let mut p = Player::new(clients, settings, i as u64, view).await?;
                p.retry = retry.then(weiqi_proto::retry::RetryPolicy::published);
                for _ in 0..opening {
                    p.step(&seq).await?;
                }
                Ok::<_, anyhow::Error>(p)
            }));
        }
        for s in setup {
            match s.await? {
                Ok(p) => players.push(p),
                Err(e) => {
                    setup_errors += 1;
                    count_error(&mut setup_kinds, &e);
                }
            }
        }
    }
    // The watched game: the first player's first game (a game that ends is followed by a
    // new one, which nobody watches).
    let watched: Option<Arc<str>> = players
        .first()
        .filter(|_| args.watchers > 0)
        .map(|p| Arc::from(p.game_id.as_str()));
    let watch_tasks = match &watched {
        Some(game_id) => {
            // The spectators run on a runtime of their own (its own thread): a spectator is
            // another device, and ten thousand of them woken by one move must not queue
            // ahead of the players' tasks, whose latencies are measured.
            let own = match (&args.spectators_addr, args.watcher_connections) {
                (Some(a), 0) => Some((a.clone(), 64)),
                (Some(a), n) => Some((a.clone(), n)),
                (None, 0) => None,
                (None, n) => Some((args.addr.clone(), n)),
            };
            let shared = chans.clone();
            let (args, game_id) = (args.clone(), game_id.to_string());
            watchers_runtime()
                .spawn(async move {
                    let watch_chans = match own {
                        Some((addrs, n)) => channels(&addrs, n).await?,
                        None => shared,
                    };
                    anyhow::Ok(watchers(&args, &watch_chans, &game_id))
                })
                .await??
        }
        None => Vec::new(),
    };
    let cpu_before = args.server_pid.and_then(cpu_seconds);
    let threads_before = args.server_pid.and_then(thread_cpu_seconds);
    let receiving_before = receiving_cpu_seconds();
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(args.seconds);
    let mut tasks = Vec::new();
    let tasks_n = if ping { args.games } else { players.len() };
    // Open loop: each task's mean gap between arrivals, so that all together make `rate`.
    let mean_gap = (args.rate > 0.0).then(|| tasks_n as f64 / args.rate);
    let think = Duration::from_millis(args.think_ms);
    let mut players = players.into_iter();
    for i in 0..tasks_n {
        let stop = stop.clone();
        let seq = seq.clone();
        let mut player = if ping { None } else { players.next() };
        let mut client = GameServiceClient::new(chans[i % chans.len()].clone());
        let watched = watched.clone();
        tasks.push(tokio::spawn(async move {
            // Raw samples, merged into one histogram at the end: a histogram of this range
            // and precision is about 200 KB, too much for each of 100,000 tasks. The watched
            // game's calls apart.
            let mut hist: Vec<u64> = Vec::new();
            let mut watched_hist: Vec<u64> = Vec::new();
            let (mut calls, mut errors) = (0u64, 0u64);
            let mut kinds: std::collections::BTreeMap<String, (u64, String)> = Default::default();
            let mut rng = SmallRng::seed_from_u64(i as u64 ^ 0x000A_11CE);
            // A Poisson process from the start: the first arrival too is an exponential gap
            // away (a uniform first phase made the first mean gap's rate a quarter higher).
            let exp_gap =
                |rng: &mut SmallRng, g: f64| Duration::from_secs_f64(-g * (1.0_f64 - rng.random::<f64>()).ln());
            let mut next = Instant::now() + mean_gap.map_or(Duration::ZERO, |g| exp_gap(&mut rng, g));
            while !stop.load(Ordering::Relaxed) {
                let arrival = if let Some(gap) = mean_gap {
                    if next >= deadline {
                        break;
                    }
                    tokio::time::sleep_until(next.into()).await;
                    let at = next;
                    // Exponential gaps: a Poisson process per game.
                    next += exp_gap(&mut rng, gap);
                    Some(at)
                } else {
                    None
                };
                let on_watched = matches!((&player, &watched), (Some(p), Some(w)) if *p.game_id == **w);
                let r = match &mut player {
                    Some(p) if workload == Workload::Reads => p.read().await,
                    Some(p) => p.step(&seq).await,
                    None => {
                        let t0 = Instant::now();
                        client
                            .ping(pb::PingRequest {
                                payload: vec![0; 16],
                                durable,
                            })
                            .await
                            .map(|_| t0.elapsed())
                            .map_err(anyhow::Error::from)
                    }
                };
                // Open loop: from the arrival, waiting included.
                let r = r.map(|dt| arrival.map_or(dt, |at| at.elapsed()));
                match r {
                    Ok(dt) => {
                        calls += 1;
                        let sample = dt.as_micros().max(1) as u64;
                        if on_watched {
                            watched_hist.push(sample);
                        } else {
                            hist.push(sample);
                        }
                        if !think.is_zero() {
                            tokio::time::sleep(think.min(deadline.saturating_duration_since(Instant::now()))).await;
                        }
                    }
                    Err(e) => {
                        errors += 1;
                        count_error(&mut kinds, &e);
                    }
                }
            }
            (calls, errors, hist, watched_hist, kinds)
        }));
    }
    tokio::time::sleep(Duration::from_secs_f64(args.seconds)).await;
    stop.store(true, Ordering::Relaxed);
    let mut total = Stats {
        calls: 0,
        errors: 0,
        setup_errors,
        error_kinds: setup_kinds,
        wall_s: 0.0,
        hist: new_hist()?,
        watch: None,
        server_cpu_s: None,
        server_threads: None,
    };
    if !watch_tasks.is_empty() {
        let mut w = Watch {
            streams: watch_tasks.len(),
            fewest: u64::MAX,
            most: 0,
            delivery: new_hist()?,
            settled: new_hist()?,
            watched_game: new_hist()?,
            other_games: new_hist()?,
            receiving_cpu_s: receiving_before.zip(receiving_cpu_seconds()).map(|(a, b)| b - a),
            gaps: 0,
            streams_with_gaps: 0,
        };
        for t in watch_tasks {
            let seen = t.finish().await;
            record_all(&mut w.delivery, &seen.delays)?;
            record_all(&mut w.settled, &seen.settled)?;
            w.fewest = w.fewest.min(seen.moves);
            w.gaps += seen.gaps;
            w.streams_with_gaps += usize::from(seen.gaps > 0);
            w.most = w.most.max(seen.moves);
        }
        total.watch = Some(w);
    }
    for t in tasks {
        let (c, e, others, watched, k) = t.await?;
        total.calls += c;
        total.errors += e;
        add_error_kinds(&mut total.error_kinds, k);
        record_all(&mut total.hist, &others)?;
        record_all(&mut total.hist, &watched)?;
        if let Some(w) = &mut total.watch {
            record_all(&mut w.other_games, &others)?;
            record_all(&mut w.watched_game, &watched)?;
        }
    }
    total.wall_s = start.elapsed().as_secs_f64();
    let cpu_after = args.server_pid.and_then(cpu_seconds);
    total.server_cpu_s = cpu_before.zip(cpu_after).map(|(a, b)| b - a);
    let threads_after = args.server_pid.and_then(thread_cpu_seconds);
    total.server_threads = threads_before
        .zip(threads_after)
        .map(|(before, after)| by_name(&before, &after));
    Ok(total)
}

/// The server's spectators' thread, as `/proc` names it (15 bytes of `weiqi-spectators`).
const SPECTATORS_THREAD: &str = "weiqi-spectator";

/// The CPU seconds of this process's spectators' thread (see `spectators::watchers_runtime`).
fn receiving_cpu_seconds() -> Option<f64> {
    let threads = thread_cpu_seconds(std::process::id())?;
    threads
        .iter()
        .find(|((_, name), _)| name == spectators::WATCHERS_THREAD)
        .map(|(_, s)| *s)
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// mimalloc's `mi_option_purge_delay`: its place in `mi_option_e` (mimalloc.h, v3, as
/// vendored by the pinned libmimalloc-sys 0.1.49, which names only the stable options).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Keeps freed memory in the heap. mimalloc hands memory back to the OS a second after its
/// last use (v3's purge delay) and faults it back in at the next allocation; here those
/// stalls of the load generator counted as the server's latency, since a move's latency
/// runs from its arrival time (at a human pace, moves' p99 12.4-31 ms with purging off
/// against 24-346 ms with it on; docs/performance.md). `MIMALLOC_PURGE_DELAY` (or its older name
/// `MIMALLOC_RESET_DELAY`) still decides if set.
fn keep_freed_memory() {
    let set = |name| std::env::var_os(name).is_some();
    if !set("MIMALLOC_PURGE_DELAY") && !set("MIMALLOC_RESET_DELAY") {
        // SAFETY: sets one of mimalloc's options (an integer it reads when it schedules a
        // purge; any thread, any time); -1 is its documented "never purge".
        #[allow(unsafe_code)]
        unsafe {
            libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1)
        };
    }
}

/// One round: with `--compare`, the references first (the two ceilings, Ping and durable
/// Ping, and reads), then moves.
async fn round(args: &Args) -> anyhow::Result<(Option<report::References>, Stats)> {
    let ceilings = if args.compare {
        Some((
            run(args, Workload::Ping).await?,
            run(args, Workload::DurablePing).await?,
            run(args, Workload::Reads).await?,
        ))
    } else {
        None
    };
    Ok((ceilings, run(args, Workload::Moves).await?))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    keep_freed_memory();
    let args = Args::parse();
    let (mut ceilings, mut moves) = round(&args).await?;
    for _ in 1..args.rounds {
        let (c, m) = round(&args).await?;
        if let (Some(sum), Some(c)) = (&mut ceilings, c) {
            sum.0.merge(c.0)?;
            sum.1.merge(c.1)?;
            sum.2.merge(c.2)?;
        }
        moves.merge(m)?;
    }
    let rss = args.server_pid.and_then(resident_bytes);
    if args.json {
        report::print_json(&args, &ceilings, &moves, rss);
    } else {
        report::print_text(&args, &ceilings, &moves, rss);
    }
    Ok(())
}
