//! Shards (`.npz`, readable by numpy and PyTorch) and the run's manifest.

use std::io::{Cursor, Write};
use std::path::Path;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use ndarray::{Array1, Array2, Array3, Array4};
use ndarray_npy::NpzReader;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use weiqi_rules::Preset;

use std::sync::Mutex;

use crate::objects::Objects;
use crate::play::{GameData, play_game, play_policy_from};
use crate::search::{EvalError, Evaluator, play_games};
use crate::{Config, Error, PLANES, SCHEMA_VERSION, game_id};

/// One shard's entry in the manifest, with its games' results (so that a resumed run
/// counts the shards it skips).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct ShardInfo {
    pub file: String,
    pub games: u64,
    pub positions: u64,
    pub bytes: u64,
    #[serde(flatten)]
    pub results: Results,
}

/// How a set of games ended (a shard's, a run's).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
pub struct Results {
    #[serde(default)]
    pub black_wins: u64,
    #[serde(default)]
    pub white_wins: u64,
    #[serde(default)]
    pub draws: u64,
    /// Games that ended by resignation.
    #[serde(default)]
    pub resigned: u64,
    /// Games in the no-resign audit set, and those of them where a player fell below the
    /// resignation threshold and did not lose (resigning would have been wrong).
    #[serde(default)]
    pub resign_audit_games: u64,
    #[serde(default)]
    pub false_resigns: u64,
}

impl std::ops::AddAssign for Results {
    fn add_assign(&mut self, o: Results) {
        self.black_wins += o.black_wins;
        self.white_wins += o.white_wins;
        self.draws += o.draws;
        self.resigned += o.resigned;
        self.resign_audit_games += o.resign_audit_games;
        self.false_resigns += o.false_resigns;
    }
}

impl ShardInfo {
    /// The entry of `games`, written as `file` with `positions` rows in `bytes`.
    fn of(file: String, games: &[GameData], positions: u64, bytes: u64) -> ShardInfo {
        let count = |f: &dyn Fn(&GameData) -> bool| games.iter().filter(|g| f(g)).count() as u64;
        ShardInfo {
            file,
            games: games.len() as u64,
            positions,
            bytes,
            results: Results {
                black_wins: count(&|g| g.winner == Some(weiqi_rules::Color::Black)),
                white_wins: count(&|g| g.winner == Some(weiqi_rules::Color::White)),
                draws: count(&|g| g.winner.is_none()),
                resigned: count(&|g| g.resigned.is_some()),
                resign_audit_games: count(&|g| g.resign_audit),
                false_resigns: count(&|g| g.false_resign),
            },
        }
    }
}

/// The file of shard `k` of a run: the same name whichever worker writes it.
pub fn shard_file(k: u64) -> String {
    format!("shard-{k:05}.npz")
}

/// Which of a run's shards a worker plays: shard `k` (games `k * games_per_shard ..`) is
/// worker `k % workers`'s, so the workers' shards together are one process's, file for
/// file, and each worker's share is spread over the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Partition {
    pub workers: u64,
    pub worker: u64,
}

impl Default for Partition {
    fn default() -> Partition {
        Partition { workers: 1, worker: 0 }
    }
}

impl Partition {
    pub fn owns(&self, shard: u64) -> bool {
        shard % self.workers == self.worker
    }
}

/// `manifest.json`: what was run and what was written.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    pub schema_version: u32,
    pub config: Config,
    pub rules: weiqi_rules::Rules,
    pub board_size: u8,
    pub planes: usize,
    pub games: u64,
    pub positions: u64,
    #[serde(flatten)]
    pub results: Results,
    /// With a search, the number of evaluator lanes: the games depend on it, so a worker
    /// goes on only with the same number (`--threads`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lanes: Option<usize>,
    pub shards: Vec<ShardInfo>,
}

/// One shard in memory, as ndarray arrays.
#[derive(Debug, Clone)]
pub struct Shard {
    pub features: Array4<u8>,
    pub policy: Array2<f32>,
    pub legal: Array2<u8>,
    pub value: Array1<f32>,
    pub ownership: Array3<i8>,
    pub score: Array1<f32>,
    pub game_id: Array1<u64>,
    pub move_number: Array1<u16>,
    pub scored: Array1<u8>,
    /// The opponent's reply (a policy index, -1 for none; see [`GameData::next_move`]). A
    /// shard written before it reads as all -1: no reply target.
    pub next_move: Array1<i16>,
}

impl Shard {
    pub fn len(&self) -> usize {
        self.value.len()
    }
    pub fn is_empty(&self) -> bool {
        self.value.is_empty()
    }
    /// Board size of the positions.
    pub fn size(&self) -> usize {
        self.features.shape()[2]
    }
}

fn npz_err(e: impl std::fmt::Display) -> Error {
    Error::Npz(e.to_string())
}

/// The `.npy` header for a C-ordered array of `descr` (numpy dtype string) and `shape`.
fn npy_header(descr: &str, shape: &[usize]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape = if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    };
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // Magic (6) + version (2) + length (2) + dict + padding + newline: a multiple of 64.
    let total = 10 + dict.len() + 1;
    dict.push_str(&" ".repeat(total.next_multiple_of(64) - total));
    dict.push('\n');
    let mut h = b"\x93NUMPY\x01\x00".to_vec();
    h.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    h.extend_from_slice(dict.as_bytes());
    h
}

/// Receives the bytes of an array, in order.
type Sink<'a> = dyn FnMut(&[u8]) -> std::io::Result<()> + 'a;
/// Produces an array's bytes into a sink.
type Producer<'a> = dyn FnMut(&mut Sink<'_>) -> std::io::Result<()> + 'a;

/// Little-endian bytes of plain numbers, for `.npy` payloads.
trait LeBytes: Copy {
    fn put(self, out: &mut Vec<u8>);
}
macro_rules! le_bytes {
    ($($t:ty),*) => { $(impl LeBytes for $t { fn put(self, out: &mut Vec<u8>) { out.extend_from_slice(&self.to_le_bytes()) } })* };
}
le_bytes!(u8, i8, i16, u16, u64, f32);

/// Writes the games into one shard, streaming each array from the games' own buffers into
/// the zip (stored, fixed timestamps: the same games give the same bytes, and no shard-sized
/// copy is made).
/// `games` as one shard's bytes, assembled in memory so that the store receives it in one
/// put (whole or not at all; create-only). Returns the bytes and the number of rows.
pub fn shard_bytes(size: usize, games: &[GameData]) -> Result<(Vec<u8>, u64), Error> {
    let rows: usize = games.iter().map(|g| g.positions).sum();
    let bytes_per_row = PLANES * size * size + (size * size + 1) * 5 + size * size + 22;
    let mut out = Cursor::new(Vec::with_capacity(rows * bytes_per_row + 4096));
    let n = write_shard_to(&mut out, size, games)?;
    Ok((out.into_inner(), n))
}

fn write_shard_to(sink: &mut Cursor<Vec<u8>>, size: usize, games: &[GameData]) -> Result<u64, Error> {
    let n: usize = games.iter().map(|g| g.positions).sum();
    let area = size * size;
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .last_modified_time(zip::DateTime::default())
        .large_file(true);
    let mut zip = zip::ZipWriter::new(sink);
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
    let entry = |zip: &mut zip::ZipWriter<&mut Cursor<Vec<u8>>>,
                 name: &str,
                 descr: &str,
                 shape: &[usize],
                 chunks: &mut Producer<'_>|
     -> Result<(), Error> {
        zip.start_file(format!("{name}.npy"), options).map_err(npz_err)?;
        zip.write_all(&npy_header(descr, shape))?;
        chunks(&mut |bytes: &[u8]| zip.write_all(bytes))?;
        Ok(())
    };
    fn numbers<T: LeBytes>(
        buf: &mut Vec<u8>,
        xs: &[T],
        sink: &mut dyn FnMut(&[u8]) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        buf.clear();
        for &x in xs {
            x.put(buf);
        }
        sink(buf)
    }
    entry(&mut zip, "features", "|u1", &[n, PLANES, size, size], &mut |sink| {
        games.iter().try_for_each(|g| sink(&g.features))
    })?;
    entry(&mut zip, "policy", "<f4", &[n, area + 1], &mut |sink| {
        games.iter().try_for_each(|g| numbers(&mut buf, &g.policy, sink))
    })?;
    entry(&mut zip, "legal", "|u1", &[n, area + 1], &mut |sink| {
        games.iter().try_for_each(|g| sink(&g.legal))
    })?;
    let mut buf2: Vec<u8> = Vec::new();
    entry(&mut zip, "value", "<f4", &[n], &mut |sink| {
        games.iter().try_for_each(|g| numbers(&mut buf2, &g.value, sink))
    })?;
    entry(&mut zip, "ownership", "|i1", &[n, size, size], &mut |sink| {
        games.iter().try_for_each(|g| numbers(&mut buf2, &g.ownership, sink))
    })?;
    entry(&mut zip, "score", "<f4", &[n], &mut |sink| {
        games.iter().try_for_each(|g| numbers(&mut buf2, &g.score, sink))
    })?;
    entry(&mut zip, "game_id", "<u8", &[n], &mut |sink| {
        games
            .iter()
            .try_for_each(|g| numbers(&mut buf2, &vec![g.game_id; g.positions], sink))
    })?;
    entry(&mut zip, "move_number", "<u2", &[n], &mut |sink| {
        games.iter().try_for_each(|g| numbers(&mut buf2, &g.move_number, sink))
    })?;
    entry(&mut zip, "scored", "|u1", &[n], &mut |sink| {
        games.iter().try_for_each(|g| sink(&vec![g.scored as u8; g.positions]))
    })?;
    entry(&mut zip, "next_move", "<i2", &[n], &mut |sink| {
        games.iter().try_for_each(|g| numbers(&mut buf2, &g.next_move, sink))
    })?;
    zip.finish().map_err(npz_err)?.flush()?;
    Ok(n as u64)
}

/// Reads a shard file (see [`shard_from_bytes`]).
pub fn read_shard(path: &Path) -> Result<Shard, Error> {
    shard_from_bytes(&std::fs::read(path)?)
}

/// A shard from its bytes, as [`shard_bytes`] makes them.
pub fn shard_from_bytes(bytes: &[u8]) -> Result<Shard, Error> {
    let mut npz = NpzReader::new(Cursor::new(bytes)).map_err(npz_err)?;
    let has_next = npz.names().map_err(npz_err)?.iter().any(|n| n == "next_move");
    let value: Array1<f32> = npz.by_name("value").map_err(npz_err)?;
    let next_move = if has_next {
        npz.by_name("next_move").map_err(npz_err)?
    } else {
        Array1::from_elem(value.len(), -1)
    };
    Ok(Shard {
        features: npz.by_name("features").map_err(npz_err)?,
        policy: npz.by_name("policy").map_err(npz_err)?,
        legal: npz.by_name("legal").map_err(npz_err)?,
        value,
        ownership: npz.by_name("ownership").map_err(npz_err)?,
        score: npz.by_name("score").map_err(npz_err)?,
        game_id: npz.by_name("game_id").map_err(npz_err)?,
        move_number: npz.by_name("move_number").map_err(npz_err)?,
        scored: npz.by_name("scored").map_err(npz_err)?,
        next_move,
    })
}

/// Runs self-play into `out` (a directory or an object store prefix): shards, optional SGF
/// files, and `manifest.json`. Games run in parallel on the current rayon pool; `progress`
/// shows a bar with games/s.
pub fn run(config: &Config, out: &Objects, progress: bool) -> Result<Manifest, Error> {
    let rules = rules_of(config)?;
    if let Some(v) = &config.variant {
        if !v.bid_noise.is_finite() || !(0.0..=crate::variant::MAX_BID).contains(&v.bid_noise) {
            return Err(Error::Invalid(format!("bid noise {} is not in 0..=361", v.bid_noise)));
        }
        if v.bid_playouts > 100_000 {
            return Err(Error::Invalid("at most 100000 bid playouts".into()));
        }
    }
    run_with(config, out, progress, &|index| {
        let id = game_id(config.seed, index);
        match &config.variant {
            None => play_game(config.size, rules, config.policy, id, id, config.max_moves, config.sgf),
            Some(v) => variant_game(config, rules, v, id),
        }
    })
}

/// One game of the variant: the opening, then play as usual from it.
fn variant_game(config: &Config, rules: weiqi_rules::Rules, v: &crate::variant::FreeSeatsConfig, id: u64) -> GameData {
    use rand::SeedableRng;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(id ^ 0x5EA7_5704_E5B1_D500);
    let (start, opening) = crate::variant::open(config.size, rules, v, &mut rng);
    let mut g = play_policy_from(start, config.policy, id, id, config.max_moves, config.sgf);
    if let Some(sgf) = &mut g.sgf {
        // The record: the seat stones are its AB/AW, the agreed komi its KM; the bids here.
        let plain = format!("C[weiqi self-play, game {id:016x}]");
        let note = format!(
            "C[weiqi self-play, game {id:016x}; free seat stones (seed 002 variant): bids {} and {}, Black gives {}]",
            opening.bids[0], opening.bids[1], opening.komi
        );
        *sgf = sgf.replace(&plain, &note);
    }
    g.opening = Some(opening);
    g
}

/// [`run`] with a custom game player: `play(index)` plays game `index` (its id is
/// `game_id(config.seed, index)`), e.g. with [`crate::play_game_with`] and a bot.
pub fn run_with(
    config: &Config,
    out: &Objects,
    progress: bool,
    play: &(dyn Fn(u64) -> GameData + Sync),
) -> Result<Manifest, Error> {
    run_shards(config, out, progress, None, &|range, tick| {
        Ok(range
            .into_par_iter()
            .map(|i| {
                let g = play(i);
                tick();
                g
            })
            .collect())
    })
}

/// [`run`] with PUCT search (`config.search`) and one evaluator per lane: each shard's
/// games are split into as many lanes as there are evaluators, the lanes run in parallel
/// on the rayon pool, and each lane batches the leaves of its games in flight. The same
/// seed, settings and number of evaluators give the same games.
pub fn run_search<E: Evaluator + Send>(
    config: &Config,
    out: &Objects,
    progress: bool,
    evaluators: &[Mutex<E>],
) -> Result<Manifest, Error> {
    let search = config
        .search
        .ok_or_else(|| Error::Invalid("run_search needs config.search".into()))?;
    if evaluators.is_empty() {
        return Err(Error::Invalid("run_search needs at least one evaluator".into()));
    }
    let rules = rules_of(config)?;
    run_shards(config, out, progress, Some(evaluators.len()), &|range, tick| {
        let ids: Vec<u64> = range.map(|i| game_id(config.seed, i)).collect();
        let lane = ids.len().div_ceil(evaluators.len()).max(1);
        let parts: Vec<Vec<GameData>> = ids
            .par_chunks(lane)
            .zip(evaluators.par_iter())
            .map(|(ids, ev)| {
                let mut ev = ev.lock().unwrap_or_else(|e| e.into_inner());
                play_games(
                    ids,
                    config.size,
                    rules,
                    &search,
                    config.max_moves,
                    config.sgf,
                    &mut *ev,
                    tick,
                )
            })
            .collect::<Result<_, EvalError>>()?;
        Ok(parts.into_iter().flatten().collect())
    })
}

fn rules_of(config: &Config) -> Result<weiqi_rules::Rules, Error> {
    let preset: Preset = config
        .rules
        .parse()
        .map_err(|e: weiqi_rules::RulesError| Error::Invalid(e.to_string()))?;
    Ok(preset.rules().with_komi(config.komi))
}

/// Plays the games of one shard (a range of indices), calling `tick` as each ends.
type ShardProducer<'a> = dyn Fn(std::ops::Range<u64>, &(dyn Fn() + Sync)) -> Result<Vec<GameData>, Error> + Sync + 'a;

fn run_shards(
    config: &Config,
    out: &Objects,
    progress: bool,
    lanes: Option<usize>,
    produce: &ShardProducer<'_>,
) -> Result<Manifest, Error> {
    if !(weiqi_rules::MIN_SIZE..=weiqi_rules::MAX_SIZE).contains(&config.size) {
        return Err(Error::Invalid(format!("board size {} is not in 2..=25", config.size)));
    }
    let rules = rules_of(config)?;
    rules.validate().map_err(|e| Error::Invalid(e.to_string()))?;
    if config.games_per_shard == 0 {
        return Err(Error::Invalid("games per shard must be at least 1".into()));
    }
    let bar = if progress {
        ProgressBar::new(config.games)
    } else {
        ProgressBar::hidden()
    };
    if progress {
        bar.set_draw_target(ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} games  {per_sec}  eta {eta}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
    }
    let size = config.size as usize;
    let part = config.partition;
    if part.workers == 0 || part.worker >= part.workers {
        return Err(Error::Invalid(format!(
            "worker {} of {}: workers must be at least 1 and the worker below them",
            part.worker, part.workers
        )));
    }
    // A worker started again in its directory goes on from its manifest: the shards it
    // lists are done (each rewritten as it completes), the others are played.
    let mut manifest = match resume(config, lanes, out)? {
        Some(m) => m,
        None => Manifest {
            schema_version: SCHEMA_VERSION,
            config: config.clone(),
            rules,
            board_size: config.size,
            planes: PLANES,
            games: 0,
            positions: 0,
            results: Results::default(),
            lanes,
            shards: Vec::new(),
        },
    };
    let games_of = |k: u64| (k * config.games_per_shard)..((k + 1) * config.games_per_shard).min(config.games);
    let todo = todo(config, &manifest.shards);
    bar.set_length(todo.iter().map(|&k| games_of(k).end - games_of(k).start).sum());
    // Generate shard k+1 on the rayon pool while a writer thread writes shard k.
    let (tx, rx) = std::sync::mpsc::sync_channel::<(u64, Vec<GameData>)>(1);
    let manifest_ref = &mut manifest;
    std::thread::scope(|s| -> Result<(), Error> {
        let writer = s.spawn(move || -> Result<(), Error> {
            for (k, games) in rx {
                // The games' own files first: a shard's name is its promise that they are
                // there. Each is create-only; a restarted worker finds its own again.
                let mut openings = String::new();
                for g in &games {
                    if let Some(sgf) = &g.sgf {
                        out.put_new(&format!("games/{:016x}.sgf", g.game_id), sgf.clone().into_bytes())?;
                    }
                    if let Some(o) = &g.opening {
                        let line = serde_json::json!({
                            "game_id": format!("{:016x}", g.game_id),
                            "opening": o,
                            "winner": g.winner,
                            "white_minus_black": g.white_minus_black,
                        });
                        openings.push_str(&format!("{line}\n"));
                    }
                }
                if !openings.is_empty() {
                    out.put_new(&variant_file(k), openings.into_bytes())?;
                }
                let file = shard_file(k);
                let (bytes, positions) = shard_bytes(size, &games)?;
                let len = bytes.len() as u64;
                out.put_new(&file, bytes)?;
                manifest_ref.add(ShardInfo::of(file, &games, positions, len));
                write_manifest(out, manifest_ref)?;
            }
            Ok(())
        });
        let mut produced = Ok(());
        for &k in &todo {
            let games = match produce(games_of(k), &|| bar.inc(1)) {
                Ok(games) => games,
                Err(e) => {
                    // The shards written so far stay (the manifest lists them); the run
                    // resumes from here once the cause is mended.
                    produced = Err(e);
                    break;
                }
            };
            if tx.send((k, games)).is_err() {
                break; // the writer failed; its error is reported below
            }
        }
        drop(tx);
        writer
            .join()
            .map_err(|_| Error::Invalid("shard writer panicked".into()))??;
        produced
    })?;
    bar.finish_and_clear();
    manifest.shards.sort_by(|a, b| a.file.cmp(&b.file));
    write_manifest(out, &manifest)?;
    Ok(manifest)
}

/// This worker's shards of the run that `done` does not list, in order.
fn todo(config: &Config, done: &[ShardInfo]) -> Vec<u64> {
    (0..config.games.div_ceil(config.games_per_shard.max(1)))
        .filter(|&k| config.partition.owns(k) && !done.iter().any(|s| s.file == shard_file(k)))
        .collect()
}

/// The shards a run of `config` into `out` would play now: this worker's share less what
/// the manifest there lists (the run itself checks that the manifest is this run's).
pub fn pending(config: &Config, out: &Objects) -> Result<Vec<u64>, Error> {
    let done = match out.get("manifest.json")? {
        Some(bytes) => serde_json::from_slice::<Manifest>(&bytes)
            .map(|m| m.shards)
            .unwrap_or_default(),
        None => Vec::new(),
    };
    Ok(todo(config, &done))
}

impl Manifest {
    /// Counts a written shard in.
    fn add(&mut self, s: ShardInfo) {
        self.games += s.games;
        self.positions += s.positions;
        self.results += s.results;
        self.shards.push(s);
    }
}

/// Writes `manifest.json` whole or not at all (one put). It is the worker's own object,
/// rewritten as each shard completes: the checkpoint a restarted worker goes on from.
fn write_manifest(out: &Objects, manifest: &Manifest) -> Result<(), Error> {
    out.put("manifest.json", serde_json::to_vec_pretty(manifest)?)
}

/// The file of the variant openings of shard `k`'s games (one JSON line a game).
pub fn variant_file(k: u64) -> String {
    format!("variant/shard-{k:05}.jsonl")
}

/// The manifest a run left in `out`, to go on from: `None` when there is none; an error
/// when it is another run's (other settings) or a listed shard is missing or changed.
fn resume(config: &Config, lanes: Option<usize>, out: &Objects) -> Result<Option<Manifest>, Error> {
    let name = out.name("manifest.json");
    let Some(bytes) = out.get("manifest.json")? else {
        return Ok(None);
    };
    let m: Manifest =
        serde_json::from_slice(&bytes).map_err(|e| Error::Invalid(format!("{name}: not a manifest: {e}")))?;
    if m.schema_version != SCHEMA_VERSION || m.config != *config {
        return Err(Error::Invalid(format!(
            "{name} is from another run (schema {}, other settings): use another directory or prefix",
            m.schema_version
        )));
    }
    // (A manifest from before lanes were recorded says nothing about them.)
    if m.lanes.is_some() && m.lanes != lanes {
        return Err(Error::Invalid(format!(
            "{name}: this run's games were played with {} search lanes, not {}: go on with --threads {0}",
            m.lanes.unwrap_or(0),
            lanes.unwrap_or(0)
        )));
    }
    let sizes: std::collections::HashMap<String, u64> = out.list()?.into_iter().collect();
    for s in &m.shards {
        if sizes.get(&s.file) != Some(&s.bytes) {
            return Err(Error::Invalid(format!(
                "{name} lists {} ({} bytes), which is missing or changed",
                s.file, s.bytes
            )));
        }
    }
    Ok(Some(m))
}
