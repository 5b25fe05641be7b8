//! `weiqi gtp`: the engine on standard input and output, for GUIs, referees and bridges.

use std::time::Duration;

use weiqi_gtp::{Engine, PlayerKind, RandomPlayer};
use weiqi_rules::Preset;

#[derive(clap::Args)]
pub struct GtpArgs {
    /// Rules preset: chinese (positional superko), japanese, tromp-taylor, ...
    #[arg(long, default_value = "chinese")]
    rules: Preset,
    /// Who chooses the moves: uniform or light (random playout policies).
    #[arg(long, default_value = "light")]
    player: PlayerKind,
    /// The most seconds a move may take, whatever the clock allows.
    #[arg(long, default_value_t = 1.0)]
    seconds: f64,
    /// Seed of the player's random choices (a fixed seed repeats a game).
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

pub fn run(args: GtpArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.seconds.is_finite() && args.seconds > 0.0,
        "--seconds must be a positive number"
    );
    let player = Box::new(RandomPlayer::new(args.player, args.seed));
    let mut engine = Engine::new(args.rules, player, Duration::from_secs_f64(args.seconds));
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    weiqi_gtp::serve(&mut engine, stdin, stdout)?;
    Ok(())
}
