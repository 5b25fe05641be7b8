//! `weiqi loop`: the training loop researchers run (`weiqi_trainer::pipeline`), and its
//! report redrawn from the record alone (`--report-only`, no libtorch needed).

use std::process::ExitCode;

use weiqi_trainer::generations::{LoopConfig, LoopState};

#[derive(clap::Args)]
pub struct LoopArgs {
    /// The run's folder: gen=<n>/selfplay, gen=<n>/model.safetensors, loop.json, report/.
    /// A run goes on from where it stopped.
    #[arg(long)]
    dir: std::path::PathBuf,
    #[arg(long, default_value_t = 9)]
    size: u8,
    #[arg(long, default_value_t = 7.5)]
    komi: f64,
    #[arg(long, default_value = "chinese")]
    rules: String,
    /// Stop once this many generations are done (generation 0 included); raise it to go on.
    #[arg(long, default_value_t = 10)]
    generations: u32,
    /// Self-play games per generation.
    #[arg(long, default_value_t = 200)]
    games: u64,
    /// PUCT visits per self-play move.
    #[arg(long, default_value_t = 32)]
    visits: u32,
    /// Train on the last W generations' data.
    #[arg(long, default_value_t = 4)]
    window: u32,
    #[arg(long, default_value_t = 500)]
    steps: usize,
    #[arg(long, default_value_t = 64)]
    batch: usize,
    #[arg(long, default_value_t = 1e-3)]
    lr: f64,
    /// How the rate moves over each generation's steps: constant, or cosine (down to a
    /// tenth of --lr at the last step).
    #[arg(long, default_value = "constant")]
    lr_schedule: weiqi_trainer::schedule::LrSchedule,
    #[arg(long, default_value_t = 3)]
    blocks: i64,
    #[arg(long, default_value_t = 32)]
    channels: i64,
    /// Gate games, candidate against the best, colours alternating.
    #[arg(long, default_value_t = 100)]
    gate_games: u32,
    #[arg(long, default_value_t = 32)]
    gate_visits: u32,
    /// Promote at this score rate or more.
    #[arg(long, default_value_t = 0.55)]
    promote_at: f64,
    /// Games of each generation's network against each fixed player (uniform, light).
    #[arg(long, default_value_t = 20)]
    anchor_games: u32,
    /// A GTP engine among the fixed players (repeatable), e.g. --gtp-anchor "gnugo --mode gtp --level 1".
    #[arg(long)]
    gtp_anchor: Vec<String>,
    /// Threads (self-play lanes, libtorch's threads; default: all cores). A run goes on
    /// only with the threads it started with (self-play's games depend on the lanes).
    #[arg(long)]
    threads: Option<usize>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Gumbel AlphaZero's root over M moves (self-play, gates, anchors) instead of PUCT's.
    #[arg(long, value_name = "M")]
    gumbel: Option<u32>,
    /// Playout cap randomization: this share of self-play moves is searched with --visits
    /// and recorded, the others with --cheap-visits and not recorded (KataGo: 0.25).
    #[arg(long, requires = "cheap_visits")]
    full_fraction: Option<f64>,
    /// Visits of the cheap searches (with --full-fraction).
    #[arg(long, requires = "full_fraction")]
    cheap_visits: Option<u32>,
    /// Forced playouts and policy target pruning at self-play's roots (KataGo's).
    #[arg(long)]
    forced_playouts: bool,
    /// Global pooling in the residual blocks (KataGo's).
    #[arg(long)]
    global_pooling: bool,
    /// A score head trained on the final margin (an auxiliary target).
    #[arg(long)]
    score_head: bool,
    /// An opponent-reply head trained on the move the opponent played next (KataGo's
    /// auxiliary target).
    #[arg(long)]
    opponent_head: bool,
    /// Generation 0 plays the tree search (mcts, heavy playouts) with this many playouts a
    /// move instead of light random play; its root visits are the policy targets.
    #[arg(long, value_name = "PLAYOUTS")]
    teacher: Option<u32>,
    /// Where the networks train, play and are gated: cpu, cuda or cuda:N (a CUDA build of
    /// libtorch). Not a setting of the run: a loop may go on on another device.
    #[arg(long, default_value = "cpu")]
    device: String,
    /// Redraw report/ from loop.json and print the record; run nothing.
    #[arg(long)]
    report_only: bool,
    /// With --report-only, also draw DIR/report/compare.svg and compare.json: this run's
    /// Elo curve beside each RUN's (repeatable; a folder with a loop.json), on one Elo
    /// scale, against the minutes of self-play and training; each run labelled with its
    /// folder's name.
    #[arg(long, value_name = "RUN", requires = "report_only")]
    compare: Vec<std::path::PathBuf>,
    /// Print the record as JSON at the end.
    #[arg(long)]
    json: bool,
}

pub fn run(args: LoopArgs) -> anyhow::Result<ExitCode> {
    let config = LoopConfig {
        size: args.size,
        komi: args.komi,
        rules: args.rules,
        generations: args.generations,
        games: args.games,
        visits: args.visits,
        window: args.window,
        steps: args.steps,
        batch: args.batch,
        lr: args.lr,
        lr_schedule: args.lr_schedule,
        blocks: args.blocks,
        channels: args.channels,
        gate_games: args.gate_games,
        gate_visits: args.gate_visits,
        promote_at: args.promote_at,
        anchor_games: args.anchor_games,
        gtp_anchors: args.gtp_anchor,
        threads: args
            .threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        seed: args.seed,
        gumbel: args.gumbel,
        playout_cap: args
            .full_fraction
            .zip(args.cheap_visits)
            .map(|(full_fraction, cheap_visits)| weiqi_selfplay::PlayoutCap {
                full_fraction,
                cheap_visits,
            }),
        forced_playouts: args.forced_playouts,
        global_pooling: args.global_pooling,
        score_head: args.score_head,
        opponent_head: args.opponent_head,
        teacher: args.teacher,
    };
    let state = if args.report_only {
        let state = read_record(&args.dir)?;
        weiqi_trainer::report::write(&state, &args.dir)?;
        if !args.compare.is_empty() {
            let mut runs = vec![(run_label(&args.dir), state.clone())];
            for dir in &args.compare {
                runs.push((run_label(dir), read_record(dir)?));
            }
            for f in weiqi_trainer::report::compare(&runs, &args.dir.join("report"))? {
                eprintln!("wrote {}", f.display());
            }
        }
        state
    } else {
        run_loop(&args.dir, &config, &args.device, !args.json)?
    };
    if args.json {
        println!(
            "{}",
            serde_json::json!({ "best": state.best, "generations": state.generations, "elo": state.elo() })
        );
    } else {
        summary(&state);
    }
    Ok(ExitCode::SUCCESS)
}

/// A run's record, `DIR/loop.json`.
fn read_record(dir: &std::path::Path) -> anyhow::Result<LoopState> {
    let path = dir.join(LoopState::FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{}: not a loop record: {e}", path.display()))
}

/// A run's name in a comparison: its folder's.
fn run_label(dir: &std::path::Path) -> String {
    dir.canonicalize()
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| dir.display().to_string())
}

#[cfg(feature = "tch")]
fn run_loop(dir: &std::path::Path, config: &LoopConfig, device: &str, progress: bool) -> anyhow::Result<LoopState> {
    let device = weiqi_trainer::device::parse(device)?;
    Ok(weiqi_trainer::pipeline::run(dir, config, device, progress)?)
}

#[cfg(not(feature = "tch"))]
fn run_loop(_dir: &std::path::Path, _config: &LoopConfig, _device: &str, _progress: bool) -> anyhow::Result<LoopState> {
    anyhow::bail!("{}; --report-only works without it", crate::training::NO_TCH)
}

/// One line per generation, then the Elo table.
fn summary(state: &LoopState) {
    for g in &state.generations {
        let gate = g.gate.as_ref().map_or("no gate (first network)".to_string(), |r| {
            format!(
                "gate {:.1}% [{:.1}, {:.1}] of {} vs {}",
                100.0 * r.a_rate,
                100.0 * r.ci95.0,
                100.0 * r.ci95.1,
                r.games,
                r.b
            )
        });
        let loss = g
            .training
            .as_ref()
            .and_then(|t| t.losses.last())
            .map_or(String::new(), |l| {
                format!("policy {:.3} value {:.3}, ", l.policy, l.value)
            });
        println!(
            "gen={}: {}{gate}{}",
            g.number,
            loss,
            if g.promoted == Some(true) { ", promoted" } else { "" }
        );
    }
    for e in state.elo() {
        println!("{:>10} {:>7.0} Elo", e.player, e.elo);
    }
}
