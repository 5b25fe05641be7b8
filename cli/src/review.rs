//! `weiqi review FILE.sgf`: every move of a game judged by the tree search (the win rates
//! before and after it, the search's preferred move, what the move lost), and the biggest
//! mistakes; `--json` for tools.

use std::process::ExitCode;

use anyhow::Context;
use serde_json::json;
use weiqi_gtp::{MISTAKE_LOSS, MISTAKES, MctsPlayer, MctsSettings, mistakes, review};
use weiqi_rules::sgf::GameRecord;
use weiqi_rules::{Color, Policy, Preset};

#[derive(clap::Args)]
pub struct ReviewArgs {
    /// The game, as SGF.
    file: std::path::PathBuf,
    /// Simulations of the tree search per position.
    #[arg(long, default_value_t = 1000)]
    visits: u32,
    /// Search threads.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// The playouts' policy, light or heavy.
    #[arg(long, default_value = "heavy")]
    playout: Policy,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// One JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

pub fn run(args: ReviewArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!((1..=256).contains(&args.threads), "--threads is 1 to 256");
    anyhow::ensure!(args.visits >= 1, "--visits is at least 1");
    let text = std::fs::read_to_string(&args.file).with_context(|| format!("reading {}", args.file.display()))?;
    let record = GameRecord::parse(&text).with_context(|| format!("{} is not SGF", args.file.display()))?;
    let mut rules = record.named_rules().unwrap_or_else(|| Preset::Chinese.rules());
    if let Some(k) = record.komi {
        rules.komi = k;
    }
    let replay = record.replay(rules)?;
    if let Some((n, _, why)) = replay.first_illegal {
        anyhow::bail!("move {n} is illegal ({why})");
    }
    let end = replay.state;
    let mut player = MctsPlayer::new(MctsSettings {
        playouts: args.visits,
        threads: args.threads,
        seed: args.seed,
        policy: args.playout,
        resign_below: 0.0,
        shape_prior: weiqi_gtp::DEFAULT_SHAPE_PRIOR,
    });
    let started = std::time::Instant::now();
    let bar = (!args.json).then(|| indicatif::ProgressBar::new(end.moves().len() as u64 + 1));
    let reviewed = review(&end, &mut player, |done, _| {
        if let Some(b) = &bar {
            b.set_position(done as u64);
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let height = end.board().height();
    let name = |c: Color| if c == Color::Black { "B" } else { "W" };
    let worst = mistakes(&reviewed, MISTAKES, MISTAKE_LOSS);
    if args.json {
        let moves: Vec<_> = reviewed
            .iter()
            .map(|m| {
                json!({
                    "number": m.number,
                    "color": name(m.color),
                    "played": m.played.to_gtp(height),
                    "black_before": m.black_before,
                    "black_after": m.black_after,
                    "best": m.best.to_gtp(height),
                    "black_after_best": m.black_after_best,
                    "loss": m.loss,
                })
            })
            .collect();
        let out = json!({
            "moves": moves,
            "mistakes": worst.iter().map(|m| m.number).collect::<Vec<_>>(),
            "visits": args.visits,
            "seconds": started.elapsed().as_secs_f64(),
        });
        println!("{out}");
        return Ok(ExitCode::SUCCESS);
    }
    println!("  #  move   Black before -> after   best   loss");
    for m in &reviewed {
        println!(
            "{:>3}  {} {:<4} {:>5.1}% -> {:>5.1}%        {:<5} {:>5.1}%",
            m.number,
            name(m.color),
            m.played.to_gtp(height),
            100.0 * m.black_before,
            100.0 * m.black_after,
            m.best.to_gtp(height),
            100.0 * m.loss
        );
    }
    if worst.is_empty() {
        println!("No move lost {:.0}% or more.", 100.0 * MISTAKE_LOSS);
    } else {
        println!("Biggest mistakes:");
        for m in worst {
            println!(
                "  move {} ({} {}): {:.1}% lost; {} was better",
                m.number,
                name(m.color),
                m.played.to_gtp(height),
                100.0 * m.loss,
                m.best.to_gtp(height)
            );
        }
    }
    println!(
        "{} positions, {} simulations each, in {:.1} s",
        reviewed.len() + 1,
        args.visits,
        started.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}
