//! Self-play split over workers (issue 19): the workers' shards together are one process's,
//! file for file; a worker started again goes on from its manifest; the index checks every
//! shard and names the first bad file.

use std::path::{Path, PathBuf};

use weiqi_selfplay::index::index;
use weiqi_selfplay::{Config, Error, Manifest, Objects, Partition, PlayPolicy, pending, run};

fn config(workers: u64, worker: u64) -> Config {
    Config {
        size: 7,
        games: 22,
        seed: 9,
        policy: PlayPolicy::Light,
        rules: "chinese".into(),
        komi: 7.5,
        games_per_shard: 4,
        max_moves: 7 * 7 * 4,
        sgf: false,
        player: None,
        search: None,
        variant: None,
        partition: Partition { workers, worker },
    }
}

fn out(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("weiqi-partition-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn shard_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("shard-"))
        .collect();
    names.sort();
    names
}

/// Three workers (6 shards: 0 and 3, 1 and 4, 2 and 5) write the same shards, byte for byte,
/// as one process, and their manifests add up to its manifest; the index of the three
/// directories counts the run once.
#[test]
fn workers_together_write_what_one_process_writes() {
    let root = out("union");
    let one = run(&config(1, 0), &Objects::dir(&root.join("single")).unwrap(), false).unwrap();
    let mut parts: Vec<Manifest> = Vec::new();
    for k in 0..3 {
        let dir = Objects::dir(&root.join(format!("run/worker={k}"))).unwrap();
        parts.push(run(&config(3, k), &dir, false).unwrap());
    }
    let mut files = Vec::new();
    for k in 0..3 {
        let dir = root.join(format!("run/worker={k}"));
        for f in shard_files(&dir) {
            let (a, b) = (
                std::fs::read(dir.join(&f)).unwrap(),
                std::fs::read(root.join("single").join(&f)).unwrap(),
            );
            assert!(a == b, "{f} of worker {k} differs from the single process's");
            files.push(f);
        }
    }
    files.sort();
    assert_eq!(files, shard_files(&root.join("single")));
    assert_eq!(files.len(), 6);
    let sum = |f: fn(&Manifest) -> u64| parts.iter().map(f).sum::<u64>();
    assert_eq!(sum(|m| m.games), one.games);
    assert_eq!(sum(|m| m.positions), one.positions);
    assert_eq!(sum(|m| m.results.black_wins), one.results.black_wins);
    assert_eq!(
        parts[1].shards.iter().map(|s| s.file.as_str()).collect::<Vec<_>>(),
        ["shard-00001.npz", "shard-00004.npz"]
    );

    let ix = index(&Objects::dir(&root.join("run")).unwrap()).unwrap();
    assert_eq!(
        (ix.dirs.len(), ix.shards, ix.games, ix.positions),
        (3, 6, one.games, one.positions)
    );
    // The single run and the workers' together hold every game twice.
    let twice = index(&Objects::dir(&root).unwrap()).unwrap_err();
    assert!(twice.to_string().contains("is also in"), "{twice}");
    std::fs::remove_dir_all(&root).unwrap();
}

/// A worker killed after some shards (here: one shard and its manifest entry gone, and a
/// partial file left behind) plays only what is missing when started again, and ends as an
/// uninterrupted worker would.
#[test]
fn a_restarted_worker_plays_only_what_is_missing() {
    let root = out("resume");
    let dir = root.join("w1");
    let whole = run(&config(2, 1), &Objects::dir(&dir).unwrap(), false).unwrap();
    let last = whole.shards.last().unwrap().file.clone();
    let complete = std::fs::read(dir.join(&last)).unwrap();
    // As if killed while writing the last shard.
    let mut cut = whole.clone();
    let gone = cut.shards.pop().unwrap();
    cut.games -= gone.games;
    cut.positions -= gone.positions;
    cut.results.black_wins -= gone.results.black_wins;
    cut.results.white_wins -= gone.results.white_wins;
    cut.results.draws -= gone.results.draws;
    std::fs::write(dir.join("manifest.json"), serde_json::to_string(&cut).unwrap()).unwrap();
    std::fs::remove_file(dir.join(&last)).unwrap();
    std::fs::write(dir.join(format!("{last}.partial")), b"half a shard").unwrap();

    let gone_index: u64 = last[6..11].parse().unwrap();
    assert_eq!(
        pending(&config(2, 1), &Objects::dir(&dir).unwrap()).unwrap(),
        [gone_index]
    );
    let again = run(&config(2, 1), &Objects::dir(&dir).unwrap(), false).unwrap();
    assert_eq!(again, whole);
    assert_eq!(std::fs::read(dir.join(&last)).unwrap(), complete);
    assert_eq!(pending(&config(2, 1), &Objects::dir(&dir).unwrap()).unwrap(), [0u64; 0]);
    // Killed between the shard's put and the manifest's: the shard is there, unlisted. The
    // create-only put finds the same bytes and goes on.
    std::fs::write(dir.join("manifest.json"), serde_json::to_string(&cut).unwrap()).unwrap();
    let again = run(&config(2, 1), &Objects::dir(&dir).unwrap(), false).unwrap();
    assert_eq!(again, whole);
    // A shard of other contents under that name (another run's, or another worker given
    // the same index) is never overwritten: the run stops, naming it.
    std::fs::write(dir.join("manifest.json"), serde_json::to_string(&cut).unwrap()).unwrap();
    std::fs::write(dir.join(&last), b"someone else's shard").unwrap();
    let err = run(&config(2, 1), &Objects::dir(&dir).unwrap(), false)
        .unwrap_err()
        .to_string();
    assert!(err.contains(&last) && err.contains("already exists"), "{err}");
    assert_eq!(std::fs::read(dir.join(&last)).unwrap(), b"someone else's shard");
    std::fs::write(dir.join(&last), &complete).unwrap();
    // Another run's settings in the same directory are refused, naming the manifest.
    let mut other = config(2, 1);
    other.seed = 10;
    let err = run(&other, &Objects::dir(&dir).unwrap(), false).unwrap_err();
    assert!(err.to_string().contains("manifest.json"), "{err}");
    std::fs::remove_dir_all(&root).unwrap();
}

/// The index refuses, by file: a truncated shard, a shard the manifest does not list, a
/// manifest of another schema version, and a shard whose rows are not what its manifest says.
#[test]
fn the_index_names_the_first_bad_file() {
    let root = out("bad");
    let dir = root.join("w0");
    let m = run(&config(1, 0), &Objects::dir(&dir).unwrap(), false).unwrap();
    assert_eq!(index(&Objects::dir(&root).unwrap()).unwrap().positions, m.positions);
    let first = dir.join(&m.shards[0].file);
    let bytes = std::fs::read(&first).unwrap();
    let named = |e: Error, file: &std::path::Path, what: &str| {
        let text = e.to_string();
        assert!(matches!(e, Error::BadShard { .. }), "{text}");
        assert!(
            text.contains(&file.display().to_string()) && text.contains(what),
            "{text}"
        );
    };

    std::fs::write(&first, &bytes[..bytes.len() / 2]).unwrap();
    named(index(&Objects::dir(&root).unwrap()).unwrap_err(), &first, "unreadable");
    std::fs::write(&first, &bytes).unwrap();

    let stray = dir.join("shard-00099.npz");
    std::fs::write(&stray, &bytes).unwrap();
    named(
        index(&Objects::dir(&root).unwrap()).unwrap_err(),
        &stray,
        "not in its manifest",
    );
    std::fs::remove_file(&stray).unwrap();

    let manifest = dir.join("manifest.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replacen("\"schema_version\": 2", "\"schema_version\": 1", 1),
    )
    .unwrap();
    named(
        index(&Objects::dir(&root).unwrap()).unwrap_err(),
        &manifest,
        "schema version 1",
    );

    // The second shard's file under the first one's name: its rows are not the listed ones.
    std::fs::write(&manifest, &text).unwrap();
    std::fs::copy(dir.join(&m.shards[1].file), &first).unwrap();
    let e = index(&Objects::dir(&root).unwrap()).unwrap_err();
    named(e, &first, "the manifest lists");
    std::fs::remove_dir_all(&root).unwrap();
}
