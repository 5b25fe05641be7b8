//! End-to-end tests of the `weiqi` binary.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

mod support;
use support::weiqi;

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/rules/tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn replay_prints_one_object_per_file() {
    let (code, out, _) = weiqi(&[
        "replay",
        &fixture("simple_game.sgf"),
        &fixture("superko_sending_two_returning_one.sgf"),
    ]);
    assert_eq!(code, 0);
    let lines: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    let a = &lines[0];
    assert_eq!(a["size"], serde_json::json!([5, 5]));
    assert_eq!(a["moves_applied"], 19);
    assert!(a["first_illegal"].is_null());
    assert_eq!(a["final_board"][2], "xxxoo");
    assert_eq!(a["captures"]["white"], 1);
    assert_eq!(a["area"]["white_minus_black"], 5.5);
    let b = &lines[1];
    assert_eq!(b["first_illegal"]["move_number"], 11);
    assert_eq!(b["first_illegal"]["move"], "B[aa]");
    assert_eq!(b["first_illegal"]["reason"], "superko");
    assert_eq!(b["moves_applied"], 10);
}

#[test]
fn malformed_files_give_an_error_object_and_nonzero_exit() {
    let dir = std::env::temp_dir().join(format!("weiqi-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.sgf");
    std::fs::write(&bad, "(;SZ[9];B[ee];W[zz]").unwrap();
    let (code, out, _) = weiqi(&[
        "replay",
        &fixture("simple_game.sgf"),
        bad.to_str().unwrap(),
        "/nonexistent.sgf",
    ]);
    assert_ne!(code, 0);
    let lines: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 3);
    assert!(lines[0]["error"].is_null());
    assert!(lines[1]["error"].as_str().unwrap().contains("SGF"), "{}", lines[1]);
    assert!(lines[2]["error"].is_string());
}

#[test]
fn perft_counts() {
    let (code, out, _) = weiqi(&["perft", "--size", "3", "--depth", "3"]);
    assert_eq!((code, out.trim()), (0, "504"));
    let (_, out, _) = weiqi(&["perft", "--size", "2", "--depth", "3", "--passes"]);
    assert_eq!(out.trim(), "68");
}

#[test]
fn score_with_dead_stones() {
    let (code, out, _) = weiqi(&["score", &fixture("simple_game.sgf"), "--json"]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["result"], "W+5.5");
    assert_eq!(v["area"]["black"], 10.0);
    // Mark White's D3 chain (D3, E3, E2, D1 side) dead: one stone marks the whole chain.
    let (code, out, _) = weiqi(&["score", &fixture("simple_game.sgf"), "--dead", "D3", "--json"]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v["area"]["black"].as_f64().unwrap() > 10.0);
    let (code, _, err) = weiqi(&["score", &fixture("simple_game.sgf"), "--dead", "Z99"]);
    assert_ne!(code, 0);
    assert!(err.contains("Z99"));
}

#[test]
fn bench_reports_rates() {
    let (code, out, _) = weiqi(&["bench", "playouts", "--size", "9", "--seconds", "0.2", "--json"]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    for k in [
        "games",
        "moves",
        "wall_s",
        "cpu_s",
        "games_per_cpu_s",
        "moves_per_cpu_s",
    ] {
        assert!(v[k].as_f64().unwrap() > 0.0, "{k}");
    }
    let (code, _, _) = weiqi(&[
        "bench",
        "playouts",
        "--size",
        "9",
        "--seconds",
        "0.1",
        "--policy",
        "light",
        "--threads",
        "2",
    ]);
    assert_eq!(code, 0);
}

#[test]
fn referee_script_is_deterministic_and_ends_on_time() {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/referee-byoyomi.jsonl");
    let (code, out, err) = weiqi(&["referee", script.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let (_, again, _) = weiqi(&["referee", script.to_str().unwrap()]);
    assert_eq!(out, again, "same script, same output");
    let lines: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(lines.iter().any(|l| l["rejected"]["code"] == "not_your_turn"));
    assert!(lines.iter().any(|l| l["event"]["kind"]["type"] == "resumed"));
    let fin = &lines.last().unwrap()["final"];
    assert_eq!(fin["phase"], "finished");
    assert_eq!(fin["result"]["reason"], "time");
    assert_eq!(fin["result_sgf"], "B+T");
}

/// The variant (seed 002) through the referee: seat stones, sealed bids, the higher bid
/// plays Black with its komi.
#[test]
fn referee_runs_the_free_seats_variant() {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/referee-variant.jsonl");
    let (code, out, err) = weiqi(&["referee", script.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let rejected: Vec<&Value> = lines.iter().filter_map(|l| l.get("rejected")).collect();
    assert_eq!(
        rejected.len(),
        2,
        "A1 on the first line, a reveal that does not match: {out}"
    );
    assert_eq!(rejected[1]["code"], "commitment_mismatch");
    let agreed = lines
        .iter()
        .find(|l| l["event"]["kind"]["type"] == "komi_agreed")
        .expect("komi agreed");
    assert_eq!(agreed["event"]["kind"]["komi"], 7.5);
    assert_eq!(agreed["event"]["kind"]["black"], "host");
    let fin = &lines.last().unwrap()["final"];
    assert_eq!(fin["result_sgf"], "B+R");
}

#[test]
fn selfplay_writes_shards_manifest_and_sgf() {
    let dir = std::env::temp_dir().join(format!("weiqi-cli-selfplay-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (code, out, err) = weiqi(&[
        "selfplay",
        "--size",
        "5",
        "--games",
        "6",
        "--out",
        dir.to_str().unwrap(),
        "--threads",
        "2",
        "--sgf",
        "--games-per-shard",
        "4",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["games"], 6);
    assert_eq!(v["shards"], 2);
    assert!(v["positions_per_cpu_s"].as_f64().unwrap() > 0.0);
    let manifest: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["schema_version"], 2);
    assert_eq!(manifest["shards"][0]["file"], "shard-00000.npz");
    assert_eq!(std::fs::read_dir(dir.join("games")).unwrap().count(), 6);
    let (code, _, err) = weiqi(&[
        "selfplay",
        "--games",
        "1",
        "--out",
        dir.to_str().unwrap(),
        "--policy",
        "net:model.safetensors",
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("tch"), "{err}");
}

/// Two runs' Elo curves in one plot (issue 48), from their records alone (no libtorch):
/// `weiqi loop --report-only --compare RUN` writes compare.svg and compare.json with both
/// runs' networks on one scale, labelled by their folders; a folder without a record is
/// named in the error.
#[test]
fn loop_reports_compare_runs_side_by_side() {
    let root = std::env::temp_dir().join(format!("weiqi-cli-compare-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let runs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/runs");
    for run in ["9x9-teacher", "9x9-plain"] {
        std::fs::create_dir_all(root.join(run)).unwrap();
        std::fs::copy(runs.join(run).join("loop.json"), root.join(run).join("loop.json")).unwrap();
    }
    let a = root.join("9x9-teacher");
    let compare = |other: &str| {
        weiqi(&[
            "loop",
            "--dir",
            a.to_str().unwrap(),
            "--report-only",
            "--compare",
            root.join(other).to_str().unwrap(),
        ])
    };
    let (code, _, err) = compare("9x9-plain");
    assert_eq!(code, 0, "{err}");
    let svg = std::fs::read_to_string(a.join("report/compare.svg")).unwrap();
    assert!(svg.contains("9x9-teacher") && svg.contains("9x9-plain"), "{svg}");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(a.join("report/compare.json")).unwrap()).unwrap();
    let points = json["points"].as_array().unwrap();
    assert_eq!(points.len(), 7, "four generations and three: {json}");
    // Each network at the self-play and training minutes its run had spent: 62.4 for the
    // options' generation 3 (the record's 3,746 s), 56.5 for the plain loop's generation 2.
    let minutes = |run: &str, g: u64| {
        let p = points.iter().find(|p| p["run"] == run && p["generation"] == g).unwrap();
        p["minutes"].as_f64().unwrap()
    };
    assert!((minutes("9x9-teacher", 3) - 62.43).abs() < 0.05);
    assert!((minutes("9x9-plain", 2) - 56.55).abs() < 0.05, "{json}");
    let (code, _, err) = compare("missing");
    assert_ne!(code, 0);
    assert!(err.contains("missing") && err.contains("loop.json"), "{err}");
    std::fs::remove_dir_all(&root).unwrap();
}

/// Self-play as an Indexed Job runs it: two workers, each told its index by
/// `JOB_COMPLETION_INDEX`, then `weiqi data index` over their folders; a damaged shard
/// fails the index by name.
#[test]
fn selfplay_workers_and_the_data_index() {
    let root = std::env::temp_dir().join(format!("weiqi-cli-workers-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    for worker in ["0", "1"] {
        let out = root.join(format!("worker={worker}"));
        let run = Command::new(env!("CARGO_BIN_EXE_weiqi"))
            .args([
                "selfplay",
                "--size",
                "5",
                "--games",
                "10",
                "--games-per-shard",
                "3",
                "--workers",
                "2",
                "--json",
            ])
            .args(["--out", out.to_str().unwrap()])
            .env("JOB_COMPLETION_INDEX", worker)
            .output()
            .expect("run weiqi");
        assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    }
    // Shards 0 and 2 (games 0-2 and 6-8) are worker 0's; 1 and 3 (3-5 and 9) worker 1's.
    let m1: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("worker=1/manifest.json")).unwrap()).unwrap();
    assert_eq!(
        (m1["games"].as_u64(), m1["shards"][1]["file"].as_str()),
        (Some(4), Some("shard-00003.npz"))
    );
    let (code, out, err) = weiqi(&["data", "index", root.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{err}");
    let ix: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!((ix["shards"].as_u64(), ix["games"].as_u64()), (Some(4), Some(10)));
    let shard = root.join("worker=0/shard-00002.npz");
    std::fs::write(&shard, b"not a zip").unwrap();
    let (code, _, err) = weiqi(&["data", "index", root.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("shard-00002.npz") && err.contains("unreadable"), "{err}");
    std::fs::remove_dir_all(&root).unwrap();
}

/// `weiqi gtp` over standard input and output, as a GUI or referee drives it: ids echoed,
/// answers ended by an empty line, a game played and counted.
#[test]
fn gtp_engine_over_stdio() {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_weiqi"))
        .args(["gtp", "--player", "light", "--seconds", "0.5"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run weiqi gtp");
    let script = "1 protocol_version\n2 boardsize 9\n3 komi 7.5\n4 play black E5\n5 genmove white\n\
                  6 play black E5\n7 boardsize 30\n8 final_score\nquit\n";
    child.stdin.take().unwrap().write_all(script.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let answers: Vec<&str> = text.split_terminator("\n\n").collect();
    assert_eq!(answers.len(), 9, "{text}");
    assert_eq!(answers[0], "=1 2");
    assert_eq!(&answers[1..4], ["=2", "=3", "=4"]);
    assert!(answers[4].starts_with("=5 ") && answers[4] != "=5 E5", "{}", answers[4]);
    assert_eq!(answers[5], "?6 illegal move");
    assert_eq!(answers[6], "?7 unacceptable size");
    assert!(
        answers[7].starts_with("=8 B+") || answers[7].starts_with("=8 W+"),
        "{}",
        answers[7]
    );
    assert_eq!(answers[8], "=");
}

/// `weiqi gtp --player` names what it offers when the name is wrong, and a network
/// player in a build without libtorch says which build it needs (never a silent
/// fallback to another player).
#[test]
fn gtp_players_that_cannot_run_say_why() {
    let (code, _, err) = weiqi(&["gtp", "--player", "alphago"]);
    assert_ne!(code, 0);
    assert!(err.contains("mcts") && err.contains("hybrid:PATH"), "{err}");
    if !cfg!(feature = "tch") {
        for player in ["net:model.safetensors", "hybrid:model.safetensors"] {
            let (code, _, err) = weiqi(&["gtp", "--player", player]);
            assert_ne!(code, 0);
            assert!(err.contains("tch"), "{player}: {err}");
        }
    }
    let (code, _, err) = weiqi(&["gtp", "--player", "hybrid:m.safetensors", "--value-weight", "2"]);
    assert_ne!(code, 0);
    assert!(err.contains("value weight"), "{err}");
}

/// Live analysis over standard input and output, as Sabaki and Lizzie drive it: `=` at
/// once, a line of candidates every interval for as long as the GUI sends nothing, and the
/// answer ended by the next line it sends, which is then answered in turn.
#[test]
fn gtp_live_analysis_runs_until_the_gui_sends_a_line() {
    use std::io::{BufRead, BufReader, Write};
    let mut child = Command::new(env!("CARGO_BIN_EXE_weiqi"))
        .args(["gtp", "--player", "mcts"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run weiqi gtp");
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = || {
        let mut l = String::new();
        out.read_line(&mut l).unwrap();
        l.trim_end().to_string()
    };
    stdin
        .write_all(b"boardsize 9\nkata-analyze interval 5 ownership true\n")
        .unwrap();
    stdin.flush().unwrap();
    assert_eq!((line(), line()), ("=".to_string(), String::new()), "boardsize's answer");
    assert_eq!(line(), "=", "the analysis starts");
    // Lines keep coming while the GUI is silent.
    for _ in 0..3 {
        let l = line();
        assert!(l.starts_with("info move ") && l.contains(" ownership "), "{l}");
    }
    stdin.write_all(b"name\nquit\n").unwrap();
    stdin.flush().unwrap();
    let mut rest = Vec::new();
    loop {
        let l = line();
        if l == "= weiqi" {
            break;
        }
        rest.push(l);
    }
    assert_eq!(
        rest.last().map(String::as_str),
        Some(""),
        "the analysis ended by an empty line: {rest:?}"
    );
    assert!(
        rest[..rest.len() - 1].iter().all(|l| l.starts_with("info move ")),
        "{rest:?}"
    );
    assert!(child.wait().unwrap().success());
}

/// `weiqi match` of two small engines (the light and the uniform player) finishes and
/// prints consistent counts.
#[test]
fn match_of_two_gtp_engines() {
    let exe = env!("CARGO_BIN_EXE_weiqi");
    let light = format!("{exe} gtp --player light --seed 3");
    let uniform = format!("{exe} gtp --player uniform --seed 4");
    let (code, out, err) = weiqi(&["match", &light, &uniform, "--games", "4", "--size", "7", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    let n = |k: &str| v[k].as_u64().unwrap();
    assert_eq!(n("games"), 4);
    assert_eq!(n("a_wins") + n("b_wins") + n("draws"), 4);
    let (lo, hi) = (v["wilson95"][0].as_f64().unwrap(), v["wilson95"][1].as_f64().unwrap());
    let rate = v["a_win_rate"].as_f64().unwrap();
    assert!(lo <= rate && rate <= hi, "{v}");
}

/// `--sgf-dir` keeps every game's record, and its result is the one counted (issue 15's
/// `weiqi match`); the records replay legally through the rules.
#[test]
fn match_writes_each_game_as_sgf() {
    let exe = env!("CARGO_BIN_EXE_weiqi");
    let dir = std::env::temp_dir().join(format!("weiqi-cli-match-sgf-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let light = format!("{exe} gtp --player light --seed 5");
    let uniform = format!("{exe} gtp --player uniform --seed 6");
    let args = [
        "match",
        &light,
        &uniform,
        "--games",
        "3",
        "--size",
        "7",
        "--json",
        "--seconds-per-move",
        "5",
    ];
    let (code, out, err) = weiqi(&[&args[..], &["--sgf-dir", dir.to_str().unwrap()]].concat());
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    let mut a_wins = 0;
    for k in 1..=3 {
        let text = std::fs::read_to_string(dir.join(format!("game-{k:03}.sgf"))).unwrap();
        let rec = weiqi_rules::sgf::GameRecord::parse(&text).unwrap();
        let replay = rec.replay(rec.named_rules().unwrap()).unwrap();
        assert!(replay.first_illegal.is_none(), "game {k}: {text}");
        assert!(replay.state.is_over(), "game {k} ends by two passes: {text}");
        // Engine A (light) has Black in odd games; its name is the engine's own.
        let a_colour = if k % 2 == 1 { 'B' } else { 'W' };
        let re = rec.result.clone().unwrap();
        assert!(rec.black_player.as_deref().unwrap().starts_with("weiqi"), "{text}");
        if re.starts_with(a_colour) {
            a_wins += 1;
        }
    }
    assert_eq!(v["a_wins"].as_u64(), Some(a_wins), "{v}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// With `--seconds-per-move`, a move later than the clock and its lag margin loses on time.
#[test]
fn match_engine_past_its_time_per_move_loses_on_time() {
    let dir = std::env::temp_dir().join(format!("weiqi-cli-match-slow-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // An engine that accepts everything and thinks 4 s a move, against a time per move
    // (1 s and 1 s of lag) that the light engine meets even on a loaded machine.
    let script = dir.join("slow.sh");
    std::fs::write(
        &script,
        "while read -r line; do case \"$line\" in genmove*) sleep 4; printf '= pass\\n\\n';; quit*) printf '=\\n\\n'; exit 0;; *) printf '=\\n\\n';; esac; done\n",
    )
    .unwrap();
    let slow = format!("sh {}", script.display());
    let light = format!("{} gtp --player light", env!("CARGO_BIN_EXE_weiqi"));
    let sgf = dir.join("sgf");
    let (code, out, err) = weiqi(&[
        "match",
        &slow,
        &light,
        "--games",
        "2",
        "--size",
        "9",
        "--seconds-per-move",
        "1",
        "--lag",
        "1",
        "--sgf-dir",
        sgf.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.matches("on time").count(), 2, "{out}");
    assert!(out.contains("A 0 - B 2"), "{out}");
    let first = std::fs::read_to_string(sgf.join("game-001.sgf")).unwrap();
    assert!(first.contains("RE[W+T]"), "{first}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// GNU Go plays through `weiqi match` (Debian's `gnugo`; CI installs it): its moves pass
/// the referee and the games are counted.
#[test]
fn match_against_gnu_go() {
    let gnugo = ["/usr/games/gnugo", "/usr/bin/gnugo"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists());
    let Some(gnugo) = gnugo else {
        assert!(
            std::env::var_os("WEIQI_REQUIRE_GNUGO").is_none(),
            "WEIQI_REQUIRE_GNUGO is set but gnugo is not installed"
        );
        eprintln!("skipped: gnugo is not installed");
        return;
    };
    let light = format!("{} gtp --player light", env!("CARGO_BIN_EXE_weiqi"));
    let gnu = format!("{gnugo} --mode gtp --level 1 --chinese-rules");
    let (code, out, err) = weiqi(&["match", &gnu, &light, "--games", "2", "--size", "9", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["games"], 2);
    // GNU Go beats a random player.
    assert_eq!(v["a_wins"], 2, "{v}");
}

/// `weiqi review`: a game in which Black ignores the capture that decides a race (move 15,
/// J9 instead of B5) and White takes it; the review names that move the biggest mistake,
/// with B5 as the search's choice, and every other of Black's moves as a smaller one.
#[test]
fn review_finds_the_blunder_that_loses_a_race() {
    let moves = [
        "A6", "A5", "B6", "B4", "C5", "A4", "C4", "A3", "B3", "A7", "A2", "B7", "G5", "C6", "J9", "B5",
    ];
    let sgf_point = |v: &str| {
        let col = "ABCDEFGHJ".find(&v[..1]).unwrap() as u8;
        let row: u8 = v[1..].parse().unwrap();
        format!("{}{}", (b'a' + col) as char, (b'a' + 9 - row) as char)
    };
    let body: String = moves
        .iter()
        .enumerate()
        .map(|(k, v)| format!(";{}[{}]", if k % 2 == 0 { "B" } else { "W" }, sgf_point(v)))
        .collect();
    let dir = std::env::temp_dir().join(format!("weiqi-review-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("blunder.sgf");
    std::fs::write(&file, format!("(;GM[1]FF[4]SZ[9]KM[7.5]RU[Chinese]{body})")).unwrap();
    let (code, out, err) = weiqi(&["review", file.to_str().unwrap(), "--json", "--visits", "2000"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    let reviewed = v["moves"].as_array().unwrap();
    assert_eq!(reviewed.len(), moves.len());
    let blunder = &reviewed[14];
    assert_eq!(
        (blunder["played"].as_str(), blunder["best"].as_str()),
        (Some("J9"), Some("B5")),
        "{blunder}"
    );
    assert!(blunder["loss"].as_f64().unwrap() > 0.2, "{blunder}");
    assert_eq!(v["mistakes"][0].as_u64(), Some(15), "{v}");
    // Black's win rate falls across the blunder and White's capture.
    assert!(blunder["black_before"].as_f64().unwrap() > blunder["black_after"].as_f64().unwrap());
    for m in reviewed {
        let rate = |k: &str| m[k].as_f64().unwrap();
        assert!(
            (0.0..=1.0).contains(&rate("black_before")) && rate("loss") >= 0.0,
            "{m}"
        );
    }
    // The table for people names it too.
    let (code, out, _) = weiqi(&["review", file.to_str().unwrap(), "--visits", "500"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("Biggest mistakes:") && out.contains("move 15 (B J9)"),
        "{out}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `weiqi shapes` fits a table the engine reads, from a folder of records with their
/// opening skipped; a record with an illegal move is named in the error.
#[test]
fn shapes_fits_a_table_from_records() {
    use weiqi_rules::{Color, Point, Preset, State};
    let dir = std::env::temp_dir().join(format!("weiqi-shapes-{}", std::process::id()));
    let games = dir.join("games");
    std::fs::create_dir_all(&games).unwrap();
    std::fs::write(
        games.join("a.sgf"),
        "(;GM[1]FF[4]SZ[9]KM[7.5]RU[Chinese];B[ee];W[cc];B[gg];W[cg];B[gc])",
    )
    .unwrap();
    std::fs::write(games.join("notes.txt"), "not a record").unwrap();
    let out = dir.join("table.txt");
    let (code, _, err) = weiqi(&[
        "shapes",
        games.to_str().unwrap(),
        "--skip",
        "1",
        "--min-seen",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.starts_with("# weiqi shape weights: 4 positions of 1 games"),
        "{text}"
    );
    let table = weiqi_gtp::ShapeTable::parse(&text).unwrap();
    let (large, small) = table.len();
    assert!(large > 0 && small > 0);
    // White's answer at C7 after Black's E5 was counted as played.
    let mut s = State::new(9, Preset::Chinese.rules()).unwrap();
    s.play_color(Color::Black, weiqi_rules::Move::Place(Point::new(4, 4)))
        .unwrap();
    let key = s.board().shape_key(Point::new(2, 2), Color::White);
    assert!(table.probability(key).is_some_and(|p| p > 0.0));

    std::fs::write(games.join("bad.sgf"), "(;GM[1]FF[4]SZ[9];B[ee];W[ee])").unwrap();
    let (code, _, err) = weiqi(&["shapes", games.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(err.contains("bad.sgf"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A learning-rate schedule other than constant or cosine is refused by name, before any
/// work; `weiqi evaluate` says in a build without libtorch that it needs the `tch` feature.
#[test]
fn the_schedule_is_checked_and_evaluate_needs_tch() {
    let (code, _, err) = weiqi(&[
        "train",
        "--data",
        "x",
        "--out",
        "y.safetensors",
        "--lr-schedule",
        "linear",
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("constant or cosine"), "{err}");
    if !cfg!(feature = "tch") {
        let (code, _, err) = weiqi(&["evaluate", "--model", "m.safetensors", "--data", "d"]);
        assert_ne!(code, 0);
        assert!(err.contains("tch"), "{err}");
    }
}
