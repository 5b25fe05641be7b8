//! Layered configuration: defaults, then an optional TOML file, then `WEIQI__*`
//! environment variables (`WEIQI__LISTEN=0.0.0.0:50051`), then command-line flags.

use std::path::{Path, PathBuf};

use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
pub struct ServerConfig {
    /// gRPC (and gRPC-Web) address.
    pub listen: String,
    /// Folder of the SQLite database and the server secret.
    pub data_dir: PathBuf,
    /// `postgres://user:password@host:port/database` to keep games in PostgreSQL (several
    /// replicas may share it); empty for the embedded SQLite file in `data_dir`.
    pub database_url: String,
    /// Connections to PostgreSQL per server (replicas together must stay under the
    /// database's `max_connections`).
    pub database_pool: u32,
    /// Prometheus `/metrics` address; empty to disable.
    pub metrics_listen: String,
    /// The web app (and gRPC-Web on the same origin) address; empty to disable. A port
    /// that cannot be bound disables it with a warning (the game service still starts).
    pub web_listen: String,
    /// The spectators' gRPC address (WatchGame and health only), served by a thread of the
    /// lowest priority that also tells every watched game's spectators of its moves
    /// (`crate::delivery`): a large audience takes the core's idle time and never delays a
    /// player. Empty (the default): none, and watchers are served with the players.
    pub spectators_listen: String,
    /// A built `web/dist` folder to serve the app from, read once at start (for working
    /// on the app without rebuilding the server); empty (the default): the bundle compiled
    /// into the binary.
    pub web_dir: String,
    /// `json` (default) or `text`.
    pub log_format: String,
    /// A tracing filter, e.g. `info` or `weiqi_server=debug`.
    pub log_level: String,
    /// How long shutdown waits for in-flight calls after streams are closed.
    pub shutdown_grace_ms: u64,
    /// An OpenTelemetry collector's OTLP/HTTP base URL (`http://collector:4318`): each
    /// call's spans are exported there (`/v1/traces`). Empty (the default): no traces.
    pub otlp_endpoint: String,
    /// How often the server records that it is alive (to credit downtime on restart).
    pub heartbeat_ms: u64,
    /// With a shared store: how often the server asks it whether the games watched here
    /// moved on another server (one query for all of them), so that spectators on any
    /// replica hear of a move within about this long; 10 at least.
    pub watch_poll_ms: u64,
    /// Games in progress without a running clock, untouched this long, leave memory (they
    /// stay in the store and come back with the next call); 0 keeps them.
    pub idle_evict_ms: u64,
    /// A game rests packed (its board's bookkeeping dropped, rebuilt on its next command)
    /// after a command unless the one before came less than this long before, and the
    /// games left unpacked are packed once idle this long; 0 packs after every command.
    pub park_after_ms: u64,
    /// The embedded store's least time between the starts of two group commits while
    /// writes keep coming, in microseconds: a write arriving sooner waits (at most this
    /// long, rounded up to whole milliseconds) and shares the next commit; 0 commits at
    /// once; at most 100,000 (100 ms).
    pub commit_spacing_us: u64,
    /// Open games nobody joined for this long are cancelled (they would otherwise stay in
    /// the lobby, and in memory, forever); 0 keeps them.
    pub open_game_ttl_ms: u64,
    /// How long a seat must be absent from a game in play before its opponent may claim
    /// the game as abandoned, a win or a draw (ClaimAbandoned). A seat is absent 10 s
    /// after its last watch stream with the seat's token closed or its last call with it.
    pub abandon_after_ms: u64,
    /// Web origins allowed to call from a browser (gRPC-Web, CORS): `*` for any (the
    /// default: seats are bearer tokens, never cookies, so another site gains nothing a
    /// script could not do anyway), a comma-separated list such as
    /// `https://play.example.com,https://example.com`, or empty for none.
    pub cors_allowed_origins: String,
    /// The lag allowance of games that do not set their own (`lag_allowance_ms` in their
    /// settings): network lag refunded per move, 0..=10000 ms; 0 flags players exactly at
    /// their deadlines.
    pub lag_allowance_ms: u64,
    /// Transport bounds and per-client quotas (`[limits]` in the file,
    /// `WEIQI__LIMITS__MAX_CONNECTIONS=...` in the environment).
    #[serde(default)]
    pub limits: crate::limits::Limits,
    /// Game reviews: workers, queue, and the search's visits and threads (`[review]`).
    #[serde(default)]
    pub review: crate::reviews::ReviewConfig,
    /// Player identity: JWT keys, issuer and audience (`[identity]`); guests need none.
    #[serde(default)]
    pub identity: crate::players::IdentityConfig,
}

impl ServerConfig {
    /// Defaults < `file` (if given) < environment.
    pub fn load(file: Option<&Path>) -> anyhow::Result<ServerConfig> {
        let mut b = config::Config::builder()
            .set_default("listen", "127.0.0.1:50051")?
            .set_default("data_dir", "weiqi-data")?
            .set_default("database_url", "")?
            .set_default("database_pool", weiqi_store::PgStore::DEFAULT_POOL)?
            .set_default("metrics_listen", "127.0.0.1:9464")?
            .set_default("web_listen", "127.0.0.1:8080")?
            .set_default("spectators_listen", "")?
            .set_default("web_dir", "")?
            .set_default("log_format", "json")?
            .set_default("log_level", "info")?
            .set_default("shutdown_grace_ms", 5000)?
            .set_default("heartbeat_ms", 1000)?
            .set_default("watch_poll_ms", 50)?
            .set_default("idle_evict_ms", 600_000)?
            .set_default("park_after_ms", 1000)?
            .set_default(
                "commit_spacing_us",
                weiqi_store::DEFAULT_COMMIT_SPACING.as_micros() as u64,
            )?
            .set_default("open_game_ttl_ms", 86_400_000)?
            .set_default("abandon_after_ms", crate::hub::ABANDON_AFTER_MS)?
            .set_default("cors_allowed_origins", "*")?
            .set_default("lag_allowance_ms", 1000)?
            .set_default("otlp_endpoint", "")?;
        if let Some(f) = file {
            b = b.add_source(config::File::from(f).required(true));
        }
        b = b.add_source(
            config::Environment::with_prefix("WEIQI")
                .prefix_separator("__")
                .separator("__"),
        );
        Ok(b.build()?.try_deserialize()?)
    }
}
