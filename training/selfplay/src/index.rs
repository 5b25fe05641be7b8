//! The index of a run's output: every worker's directory (one `manifest.json` each) under a
//! root, each shard checked as KataGo's server checks uploads (readable, the shapes and
//! dtypes of this schema, finite numbers in range, the rows and games its manifest lists,
//! no game in two shards), and the totals.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::shard::{Manifest, Shard, read_shard};
use crate::{Error, PLANES, SCHEMA_VERSION};

/// One worker's directory: its manifest's run and what its shards hold.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RunDir {
    pub dir: PathBuf,
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

/// Indexes and checks every run directory under `root` (`root` itself included). The
/// first bad shard or manifest is the error, naming its file.
pub fn index(root: &Path) -> Result<Index, Error> {
    let mut out = Index::default();
    // Which shard holds each game: a game in two shards is an error.
    let mut seen: HashMap<u64, PathBuf> = HashMap::new();
    for (dir, m) in run_dirs(root)? {
        let listed: Vec<&str> = m.shards.iter().map(|s| s.file.as_str()).collect();
        for entry in std::fs::read_dir(&dir)? {
            let name = entry?.file_name().to_string_lossy().into_owned();
            if name.starts_with("shard-") && name.ends_with(".npz") && !listed.contains(&name.as_str()) {
                return Err(bad(
                    &dir.join(&name),
                    "not in its manifest (its worker stopped before recording it: run the worker again)".into(),
                ));
            }
        }
        let mut run = RunDir {
            dir: dir.clone(),
            board_size: m.board_size,
            workers: m.config.partition.workers,
            worker: m.config.partition.worker,
            shards: 0,
            games: 0,
            positions: 0,
            bytes: 0,
        };
        for info in &m.shards {
            let file = dir.join(&info.file);
            let ids = check_shard(&file, m.board_size as usize)?;
            let games = count_games(&ids);
            if ids.len() as u64 != info.positions || games.len() as u64 != info.games {
                return Err(bad(
                    &file,
                    format!(
                        "{} positions of {} games; the manifest lists {} of {}",
                        ids.len(),
                        games.len(),
                        info.positions,
                        info.games
                    ),
                ));
            }
            for g in games {
                if let Some(other) = seen.insert(g, file.clone()) {
                    return Err(bad(&file, format!("game {g:016x} is also in {}", other.display())));
                }
            }
            run.shards += 1;
            run.games += info.games;
            run.positions += info.positions;
            run.bytes += std::fs::metadata(&file)?.len();
        }
        out.shards += run.shards;
        out.games += run.games;
        out.positions += run.positions;
        out.bytes += run.bytes;
        out.dirs.push(run);
    }
    Ok(out)
}

/// Every run directory under `root` (`root` itself included), with its manifest, in path
/// order: a manifest of another schema version is an error naming it.
pub fn run_dirs(root: &Path) -> Result<Vec<(PathBuf, Manifest)>, Error> {
    let mut manifests = Vec::new();
    find_manifests(root, &mut manifests)?;
    manifests.sort();
    if manifests.is_empty() {
        return Err(Error::Invalid(format!("no manifest.json under {}", root.display())));
    }
    manifests
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path)?;
            let m: Manifest = serde_json::from_str(&text).map_err(|e| bad(&path, format!("not a manifest: {e}")))?;
            if m.schema_version != SCHEMA_VERSION {
                return Err(bad(
                    &path,
                    format!(
                        "schema version {} (this build reads {SCHEMA_VERSION})",
                        m.schema_version
                    ),
                ));
            }
            Ok((path.parent().unwrap_or(root).to_path_buf(), m))
        })
        .collect()
}

fn bad(path: &Path, why: String) -> Error {
    Error::BadShard {
        path: path.to_path_buf(),
        why,
    }
}

fn find_manifests(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), Error> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            find_manifests(&path, out)?;
        } else if entry.file_name() == "manifest.json" {
            out.push(path);
        }
    }
    Ok(())
}

/// The distinct games of a shard's rows (a game's rows are contiguous).
fn count_games(ids: &[u64]) -> Vec<u64> {
    let mut games: Vec<u64> = ids.to_vec();
    games.dedup();
    games
}

/// Reads one shard and checks it against this schema for `size`x`size` boards; returns its
/// rows' game ids.
pub fn check_shard(path: &Path, size: usize) -> Result<Vec<u64>, Error> {
    Ok(read_checked(path, size)?.game_id.to_vec())
}

/// Reads one shard, checked as [`index`] checks it (the error names the file).
pub fn read_checked(path: &Path, size: usize) -> Result<Shard, Error> {
    let s = read_shard(path).map_err(|e| bad(path, format!("unreadable: {e}")))?;
    let n = s.game_id.len();
    let area = size * size;
    let shapes: [(&str, Vec<usize>, Vec<usize>); 9] = [
        ("features", s.features.shape().to_vec(), vec![n, PLANES, size, size]),
        ("policy", s.policy.shape().to_vec(), vec![n, area + 1]),
        ("legal", s.legal.shape().to_vec(), vec![n, area + 1]),
        ("value", s.value.shape().to_vec(), vec![n]),
        ("ownership", s.ownership.shape().to_vec(), vec![n, size, size]),
        ("score", s.score.shape().to_vec(), vec![n]),
        ("game_id", s.game_id.shape().to_vec(), vec![n]),
        ("move_number", s.move_number.shape().to_vec(), vec![n]),
        ("scored", s.scored.shape().to_vec(), vec![n]),
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
    Ok(s)
}
