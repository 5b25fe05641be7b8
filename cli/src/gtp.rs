//! `weiqi gtp`: the engine on standard input and output, for GUIs, referees and bridges.

use std::time::Duration;

use weiqi_gtp::{GtpEngine, HybridSettings, MctsPlayer, MctsSettings, Player, PlayerKind, RandomPlayer};
use weiqi_rules::{Policy, Preset};

#[derive(clap::Args)]
pub struct GtpArgs {
    /// Rules preset: chinese (positional superko), japanese, tromp-taylor, ...
    #[arg(long, default_value = "chinese")]
    rules: Preset,
    /// Who chooses the moves: uniform, light or heavy (the playout policies), mcts (tree
    /// search over playouts), net:PATH (a trained network with its own search, feature
    /// `tch`) or hybrid:PATH (mcts advised by the network: its priors and its value mixed
    /// with the playouts', feature `tch`).
    #[arg(long, default_value = "mcts")]
    player: String,
    /// net: simulations per move (the move's time may stop it sooner).
    #[arg(long, default_value_t = 800)]
    visits: u32,
    /// net: Gumbel AlphaZero's root over M moves instead of PUCT's.
    #[arg(long, value_name = "M")]
    gumbel: Option<u32>,
    /// hybrid: a node asks the network once it has this many simulations (the root at once).
    #[arg(long, default_value_t = HybridSettings::default().advice_visits)]
    advice_visits: u32,
    /// hybrid: the network value's share of each simulation's result (AlphaGo's 0.5).
    #[arg(long, default_value_t = HybridSettings::default().value_weight)]
    value_weight: f32,
    /// hybrid: virtual wins for the network's favourite move at an advised node.
    #[arg(long, default_value_t = HybridSettings::default().prior_visits)]
    prior_visits: f32,
    /// The most seconds a move may take, whatever the clock allows.
    #[arg(long, default_value_t = 1.0)]
    seconds: f64,
    /// mcts: playouts per move (0: as many as the time allows).
    #[arg(long, default_value_t = 0)]
    playouts: u32,
    /// mcts: the playouts' policy, light or heavy (3x3 patterns, captures and escapes).
    #[arg(long, default_value = "heavy")]
    playout: Policy,
    /// mcts: search threads.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// mcts: virtual wins for a new move of a shape that was always played, scaled by the
    /// square root of the share of times it was (0 turns the learned shapes off).
    #[arg(long, default_value_t = weiqi_gtp::DEFAULT_SHAPE_PRIOR)]
    shape_prior: f32,
    /// mcts: resign below this estimated win rate (0 never resigns).
    #[arg(long, default_value_t = 0.1)]
    resign_below: f64,
    /// Dead stones at the end (final_score, final_status_list): playouts of the estimate.
    #[arg(long, default_value_t = weiqi_rules::DEFAULT_DEAD_PLAYOUTS)]
    dead_playouts: u32,
    /// Dead stones at the end: the share of playouts in which a chain must be lost.
    #[arg(long, default_value_t = weiqi_rules::DEFAULT_DEAD_THRESHOLD)]
    dead_threshold: f64,
    /// Dead stones at the end: a chain stays alive when an opposing chain next to it is lost
    /// in at least this share of the playouts (a close capturing race); above 1 turns it off.
    #[arg(long, default_value_t = weiqi_rules::DEFAULT_DEAD_RACE)]
    dead_race: f64,
    /// Dead stones at the end: never propose a chain in seki (`--dead-seki false` turns the
    /// test off).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    dead_seki: bool,
    /// Dead stones at the end: judge a chain by its group too (the chains of its colour it
    /// shares liberties with; `--dead-groups false` judges each chain alone).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    dead_groups: bool,
    /// Dead stones at the end: a chain safely linked to a living chain of its colour lives
    /// (`--dead-links false` to switch it off).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    dead_links: bool,
    /// Dead stones at the end: the playout policy (light or heavy).
    #[arg(long, default_value = "light")]
    dead_policy: Policy,
    /// Seed of the player's random choices (with one thread, a fixed seed and playout count
    /// repeat a game).
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

pub fn run(args: GtpArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.seconds.is_finite() && args.seconds > 0.0,
        "--seconds must be a positive number"
    );
    anyhow::ensure!((1..=256).contains(&args.threads), "--threads is 1 to 256");
    anyhow::ensure!(
        args.shape_prior.is_finite() && args.shape_prior >= 0.0,
        "--shape-prior must be a number of at least 0"
    );
    let mcts = MctsSettings {
        playouts: args.playouts,
        threads: args.threads,
        seed: args.seed,
        policy: args.playout,
        resign_below: args.resign_below,
        shape_prior: args.shape_prior,
    };
    let player: Box<dyn Player> = if args.player.starts_with("net:") {
        weiqi_trainer::runs::net_gtp_player(&args.player, args.visits, args.gumbel, args.seed)?
    } else if let Some(path) = args.player.strip_prefix("hybrid:") {
        let hybrid = HybridSettings {
            advice_visits: args.advice_visits,
            value_weight: args.value_weight,
            prior_visits: args.prior_visits,
        };
        weiqi_trainer::runs::hybrid_player(path, mcts, hybrid)?
    } else {
        let kind: PlayerKind = args
            .player
            .parse()
            .map_err(|e: String| anyhow::anyhow!("--player: {e}, net:PATH or hybrid:PATH"))?;
        match kind {
            PlayerKind::Uniform => Box::new(RandomPlayer::new(Policy::Uniform, args.seed)),
            PlayerKind::Light => Box::new(RandomPlayer::new(Policy::Light, args.seed)),
            PlayerKind::Heavy => Box::new(RandomPlayer::new(Policy::Heavy, args.seed)),
            PlayerKind::Mcts => Box::new(MctsPlayer::new(mcts)),
        }
    };
    let mut engine = GtpEngine::new(args.rules, player, Duration::from_secs_f64(args.seconds)).with_dead_estimate(
        weiqi_rules::DeadEstimate {
            playouts: args.dead_playouts,
            threshold: args.dead_threshold,
            policy: args.dead_policy,
            race: args.dead_race,
            seki: args.dead_seki,
            groups: args.dead_groups,
            links: args.dead_links,
        },
    );
    // (Standard input on a thread of its own: a live analysis stops when a line arrives.)
    let stdout = std::io::stdout().lock();
    weiqi_gtp::serve_input(&mut engine, &mut weiqi_gtp::StdinInput::new(), stdout)?;
    Ok(())
}
