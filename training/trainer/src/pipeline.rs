//! `weiqi loop`: generation after generation, self-play with the best network, training on
//! a sliding window of recent generations, a gate against the best, and games against
//! fixed players for the Elo curve (AlphaGo Zero's loop, as minigo and KataGo run it).
//!
//! - Generation 0 plays light playouts (no network yet), or the project's tree search
//!   with `teacher` playouts a move, and trains from random weights; its network is the
//!   first best.
//! - Generation n >= 1 plays with the best network (PUCT with `visits`, Dirichlet noise,
//!   visit counts as targets), trains a candidate from the best's weights on the last
//!   `window` generations' data, and promotes it when it scores `promote_at` or more
//!   against the best over `gate_games` games (colours alternating, `gate_visits` each).
//! - Every generation's network plays `anchor_games` against each fixed player: uniform
//!   and light random play, and any GTP engines given (`gtp_anchors`, e.g. GNU Go levels).
//!
//! Every step writes its output before its entry in `loop.json` (see
//! [`crate::generations`]), so a loop killed at any point goes on from the step it was in;
//! self-play goes on shard by shard. The report is redrawn after every step.

use std::path::Path;

use tch::Device;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use weiqi_rules::{Policy, Preset, Rules};
use weiqi_selfplay::{Config, Objects, Partition, PlayPolicy, SearchConfig};

use crate::Error;
use crate::arena::{ArenaResult, Player, RandomPlayer, arena};
use crate::generations::{
    ANCHORS, LoopConfig, LoopState, SelfplayRecord, Step, TrainingRecord, gen_dir, model_name, model_path,
};
use crate::net::NetPlayer;
use crate::train::{TrainConfig, train};

/// Runs the loop in `run` (created if need be) until `config.generations` are done, or
/// goes on from where a previous run stopped. `progress` shows bars and a line per step.
/// Networks train, play and are gated on `device`.
pub fn run(run: &Path, config: &LoopConfig, device: Device, progress: bool) -> Result<LoopState, Error> {
    std::fs::create_dir_all(run)?;
    let mut state = LoopState::open(run, config)?;
    let rules = rules_of(config)?;
    let say = |line: String| {
        if progress {
            eprintln!("{line}");
        }
    };
    while let Some(generation) = state.current() {
        let number = generation.number;
        let step = generation.step();
        say(format!("gen={number}: {step:?}"));
        let best = state.best;
        let generation = state.current().expect("the generation just read");
        match step {
            Step::SelfPlay => generation.selfplay = Some(selfplay(run, config, number, best, device, progress)?),
            Step::Train => generation.training = Some(training(run, config, number, best, device)?),
            Step::Gate => {
                let (gate, promoted) = gate(run, config, number, best, rules, device, progress)?;
                if let Some(r) = &gate {
                    say(format!(
                        "gen={number}: {} against {}: {:.1}% [{:.1}, {:.1}] over {} games: {}",
                        r.a,
                        r.b,
                        100.0 * r.a_rate,
                        100.0 * r.ci95.0,
                        100.0 * r.ci95.1,
                        r.games,
                        if promoted { "promoted" } else { "kept the best" }
                    ));
                }
                generation.gate = gate;
                generation.promoted = Some(promoted);
                if promoted {
                    state.best = Some(number);
                }
            }
            Step::Anchors => generation.anchors = Some(anchors(run, config, number, rules, device, progress)?),
            Step::Done => unreachable!("current() never returns a done generation"),
        }
        state.save(run)?;
        crate::report::write(&state, run)?;
    }
    Ok(state)
}

fn rules_of(config: &LoopConfig) -> Result<Rules, Error> {
    let preset: Preset = config
        .rules
        .parse()
        .map_err(|e: weiqi_rules::RulesError| Error::Invalid(e.to_string()))?;
    Ok(preset.rules().with_komi(config.komi))
}

/// Seeds of one generation's parts: distinct per generation and per part.
fn seed(config: &LoopConfig, number: u32, part: u64) -> u64 {
    weiqi_selfplay::game_id(config.seed ^ part.wrapping_mul(0x51_7CC1_B727_220A), number as u64)
}

fn selfplay(
    run: &Path,
    config: &LoopConfig,
    number: u32,
    best: Option<u32>,
    device: Device,
    progress: bool,
) -> Result<SelfplayRecord, Error> {
    let search = best.map(|_| SearchConfig {
        gumbel: config.gumbel,
        forced_playouts: config.forced_playouts,
        playout_cap: config.playout_cap,
        ..SearchConfig::for_size(config.size, config.visits)
    });
    let cfg = Config {
        size: config.size,
        games: config.games,
        seed: seed(config, number, 1),
        policy: PlayPolicy::Light,
        rules: config.rules.clone(),
        komi: config.komi,
        games_per_shard: 256,
        max_moves: weiqi_rules::move_cap(config.size),
        sgf: false,
        player: best.map(model_name),
        search,
        variant: None,
        partition: Partition::default(),
    };
    let out = Objects::dir(&gen_dir(run, number).join("selfplay"))?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(config.threads)
        .build()
        .map_err(|e| Error::Invalid(e.to_string()))?;
    let t0 = std::time::Instant::now();
    let rules = rules_of(config)?;
    let manifest = match best {
        None => match config.teacher {
            None => pool.install(|| weiqi_selfplay::run(&cfg, &out, progress))?,
            Some(playouts) => pool.install(|| {
                weiqi_selfplay::run_with(&cfg, &out, progress, &|index| {
                    let id = weiqi_selfplay::game_id(cfg.seed, index);
                    let opening = (config.size as usize / 2).max(1);
                    crate::teacher::teacher_game(config.size, rules, playouts, id, cfg.max_moves, opening)
                })
            })?,
        },
        Some(b) => {
            let nets = crate::net::load_lanes(&model_path(run, b), device, pool.current_num_threads(), None)?;
            pool.install(|| weiqi_selfplay::run_search(&cfg, &out, progress, &nets))?
        }
    };
    let first = config.teacher.map_or("light".into(), |p| format!("mcts:{p}"));
    Ok(SelfplayRecord {
        player: best.map_or(first, model_name),
        games: manifest.games,
        positions: manifest.positions,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

fn training(
    run: &Path,
    config: &LoopConfig,
    number: u32,
    best: Option<u32>,
    device: Device,
) -> Result<TrainingRecord, Error> {
    let first = (number + 1).saturating_sub(config.window);
    let data: Vec<u32> = (first..=number).collect();
    let out = model_path(run, number);
    let tc = TrainConfig {
        data: data
            .iter()
            .map(|&g| gen_dir(run, g).join("selfplay").display().to_string())
            .collect(),
        out: out.clone(),
        init: best.map(|b| model_path(run, b)),
        blocks: config.blocks,
        channels: config.channels,
        global_pooling: config.global_pooling,
        score_head: config.score_head,
        opponent_head: config.opponent_head,
        steps: config.steps,
        batch: config.batch,
        lr: config.lr,
        lr_schedule: config.lr_schedule,
        seed: seed(config, number, 2),
        csv: out.with_extension("csv"),
        log_every: (config.steps / 20).max(1),
        max_seconds: f64::INFINITY,
        device,
    };
    tch::set_num_threads(config.threads.max(1) as i32);
    let t0 = std::time::Instant::now();
    let losses = train(&tc)?;
    Ok(TrainingRecord {
        data,
        init: best,
        losses,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// The candidate against the best: `(None, true)` for generation 0, which has no best.
fn gate(
    run: &Path,
    config: &LoopConfig,
    number: u32,
    best: Option<u32>,
    rules: Rules,
    device: Device,
    progress: bool,
) -> Result<(Option<ArenaResult>, bool), Error> {
    let Some(best) = best else { return Ok((None, true)) };
    let mut candidate = net_player(run, config, number, device)?;
    let mut incumbent = net_player(run, config, best, device)?;
    let r = games(
        &mut candidate,
        &mut incumbent,
        config,
        config.gate_games,
        rules,
        seed(config, number, 3),
        progress,
    )?;
    let promoted = r.a_rate >= config.promote_at;
    Ok((Some(r), promoted))
}

fn anchors(
    run: &Path,
    config: &LoopConfig,
    number: u32,
    rules: Rules,
    device: Device,
    progress: bool,
) -> Result<Vec<ArenaResult>, Error> {
    let mut out = Vec::new();
    for (k, name) in ANCHORS.iter().enumerate() {
        let policy = if *name == "uniform" {
            Policy::Uniform
        } else {
            Policy::Light
        };
        let mut net = net_player(run, config, number, device)?;
        let r = games(
            &mut net,
            &mut RandomPlayer::new(policy, seed(config, number, 8 + k as u64)),
            config,
            config.anchor_games,
            rules,
            seed(config, number, 4 + k as u64),
            progress,
        )?;
        out.push(r);
    }
    for (k, command) in config.gtp_anchors.iter().enumerate() {
        let mut engine = weiqi_gtp::EnginePlayer::spawn(command, std::time::Duration::from_secs(120))
            .map_err(|e| Error::Invalid(format!("{command}: {e}")))?;
        let mut net = net_player(run, config, number, device)?;
        let r = games(
            &mut net,
            &mut engine,
            config,
            config.anchor_games,
            rules,
            seed(config, number, 16 + k as u64),
            progress,
        )?;
        out.push(r);
    }
    Ok(out)
}

fn net_player(run: &Path, config: &LoopConfig, number: u32, device: Device) -> Result<NetPlayer, Error> {
    tch::set_num_threads(config.threads.max(1) as i32);
    let mut p = NetPlayer::load_on(&model_path(run, number), config.gate_visits, device)?;
    p.search.gumbel = config.gumbel;
    p.label = model_name(number);
    Ok(p)
}

/// `n` arena games in pairs (one with each colour), with a progress bar; the result is
/// named by the players' labels.
fn games(
    a: &mut dyn Player,
    b: &mut dyn Player,
    config: &LoopConfig,
    n: u32,
    rules: Rules,
    seed: u64,
    progress: bool,
) -> Result<ArenaResult, Error> {
    let bar = if progress {
        let bar = ProgressBar::new(n as u64);
        bar.set_draw_target(ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} games  {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar
    } else {
        ProgressBar::hidden()
    };
    let opening = (config.size as usize / 2).max(1);
    let (mut aw, mut bw, mut dr, mut played) = (0, 0, 0, 0);
    while played < n {
        let pair = (n - played).min(2);
        let r = arena(
            a,
            b,
            pair,
            config.size,
            rules,
            seed.wrapping_add(played as u64),
            opening,
        );
        (aw, bw, dr, played) = (aw + r.a_wins, bw + r.b_wins, dr + r.draws, played + pair);
        bar.set_position(played as u64);
        bar.set_message(format!("{} {aw}-{bw} {}", a.name(), b.name()));
    }
    bar.finish_and_clear();
    // A player that stopped playing (an engine that failed, a network that could not
    // evaluate) makes the games no measurement.
    if let Some(why) = a.failure().or_else(|| b.failure()) {
        return Err(Error::Invalid(why));
    }
    let score = aw as f64 + 0.5 * dr as f64;
    Ok(ArenaResult {
        a: a.name(),
        b: b.name(),
        games: n,
        a_wins: aw,
        b_wins: bw,
        draws: dr,
        a_rate: score / n.max(1) as f64,
        ci95: weiqi_rating::wilson95(score, n as f64),
    })
}
