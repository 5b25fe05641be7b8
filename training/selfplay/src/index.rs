//! The index of a run's output: every worker's directory (one `manifest.json` each) under a
//! root, each shard checked as KataGo's server checks uploads (readable, the shapes and
//! dtypes of this schema, finite numbers in range, the rows and games its manifest lists,
//! no game in two shards), and the totals.

use std::collections::HashMap;

use serde::Serialize;

use crate::objects::Objects;
use crate::shard::{Manifest, Shard, shard_from_bytes};
use crate::{Error, PLANES, SCHEMA_VERSION};

/// One worker's directory: its manifest's run and what its shards hold.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RunDir {
    /// The directory or prefix, named as the root was, then the path below it.
    pub dir: String,
    pub board_size: u8,
    pub workers: u64,
    pub worker: u64,
    pub shards: u64,
    pub games: u64,
    pub positions: u64,
    pub bytes: u64,
}

/// Every run directory under a root, with the totals.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct Index {
    pub dirs: Vec<RunDir>,
    pub shards: u64,
    pub games: u64,
    pub positions: u64,
    pub bytes: u64,
}

/// One worker's directory found under a root: where it is (relative to the root, `""`
/// for the root itself) and its manifest.
#[derive(Debug, Clone)]
pub struct Found {
    pub rel: String,
    pub manifest: Manifest,
}

impl Found {
    /// The key of `file` in this directory, relative to the root.
    pub fn key(&self, file: &str) -> String {
        if self.rel.is_empty() {
            file.to_string()
        } else {
            format!("{}/{file}", self.rel)
        }
    }
}

/// Indexes and checks every run directory under `root` (`root` itself included). The
/// first bad shard or manifest is the error, naming its object.
pub fn index(root: &Objects) -> Result<Index, Error> {
    let mut out = Index::default();
    // Which shard holds each game: a game in two shards is an error.
    let mut seen: HashMap<u64, String> = HashMap::new();
    let listed = root.list()?;
    for found in run_dirs_in(root, &listed)? {
        let m = &found.manifest;
        let in_manifest: Vec<String> = m.shards.iter().map(|s| found.key(&s.file)).collect();
        let prefix = found.key("");
        for (key, _) in &listed {
            let Some(name) = key.strip_prefix(&prefix) else {
                continue;
            };
            if name.starts_with("shard-") && name.ends_with(".npz") && !in_manifest.contains(key) {
                return Err(bad(
                    &root.name(key),
                    "not in its manifest (its worker stopped before recording it: run the worker again)".into(),
                ));
            }
        }
        let mut run = RunDir {
            dir: root.name(&found.rel),
            board_size: m.board_size,
            workers: m.config.partition.workers,
            worker: m.config.partition.worker,
            shards: 0,
            games: 0,
            positions: 0,
            bytes: 0,
        };
        for info in &m.shards {
            let key = found.key(&info.file);
            let name = root.name(&key);
            let shard = read_checked(root, &key, m.board_size as usize)?;
            let games = count_games(shard.game_id.as_slice().unwrap_or(&[]));
            if shard.game_id.len() as u64 != info.positions || games.len() as u64 != info.games {
                return Err(bad(
                    &name,
                    format!(
                        "{} positions of {} games; the manifest lists {} of {}",
                        shard.game_id.len(),
                        games.len(),
                        info.positions,
                        info.games
                    ),
                ));
            }
            for g in games {
                if let Some(other) = seen.insert(g, name.clone()) {
                    return Err(bad(&name, format!("game {g:016x} is also in {other}")));
                }
            }
            run.shards += 1;
            run.games += info.games;
            run.positions += info.positions;
            run.bytes += listed.iter().find(|(k, _)| *k == key).map_or(0, |(_, n)| *n);
        }
        out.shards += run.shards;
        out.games += run.games;
        out.positions += run.positions;
        out.bytes += run.bytes;
        out.dirs.push(run);
    }
    Ok(out)
}

/// Every run directory under `root` (`root` itself included), with its manifest, in key
/// order: a manifest of another schema version is an error naming it.
pub fn run_dirs(root: &Objects) -> Result<Vec<Found>, Error> {
    run_dirs_in(root, &root.list()?)
}

fn run_dirs_in(root: &Objects, listed: &[(String, u64)]) -> Result<Vec<Found>, Error> {
    let manifests: Vec<&str> = listed
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| *k == "manifest.json" || k.ends_with("/manifest.json"))
        .collect();
    if manifests.is_empty() {
        return Err(Error::Invalid(format!("no manifest.json under {}", root.name(""))));
    }
    manifests
        .into_iter()
        .map(|key| {
            let name = root.name(key);
            let bytes = root.get(key)?.ok_or_else(|| bad(&name, "listed but gone".into()))?;
            let m: Manifest = serde_json::from_slice(&bytes).map_err(|e| bad(&name, format!("not a manifest: {e}")))?;
            if m.schema_version != SCHEMA_VERSION {
                return Err(bad(
                    &name,
                    format!(
                        "schema version {} (this build reads {SCHEMA_VERSION})",
                        m.schema_version
                    ),
                ));
            }
            let rel = key.strip_suffix("manifest.json").unwrap_or("").trim_end_matches('/');
            Ok(Found {
                rel: rel.to_string(),
                manifest: m,
            })
        })
        .collect()
}

fn bad(name: &str, why: String) -> Error {
    Error::BadShard {
        path: name.to_string(),
        why,
    }
}

/// The distinct games of a shard's rows (a game's rows are contiguous).
fn count_games(ids: &[u64]) -> Vec<u64> {
    let mut games: Vec<u64> = ids.to_vec();
    games.dedup();
    games
}

/// Reads the shard at `key` below `root`, checked as [`index`] checks it against this
/// schema for `size`x`size` boards (the error names the object).
pub fn read_checked(root: &Objects, key: &str, size: usize) -> Result<Shard, Error> {
    let name = root.name(key);
    let path = name.as_str();
    let bytes = root.get(key)?.ok_or_else(|| bad(path, "missing".into()))?;
    let s = shard_from_bytes(&bytes).map_err(|e| bad(path, format!("unreadable: {e}")))?;
    let n = s.game_id.len();
    let area = size * size;
    let shapes: [(&str, Vec<usize>, Vec<usize>); 10] = [
        ("features", s.features.shape().to_vec(), vec![n, PLANES, size, size]),
        ("policy", s.policy.shape().to_vec(), vec![n, area + 1]),
        ("legal", s.legal.shape().to_vec(), vec![n, area + 1]),
        ("value", s.value.shape().to_vec(), vec![n]),
        ("ownership", s.ownership.shape().to_vec(), vec![n, size, size]),
        ("score", s.score.shape().to_vec(), vec![n]),
        ("game_id", s.game_id.shape().to_vec(), vec![n]),
        ("move_number", s.move_number.shape().to_vec(), vec![n]),
        ("scored", s.scored.shape().to_vec(), vec![n]),
        ("next_move", s.next_move.shape().to_vec(), vec![n]),
    ];
    for (name, got, want) in shapes {
        if got != want {
            return Err(bad(path, format!("{name} has shape {got:?}, expected {want:?}")));
        }
    }
    if let Some(row) = s.policy.rows().into_iter().position(|r| {
        let sum: f32 = r.iter().sum();
        r.iter().any(|p| !p.is_finite() || *p < 0.0) || (sum - 1.0).abs() > 1e-3
    }) {
        return Err(bad(path, format!("policy row {row} is not a distribution")));
    }
    if let Some(i) = s.value.iter().position(|v| !v.is_finite() || v.abs() > 1.0) {
        return Err(bad(path, format!("value {i} is {} (not in -1..1)", s.value[i])));
    }
    if let Some(i) = s.score.iter().position(|v| !v.is_finite()) {
        return Err(bad(path, format!("score {i} is {}", s.score[i])));
    }
    if s.features.iter().any(|&v| v > 1) || s.legal.iter().any(|&v| v > 1) || s.scored.iter().any(|&v| v > 1) {
        return Err(bad(
            path,
            "features, legal or scored hold a value other than 0 and 1".into(),
        ));
    }
    if s.ownership.iter().any(|&v| !(-1..=1).contains(&v)) {
        return Err(bad(path, "ownership holds a value other than -1, 0 and 1".into()));
    }
    if let Some(i) = s.next_move.iter().position(|&m| !(-1..=area as i16).contains(&m)) {
        return Err(bad(
            path,
            format!("next_move {i} is {} (not a move index or -1)", s.next_move[i]),
        ));
    }
    Ok(s)
}
