//! `weiqi match A B`: two GTP engines play each other, refereed by the rules crate.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use weiqi_gtp::{Client, Ending, EnginePlayer, GameOutcome, MatchSettings, Tally, play_out};
use weiqi_rules::{Preset, State};

#[derive(clap::Args)]
pub struct MatchArgs {
    /// Engine A: a command line (program and arguments, split on spaces).
    a: String,
    /// Engine B.
    b: String,
    #[arg(long, default_value_t = 10)]
    games: u32,
    #[arg(long, default_value_t = 9)]
    size: u8,
    #[arg(long, default_value_t = 7.5)]
    komi: f64,
    #[arg(long, default_value = "chinese")]
    rules: Preset,
    /// The longest an engine may take to answer, in seconds (a move included): past it,
    /// it loses the game.
    #[arg(long, default_value_t = 60.0)]
    timeout: f64,
    /// A clock of this many seconds for every move: both engines get `time_settings 0 S 1`
    /// and `time_left` before each move, and a move later than S plus `--lag` loses on time.
    #[arg(long)]
    seconds_per_move: Option<f64>,
    /// With `--seconds-per-move`: what a move may take beyond it for pipes and scheduling.
    #[arg(long, default_value_t = 0.5)]
    lag: f64,
    /// Write each game's record here as `game-NNN.sgf` (result, players, every move).
    #[arg(long)]
    sgf_dir: Option<PathBuf>,
    /// Print one JSON object with the totals instead of a line per game.
    #[arg(long)]
    json: bool,
}

pub fn run(args: MatchArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.timeout > 0.0 && args.timeout.is_finite(),
        "--timeout must be positive"
    );
    let seconds_per_move = match args.seconds_per_move {
        Some(s) => {
            anyhow::ensure!(s > 0.0 && s.is_finite(), "--seconds-per-move must be positive");
            Some(Duration::from_secs_f64(s))
        }
        None => None,
    };
    anyhow::ensure!(args.lag >= 0.0 && args.lag.is_finite(), "--lag must be zero or more");
    if let Some(dir) = &args.sgf_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let mut rules = args.rules.rules();
    rules.komi = args.komi;
    let settings = MatchSettings {
        max_moves: weiqi_rules::move_cap(args.size),
        opening: 0,
        seconds_per_move,
        lag: Duration::from_secs_f64(args.lag),
    };
    let timeout = Duration::from_secs_f64(args.timeout);
    let start = State::new(args.size, rules).map_err(|e| anyhow::anyhow!("{e}"))?;
    // (The referee draws no opening moves: engines choose their own.)
    let mut no_draws = weiqi_rules::rng::SplitMix64(0);
    let mut tally = Tally::default();
    for k in 0..args.games {
        // Fresh engines every game: one that crashed or hung cannot spoil the next.
        let engine = |command: &str| -> anyhow::Result<EnginePlayer> {
            let client = Client::spawn(command)?;
            Ok(EnginePlayer::new(client, command.to_string(), timeout).with_clock(seconds_per_move, settings.lag))
        };
        let (mut a, mut b) = (engine(&args.a)?, engine(&args.b)?);
        let a_black = k % 2 == 0;
        let (black, white) = if a_black { (&mut a, &mut b) } else { (&mut b, &mut a) };
        let played = play_out(black, white, start.clone(), &settings, &mut no_draws);
        if let Some(dir) = &args.sgf_dir {
            let (na, nb) = (
                a.engine_name().unwrap_or_else(|| args.a.clone()),
                b.engine_name().unwrap_or_else(|| args.b.clone()),
            );
            let (pb, pw) = if a_black { (na, nb) } else { (nb, na) };
            let path = dir.join(format!("game-{:03}.sgf", k + 1));
            std::fs::write(&path, played.record(&pb, &pw).to_sgf())
                .with_context(|| format!("writing {}", path.display()))?;
        }
        let outcome = GameOutcome {
            a_black,
            winner: played.winner,
            moves: played.state.move_number(),
            ending: played.ending,
        };
        tally.add(&outcome);
        if !args.json {
            let who = match outcome.a_won() {
                Some(true) => "A",
                Some(false) => "B",
                None => "draw",
            };
            let how = match &outcome.ending {
                Ending::Score { white_minus_black } => format!("by score, W-B {white_minus_black}"),
                Ending::MoveLimit { white_minus_black } => format!("at the move limit, W-B {white_minus_black}"),
                Ending::Resignation => "by resignation".into(),
                Ending::Forfeit(why) => format!("by forfeit: {why}"),
                Ending::Time { seconds } => format!("on time ({seconds:.2} s for a move)"),
            };
            let colour = if a_black { "A black" } else { "A white" };
            println!(
                "game {}: {colour}, {who} wins {how} after {} moves",
                k + 1,
                outcome.moves
            );
        }
    }
    let (lo, hi) = tally.wilson95();
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "games": tally.games, "a_wins": tally.a_wins, "b_wins": tally.b_wins, "draws": tally.draws,
                "a_win_rate": tally.a_win_rate(), "wilson95": [lo, hi],
            })
        );
    } else {
        println!(
            "A {} - B {} ({} draws): A wins {:.1}% (95% Wilson {:.1}%..{:.1}%)",
            tally.a_wins,
            tally.b_wins,
            tally.draws,
            100.0 * tally.a_win_rate(),
            100.0 * lo,
            100.0 * hi
        );
    }
    Ok(())
}
