//! Prometheus metrics: moves, games, RPC latency, open streams, and with replicas the
//! catch-ups and claims.

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, Opts, Registry, TextEncoder,
};

#[derive(Clone)]
pub struct Metrics {
    pub registry: Registry,
    pub moves: IntCounter,
    pub games_created: IntCounter,
    pub games_finished: IntCounter,
    pub games_active: IntGauge,
    pub open_streams: IntGauge,
    /// Watchers that fell more than the channel's slots behind and caught up from the
    /// game's log (slow readers).
    pub watch_catch_ups: IntCounter,
    pub rpc_seconds: HistogramVec,
    /// Games in memory that caught up with events stored by another server (or by an
    /// interrupted command): how often replicas share games.
    pub catch_ups: IntCounter,
    /// Games of other servers claimed here, by `kind`: `overdue` (ticked), `open`
    /// (cancelled).
    pub claims: IntCounterVec,
    /// Connections closed on arrival because `limits.max_connections` were open.
    pub connections_refused: IntCounter,
}

impl Metrics {
    pub fn new() -> Metrics {
        let registry = Registry::new_custom(Some("weiqi".into()), None).expect("registry");
        let moves = IntCounter::new("moves_total", "Stones placed and passes played").expect("metric");
        let games_created = IntCounter::new("games_created_total", "Games created").expect("metric");
        let games_finished =
            IntCounter::new("games_finished_total", "Games finished by this server's appends").expect("metric");
        let games_active =
            IntGauge::new("games_active", "Unfinished games held in this server's memory").expect("metric");
        let open_streams = IntGauge::new("open_streams", "Open WatchGame streams").expect("metric");
        let watch_catch_ups = IntCounter::new(
            "watch_catch_ups_total",
            "Watchers that fell behind their game's channel and caught up from its log",
        )
        .expect("metric");
        let rpc_seconds = HistogramVec::new(
            HistogramOpts::from(Opts::new("rpc_duration_seconds", "RPC latency by method")).buckets(vec![
                0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
            ]),
            &["method"],
        )
        .expect("metric");
        let catch_ups = IntCounter::new(
            "catch_ups_total",
            "Games in memory that caught up with events another server stored",
        )
        .expect("metric");
        let claims = IntCounterVec::new(
            Opts::new(
                "claims_total",
                "Games of other servers claimed here (overdue: ticked, open: cancelled)",
            ),
            &["kind"],
        )
        .expect("metric");
        registry.register(Box::new(claims.clone())).expect("register");
        let connections_refused = IntCounter::new(
            "connections_refused_total",
            "Connections closed on arrival: limits.max_connections were open",
        )
        .expect("metric");
        registry
            .register(Box::new(connections_refused.clone()))
            .expect("register");
        for m in [&moves, &games_created, &games_finished, &catch_ups, &watch_catch_ups] {
            registry.register(Box::new(m.clone())).expect("register");
        }
        registry.register(Box::new(games_active.clone())).expect("register");
        registry.register(Box::new(open_streams.clone())).expect("register");
        registry.register(Box::new(rpc_seconds.clone())).expect("register");
        Metrics {
            registry,
            moves,
            games_created,
            games_finished,
            games_active,
            open_streams,
            watch_catch_ups,
            rpc_seconds,
            catch_ups,
            claims,
            connections_refused,
        }
    }

    /// Text exposition format.
    pub fn render(&self) -> String {
        let mut buf = Vec::new();
        TextEncoder::new()
            .encode(&self.registry.gather(), &mut buf)
            .expect("encode");
        String::from_utf8(buf).unwrap_or_default()
    }
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics::new()
    }
}
