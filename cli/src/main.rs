//! `weiqi`: the command-line face of the weiqi rules engine (and, later, the service).

mod bench;
mod gtp;
mod matchup;
mod referee;
mod replay;
mod review;
mod shapes;
mod training;
mod trainloop;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

// The server allocates per request (game clones, protobuf, JSON); glibc's malloc spent
// ~40% of its CPU time under load, mimalloc a fraction of that.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use weiqi_rules::{Preset, Rules, State, perft};

#[derive(clap::Args)]
struct SelfplayArgs {
    #[arg(long, default_value_t = 9)]
    size: u8,
    #[arg(long, default_value_t = 100)]
    games: u64,
    /// Where the shards go: a directory, file:///DIR, or s3://bucket/prefix (any
    /// S3-compatible store; credentials and endpoint from the AWS_* environment).
    /// Shards are written create-only.
    #[arg(long)]
    out: String,
    /// Worker threads (default: all cores); with a network, one search lane per thread.
    #[arg(long)]
    threads: Option<usize>,
    /// uniform | light | net:PATH (a trained network with PUCT search; feature `tch`).
    #[arg(long, default_value = "light")]
    policy: String,
    /// PUCT simulations per move (net policies).
    #[arg(long, default_value_t = 32)]
    visits: u32,
    /// Games in flight per lane: their leaf evaluations form one batch (net policies).
    #[arg(long, default_value_t = 64)]
    in_flight: usize,
    /// Gumbel AlphaZero's root instead of PUCT's (net policies): M root moves sampled by
    /// Gumbel-top-M, sequential halving over them, the completed-Q policy as the target.
    #[arg(long, value_name = "M", value_parser = clap::value_parser!(u32).range(1..=362))]
    gumbel: Option<u32>,
    /// Resign when the searched value falls below this (net policies; e.g. -0.9).
    #[arg(long, allow_hyphen_values = true)]
    resign_threshold: Option<f32>,
    /// Fraction of games that never resign, to audit the threshold.
    #[arg(long, default_value_t = 0.1)]
    resign_audit: f64,
    #[arg(long, default_value = "chinese")]
    rules: Preset,
    /// Komi (default: the preset's).
    #[arg(long)]
    komi: Option<f64>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Also write games/<game_id>.sgf.
    #[arg(long)]
    sgf: bool,
    #[arg(long, default_value_t = 256)]
    games_per_shard: u64,
    /// Print a JSON summary instead of text.
    #[arg(long)]
    json: bool,
    /// `free-seats`: seed 002's variant (free seat stones, then bid komi; `variant/shard-NNNNN.jsonl`
    /// records each game's opening and bids).
    #[arg(long)]
    variant: Option<String>,
    /// Variant: no seat stone on the first line.
    #[arg(long)]
    no_first_line: bool,
    /// Variant: bids in whole or half points (a draw can happen), not n + 0.5.
    #[arg(long)]
    whole_point_bids: bool,
    /// Variant: light playouts behind each side's fair-komi estimate.
    #[arg(long, default_value_t = 64)]
    bid_playouts: u32,
    /// Variant: how far each side's bid may stray from the estimate, in points.
    #[arg(long, default_value_t = 3.0)]
    bid_noise: f64,
    /// Workers sharing the run: each plays every `workers`-th shard, and together they
    /// write what one process would (the same shard files, the same games).
    #[arg(long, default_value_t = 1)]
    workers: u64,
    /// This worker's index, 0-based (a Kubernetes Indexed Job's `JOB_COMPLETION_INDEX`).
    #[arg(long, env = "JOB_COMPLETION_INDEX", default_value_t = 0)]
    worker: u64,
    /// Where a net policy's network runs: cpu, cuda or cuda:N (a CUDA build of libtorch).
    #[arg(long, default_value = "cpu")]
    device: String,
}

#[derive(Parser)]
#[command(
    name = "weiqi",
    version,
    about = "Go (weiqi/baduk) under the Chinese rules: rules engine tools"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Replays SGF records through the engine; prints one JSON object per file.
    Replay {
        /// Rules preset: chinese, tromp-taylor, japanese, korean, aga, new-zealand, ing.
        #[arg(long, default_value = "chinese")]
        rules: Preset,
        #[arg(required = true)]
        files: Vec<std::path::PathBuf>,
    },
    /// Counts legal move sequences of a given length from the empty board.
    Perft {
        #[arg(long)]
        size: u8,
        #[arg(long)]
        depth: u32,
        /// Count passes as moves (two consecutive passes end the game).
        #[arg(long)]
        passes: bool,
        #[arg(long, default_value = "chinese")]
        rules: Preset,
    },
    /// Scores the final position of a record with the given dead stones removed.
    Score {
        file: std::path::PathBuf,
        /// Dead stones as GTP vertices, comma-separated (one stone marks its chain).
        #[arg(long, value_delimiter = ',')]
        dead: Vec<String>,
        #[arg(long)]
        json: bool,
        #[arg(long, default_value = "chinese")]
        rules: Preset,
    },
    /// Runs the gRPC game service (SQLite in the data folder, no other setup).
    Serve {
        /// Address for gRPC and gRPC-Web (default 127.0.0.1:50051).
        #[arg(long)]
        listen: Option<String>,
        /// Folder for the database (default ./weiqi-data).
        #[arg(long)]
        data_dir: Option<std::path::PathBuf>,
        /// TOML config file (keys as in `ServerConfig`; `WEIQI__*` env vars override it).
        #[arg(long)]
        config: Option<std::path::PathBuf>,
        /// Prometheus endpoint address (default 127.0.0.1:9464; empty to disable).
        #[arg(long)]
        metrics_listen: Option<String>,
        /// The web app's address, with gRPC-Web on the same origin (default
        /// 127.0.0.1:8080; empty to disable).
        #[arg(long)]
        web_listen: Option<String>,
        /// The spectators' gRPC address, served at the lowest priority so that a large
        /// audience never delays a move (default: empty, none).
        #[arg(long)]
        spectators_listen: Option<String>,
    },
    /// Plays games in parallel and writes training shards (.npz), a manifest and SGF.
    Selfplay(SelfplayArgs),
    /// Training data: `index DIR` checks and counts a run's shards.
    Data {
        #[command(subcommand)]
        what: DataCommand,
    },
    /// Trains the policy/value network on self-play data (cargo feature `tch`).
    Train(training::TrainArgs),
    /// A checkpoint's mean losses on held-out self-play data (policy cross-entropy against
    /// the search's targets, value and ownership MSE), as in training but without updating
    /// it (cargo feature `tch`).
    Evaluate(training::EvaluateArgs),
    /// The training loop: self-play, train, gate, Elo anchors, generation after generation,
    /// resumable, with SVG plots in DIR/report (cargo feature `tch`).
    Loop(trainloop::LoopArgs),
    /// Pits two players against each other: uniform, light, net:PATH (feature `tch`), or
    /// gtp:COMMAND (any GTP engine, e.g. "gtp:gnugo --mode gtp --level 1").
    Arena {
        a: String,
        b: String,
        #[arg(long, default_value_t = 100)]
        games: u32,
        #[arg(long, default_value_t = 9)]
        size: u8,
        #[arg(long, default_value_t = 7.5)]
        komi: f64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Random (light) plies at the start of every game, so that games differ.
        #[arg(long, default_value_t = 4)]
        opening: usize,
        /// PUCT simulations per move for net players.
        #[arg(long, default_value_t = 32)]
        visits: u32,
        /// Net players search with Gumbel AlphaZero's root over M sampled moves (no noise:
        /// the best by prior and value), instead of PUCT's.
        #[arg(long, value_name = "M", value_parser = clap::value_parser!(u32).range(1..=362))]
        gumbel: Option<u32>,
        /// Where net players' networks run: cpu, cuda or cuda:N.
        #[arg(long, default_value = "cpu")]
        device: String,
        #[arg(long)]
        json: bool,
    },
    /// Speaks GTP (Go Text Protocol v2) on standard input and output: weiqi as an engine
    /// for GUIs (Sabaki, GoGui, Lizzie), referees and server bridges.
    Gtp(gtp::GtpArgs),
    /// Brings a GTP engine onto the service: seeks or joins games and plays them (as
    /// gtp2ogs does for OGS).
    Bot(weiqi_bot::BotArgs),
    /// Plays two GTP engines against each other (colours alternating), refereed by the
    /// rules: an illegal move loses, the end is counted by area.
    Match(matchup::MatchArgs),
    /// Reviews a game (SGF) with the tree search: every move's win rates before and after,
    /// the search's choice, what the move lost, and the biggest mistakes.
    Review(review::ReviewArgs),
    /// Fits the tree search's shape weights from game records (how often a move of each
    /// local shape was played when it could be).
    Shapes(shapes::ShapesArgs),
    /// Runs a game script (JSON lines) through the referee library and prints every event.
    Referee { script: std::path::PathBuf },
    /// Benchmarks.
    Bench {
        #[command(subcommand)]
        what: bench::BenchCommand,
    },
}

/// glibc settings for processes that run a network: libtorch allocates its activations
/// with glibc's malloc, whose default thresholds return those blocks to the kernel after
/// every forward pass and fault them in again (a fifth of self-play time was in the kernel).
/// Keeping them made network self-play 1.3x and training 1.2x faster here.
const MALLOC_TUNABLES: &str = "glibc.malloc.mmap_threshold=268435456:glibc.malloc.trim_threshold=268435456";

/// Whether these arguments run a network (training, or a `net:` or `hybrid:` player).
fn runs_network(args: &[String]) -> bool {
    (matches!(args.get(1).map(String::as_str), Some("train" | "loop")) && !args.iter().any(|a| a == "--report-only"))
        || (matches!(args.get(1).map(String::as_str), Some("selfplay" | "arena" | "gtp"))
            && args.iter().any(|a| a.contains("net:") || a.contains("hybrid:")))
}

/// Runs this same command again with [`MALLOC_TUNABLES`] (glibc reads them only at process
/// start) when it runs a network and no tunables are set; None to carry on in-process.
fn rerun_with_malloc_tunables() -> Option<ExitCode> {
    if !cfg!(all(feature = "tch", target_os = "linux", target_env = "gnu"))
        || std::env::var_os("GLIBC_TUNABLES").is_some()
    {
        return None;
    }
    let args: Vec<String> = std::env::args().collect();
    if !runs_network(&args) {
        return None;
    }
    let exe = std::env::current_exe().ok()?;
    let status = std::process::Command::new(exe)
        .args(&args[1..])
        .env("GLIBC_TUNABLES", MALLOC_TUNABLES)
        .status()
        .ok()?;
    Some(ExitCode::from(status.code().unwrap_or(1).clamp(0, 255) as u8))
}

fn main() -> ExitCode {
    if let Some(code) = rerun_with_malloc_tunables() {
        return code;
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Replay { rules, files } => Ok(replay::replay_files(rules, &files)),
        Command::Perft {
            size,
            depth,
            passes,
            rules,
        } => run_perft(size, depth, passes, rules.rules()),
        Command::Score {
            file,
            dead,
            json,
            rules,
        } => replay::score_file(&file, &dead, json, rules),
        Command::Bench { what } => bench::run(what),
        Command::Referee { script } => referee::run(&script),
        Command::Gtp(args) => gtp::run(args).map(|()| ExitCode::SUCCESS),
        Command::Bot(args) => weiqi_bot::run(args),
        Command::Match(args) => matchup::run(args).map(|()| ExitCode::SUCCESS),
        Command::Review(args) => review::run(args),
        Command::Shapes(args) => shapes::run(args).map(|()| ExitCode::SUCCESS),
        Command::Train(args) => training::train(args),
        Command::Evaluate(args) => training::evaluate(args),
        Command::Loop(args) => trainloop::run(args),
        Command::Arena {
            a,
            b,
            games,
            size,
            komi,
            seed,
            opening,
            visits,
            gumbel,
            device,
            json,
        } => arena(
            &a,
            &b,
            games,
            size,
            komi,
            seed,
            opening,
            (visits, gumbel),
            &device,
            json,
        ),
        Command::Selfplay(args) => selfplay(args),
        Command::Data {
            what: DataCommand::Index { dir, json },
        } => data_index(&dir, json),
        Command::Serve {
            listen,
            data_dir,
            config,
            metrics_listen,
            web_listen,
            spectators_listen,
        } => serve(listen, data_dir, config, metrics_listen, web_listen, spectators_listen),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn arena(
    a: &str,
    b: &str,
    games: u32,
    size: u8,
    komi: f64,
    seed: u64,
    opening: usize,
    (visits, gumbel): (u32, Option<u32>),
    device: &str,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let player = |spec: &str, k: u64| weiqi_trainer::runs::player(spec, visits, gumbel, device, seed.wrapping_add(k));
    let (mut pa, mut pb) = (player(a, 0)?, player(b, 1)?);
    let rules = Preset::Chinese.rules().with_komi(komi);
    let r = weiqi_trainer::arena::arena(pa.as_mut(), pb.as_mut(), games, size, rules, seed, opening);
    if let Some(why) = pa.failure().or_else(|| pb.failure()) {
        anyhow::bail!("{why} (no result: a player stopped playing)");
    }
    if json {
        println!("{}", serde_json::to_string(&r)?);
    } else {
        println!(
            "{} vs {}: {} wins, {} losses, {} draws in {} games: {:.1}% (95% CI {:.1}%..{:.1}%)",
            r.a,
            r.b,
            r.a_wins,
            r.b_wins,
            r.draws,
            r.games,
            100.0 * r.a_rate,
            100.0 * r.ci95.0,
            100.0 * r.ci95.1
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// What `weiqi data` does.
#[derive(clap::Subcommand)]
enum DataCommand {
    /// Checks every worker directory (one `manifest.json` each) under DIR: each shard
    /// readable, with this schema's shapes and dtypes, finite numbers in range, the rows
    /// and games its manifest lists, no game in two shards; then prints the totals. The
    /// first bad file is the error, by name (exit status 1).
    Index {
        /// A directory, file:///DIR or s3://bucket/prefix.
        dir: String,
        #[arg(long)]
        json: bool,
    },
}

fn data_index(dir: &str, json: bool) -> anyhow::Result<ExitCode> {
    let index = weiqi_selfplay::index::index(&weiqi_selfplay::Objects::open(dir)?)?;
    if json {
        println!("{}", serde_json::to_string(&index)?);
        return Ok(ExitCode::SUCCESS);
    }
    for d in &index.dirs {
        println!(
            "{}: worker {} of {}, {}x{}: {} shards, {} games, {} positions, {} bytes",
            d.dir, d.worker, d.workers, d.board_size, d.board_size, d.shards, d.games, d.positions, d.bytes
        );
    }
    println!(
        "total: {} shards, {} games, {} positions, {} bytes, every shard checked",
        index.shards, index.games, index.positions, index.bytes
    );
    Ok(ExitCode::SUCCESS)
}

fn selfplay(args: SelfplayArgs) -> anyhow::Result<ExitCode> {
    let SelfplayArgs {
        size,
        games,
        out,
        threads,
        policy,
        visits,
        in_flight,
        gumbel,
        resign_threshold,
        resign_audit,
        rules,
        komi,
        seed,
        sgf,
        games_per_shard,
        json,
        variant,
        no_first_line,
        whole_point_bids,
        bid_playouts,
        bid_noise,
        workers,
        worker,
        device,
    } = args;
    let variant = match variant.as_deref() {
        None => None,
        Some("free-seats") => Some(weiqi_selfplay::variant::FreeSeatsConfig {
            no_first_line,
            half_point_bids: !whole_point_bids,
            bid_playouts,
            bid_noise,
        }),
        Some(other) => anyhow::bail!("unknown variant {other:?} (free-seats)"),
    };
    anyhow::ensure!(
        variant.is_none() || !policy.starts_with("net:"),
        "--variant plays with the uniform or light policy"
    );
    let out = &weiqi_selfplay::Objects::open(&out)?;
    let net = policy.strip_prefix("net:").map(String::from);
    let player_name = net.as_ref().map(|p| format!("net:{p}"));
    let policy: weiqi_selfplay::PlayPolicy = if net.is_some() {
        weiqi_selfplay::PlayPolicy::Light
    } else {
        policy.parse().map_err(|e: String| anyhow::anyhow!(e))?
    };
    anyhow::ensure!(
        (0.0..=1.0).contains(&resign_audit),
        "--resign-audit is a fraction in 0..1"
    );
    anyhow::ensure!(
        gumbel.is_none() || net.is_some(),
        "--gumbel is a search's root: it needs a net:PATH policy"
    );
    let search = net.as_ref().map(|_| weiqi_selfplay::SearchConfig {
        in_flight: in_flight.max(1),
        resign_threshold,
        resign_audit,
        gumbel,
        ..weiqi_selfplay::SearchConfig::for_size(size, visits)
    });
    let config = weiqi_selfplay::Config {
        size,
        games,
        seed,
        policy,
        rules: rules.name().to_string(),
        komi: komi.unwrap_or(rules.rules().komi),
        games_per_shard,
        max_moves: weiqi_rules::move_cap(size),
        sgf,
        player: player_name,
        search,
        variant,
        partition: weiqi_selfplay::Partition { workers, worker },
    };
    let run = weiqi_trainer::runs::SelfplayRun {
        config,
        net,
        device,
        threads: threads.unwrap_or(0),
        progress: !json,
    };
    let report = weiqi_trainer::runs::selfplay(&run, out)?;
    let (manifest, wall, cpu) = (&report.manifest, report.wall_s, report.cpu_s);
    let summary = serde_json::json!({
        "games": manifest.games, "positions": manifest.positions, "shards": manifest.shards.len(),
        "played_shards": report.played_shards,
        "threads": report.threads, "wall_s": wall, "cpu_s": cpu,
        "games_per_s": manifest.games as f64 / wall, "positions_per_s": manifest.positions as f64 / wall,
        "positions_per_cpu_s": manifest.positions as f64 / cpu,
        "black_wins": manifest.results.black_wins, "white_wins": manifest.results.white_wins,
        "draws": manifest.results.draws, "resigned": manifest.results.resigned,
        "resign_audit_games": manifest.results.resign_audit_games, "false_resigns": manifest.results.false_resigns,
    });
    if json {
        println!("{summary}");
    } else {
        println!(
            "{} games, {} positions in {} shards -> {}\n{:.1} s wall, {:.1} s CPU: {:.0} games/s, {:.0} positions/s, {:.0} positions per CPU s",
            manifest.games,
            manifest.positions,
            manifest.shards.len(),
            out.name(""),
            wall,
            cpu,
            manifest.games as f64 / wall,
            manifest.positions as f64 / wall,
            manifest.positions as f64 / cpu
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn serve(
    listen: Option<String>,
    data_dir: Option<std::path::PathBuf>,
    config: Option<std::path::PathBuf>,
    metrics_listen: Option<String>,
    web_listen: Option<String>,
    spectators_listen: Option<String>,
) -> anyhow::Result<ExitCode> {
    let mut cfg = weiqi_server::ServerConfig::load(config.as_deref())?;
    if let Some(w) = web_listen {
        cfg.web_listen = w;
    }
    if let Some(s) = spectators_listen {
        cfg.spectators_listen = s;
    }
    if let Some(l) = listen {
        cfg.listen = l;
    }
    if let Some(d) = data_dir {
        cfg.data_dir = d;
    }
    if let Some(m) = metrics_listen {
        cfg.metrics_listen = m;
    }
    let _traces = weiqi_server::init_tracing(&cfg)?;
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    rt.block_on(weiqi_server::run(cfg))?;
    Ok(ExitCode::SUCCESS)
}

fn run_perft(size: u8, depth: u32, passes: bool, rules: Rules) -> anyhow::Result<ExitCode> {
    let state = State::new(size, rules)?;
    println!("{}", perft(&state, depth, passes));
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::runs_network;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn only_network_commands_are_rerun() {
        assert!(runs_network(&args("weiqi train --data d --out m")));
        assert!(runs_network(&args("weiqi selfplay --policy net:m.safetensors --out d")));
        assert!(runs_network(&args("weiqi arena net:a uniform")));
        assert!(!runs_network(&args("weiqi selfplay --policy light --out d")));
        assert!(!runs_network(&args("weiqi arena light uniform")));
        assert!(!runs_network(&args("weiqi serve")));
        assert!(!runs_network(&args("weiqi")));
    }
}
