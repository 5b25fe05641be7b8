//! A move's CPU without the network: the hub's command path, in one process, against a
//! read (the same answer, nothing decided or written) and a durable ping (one probe row
//! through the same group commit). GAMES concurrent 19x19 games (1,000 by default), each
//! its own task, play random legal moves with request ids and seat tokens as clients send
//! them, each answer converted to protobuf as the service does; then each game is read as
//! often, then as many durable pings are made. The figures are CPU per call by thread:
//! the hub's (this runtime, which also plays the clients' side: about 2 µs of a move is
//! choosing it), the store's writer task and SQLite's worker threads, so a store's group
//! commit counts in full. Run on the embedded SQLite store and on the in-memory store, so what the
//! store adds to a move shows beside what the hub does. Pin it to one core for per-core
//! figures:
//!
//! `taskset -c 0 cargo run --release -p weiqi-server --example move_cost [GAMES] [MOVES]
//! [PARK_AFTER_MS]`: with a third argument of 0, every game rests packed after each
//! command and is unpacked for the next, as at a human pace.

use std::future::Future;
use std::sync::Arc;

use rand::SeedableRng;
use rand::rngs::SmallRng;
use tokio::sync::watch;
use weiqi_game::{Command, Settings};
use weiqi_rules::{Move, Policy, Rules, State};
use weiqi_server::convert;
use weiqi_server::hub::{Caller, Hub, Mutation};
use weiqi_server::metrics::Metrics;
use weiqi_store::{EventStore, MemoryStore, SqliteStore};

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1).map(|s| s.parse::<usize>());
    let games = args.next().transpose()?.unwrap_or(1000);
    let moves = args.next().transpose()?.unwrap_or(60);
    let park_after = args.next().transpose()?.map(|ms| ms as u64);
    let dir = std::env::temp_dir().join(format!("weiqi-move-cost-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    println!("{games} concurrent 19x19 games, {moves} moves each; CPU per call by thread");
    // The memory store first: a store's threads that end take their CPU time with them.
    report("memory", measure(MemoryStore::new(), games, moves, park_after).await?);
    let sqlite = SqliteStore::open(&dir.join("weiqi.db")).await?;
    report("SQLite", measure(sqlite, games, moves, park_after).await?);
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

/// CPU per call: (move, read, durable ping).
async fn measure<S: EventStore>(
    store: S,
    games: usize,
    moves: usize,
    park_after: Option<u64>,
) -> anyhow::Result<(Cpu, Cpu, Cpu)> {
    let (_stop, rx) = watch::channel(false);
    let mut hub = Hub::new(store, vec![9; 32], Metrics::new(), rx);
    if let Some(ms) = park_after {
        hub = hub.with_park_after(ms);
    }
    let hub = Arc::new(hub);
    let mut seats = Vec::with_capacity(games);
    for _ in 0..games {
        let c = hub.create(Settings::casual(19), None, None, "").await?;
        let (guest, _) = hub.join(&c.game_id, None, None, "").await?;
        seats.push((c.game_id, [c.seat_token, guest]));
    }
    let played = per_game(&seats, |(id, tokens), g| {
        let hub = hub.clone();
        async move {
            let mut local = State::new(19, Rules::default())?;
            let mut rng = SmallRng::seed_from_u64(g as u64);
            let mut n = 0;
            while n < moves && !local.is_over() {
                let mv = local.choose_random(Policy::Light, &mut rng);
                let cmd = match mv {
                    Move::Place(point) => Command::Play { point, lag_ms: 0 },
                    Move::Pass => Command::Pass { lag_ms: 0 },
                };
                let m = Mutation {
                    request_id: format!("g{g}-m{n}"),
                    expected_move_number: Some(local.move_number() as u32),
                };
                let token = Some(tokens[local.to_move().index()].as_str());
                let outcome = hub.run(&id, Caller::Token(token), cmd, m).await?;
                std::hint::black_box(convert::outcome_to(outcome, weiqi_proto::v1::StateView::Full));
                local.play(mv)?;
                n += 1;
            }
            Ok(n)
        }
    })
    .await?;
    let read = per_game(&seats, |(id, _), _| {
        let hub = hub.clone();
        async move {
            for _ in 0..moves {
                std::hint::black_box(convert::view_to(&hub.view(&id).await?));
            }
            Ok(moves)
        }
    })
    .await?;
    let pinged = per_game(&seats, |_, _| {
        let hub = hub.clone();
        async move {
            for _ in 0..moves {
                hub.durable_ping(&[0; 16]).await?;
            }
            Ok(moves)
        }
    })
    .await?;
    Ok((played, read, pinged))
}

/// Runs `work` for every game at once, each its own task; returns the CPU microseconds
/// per call (`work` returns how many calls it made) of each kind of thread.
async fn per_game<F, Fut>(seats: &[(String, [String; 2])], work: F) -> anyhow::Result<Cpu>
where
    F: Fn((String, [String; 2]), usize) -> Fut,
    Fut: Future<Output = anyhow::Result<usize>> + Send + 'static,
{
    let before = Cpu::now()?;
    let tasks: Vec<_> = seats
        .iter()
        .enumerate()
        .map(|(g, seat)| tokio::spawn(work(seat.clone(), g)))
        .collect();
    let mut calls = 0;
    for t in tasks {
        calls += t.await??;
    }
    Ok(Cpu::now()?.since(&before, calls))
}

/// CPU time by kind of thread: the hub's (this runtime's), the store's writer task, and
/// SQLite's own worker threads (sqlx runs each connection on one).
#[derive(Clone, Copy, Default)]
struct Cpu {
    hub: f64,
    writer: f64,
    sqlite: f64,
}

impl Cpu {
    /// So far, in seconds (Linux `/proc`: user and system clock ticks, 100 a second).
    fn now() -> anyhow::Result<Cpu> {
        let mut cpu = Cpu::default();
        for task in std::fs::read_dir("/proc/self/task")? {
            let Ok(stat) = std::fs::read_to_string(task?.path().join("stat")) else {
                continue; // (a thread that ended meanwhile)
            };
            // The name is in parentheses and may hold spaces; utime and stime are the 12th
            // and 13th fields after it.
            let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
                continue;
            };
            let f: Vec<&str> = stat[close + 1..].split_whitespace().collect();
            let ticks = f.get(11).zip(f.get(12)).map_or(0, |(u, s)| {
                u.parse::<u64>().unwrap_or(0) + s.parse::<u64>().unwrap_or(0)
            });
            let secs = ticks as f64 / 100.0;
            match &stat[open + 1..close] {
                n if n.starts_with("weiqi-store") => cpu.writer += secs,
                n if n.starts_with("sqlx-sqlite") => cpu.sqlite += secs,
                _ => cpu.hub += secs,
            }
        }
        Ok(cpu)
    }

    /// Microseconds per call since `before`.
    fn since(&self, before: &Cpu, calls: usize) -> Cpu {
        let per = |a: f64, b: f64| (a - b) * 1e6 / calls.max(1) as f64;
        Cpu {
            hub: per(self.hub, before.hub),
            writer: per(self.writer, before.writer),
            sqlite: per(self.sqlite, before.sqlite),
        }
    }

    fn total(&self) -> f64 {
        self.hub + self.writer + self.sqlite
    }
}

impl std::fmt::Display for Cpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:6.1} µs (hub {:5.1}, store writer {:4.1}, SQLite {:5.1})",
            self.total(),
            self.hub,
            self.writer,
            self.sqlite
        )
    }
}

fn report(store: &str, (mv, read, ping): (Cpu, Cpu, Cpu)) {
    println!("{store}:");
    println!("  move         {mv}");
    println!("  read         {read}");
    println!("  durable ping {ping}");
    let ratio = if ping.total() >= 0.5 {
        format!("{:.2}x", mv.total() / ping.total())
    } else {
        "-".to_string()
    };
    println!(
        "  move / durable ping {ratio}; move - read - durable ping {:.1} µs",
        mv.total() - read.total() - ping.total()
    );
}
