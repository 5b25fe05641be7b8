//! Self-play output checked against the rules engine: legal games, consistent targets,
//! determinism, readable shards, and symmetry-augmented batches.

use std::path::PathBuf;

use weiqi_rules::sgf::GameRecord;
use weiqi_rules::{Color, Outcome, Preset};
use weiqi_selfplay::{Batches, Config, Objects, PlayPolicy, read_shard, run, symmetry_permutation};

fn config(games: u64, policy: PlayPolicy) -> Config {
    Config {
        size: 7,
        games,
        seed: 42,
        policy,
        rules: "chinese".into(),
        komi: 7.5,
        games_per_shard: 8,
        max_moves: 7 * 7 * 4,
        sgf: true,
        player: None,
        search: None,
        variant: None,
        partition: Default::default(),
    }
}

fn out(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("weiqi-selfplay-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Every game written is legal when replayed from its SGF, and `value`, `ownership` and
/// `score` agree with the game's scored result.
#[test]
fn games_are_legal_and_targets_agree() {
    let dir = out("legal");
    let m = run(&config(20, PlayPolicy::Light), &Objects::dir(&dir).unwrap(), false).unwrap();
    assert_eq!(m.games, 20);
    assert_eq!(m.shards.len(), 3);
    let mut results = std::collections::HashMap::new();
    for entry in std::fs::read_dir(dir.join("games")).unwrap() {
        let path = entry.unwrap().path();
        let rec = GameRecord::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let rules = Preset::Chinese.rules().with_komi(7.5);
        let rep = rec.replay(rules).unwrap();
        assert!(rep.first_illegal.is_none(), "{}", path.display());
        assert!(rep.state.is_over(), "games end by two passes");
        let score = rep.state.tromp_taylor_score();
        assert_eq!(Some(score.outcome.to_string().replace("Draw", "0")), rec.result);
        let id = u64::from_str_radix(path.file_stem().unwrap().to_str().unwrap(), 16).unwrap();
        results.insert(
            id,
            (
                score.white_minus_black,
                rep.moves_applied,
                rep.state.board().clone(),
                rep.state.moves().to_vec(),
            ),
        );
    }
    assert_eq!(results.len(), 20);
    let mut positions = 0;
    for info in &m.shards {
        let sh = read_shard(&dir.join(&info.file)).unwrap();
        assert_eq!(sh.len() as u64, info.positions);
        positions += sh.len();
        for i in 0..sh.len() {
            let (wmb, moves, board, record) = &results[&sh.game_id[i]];
            let mover = if sh.features[[i, 16, 0, 0]] == 1 {
                Color::Black
            } else {
                Color::White
            };
            let margin = if mover == Color::White { *wmb } else { -*wmb };
            assert_eq!(sh.score[i] as f64, margin);
            let expect = match Outcome::from_white_minus_black(margin) {
                Outcome::Win { .. } => 1.0,
                Outcome::Draw => 0.0,
            };
            assert_eq!(sh.value[i].abs(), expect);
            assert_eq!(sh.value[i] > 0.0, margin > 0.0);
            // Ownership from the mover's view sums to the area difference before komi.
            let own: i64 = sh
                .ownership
                .index_axis(ndarray::Axis(0), i)
                .iter()
                .map(|&o| o as i64)
                .sum();
            let komi_from_mover = if mover == Color::White { 7.5 } else { -7.5 };
            assert_eq!(own as f64, margin - komi_from_mover);
            // The ownership of a final stone is its colour.
            let p = board.points().next().unwrap();
            if let Some(c) = board.get(p) {
                let o = sh.ownership[[i, 0, 0]];
                assert_eq!(o == 1, c == mover);
            }
            assert!((sh.move_number[i] as usize) < *moves);
            assert_eq!(sh.scored[i], 1, "games end by two passes");
            // The move played is legal, and one-hot.
            let played: Vec<usize> = (0..50).filter(|&j| sh.policy[[i, j]] == 1.0).collect();
            assert_eq!(played.len(), 1);
            assert_eq!(sh.legal[[i, played[0]]], 1);
            assert_eq!(sh.legal[[i, 49]], 1, "pass is always legal");
            // The opponent's reply is the record's next move after this one (-1 after the
            // last): the target of the opponent-reply head.
            let m = sh.move_number[i] as usize;
            assert_eq!(record[m].1, weiqi_selfplay::index_move(played[0] as i64, 7, 7).unwrap());
            let reply = record
                .get(m + 1)
                .map_or(-1, |&(_, mv)| weiqi_selfplay::move_index(mv, 7) as i16);
            assert_eq!(sh.next_move[i], reply, "row {i}");
        }
    }
    assert_eq!(positions as u64, m.positions);
}

/// The same seed and settings give byte-identical shards, whatever the thread count.
#[test]
fn deterministic_shards() {
    let a = out("det-a");
    let b = out("det-b");
    let cfg = config(12, PlayPolicy::Uniform);
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let two = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let ma = one.install(|| run(&cfg, &Objects::dir(&a).unwrap(), false)).unwrap();
    let mb = two.install(|| run(&cfg, &Objects::dir(&b).unwrap(), false)).unwrap();
    assert_eq!(ma, mb);
    for s in &ma.shards {
        assert_eq!(
            std::fs::read(a.join(&s.file)).unwrap(),
            std::fs::read(b.join(&s.file)).unwrap(),
            "{}",
            s.file
        );
    }
    let mut other = cfg.clone();
    other.seed = 43;
    let mc = run(&other, &Objects::dir(&out("det-c")).unwrap(), false).unwrap();
    assert_ne!(mc.positions, 0);
}

/// Batches: every position once per epoch; augmentation moves points consistently across
/// features, policy, legal and ownership, and never the pass index.
#[test]
fn batches_with_symmetry_augmentation() {
    let dir = out("batch");
    let m = run(&config(8, PlayPolicy::Light), &Objects::dir(&dir).unwrap(), false).unwrap();
    let shards: Vec<_> = m
        .shards
        .iter()
        .map(|s| read_shard(&dir.join(&s.file)).unwrap())
        .collect();
    let total: usize = shards.iter().map(|s| s.len()).sum();
    let plain: usize = Batches::new(&shards, 32, 1, false).map(|b| b.value.len()).sum();
    assert_eq!(plain, total);
    let n = 7;
    for batch in Batches::new(&shards, 16, 2, true) {
        for k in 0..batch.value.len() {
            // The played move is legal under the same symmetry.
            let played = (0..=n * n).find(|&j| batch.policy[[k, j]] == 1.0).unwrap();
            assert_eq!(batch.legal[[k, played]], 1);
            assert_eq!(batch.legal[[k, n * n]], 1);
            // A played point is empty in the current position (planes 0 and 8).
            if played < n * n {
                let (y, x) = (played / n, played % n);
                assert_eq!(batch.features[[k, 0, y, x]] + batch.features[[k, 8, y, x]], 0);
            }
            // The reply is a move index (or -1), never the point just played (its stone is
            // there).
            let reply = batch.next_move[k];
            assert!((-1..=(n * n) as i16).contains(&reply));
            if played < n * n {
                assert_ne!(reply, played as i16);
            }
            // Stones on the board are legal nowhere.
            for y in 0..n {
                for x in 0..n {
                    if batch.features[[k, 0, y, x]] + batch.features[[k, 8, y, x]] > 0 {
                        assert_eq!(batch.legal[[k, y * n + x]], 0);
                    }
                }
            }
        }
    }
    // The same batches without augmentation (same order): one symmetry maps each plain
    // sample's features, played move and reply onto the augmented one's.
    let perms: Vec<Vec<usize>> = (0..8).map(|s| symmetry_permutation(s, n)).collect();
    let map = |perm: &[usize], j: i64| {
        if (0..(n * n) as i64).contains(&j) {
            perm[j as usize] as i64
        } else {
            j
        }
    };
    for (plain, aug) in Batches::new(&shards, 16, 2, false).zip(Batches::new(&shards, 16, 2, true)) {
        for k in 0..plain.value.len() {
            let played = |b: &weiqi_selfplay::Batch| (0..=n * n).find(|&j| b.policy[[k, j]] == 1.0).unwrap() as i64;
            let fits = perms.iter().any(|perm| {
                map(perm, played(&plain)) == played(&aug)
                    && map(perm, plain.next_move[k] as i64) == aug.next_move[k] as i64
                    && (0..n * n).all(|j| {
                        let t = perm[j];
                        (0..17).all(|c| plain.features[[k, c, j / n, j % n]] == aug.features[[k, c, t / n, t % n]])
                    })
            });
            assert!(
                fits,
                "sample {k}: no symmetry maps the plain sample onto the augmented one"
            );
        }
    }
    // Each permutation is a bijection.
    for s in 0..8 {
        let mut p = symmetry_permutation(s, 9);
        p.sort();
        assert_eq!(p, (0..81).collect::<Vec<_>>());
    }
}

/// The shards load in numpy with the documented shapes and dtypes (CI installs numpy).
#[test]
fn numpy_reads_the_shards() {
    let has = std::process::Command::new("python3")
        .args(["-c", "import numpy"])
        .status()
        .is_ok_and(|s| s.success());
    if !has {
        if std::env::var("WEIQI_REQUIRE_INTEROP").as_deref() == Ok("1") {
            panic!("python3 with numpy is required");
        }
        eprintln!("SKIPPED: python3 numpy not installed");
        return;
    }
    let dir = out("numpy");
    run(&config(4, PlayPolicy::Uniform), &Objects::dir(&dir).unwrap(), false).unwrap();
    let script = r#"
import json, sys, numpy as np
d = sys.argv[1]
m = json.load(open(d + "/manifest.json"))
assert m["schema_version"] == 2
n = 7
for s in m["shards"]:
    z = np.load(d + "/" + s["file"])
    k = s["positions"]
    want = {"features": ("uint8", (k, 17, n, n)), "policy": ("float32", (k, n*n+1)), "legal": ("uint8", (k, n*n+1)),
            "value": ("float32", (k,)), "ownership": ("int8", (k, n, n)), "score": ("float32", (k,)),
            "game_id": ("uint64", (k,)), "move_number": ("uint16", (k,)), "scored": ("uint8", (k,)),
            "next_move": ("int16", (k,))}
    for name, (dt, shape) in want.items():
        a = z[name]
        assert str(a.dtype) == dt and a.shape == shape, (name, a.dtype, a.shape)
    assert np.all(z["policy"].sum(axis=1) == 1.0)
    assert set(np.unique(z["value"])) <= {-1.0, 0.0, 1.0}
print("numpy ok")
"#;
    let o = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("numpy ok"));
}

/// Seed 002's variant (`--variant free-seats`): every game opens with four seat stones as
/// setup and is played with the higher bid as komi; `variant/shard-NNNNN.jsonl` records the openings;
/// the games are legal from their SGF (seat stones as AB/AW, the komi as KM).
#[test]
fn the_free_seats_variant_records_its_openings() {
    let dir = out("variant");
    let mut cfg = config(6, PlayPolicy::Light);
    cfg.variant = Some(weiqi_selfplay::variant::FreeSeatsConfig {
        no_first_line: true,
        half_point_bids: true,
        bid_playouts: 16,
        bid_noise: 2.0,
    });
    let m = run(&cfg, &Objects::dir(&dir).unwrap(), false).unwrap();
    assert_eq!(m.games, 6);
    // One file of openings per shard (objects are written whole, never appended to).
    let mut files: Vec<_> = std::fs::read_dir(dir.join("variant"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), m.shards.len());
    let lines: Vec<serde_json::Value> = files
        .iter()
        .flat_map(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .lines()
                .map(String::from)
                .collect::<Vec<_>>()
        })
        .map(|l| serde_json::from_str(&l).unwrap())
        .collect();
    assert_eq!(lines.len(), 6);
    for l in &lines {
        let o = &l["opening"];
        let bids = [o["bids"][0].as_f64().unwrap(), o["bids"][1].as_f64().unwrap()];
        let komi = o["komi"].as_f64().unwrap();
        assert_eq!(komi, bids[0].max(bids[1]), "the higher bid is the komi");
        assert!(
            bids.iter().all(|b| (b * 2.0).rem_euclid(2.0) == 1.0),
            "n + 0.5: {bids:?}"
        );
        assert_eq!(o["seat_stones"].as_array().unwrap().len(), 4);
        let id = l["game_id"].as_str().unwrap();
        let sgf = std::fs::read_to_string(dir.join("games").join(format!("{id}.sgf"))).unwrap();
        let rec = GameRecord::parse(&sgf).unwrap();
        assert_eq!((rec.setup_black.len(), rec.setup_white.len()), (2, 2), "{sgf}");
        assert_eq!(rec.komi, Some(komi));
        assert!(
            rec.setup_black
                .iter()
                .chain(&rec.setup_white)
                .all(|p| p.x > 0 && p.y > 0 && p.x < 6 && p.y < 6)
        );
        let rep = rec.replay(Preset::Chinese.rules().with_komi(komi)).unwrap();
        assert!(rep.first_illegal.is_none(), "{sgf}");
        let w_minus_b = l["white_minus_black"].as_f64().unwrap();
        assert_eq!(rep.state.tromp_taylor_score().white_minus_black, w_minus_b, "{sgf}");
    }
}

/// A shard written before `next_move` (the array absent) still reads and passes the
/// index's checks, with no reply anywhere (-1): the array is optional within schema 2.
#[test]
fn a_shard_without_replies_reads_as_none() {
    let dir = out("old");
    let m = run(&config(4, PlayPolicy::Light), &Objects::dir(&dir).unwrap(), false).unwrap();
    let key = &m.shards[0].file;
    let file = dir.join(key);
    let fresh = weiqi_selfplay::index::read_checked(&Objects::dir(&dir).unwrap(), key, 7).unwrap();
    assert!(fresh.next_move.iter().any(|&r| r >= 0) && fresh.next_move.iter().any(|&r| r == -1));
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(std::fs::read(&file).unwrap())).unwrap();
    let mut old = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for i in 0..archive.len() {
        let f = archive.by_index_raw(i).unwrap();
        if f.name() != "next_move.npy" {
            old.raw_copy_file(f).unwrap();
        }
    }
    std::fs::write(&file, old.finish().unwrap().into_inner()).unwrap();
    let s = weiqi_selfplay::index::read_checked(&Objects::dir(&dir).unwrap(), key, 7).unwrap();
    assert_eq!(s.next_move.len(), s.len());
    assert!(s.next_move.iter().all(|&r| r == -1));
    assert_eq!(s.policy, fresh.policy);
}
