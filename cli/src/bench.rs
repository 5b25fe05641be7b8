//! `weiqi bench playouts`: random games per policy, size and ko check (exact superko
//! through the full engine, or simple ko on the playout runner); `weiqi bench selfplay`.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Subcommand;
use rand::SeedableRng;
use rand::rngs::SmallRng;
use serde_json::json;
use weiqi_rules::{KoCheck, Playout, PlayoutOptions, Policy, Preset, State};

#[derive(Subcommand)]
pub enum BenchCommand {
    /// Plays random games for a while and reports games and moves per CPU second and the
    /// mean game length, for each size, policy and ko check given (comma-separated lists).
    Playouts {
        #[arg(long, value_delimiter = ',', default_value = "9")]
        size: Vec<u8>,
        /// Seconds per configuration.
        #[arg(long, default_value_t = 5.0)]
        seconds: f64,
        /// uniform: any legal move or pass; light: no filling own single-point eyes;
        /// heavy: light plus captures, atari escapes, 3x3 patterns, no big self-atari.
        #[arg(long, value_delimiter = ',', default_value = "uniform")]
        policy: Vec<Policy>,
        /// exact: the game's superko through the full engine; simple: simple ko only, no
        /// history (what search engines use in playouts).
        #[arg(long, value_delimiter = ',', default_value = "exact")]
        ko: Vec<KoCheck>,
        #[arg(long, default_value_t = 1)]
        threads: usize,
        #[arg(long, default_value = "chinese")]
        rules: Preset,
        /// Safety cap on plies per game (uniform random games end by two passes long before).
        #[arg(long)]
        max_moves: Option<usize>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long)]
        json: bool,
    },
    /// Self-play positions with features and targets, in memory, per CPU second.
    Selfplay {
        #[arg(long, default_value_t = 9)]
        size: u8,
        #[arg(long, default_value_t = 5.0)]
        seconds: f64,
        #[arg(long, default_value = "uniform")]
        policy: weiqi_selfplay::PlayPolicy,
        #[arg(long, default_value_t = 1)]
        threads: usize,
        #[arg(long)]
        json: bool,
    },
}

pub fn run(cmd: BenchCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        BenchCommand::Playouts {
            size,
            seconds,
            policy,
            ko,
            threads,
            rules,
            max_moves,
            seed,
            json,
        } => {
            let opts = PlayoutBench {
                seconds,
                threads,
                rules,
                max_moves,
                seed,
                json,
            };
            if !json {
                println!("rules {rules}, {threads} thread(s), {seconds} s per row; figures per CPU second");
                println!(
                    "{:<7} {:<7} {:<6} {:>9} {:>11} {:>7} {:>12} {:>12} {:>10}",
                    "size", "policy", "ko", "games", "moves", "cpu_s", "games/cpu_s", "moves/cpu_s", "mean_len"
                );
            }
            for &sz in &size {
                for &p in &policy {
                    for &k in &ko {
                        playouts(sz, p, k, &opts)?;
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        BenchCommand::Selfplay {
            size,
            seconds,
            policy,
            threads,
            json,
        } => selfplay(size, seconds, policy, threads, json),
    }
}

/// Runs games on `threads` threads for `seconds`: each thread builds its player with
/// `make(thread)`, then calls it with the game index until time is up; each call plays one
/// game and returns how many items (moves, positions) it produced. Returns (games, items,
/// wall seconds, CPU seconds).
fn timed_games<F: FnMut(u64) -> u64>(
    seconds: f64,
    threads: usize,
    make: &(dyn Fn(usize) -> F + Sync),
) -> (u64, u64, f64, f64) {
    let deadline = Duration::from_secs_f64(seconds.max(0.0));
    let cpu0 = cpu_time::ProcessTime::now();
    let t0 = Instant::now();
    let per_thread: Vec<(u64, u64)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads.max(1))
            .map(|t| {
                s.spawn(move || {
                    let mut game = make(t);
                    let (mut games, mut items) = (0u64, 0u64);
                    while t0.elapsed() < deadline {
                        items += game(games);
                        games += 1;
                    }
                    (games, items)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("bench thread")).collect()
    });
    let (wall, cpu) = (t0.elapsed().as_secs_f64(), cpu0.elapsed().as_secs_f64());
    (
        per_thread.iter().map(|p| p.0).sum(),
        per_thread.iter().map(|p| p.1).sum(),
        wall,
        cpu,
    )
}

/// Self-play positions recorded in memory with features and targets (no disk), per CPU
/// second: the figure to compare with other engines' observation-tensor loops.
fn selfplay(
    size: u8,
    seconds: f64,
    policy: weiqi_selfplay::PlayPolicy,
    threads: usize,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let rules = weiqi_rules::Rules::default();
    let max_moves = weiqi_rules::move_cap(size);
    let (games, positions, wall, cpu) = timed_games(seconds, threads, &|t| {
        move |index| {
            let id = weiqi_selfplay::game_id(t as u64, index);
            weiqi_selfplay::play_game(size, rules, policy, id, id, max_moves, false).positions as u64
        }
    });
    if json {
        println!(
            "{}",
            json!({"size": size, "threads": threads, "games": games, "positions": positions, "wall_s": wall, "cpu_s": cpu,
                   "positions_per_s": positions as f64 / wall, "positions_per_cpu_s": positions as f64 / cpu})
        );
    } else {
        println!(
            "{size}x{size} self-play x{threads}: {games} games, {positions} positions in {wall:.2} s wall, {cpu:.2} s CPU"
        );
        println!(
            "  {:.0} positions/s, {:.0} positions per CPU second",
            positions as f64 / wall,
            positions as f64 / cpu
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Settings shared by every configuration of one `bench playouts` run.
struct PlayoutBench {
    seconds: f64,
    threads: usize,
    rules: Preset,
    max_moves: Option<usize>,
    seed: u64,
    json: bool,
}

/// One configuration: games for `b.seconds`, one line (or JSON object) of figures.
fn playouts(size: u8, policy: Policy, ko: KoCheck, b: &PlayoutBench) -> anyhow::Result<()> {
    let proto = State::new(size, b.rules.rules())?;
    let opts = PlayoutOptions {
        policy,
        ko,
        max_moves: b.max_moves.unwrap_or(size as usize * size as usize * 20),
        record: false,
    };
    let seed = b.seed;
    let (games, moves, wall, cpu) = timed_games(b.seconds, b.threads, &|t| {
        let mut runner = Playout::new(opts);
        let proto = &proto;
        move |index| {
            // One RNG stream per thread and game, from the seed.
            let stream = seed
                .wrapping_mul(0x9E37_79B9)
                .wrapping_add(t as u64)
                .wrapping_mul(1 << 32)
                .wrapping_add(index);
            let mut rng = SmallRng::seed_from_u64(stream);
            runner.run(proto, &mut rng) as u64
        }
    });
    let policy_name = format!("{policy:?}").to_lowercase();
    let mean = moves as f64 / games.max(1) as f64;
    if b.json {
        println!(
            "{}",
            json!({
                "size": size, "policy": policy_name, "ko": ko.to_string(), "threads": b.threads,
                "rules": b.rules.name(), "games": games, "moves": moves, "wall_s": wall, "cpu_s": cpu,
                "games_per_s": games as f64 / wall, "moves_per_s": moves as f64 / wall,
                "games_per_cpu_s": games as f64 / cpu, "moves_per_cpu_s": moves as f64 / cpu,
                "mean_moves_per_game": mean,
            })
        );
    } else {
        println!(
            "{:<7} {:<7} {:<6} {:>9} {:>11} {:>7.2} {:>12.0} {:>12.0} {:>10.1}",
            format!("{size}x{size}"),
            policy_name,
            ko.to_string(),
            games,
            moves,
            cpu,
            games as f64 / cpu,
            moves as f64 / cpu,
            mean
        );
    }
    Ok(())
}
