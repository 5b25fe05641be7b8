//! What a run measured, and how it is reported: the statistics of one workload, and the
//! text or JSON summary of a whole run.

use hdrhistogram::Histogram;

use crate::Args;

/// One workload's measurement: calls, errors, latencies, and the server's CPU.
pub(crate) struct Stats {
    pub(crate) calls: u64,
    pub(crate) errors: u64,
    /// Games whose creation or join failed (they take no part in the run).
    pub(crate) setup_errors: u64,
    /// How many errors of each kind (the gRPC code, or "transport"), and the first
    /// message of each: a run reports its errors instead of stopping at the first.
    pub(crate) error_kinds: std::collections::BTreeMap<String, (u64, String)>,
    pub(crate) wall_s: f64,
    pub(crate) hist: Histogram<u64>,
    /// With `--watchers`: what the watchers received, and the players' calls split by game.
    pub(crate) watch: Option<Watch>,
    /// With `--server-pid`: the server's CPU seconds (user and system) over the measured
    /// window, for its CPU per call.
    pub(crate) server_cpu_s: Option<f64>,
    /// With `--server-pid`: the same window's CPU seconds by the server's thread names
    /// (the runtime's workers, the store's writer, SQLite's workers...), to show where a
    /// call's CPU goes; a thread that ended within the window is missing here.
    pub(crate) server_threads: Option<std::collections::BTreeMap<String, f64>>,
}

/// A run with `--watchers`.
pub(crate) struct Watch {
    /// Streams opened, and the fewest and most moves one of them received.
    pub(crate) streams: usize,
    pub(crate) fewest: u64,
    pub(crate) most: u64,
    /// Delivery delays (µs, at ms resolution: server time to arrival).
    pub(crate) delivery: Histogram<u64>,
    /// The same, of the moves made once every stream was open (the audience in place).
    pub(crate) settled: Histogram<u64>,
    /// The latencies (µs) of the watched game's own calls and of the other games': a
    /// fan-out's cost to the players of the game watched and to everyone else's.
    pub(crate) watched_game: Histogram<u64>,
    pub(crate) other_games: Histogram<u64>,
    /// The CPU seconds of this process's spectators' thread (`watchers`) over the window:
    /// receiving is a stage of every measured delay, as the server's sending is.
    pub(crate) receiving_cpu_s: Option<f64>,
    /// Events missed, repeated or out of order, over all streams, and the streams with any.
    pub(crate) gaps: u64,
    pub(crate) streams_with_gaps: usize,
}

impl Watch {
    fn merge(&mut self, other: Watch) -> anyhow::Result<()> {
        self.streams = self.streams.max(other.streams);
        self.fewest = self.fewest.min(other.fewest);
        self.most = self.most.max(other.most);
        self.delivery.add(&other.delivery)?;
        self.settled.add(&other.settled)?;
        self.watched_game.add(&other.watched_game)?;
        self.other_games.add(&other.other_games)?;
        self.receiving_cpu_s = self.receiving_cpu_s.zip(other.receiving_cpu_s).map(|(a, b)| a + b);
        self.gaps += other.gaps;
        self.streams_with_gaps += other.streams_with_gaps;
        Ok(())
    }
}

/// A latency histogram: 1 µs to 60 s, three significant digits.
pub(crate) fn new_hist() -> Result<Histogram<u64>, hdrhistogram::CreationError> {
    Histogram::new_with_bounds(1, 60_000_000, 3)
}

/// A histogram's quantile, µs to ms.
fn ms(h: &Histogram<u64>, q: f64) -> f64 {
    h.value_at_quantile(q) as f64 / 1000.0
}

impl Stats {
    /// The server's CPU per answered call, in microseconds.
    pub(crate) fn cpu_per_call_us(&self) -> Option<f64> {
        Some(self.server_cpu_s? * 1e6 / self.calls.max(1) as f64)
    }

    /// The server's CPU per answered call by thread name, in microseconds.
    pub(crate) fn cpu_per_call_by_thread_us(&self) -> Option<std::collections::BTreeMap<String, f64>> {
        let calls = self.calls.max(1) as f64;
        Some(
            self.server_threads
                .as_ref()?
                .iter()
                .map(|(name, s)| (name.clone(), s * 1e6 / calls))
                .collect(),
        )
    }

    /// Adds another round of the same workload: calls, errors, time, latencies and CPU
    /// sum (a round without a CPU reading leaves the sum without one).
    pub(crate) fn merge(&mut self, other: Stats) -> anyhow::Result<()> {
        self.calls += other.calls;
        self.errors += other.errors;
        self.setup_errors += other.setup_errors;
        add_error_kinds(&mut self.error_kinds, other.error_kinds);
        self.wall_s += other.wall_s;
        self.hist.add(&other.hist)?;
        self.watch = match (self.watch.take(), other.watch) {
            (Some(mut w), Some(w2)) => {
                w.merge(w2)?;
                Some(w)
            }
            (w, None) | (None, w) => w,
        };
        self.server_cpu_s = self.server_cpu_s.zip(other.server_cpu_s).map(|(a, b)| a + b);
        self.server_threads = self.server_threads.take().zip(other.server_threads).map(|(mut a, b)| {
            for (name, s) in b {
                *a.entry(name).or_default() += s;
            }
            a
        });
        Ok(())
    }

    pub(crate) fn rate(&self) -> f64 {
        self.calls as f64 / self.wall_s
    }
    pub(crate) fn q(&self, q: f64) -> f64 {
        ms(&self.hist, q)
    }

    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "calls": self.calls, "errors": self.errors, "setup_errors": self.setup_errors, "wall_s": self.wall_s, "calls_per_s": self.rate(),
            "error_kinds": self.error_kinds.iter().map(|(k, (n, first))| (k.clone(), serde_json::json!({"count": n, "first": first}))).collect::<serde_json::Map<_, _>>(),
            "p50_ms": self.q(0.5), "p99_ms": self.q(0.99), "p999_ms": self.q(0.999),
            "server_cpu_s": self.server_cpu_s, "server_cpu_per_call_us": self.cpu_per_call_us(),
            "server_cpu_per_call_us_by_thread": self.cpu_per_call_by_thread_us(),
        })
    }
}

/// Counts an error by its kind (the gRPC code, or "transport"), keeping the first
/// message of each kind.
pub(crate) fn count_error(kinds: &mut std::collections::BTreeMap<String, (u64, String)>, e: &anyhow::Error) {
    let kind = match e.downcast_ref::<tonic::Status>() {
        Some(s) => format!("{:?}", s.code()),
        None => "transport".to_string(),
    };
    kinds.entry(kind).or_insert((0, format!("{e:#}"))).0 += 1;
}

/// Adds `from`'s error counts to `into` (one task's to its run's, or one round's to the
/// sum), keeping the first message `into` already has of each kind.
pub(crate) fn add_error_kinds(
    into: &mut std::collections::BTreeMap<String, (u64, String)>,
    from: std::collections::BTreeMap<String, (u64, String)>,
) {
    for (kind, (n, first)) in from {
        into.entry(kind).or_insert((0, first)).0 += n;
    }
}

/// Adds one task's samples (microseconds) to the run's histogram.
pub(crate) fn record_all(hist: &mut Histogram<u64>, samples: &[u64]) -> anyhow::Result<()> {
    for &s in samples {
        hist.record(s.min(hist.high()))?;
    }
    Ok(())
}

/// The references measured with `--compare`: Ping, durable Ping and reads.
pub(crate) type References = (Stats, Stats, Stats);

/// A move's server CPU can go no lower than a read's (the same answer) plus one durable row
/// (what a durable Ping costs beyond a Ping): (floor µs, floor / durable, move / durable).
pub(crate) fn move_floor(refs: &Option<References>, moves: &Stats) -> Option<(f64, f64, f64)> {
    let (p, d, r) = refs.as_ref()?;
    let (p, d, r, m) = (
        p.cpu_per_call_us()?,
        d.cpu_per_call_us()?,
        r.cpu_per_call_us()?,
        moves.cpu_per_call_us()?,
    );
    Some((r + d - p, (r + d - p) / d, m / d))
}

/// The run as one JSON line (`--json`).
pub(crate) fn print_json(args: &Args, ceilings: &Option<References>, moves: &Stats, rss: Option<u64>) {
    let floor = move_floor(ceilings, moves);
    let mut v = serde_json::json!({ "games": args.games, "connections": args.connections, "size": args.size, "rounds": args.rounds, "moves": moves.json() });
    v["rate"] = args.rate.into();
    v["think_ms"] = args.think_ms.into();
    v["watcher_connections"] = args.watcher_connections.into();
    if let Some(w) = &moves.watch {
        v["watchers"] = serde_json::json!({
            "streams": w.streams, "moves_fewest": w.fewest, "moves_most": w.most,
            "delivery_p50_ms": ms(&w.delivery, 0.5),
            "delivery_p99_ms": ms(&w.delivery, 0.99),
            "settled_delivery_p50_ms": ms(&w.settled, 0.5),
            "settled_delivery_p99_ms": ms(&w.settled, 0.99),
            "watched_game_calls": w.watched_game.len(),
            "watched_game_p50_ms": ms(&w.watched_game, 0.5),
            "watched_game_p99_ms": ms(&w.watched_game, 0.99),
            "other_games_calls": w.other_games.len(),
            "other_games_p50_ms": ms(&w.other_games, 0.5),
            "other_games_p99_ms": ms(&w.other_games, 0.99),
            "gaps": w.gaps, "streams_with_gaps": w.streams_with_gaps,
            "receiving_cpu_us_per_item": w.receiving_cpu_s.map(|s| s * 1e6 / w.delivery.len().max(1) as f64),
        });
    }
    if let Some(b) = rss {
        v["server_rss_bytes"] = b.into();
        v["server_rss_bytes_per_game"] = (b as f64 / args.games.max(1) as f64).into();
    }
    if let Some((p, d, r)) = &ceilings {
        v["ping"] = p.json();
        v["durable_ping"] = d.json();
        v["reads"] = r.json();
        v["throughput_ratio"] = (moves.rate() / p.rate()).into();
        v["p99_ratio"] = (moves.q(0.99) / p.q(0.99)).into();
        v["durable_ping_throughput_ratio"] = (d.rate() / p.rate()).into();
    }
    if let Some((floor_us, floor_ratio, move_ratio)) = floor {
        v["move_cpu_floor_us"] = floor_us.into();
        v["move_cpu_floor_ratio"] = floor_ratio.into();
        v["move_cpu_ratio"] = move_ratio.into();
    }
    println!("{v}");
}

/// The run as text.
pub(crate) fn print_text(args: &Args, ceilings: &Option<References>, moves: &Stats, rss: Option<u64>) {
    let floor = move_floor(ceilings, moves);
    let line = |name: &str, s: &Stats| {
        println!(
            "{name:>7}: {:>9.0} calls/s  p50 {:>7.2} ms  p99 {:>7.2} ms  p999 {:>7.2} ms  ({} calls, {} errors, {:.1} s)",
            s.rate(),
            s.q(0.5),
            s.q(0.99),
            s.q(0.999),
            s.calls,
            s.errors,
            s.wall_s
        )
    };
    println!(
        "{} concurrent games on {} connections, {}x{}{}",
        args.games,
        args.connections,
        args.size,
        args.size,
        if args.rounds > 1 {
            format!(", sums of {} rounds", args.rounds)
        } else {
            String::new()
        }
    );
    if let Some((p, d, r)) = &ceilings {
        line("ping", p);
        line("durable", d);
        line("reads", r);
    }
    line("moves", moves);
    for (name, s) in ceilings
        .iter()
        .flat_map(|(p, d, r)| [("ping", p), ("durable", d), ("reads", r)])
        .chain([("moves", moves)])
    {
        if let (Some(cpu), Some(per)) = (s.server_cpu_s, s.cpu_per_call_us()) {
            println!("  server CPU, {name}: {cpu:.2} s, {per:.1} µs a call");
        }
        if let Some(by_thread) = s.cpu_per_call_by_thread_us() {
            let parts: Vec<String> = by_thread.iter().map(|(t, us)| format!("{t} {us:.1}")).collect();
            println!("    by thread (µs a call): {}", parts.join(", "));
        }
    }
    if let Some((floor_us, floor_ratio, move_ratio)) = floor {
        println!(
            "  server CPU, a move's floor (reads + durable - ping): {floor_us:.1} µs, {floor_ratio:.2}x a durable ping; moves {move_ratio:.2}x"
        );
    }
    if let Some(w) = &moves.watch {
        println!(
            "  watchers: {} streams on one game, {}..{} moves each, delivery p50 {:.0} ms  p99 {:.0} ms",
            w.streams,
            w.fewest,
            w.most,
            ms(&w.delivery, 0.5),
            ms(&w.delivery, 0.99)
        );
        println!(
            "  every event once and in order: {} ({} events missed, repeated or out of order, in {} streams)",
            if w.gaps == 0 { "yes" } else { "NO" },
            w.gaps,
            w.streams_with_gaps
        );
        if !w.settled.is_empty() {
            println!(
                "  once all {} were open: {} items, delivery p50 {:.0} ms  p99 {:.0} ms",
                w.streams,
                w.settled.len(),
                ms(&w.settled, 0.5),
                ms(&w.settled, 0.99)
            );
        }
        println!(
            "  calls of the watched game: {}, p50 {:.2} ms  p99 {:.2} ms; of the other games: {}, p50 {:.2} ms  p99 {:.2} ms",
            w.watched_game.len(),
            ms(&w.watched_game, 0.5),
            ms(&w.watched_game, 0.99),
            w.other_games.len(),
            ms(&w.other_games, 0.5),
            ms(&w.other_games, 0.99)
        );
        if let Some(cpu) = moves.server_cpu_s {
            // All of the server's work (the players' calls too) over the items delivered.
            let items = w.delivery.len();
            println!(
                "  delivered: {items} items, {:.1} µs of server CPU an item",
                cpu * 1e6 / items.max(1) as f64
            );
        }
        // Each stage of a delivery, per item: the server's spectators' thread (with a
        // spectators' listener) and this process's, which receives every item of the
        // crowd in turn. The slower of the two bounds how soon the last watcher is told.
        let per_item = |s: f64| s * 1e6 / w.delivery.len().max(1) as f64;
        let sending = moves
            .server_threads
            .as_ref()
            .and_then(|t| t.get(crate::SPECTATORS_THREAD))
            .copied();
        if let (Some(send), Some(receive)) = (sending, w.receiving_cpu_s) {
            println!(
                "  per item: {:.1} µs of the server's spectators' thread, {:.1} µs of the load generator's receiving thread",
                per_item(send),
                per_item(receive)
            );
        }
    }
    if let Some(b) = rss {
        println!(
            "  server memory: {:.1} MB resident, {:.1} KB per game",
            b as f64 / 1e6,
            b as f64 / 1e3 / args.games.max(1) as f64
        );
    }
    if moves.setup_errors > 0 {
        println!("  {} games could not be set up", moves.setup_errors);
    }
    for s in ceilings.iter().flat_map(|(p, d, r)| [p, d, r]).chain([moves]) {
        for (kind, (n, first)) in &s.error_kinds {
            println!("  errors {kind}: {n} (first: {first})");
        }
    }
    if let Some((p, d, r)) = &ceilings {
        for (name, s) in [("durable", d), ("reads", r), ("moves", moves)] {
            println!(
                "{name}/ping: throughput {:.0}%, p99 {:.2}x",
                100.0 * s.rate() / p.rate(),
                s.q(0.99) / p.q(0.99)
            );
        }
    }
}
