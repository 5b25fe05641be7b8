//! `weiqi bench playouts`: random games with full legality checking (exact superko).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Subcommand;
use rand::SeedableRng;
use rand::rngs::SmallRng;
use serde_json::json;
use weiqi_rules::{Policy, Preset, State};

#[derive(Subcommand)]
pub enum BenchCommand {
    /// Plays random games for a while and reports games/s and moves/s.
    Playouts {
        #[arg(long, default_value_t = 9)]
        size: u8,
        #[arg(long, default_value_t = 5.0)]
        seconds: f64,
        /// uniform: any legal move or pass; light: no filling own single-point eyes.
        #[arg(long, default_value = "uniform")]
        policy: Policy,
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
            threads,
            rules,
            max_moves,
            seed,
            json,
        } => playouts(size, seconds, policy, threads, rules, max_moves, seed, json),
        BenchCommand::Selfplay {
            size,
            seconds,
            policy,
            threads,
            json,
        } => selfplay(size, seconds, policy, threads, json),
    }
}

/// Runs `game(thread, index)` repeatedly on `threads` threads for `seconds`; each call
/// plays one game and returns how many items (moves, positions) it produced. Returns
/// (games, items, wall seconds, CPU seconds).
fn timed_games(seconds: f64, threads: usize, game: &(dyn Fn(usize, u64) -> u64 + Sync)) -> (u64, u64, f64, f64) {
    let deadline = Duration::from_secs_f64(seconds.max(0.0));
    let cpu0 = cpu_time::ProcessTime::now();
    let t0 = Instant::now();
    let per_thread: Vec<(u64, u64)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads.max(1))
            .map(|t| {
                s.spawn(move || {
                    let (mut games, mut items) = (0u64, 0u64);
                    while t0.elapsed() < deadline {
                        items += game(t, games);
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
    let max_moves = size as usize * size as usize * 4;
    let (games, positions, wall, cpu) = timed_games(seconds, threads, &|t, index| {
        let id = weiqi_selfplay::game_id(t as u64, index);
        weiqi_selfplay::play_game(size, rules, policy, id, id, max_moves, false).positions as u64
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

#[allow(clippy::too_many_arguments)]
fn playouts(
    size: u8,
    seconds: f64,
    policy: Policy,
    threads: usize,
    rules: Preset,
    max_moves: Option<usize>,
    seed: u64,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let proto = State::new(size, rules.rules())?;
    let cap = max_moves.unwrap_or(size as usize * size as usize * 20);
    let (games, moves, wall, cpu) = timed_games(seconds, threads, &|t, index| {
        // One RNG stream per thread and game, from the seed.
        let stream = seed
            .wrapping_mul(0x9E37_79B9)
            .wrapping_add(t as u64)
            .wrapping_mul(1 << 32)
            .wrapping_add(index);
        let mut rng = SmallRng::seed_from_u64(stream);
        proto.clone().play_random_game(policy, &mut rng, cap) as u64
    });
    if json {
        println!(
            "{}",
            json!({
                "size": size, "policy": format!("{policy:?}").to_lowercase(), "threads": threads, "rules": rules.name(),
                "games": games, "moves": moves, "wall_s": wall, "cpu_s": cpu,
                "games_per_s": games as f64 / wall, "moves_per_s": moves as f64 / wall,
                "games_per_cpu_s": games as f64 / cpu, "moves_per_cpu_s": moves as f64 / cpu,
                "mean_moves_per_game": moves as f64 / games.max(1) as f64,
            })
        );
    } else {
        println!(
            "{size}x{size} {policy:?} x{threads} ({rules}): {games} games, {moves} moves in {wall:.2} s wall, {cpu:.2} s CPU"
        );
        println!(
            "  per wall second: {:.0} games/s, {:.0} moves/s",
            games as f64 / wall,
            moves as f64 / wall
        );
        println!(
            "  per CPU second:  {:.0} games/s, {:.0} moves/s",
            games as f64 / cpu,
            moves as f64 / cpu
        );
    }
    Ok(ExitCode::SUCCESS)
}
