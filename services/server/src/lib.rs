//! # weiqi-server
//!
//! The gRPC game service. It transports, persists and times the pure referee
//! (`weiqi-game`); it never re-implements rules. Layout:
//! - `hub` — games in memory, one lock each, persisted before acknowledged, one timer
//!   each; domain types only;
//! - `service` — the tonic `GameService`: requests in, the hub's answers out;
//! - `shared_watch` — WatchGame's items encoded once for all of a game's watchers;
//! - `delivery` — the spectators' runtime, at the lowest priority, so that an audience
//!   never delays a move;
//! - `listeners` — the gRPC, spectators', metrics and web sockets;
//! - `calls` — each player's request as the domain command it carries;
//! - `convert` — domain types to and from protobuf, the hub's errors as gRPC statuses;
//! - `limits`, `transport`, `rpc_metrics` — what protects and measures the edge;
//! - `auth`, `metrics`, `config`, `requests` (idempotency keys), `fuzzing`.
//!
//! Operations: grpc.health.v1, reflection, gRPC-Web, Prometheus `/metrics`, JSON logs,
//! layered config, graceful shutdown (health NOT_SERVING first, then streams drained).

pub mod auth;
pub mod calls;
pub mod config;
pub mod convert;
pub mod cors;
pub mod delivery;
pub mod estimates;
pub mod fuzzing;
pub mod hub;
pub mod limits;
pub mod listeners;
pub mod metrics;
pub mod players;
pub mod requests;
pub mod reviews;
pub mod rpc_metrics;
pub mod service;
pub mod shared_watch;
pub mod status;
pub mod tournaments;
pub mod traces;
pub mod transport;
pub mod web;

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tracing::{info, warn};
use weiqi_proto::v1::game_service_server::GameServiceServer;
use weiqi_store::{Cluster, EventStore, PgStore, SqliteStore};

pub use config::ServerConfig;

use crate::hub::Hub;
use crate::metrics::Metrics;
use crate::service::GameSvc;

/// Sets up logs from the config (JSON by default) and, with `otlp_endpoint`, traces
/// (kept, and flushed when the returned value is dropped).
pub fn init_tracing(cfg: &ServerConfig) -> anyhow::Result<traces::Traces> {
    use tracing_subscriber::Layer;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(cfg.log_level.clone()))
        // The trace's spans are for the trace only (and not made at all without one).
        .add_directive(format!("{}=off", traces::TARGET).parse()?);
    let (otel, kept) = traces::layer(&cfg.otlp_endpoint)?;
    let fmt = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let registry = tracing_subscriber::registry().with(otel);
    let _ = if cfg.log_format == "text" {
        registry.with(fmt.with_filter(filter)).try_init()
    } else {
        registry.with(fmt.json().with_filter(filter)).try_init()
    };
    Ok(kept)
}

/// A running server: its address, and a handle to stop it gracefully.
pub struct Running {
    pub addr: SocketAddr,
    pub metrics_addr: Option<SocketAddr>,
    /// Where the web app is served, when it is.
    pub web_addr: Option<SocketAddr>,
    /// The spectators' listener, when there is one (`spectators_listen`).
    pub spectators_addr: Option<SocketAddr>,
    stop: watch::Sender<bool>,
    done: tokio::task::JoinHandle<anyhow::Result<()>>,
    /// The spectators' runtime, shut down with the server (dropped with this).
    _delivery: Option<delivery::Delivery>,
}

impl Running {
    /// Graceful shutdown: health NOT_SERVING, watch streams closed, in-flight calls finish.
    pub async fn shutdown(self) -> anyhow::Result<()> {
        let _ = self.stop.send(true);
        self.done.await?
    }

    /// Waits until the server stops (after a shutdown signal).
    pub async fn wait(self) -> anyhow::Result<()> {
        self.done.await?
    }

    pub fn stopper(&self) -> watch::Sender<bool> {
        self.stop.clone()
    }
}

fn load_secret(dir: &std::path::Path) -> anyhow::Result<Vec<u8>> {
    let path = dir.join("server.secret");
    if let Ok(s) = std::fs::read_to_string(&path) {
        return hex::decode(s.trim()).context("server.secret is not hex");
    }
    let s = auth::random_hex(32);
    std::fs::write(&path, &s).with_context(|| format!("writing {}", path.display()))?;
    Ok(hex::decode(s)?)
}

/// How often a server sharing its store looks for games overdue on their clocks whose
/// server is gone, and how late they must be. The stored wake-up is exactly when the
/// game's own server would tick it (the deadline with the lag allowance already in it),
/// so a game whose server is gone ends at most `CLAIM_GRACE_MS + CLAIM_EVERY_MS` (750 ms)
/// after it would have ended on its own server, plus the claim's round trip. The grace
/// keeps others off games whose own timer is firing right now (it fires within
/// milliseconds of the wake-up unless that server is overloaded or gone).
const CLAIM_EVERY_MS: u64 = 250;
const CLAIM_GRACE_MS: u64 = 500;

/// SIGXFSZ on Linux (every architecture Rust supports there but MIPS and SPARC).
#[cfg(target_os = "linux")]
const XFSZ: i32 = 25;

/// The services whose health is readiness (the empty name, the server as a whole, is
/// liveness: SERVING while the process serves).
const SERVICES: [&str; 3] = [
    weiqi_proto::v1::game_service_server::SERVICE_NAME,
    weiqi_proto::v1::player_service_server::SERVICE_NAME,
    weiqi_proto::v1::tournament_service_server::SERVICE_NAME,
];

/// Readiness in the health service: each of [`SERVICES`] SERVING while the hub's store
/// answers, NOT_SERVING while it does not, until the server stops (shutdown then sets them
/// NOT_SERVING for good).
async fn follow_readiness(
    health: tonic_health::server::HealthReporter,
    mut ready: tokio::sync::watch::Receiver<bool>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    loop {
        // (Stopping wins over readiness, whichever of the two tasks that see the stop
        // writes last.)
        let status = if *ready.borrow_and_update() && !*stop.borrow() {
            tonic_health::ServingStatus::Serving
        } else {
            tonic_health::ServingStatus::NotServing
        };
        for name in SERVICES {
            health.set_service_status(name, status).await;
        }
        if status == tonic_health::ServingStatus::NotServing && *stop.borrow() {
            return;
        }
        tokio::select! {
            changed = ready.changed() => if changed.is_err() { return },
            _ = stop.changed() => {}
        }
    }
}

/// Opens the store (SQLite in the data folder, or PostgreSQL when `database_url` is
/// set), recovers unfinished games, binds, and serves until stopped.
pub async fn start(cfg: ServerConfig) -> anyhow::Result<Running> {
    // A file-size limit reached (RLIMIT_FSIZE, as a quota or a container sets) is a full
    // disk to this server: the write fails and is answered as unavailable, and the process
    // lives on. By default SIGXFSZ would end it mid-commit. (A handler, once registered by
    // tokio, stays for the process.)
    #[cfg(target_os = "linux")]
    let _ = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::from_raw(XFSZ))?;
    if cfg.database_url.is_empty() {
        std::fs::create_dir_all(&cfg.data_dir).with_context(|| format!("creating {}", cfg.data_dir.display()))?;
        let spacing = std::time::Duration::from_micros(cfg.commit_spacing_us);
        let store = SqliteStore::open_with(&cfg.data_dir.join("weiqi.sqlite3"), spacing).await?;
        let secret = load_secret(&cfg.data_dir)?;
        let players: Arc<dyn weiqi_store::Accounts> = Arc::new(store.clone());
        serve(cfg, store, secret, None, players).await
    } else {
        let store = PgStore::open_with(&cfg.database_url, cfg.database_pool)
            .await
            .context("opening the PostgreSQL store (database_url)")?;
        let secret = hex::decode(store.shared_secret(&auth::random_hex(32)).await?).context("stored secret")?;
        info!("event store: PostgreSQL, shared with other servers");
        let cluster: Arc<dyn Cluster> = Arc::new(store.clone());
        let players: Arc<dyn weiqi_store::Accounts> = Arc::new(store.clone());
        serve(cfg, store, secret, Some(cluster), players).await
    }
}

/// Serves a store; `cluster` when other servers share it.
async fn serve<S: EventStore>(
    cfg: ServerConfig,
    store: S,
    secret: Vec<u8>,
    cluster: Option<Arc<dyn Cluster>>,
    player_store: Arc<dyn weiqi_store::Accounts>,
) -> anyhow::Result<Running> {
    let players = Arc::new(players::Players {
        identity: players::Identity::new(&cfg.identity).context("the [identity] configuration")?,
        store: player_store.clone(),
    });
    let max_lag = weiqi_game::clock_limits::MAX_LAG_MS;
    anyhow::ensure!(
        cfg.lag_allowance_ms <= max_lag,
        "lag_allowance_ms is {}; it must be at most {max_lag}",
        cfg.lag_allowance_ms
    );
    let (stop, stop_rx) = watch::channel(false);
    let metrics = Metrics::new();
    let delivery = if cfg.spectators_listen.is_empty() {
        None
    } else {
        Some(delivery::Delivery::start().context("starting the spectators' runtime")?)
    };
    let shared = cluster.is_some();
    // Ratings and players' feeds follow the games' lives (the hub's listener).
    let feed_wake = Arc::new(tokio::sync::Notify::new());
    let life = Arc::new(players::life::GameLife {
        accounts: player_store.clone(),
        feed_wake: feed_wake.clone(),
    });
    let mut hub = Hub::new(store, secret, metrics.clone(), stop_rx.clone())
        .with_listener(life.clone())
        .with_park_after(cfg.park_after_ms)
        .with_abandon_after(cfg.abandon_after_ms);
    if let Some(cluster) = cluster {
        hub = hub.with_cluster(cluster);
    }
    if let Some(d) = &delivery {
        hub = hub.with_delivery(d.handle());
    }
    let hub = Arc::new(hub);
    let host: Arc<dyn hub::GameHost> = hub.clone();
    // (Other servers beat every `heartbeat_ms`: a shorter gap, twice over, is not downtime.)
    hub.recover(2 * cfg.heartbeat_ms).await?;
    tokio::spawn(hub.clone().heartbeat_loop(cfg.heartbeat_ms));
    if shared {
        // Watchers here see other servers' moves within this interval.
        tokio::spawn(hub.clone().follow_watched(cfg.watch_poll_ms));
        tokio::spawn(hub.clone().claim_overdue(CLAIM_EVERY_MS, CLAIM_GRACE_MS));
    }
    tokio::spawn(hub.clone().park_loop());
    if cfg.idle_evict_ms > 0 {
        tokio::spawn(hub.clone().evict_loop(cfg.idle_evict_ms));
    }
    if cfg.open_game_ttl_ms > 0 {
        tokio::spawn(hub.clone().open_ttl_loop(cfg.open_game_ttl_ms));
    }
    // Players' feeds and automatch (with their recovery passes).
    life.recover_ratings(&host).await;
    let feed = Arc::new(players::feed::Feed::new(
        player_store.clone(),
        hub.time,
        feed_wake.clone(),
    ));
    tokio::spawn(feed.clone().run(stop_rx.clone()));
    let matchmaking = Arc::new(players::matchmaking::Matchmaking {
        store: player_store.clone(),
        host: host.clone(),
        feed_wake: feed_wake.clone(),
        matchmaker_wake: Arc::new(tokio::sync::Notify::new()),
    });
    let matchmaker = Arc::new(players::matchmaker::Matchmaker {
        accounts: player_store.clone(),
        host: host.clone(),
        wake: matchmaking.matchmaker_wake.clone(),
        feed_wake,
        life,
    });
    tokio::spawn(matchmaker.run(stop_rx.clone()));
    // Tournaments: the director moves every running one on, on every server.
    let tournaments = Arc::new(tournaments::Tournaments::new(player_store.clone(), host));
    tokio::spawn(tournaments::director::run(tournaments.clone(), stop_rx.clone()));

    let listener = TcpListener::bind(&cfg.listen)
        .await
        .with_context(|| format!("binding {}", cfg.listen))?;
    let addr = listener.local_addr()?;
    let spectators_listener = match &delivery {
        Some(_) => Some(listeners::bind_spectators(&cfg.spectators_listen)?),
        None => None,
    };
    let spectators_addr = spectators_listener.as_ref().map(|(_, addr)| *addr);
    let metrics_app = {
        let m = metrics.clone();
        axum::Router::new().route("/metrics", axum::routing::get(move || async move { m.render() }))
    };
    let metrics_addr =
        listeners::side_listener(&cfg.metrics_listen, "metrics endpoint", stop_rx.clone(), metrics_app).await?;

    let (health, health_svc) = tonic_health::server::health_reporter();
    health.set_serving::<GameServiceServer<GameSvc<S>>>().await;
    tokio::spawn(follow_readiness(health.clone(), hub.readiness(), stop_rx.clone()));
    // Reflection in both versions: grpcurl speaks v1, Python's grpcio-reflection (and
    // other older tools) only v1alpha.
    let reflection = || {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(weiqi_proto::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
    };
    let reflection_v1alpha = reflection().build_v1alpha()?;
    let reflection = reflection().build_v1()?;
    let limits = cfg.limits.clone();
    let svc = shared_watch::SharedWatch::new(
        GameSvc::new(hub.clone(), cfg.lag_allowance_ms)
            .with_limits(&limits)
            .with_players(players.clone())
            .with_reviews(reviews::Reviews::new(
                player_store.clone(),
                cfg.review.clone(),
                hub.time,
                stop_rx.clone(),
            )),
        limits.max_message_bytes,
    );
    let player_svc = weiqi_proto::v1::player_service_server::PlayerServiceServer::new(players::grpc::PlayerSvc {
        players: players.clone(),
        matchmaking,
        time: hub.time,
        feed,
        default_lag_ms: cfg.lag_allowance_ms,
        stop: stop_rx.clone(),
    });
    let tournament_svc =
        weiqi_proto::v1::tournament_service_server::TournamentServiceServer::new(tournaments::service::TournamentSvc {
            core: tournaments,
            players: players.clone(),
            default_lag_ms: cfg.lag_allowance_ms,
            stop: stop_rx.clone(),
        });
    // The services, once: served on the gRPC listener (with reflection) and, over gRPC-Web,
    // beside the web app.
    // Spectators get WatchGame and health alone (listeners::Grpc::serve_spectators).
    let spectator_routes = tonic::service::Routes::new(svc.watch_only()).add_service(health_svc.clone());
    let routes = tonic::service::Routes::new(svc)
        .add_service(player_svc)
        .add_service(tournament_svc)
        .add_service(health_svc);
    let rpc_metrics = rpc_metrics::RpcMetricsLayer::new(
        metrics.rpc_seconds.clone(),
        &[weiqi_proto::FILE_DESCRIPTOR_SET, tonic_health::pb::FILE_DESCRIPTOR_SET],
    );
    let web_grpc = routes
        .clone()
        .into_axum_router()
        .layer(tonic_web::GrpcWebLayer::new())
        .layer(rpc_metrics.clone());
    let bundle = if cfg.web_dir.is_empty() {
        web::Bundle::embedded()
    } else {
        web::Bundle::from_dir(std::path::Path::new(&cfg.web_dir))?
    };
    let web_addr = listeners::side_listener(
        &cfg.web_listen,
        "web app",
        stop_rx.clone(),
        web::router(web_grpc, bundle),
    )
    .await?;
    let grace = std::time::Duration::from_millis(cfg.shutdown_grace_ms);
    let mut stop_wait = stop_rx.clone();
    let shutdown = async move {
        let _ = stop_wait.changed().await;
        // Flip health first so load balancers stop sending new calls, then drain.
        for name in SERVICES {
            health
                .set_service_status(name, tonic_health::ServingStatus::NotServing)
                .await;
        }
        info!("shutting down: health NOT_SERVING, closing streams");
    };
    let grpc = listeners::Grpc {
        routes: routes.add_service(reflection).add_service(reflection_v1alpha),
        limits: limits.clone(),
        cors_allowed_origins: cfg.cors_allowed_origins.clone(),
        rpc_metrics,
        refused: metrics.connections_refused.clone(),
    };
    let server = grpc.serve(listener, shutdown)?;
    if let (Some(d), Some((l, _))) = (&delivery, spectators_listener) {
        let spectators = listeners::Grpc {
            routes: spectator_routes,
            ..grpc.clone()
        };
        spectators.serve_spectators(l, &d.handle(), stop_rx.clone())?;
    }
    // Once stopped, calls in flight get `grace` to finish; then the server goes anyway: a
    // client may hold open a stream that nothing on our side ends (a health watch, as load
    // balancers keep), and the drain would otherwise wait for it forever.
    let mut stopped = stop_rx.clone();
    let grace_over = async move {
        if stopped.wait_for(|s| *s).await.is_err() {
            // Never stopped (every handle dropped): serve on.
            std::future::pending::<()>().await;
        }
        tokio::time::sleep(grace).await;
    };
    let done = tokio::spawn(async move {
        tokio::select! {
            r = server => r.map_err(anyhow::Error::from),
            () = grace_over => {
                warn!(grace_ms = grace.as_millis() as u64, "shutdown grace period over with calls still open; closing them");
                Ok(())
            }
        }
    });
    info!(%addr, metrics = ?metrics_addr, web = ?web_addr, spectators = ?spectators_addr, "weiqi server listening");
    Ok(Running {
        addr,
        metrics_addr,
        web_addr,
        spectators_addr,
        stop,
        done,
        _delivery: delivery,
    })
}

/// The header clients send with a game's id on every call about that game, so that a proxy
/// in front of several replicas routes all of a game's calls to one of them
/// (`deploy/nginx/weiqi.conf`). The server itself ignores it.
pub const ROUTE_HEADER: &str = "x-weiqi-game";

/// Serves until SIGINT/SIGTERM, then shuts down gracefully. Prints the address on stdout.
pub async fn run(cfg: ServerConfig) -> anyhow::Result<()> {
    let running = start(cfg).await?;
    println!("listening on {}", running.addr);
    if let Some(m) = running.metrics_addr {
        println!("metrics on http://{m}/metrics");
    }
    if let Some(w) = running.web_addr {
        println!("web app on http://{w}/");
    }
    if let Some(s) = running.spectators_addr {
        println!("spectators on {s}");
    }
    let stop = running.stopper();
    tokio::spawn(async move {
        wait_for_signal().await;
        let _ = stop.send(true);
    });
    running.wait().await
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("signal");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
