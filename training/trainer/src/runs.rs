//! What the `weiqi` tool runs for researchers, so that its `main` only parses and
//! dispatches: self-play with a policy or a network ([`selfplay`]), training into a
//! directory or an object store ([`train_into`], feature `tch`), the arena's players
//! by name ([`player`]), and the hybrid engine ([`hybrid_player`]).

use std::time::{Duration, Instant};

use weiqi_selfplay::{Config, Manifest, Objects};

use crate::Error;
use crate::arena::{Player, RandomPlayer};

/// A self-play run as the tool asks for it: `config` with the policy's games, or with a
/// network (`net`, a checkpoint's path; feature `tch`) searching on `device`.
pub struct SelfplayRun {
    pub config: Config,
    pub net: Option<String>,
    pub device: String,
    /// Worker threads (0: all cores); with a network, one search lane each.
    pub threads: usize,
    pub progress: bool,
}

/// What a self-play run did, with its cost.
pub struct SelfplayReport {
    pub manifest: Manifest,
    /// Shards this run played (the others were there already).
    pub played_shards: usize,
    pub threads: usize,
    pub wall_s: f64,
    pub cpu_s: f64,
}

/// Plays `run` into `out` (resuming from what is there).
pub fn selfplay(run: &SelfplayRun, out: &Objects) -> Result<SelfplayReport, Error> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(run.threads)
        .build()
        .map_err(|e| Error::Invalid(e.to_string()))?;
    let played_shards = weiqi_selfplay::pending(&run.config, out)?.len();
    let cpu0 = cpu_time::ProcessTime::now();
    let t0 = Instant::now();
    let manifest = match &run.net {
        None => pool.install(|| weiqi_selfplay::run(&run.config, out, run.progress))?,
        Some(path) => net_selfplay(run, out, path, &pool)?,
    };
    Ok(SelfplayReport {
        manifest,
        played_shards,
        threads: pool.current_num_threads(),
        wall_s: t0.elapsed().as_secs_f64(),
        cpu_s: cpu0.elapsed().as_secs_f64(),
    })
}

#[cfg(feature = "tch")]
fn net_selfplay(run: &SelfplayRun, out: &Objects, path: &str, pool: &rayon::ThreadPool) -> Result<Manifest, Error> {
    let device = crate::device::parse(&run.device)?;
    let nets = crate::net::load_lanes(
        std::path::Path::new(path),
        device,
        pool.current_num_threads(),
        Some(run.config.size),
    )?;
    Ok(pool.install(|| weiqi_selfplay::run_search(&run.config, out, run.progress, &nets))?)
}

#[cfg(not(feature = "tch"))]
fn net_selfplay(_run: &SelfplayRun, _out: &Objects, _path: &str, _pool: &rayon::ThreadPool) -> Result<Manifest, Error> {
    Err(Error::Invalid(
        "net:PATH players need the `tch` feature: cargo build --release -p weiqi-cli --features tch".into(),
    ))
}

/// An arena player by name: `uniform` or `light` (random moves from `seed`), `net:PATH`
/// (feature `tch`; `visits` simulations a move on `device`, with Gumbel AlphaZero's root
/// over `gumbel` moves instead of PUCT's when given) or `gtp:COMMAND` (an engine in a
/// child process).
pub fn player(spec: &str, visits: u32, gumbel: Option<u32>, device: &str, seed: u64) -> Result<Box<dyn Player>, Error> {
    let _ = (visits, gumbel, device); // only net players search, on their device
    match spec {
        "uniform" => Ok(Box::new(RandomPlayer::new(weiqi_rules::Policy::Uniform, seed))),
        "light" => Ok(Box::new(RandomPlayer::new(weiqi_rules::Policy::Light, seed))),
        #[cfg(feature = "tch")]
        s if s.starts_with("net:") => {
            tch::set_num_threads(1);
            let mut p =
                crate::net::NetPlayer::load_on(std::path::Path::new(&s[4..]), visits, crate::device::parse(device)?)?;
            if let Some(m) = gumbel {
                p.search.gumbel = Some(m);
                p.label = format!("{}/gumbel{m}", p.label);
            }
            Ok(Box::new(p))
        }
        s if s.starts_with("net:") => Err(Error::Invalid(
            "net players need the `tch` feature (cargo build --features tch)".into(),
        )),
        s if s.starts_with("gtp:") => {
            let engine = weiqi_gtp::EnginePlayer::spawn(&s[4..], Duration::from_secs(60))
                .map_err(|e| Error::Invalid(format!("{}: {e}", &s[4..])))?;
            Ok(Box::new(engine))
        }
        other => Err(Error::Invalid(format!(
            "unknown player {other:?} (uniform, light, net:PATH, gtp:COMMAND)"
        ))),
    }
}

/// A network player for `weiqi gtp --player net:PATH` (feature `tch`): [`player`]'s, its
/// search also stopped by the move's time on the GTP clock.
pub fn net_gtp_player(spec: &str, visits: u32, gumbel: Option<u32>, seed: u64) -> Result<Box<dyn Player>, Error> {
    timed_net_player(spec, visits, gumbel, seed)
}

#[cfg(feature = "tch")]
fn timed_net_player(spec: &str, visits: u32, gumbel: Option<u32>, seed: u64) -> Result<Box<dyn Player>, Error> {
    let path = spec
        .strip_prefix("net:")
        .ok_or_else(|| Error::Invalid(format!("{spec}: not net:PATH")))?;
    use rand::SeedableRng;
    tch::set_num_threads(1);
    let mut p = crate::net::NetPlayer::load(std::path::Path::new(path), visits)?;
    p.search.gumbel = gumbel;
    p.timed = true;
    p.rng = rand::rngs::SmallRng::seed_from_u64(seed);
    Ok(Box::new(p))
}

#[cfg(not(feature = "tch"))]
fn timed_net_player(_spec: &str, _visits: u32, _gumbel: Option<u32>, _seed: u64) -> Result<Box<dyn Player>, Error> {
    Err(Error::Invalid(
        "net:PATH needs the `tch` feature: cargo build --release -p weiqi-cli --features tch".into(),
    ))
}

/// The hybrid engine (`weiqi gtp --player hybrid:PATH`, feature `tch`): the playout tree
/// search of `mcts`, each of its threads advised by its own copy of the network at `path`
/// (one libtorch thread each; the search's threads use the cores).
pub fn hybrid_player(
    path: &str,
    mcts: weiqi_gtp::MctsSettings,
    hybrid: weiqi_gtp::HybridSettings,
) -> Result<Box<dyn Player>, Error> {
    hybrid.validate().map_err(Error::Invalid)?;
    hybrid_advisors(path, mcts.threads.max(1))
        .map(|advisors| Box::new(weiqi_gtp::MctsPlayer::new(mcts).with_advisors(advisors, hybrid)) as Box<dyn Player>)
}

#[cfg(feature = "tch")]
fn hybrid_advisors(path: &str, threads: usize) -> Result<Vec<Box<dyn weiqi_gtp::Advisor>>, Error> {
    tch::set_num_threads(1);
    (0..threads)
        .map(|_| {
            crate::net::NetAdvisor::load(std::path::Path::new(path)).map(|a| Box::new(a) as Box<dyn weiqi_gtp::Advisor>)
        })
        .collect()
}

#[cfg(not(feature = "tch"))]
fn hybrid_advisors(_path: &str, _threads: usize) -> Result<Vec<Box<dyn weiqi_gtp::Advisor>>, Error> {
    Err(Error::Invalid(
        "hybrid:PATH needs the `tch` feature: cargo build --release -p weiqi-cli --features tch".into(),
    ))
}

/// Trains `cfg` into `dest`: a path, or a `file://` or `s3://` name, for which the
/// checkpoint is trained in a scratch folder and then published (create-only). Returns
/// the names written and the log's rows.
#[cfg(feature = "tch")]
pub fn train_into(dest: &str, mut cfg: crate::train::TrainConfig) -> Result<(Vec<String>, usize), Error> {
    let remote = dest.contains("://");
    let scratch = std::env::temp_dir().join(format!("weiqi-train-{}", std::process::id()));
    cfg.out = if remote {
        std::fs::create_dir_all(&scratch)?;
        scratch.join("model.safetensors")
    } else {
        std::path::PathBuf::from(dest)
    };
    cfg.csv = cfg.out.with_extension("csv");
    let log = crate::train::train(&cfg)?;
    let written = if remote {
        // On failure the trained checkpoint stays in the scratch folder, named.
        let names = crate::publish::publish(&cfg.out, dest)
            .map_err(|e| Error::Invalid(format!("{e} (the checkpoint is kept in {})", scratch.display())))?;
        let _ = std::fs::remove_dir_all(&scratch);
        names
    } else {
        vec![cfg.out.display().to_string(), cfg.csv.display().to_string()]
    };
    Ok((written, log.len()))
}
