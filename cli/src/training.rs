//! `weiqi train` and `weiqi evaluate`: a network trained on self-play data, and its mean
//! losses on data it did not see (cargo feature `tch`; without it, each says so).

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct EvaluateArgs {
    /// The checkpoint (.safetensors, its .json beside it).
    #[arg(long)]
    model: std::path::PathBuf,
    /// Self-play output to evaluate on: directories, file:// or s3:// prefixes.
    #[arg(long, required = true, num_args = 1..)]
    data: Vec<String>,
    #[arg(long, default_value_t = 256)]
    batch: usize,
    /// libtorch threads.
    #[arg(long, default_value_t = 2)]
    threads: i32,
    #[arg(long, default_value = "cpu")]
    device: String,
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
pub struct TrainArgs {
    /// Self-play output: directories, file:// or s3:// prefixes (every worker's manifest
    /// below each is read).
    #[arg(long, required = true, num_args = 1..)]
    data: Vec<String>,
    /// Checkpoint to write (.safetensors; the shape goes beside it as .json, the curve as
    /// .csv): a path, or a file:// or s3:// name (written create-only, e.g.
    /// s3://bucket/gen=1/model.safetensors).
    #[arg(long)]
    out: String,
    /// Continue from this checkpoint.
    #[arg(long)]
    init: Option<std::path::PathBuf>,
    #[arg(long, default_value_t = 3)]
    blocks: i64,
    #[arg(long, default_value_t = 32)]
    channels: i64,
    /// Global pooling in the residual blocks (KataGo's; a new network only).
    #[arg(long)]
    global_pooling: bool,
    /// A score head trained on the final margin (an auxiliary target; a new network only).
    #[arg(long)]
    score_head: bool,
    /// An opponent-reply head trained on the move the opponent played next (KataGo's
    /// auxiliary target; a new network only).
    #[arg(long)]
    opponent_head: bool,
    #[arg(long, default_value_t = 2000)]
    steps: usize,
    #[arg(long, default_value_t = 64)]
    batch: usize,
    #[arg(long, default_value_t = 1e-3)]
    lr: f64,
    /// How the rate moves over the steps: constant, or cosine (down to a tenth of --lr at
    /// the last step).
    #[arg(long, default_value = "constant")]
    lr_schedule: weiqi_trainer::schedule::LrSchedule,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, default_value_t = 50)]
    log_every: usize,
    /// Stop after this many seconds.
    #[arg(long, default_value_t = 1200.0)]
    max_seconds: f64,
    /// libtorch threads.
    #[arg(long, default_value_t = 2)]
    threads: i32,
    /// Where the network trains: cpu, cuda or cuda:N (a CUDA build of libtorch).
    #[arg(long, default_value = "cpu")]
    device: String,
}

pub fn train(args: TrainArgs) -> anyhow::Result<ExitCode> {
    #[cfg(feature = "tch")]
    {
        tch::set_num_threads(args.threads);
        let cfg = weiqi_trainer::train::TrainConfig {
            data: args.data,
            // (Chosen by `train_into`: the destination, or a scratch folder for a store.)
            out: std::path::PathBuf::new(),
            init: args.init,
            blocks: args.blocks,
            channels: args.channels,
            global_pooling: args.global_pooling,
            score_head: args.score_head,
            opponent_head: args.opponent_head,
            steps: args.steps,
            batch: args.batch,
            lr: args.lr,
            lr_schedule: args.lr_schedule,
            seed: args.seed,
            csv: std::path::PathBuf::new(),
            log_every: args.log_every.max(1),
            max_seconds: args.max_seconds,
            device: weiqi_trainer::device::parse(&args.device)?,
        };
        let (written, rows) = weiqi_trainer::runs::train_into(&args.out, cfg)?;
        println!("wrote {} ({rows} log rows)", written.join(", "));
        Ok(ExitCode::SUCCESS)
    }
    #[cfg(not(feature = "tch"))]
    {
        let _ = args;
        anyhow::bail!(NO_TCH)
    }
}

/// What a command that needs libtorch says in a build without it.
#[cfg(not(feature = "tch"))]
pub const NO_TCH: &str = "this weiqi was built without the `tch` feature: cargo build --release -p weiqi-cli --features tch (see docs/selfplay-and-training.md)";

pub fn evaluate(args: EvaluateArgs) -> anyhow::Result<ExitCode> {
    #[cfg(feature = "tch")]
    {
        anyhow::ensure!(args.batch > 0, "--batch: at least 1");
        tch::set_num_threads(args.threads);
        let device = weiqi_trainer::device::parse(&args.device)?;
        let (policy, value, ownership) = weiqi_trainer::train::evaluate(&args.model, &args.data, args.batch, device)?;
        if args.json {
            println!(
                "{}",
                serde_json::json!({"model": args.model, "data": args.data, "policy": policy, "value": value, "ownership": ownership})
            );
        } else {
            println!(
                "{}: policy {policy:.4}  value {value:.4}  ownership {ownership:.4}",
                args.model.display()
            );
        }
        Ok(ExitCode::SUCCESS)
    }
    #[cfg(not(feature = "tch"))]
    {
        let _ = args;
        anyhow::bail!(NO_TCH)
    }
}
