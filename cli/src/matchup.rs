//! `weiqi match A B`: two GTP engines play each other, refereed by the rules crate.

use std::time::Duration;

use weiqi_gtp::{Client, Ending, GameOutcome, MatchSettings, Tally, play_game};
use weiqi_rules::Preset;

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
    /// Print one JSON object with the totals instead of a line per game.
    #[arg(long)]
    json: bool,
}

pub fn run(args: MatchArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.timeout > 0.0 && args.timeout.is_finite(),
        "--timeout must be positive"
    );
    let mut rules = args.rules.rules();
    rules.komi = args.komi;
    let settings = MatchSettings {
        size: args.size,
        rules,
        timeout: Duration::from_secs_f64(args.timeout),
        max_moves: 4 * args.size as usize * args.size as usize,
    };
    let mut tally = Tally::default();
    for k in 0..args.games {
        // Fresh engines every game: one that crashed or hung cannot spoil the next.
        let (mut a, mut b) = (Client::spawn(&args.a)?, Client::spawn(&args.b)?);
        let a_black = k % 2 == 0;
        let (black, white) = if a_black { (&mut a, &mut b) } else { (&mut b, &mut a) };
        let (ending, winner, moves) = play_game(black, white, &settings)?;
        let outcome = GameOutcome {
            a_black,
            winner,
            ending,
            moves,
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
            };
            let colour = if a_black { "A black" } else { "A white" };
            println!("game {}: {colour}, {who} wins {how} after {moves} moves", k + 1);
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
