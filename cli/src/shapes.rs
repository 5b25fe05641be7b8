//! `weiqi shapes`: fits the tree search's shape weights from game records (SGF): for each
//! local shape, the share of the times a move of it could be played that it was.

use anyhow::Context;
use weiqi_gtp::ShapeCounts;
use weiqi_rules::sgf::GameRecord;
use weiqi_rules::{Color, Move, Preset};

#[derive(clap::Args)]
pub struct ShapesArgs {
    /// Game records (SGF), or folders of them.
    #[arg(required = true)]
    records: Vec<std::path::PathBuf>,
    /// The table, as text (`crates/gtp/src/mcts/shapes.txt` is the engine's).
    #[arg(long)]
    out: std::path::PathBuf,
    /// Moves at the start of each game not counted (records that open with random moves).
    #[arg(long, default_value_t = 0)]
    skip: usize,
    /// Shapes seen fewer times than this are left out.
    #[arg(long, default_value_t = 20)]
    min_seen: u64,
}

pub fn run(args: ShapesArgs) -> anyhow::Result<()> {
    let mut files = Vec::new();
    for path in &args.records {
        if path.is_dir() {
            let mut found: Vec<_> = std::fs::read_dir(path)
                .with_context(|| format!("reading {}", path.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x.eq_ignore_ascii_case("sgf")))
                .collect();
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    let mut counts = ShapeCounts::default();
    for file in &files {
        let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        let record = GameRecord::parse(&text).with_context(|| format!("{} is not SGF", file.display()))?;
        let rules = record.named_rules().unwrap_or_else(|| Preset::Chinese.rules());
        let start = record.start(rules)?;
        let moves: Vec<(Color, Move)> = record.moves.iter().map(|m| (m.color, m.mv)).collect();
        counts
            .add_game(&start, &moves, args.skip)
            .with_context(|| format!("{}: an illegal move", file.display()))?;
    }
    let header = format!(
        "weiqi shape weights: {} positions of {} games\n\
         weiqi shapes --skip {} --min-seen {} RECORDS --out FILE",
        counts.positions,
        files.len(),
        args.skip,
        args.min_seen
    );
    let mut out = std::io::BufWriter::new(
        std::fs::File::create(&args.out).with_context(|| format!("creating {}", args.out.display()))?,
    );
    counts.write(args.min_seen, &header, &mut out)?;
    std::io::Write::flush(&mut out)?;
    eprintln!("{} positions of {} games counted", counts.positions, files.len());
    Ok(())
}
