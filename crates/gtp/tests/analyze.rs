//! Live analysis as GUIs drive it (`lz-analyze`, `kata-analyze`): the answer's framing, and
//! its lines read back by a small parser written from KataGo's `docs/GTP_Extensions.md`
//! (each `info` starts a candidate of key-value pairs ending with its `pv`; `ownership`,
//! when asked for, gives width times height floats row by row from the top).

use std::time::Duration;

use weiqi_gtp::{GtpEngine, MctsPlayer, MctsSettings, RandomPlayer, serve};
use weiqi_rules::{Move, Policy, Preset};

fn engine(mcts: bool) -> GtpEngine {
    let player: Box<dyn weiqi_gtp::Player> = if mcts {
        Box::new(MctsPlayer::new(MctsSettings {
            playouts: 0,
            threads: 1,
            seed: 3,
            policy: Policy::Light,
            resign_below: 0.0,
            shape_prior: weiqi_gtp::DEFAULT_SHAPE_PRIOR,
        }))
    } else {
        Box::new(RandomPlayer::new(Policy::Light, 3))
    };
    GtpEngine::new(Preset::Chinese, player, Duration::from_secs(1))
}

fn raw(e: &mut GtpEngine, script: &str) -> String {
    let mut out = Vec::new();
    serve(e, script.as_bytes(), &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// One candidate as the formats define it.
#[derive(Debug, Default)]
struct Info {
    mv: String,
    visits: u64,
    winrate: f64,
    prior: f64,
    lcb: f64,
    order: u64,
    pv: Vec<String>,
}

/// A line of analysis: its candidates and, when present, the ownership.
fn parse_line(line: &str) -> (Vec<Info>, Option<Vec<f64>>) {
    let (infos, ownership) = match line.split_once("ownership ") {
        Some((a, b)) => (a, Some(b.split_whitespace().map(|v| v.parse().unwrap()).collect())),
        None => (line, None),
    };
    let mut out = Vec::new();
    for chunk in infos.split("info ").filter(|c| !c.trim().is_empty()) {
        let words: Vec<&str> = chunk.split_whitespace().collect();
        let pv_at = words.iter().position(|w| *w == "pv").expect("every candidate has a pv");
        let mut info = Info {
            pv: words[pv_at + 1..].iter().map(|w| w.to_string()).collect(),
            ..Info::default()
        };
        for kv in words[..pv_at].chunks(2) {
            let [k, v] = kv else {
                panic!("a key without a value: {chunk}")
            };
            match *k {
                "move" => info.mv = v.to_string(),
                "visits" => info.visits = v.parse().unwrap(),
                "winrate" => info.winrate = v.parse().unwrap(),
                "prior" => info.prior = v.parse().unwrap(),
                "lcb" => info.lcb = v.parse().unwrap(),
                "order" => info.order = v.parse().unwrap(),
                // Fields a consumer must tolerate (utility, utilityLcb, scoreLead, ...).
                _ => {}
            }
        }
        out.push(info);
    }
    (out, ownership)
}

/// The analysis answer of a transcript: `=`, the lines, the empty line; then the rest.
fn analysis_of(out: &str) -> (Vec<String>, String) {
    let (head, rest) = out.split_once("\n\n").expect("the answer ends with an empty line");
    let mut lines = head.lines();
    assert_eq!(lines.next(), Some("="), "{out}");
    (lines.map(str::to_string).collect(), rest.to_string())
}

#[test]
fn lz_analyze_streams_candidates_until_the_next_line() {
    let mut e = engine(true);
    let out = raw(
        &mut e,
        "boardsize 9\nclear_board\nplay b E5\nplay w C3\nlz-analyze 20\n\nname\n",
    );
    let out = out.strip_prefix("=\n\n=\n\n=\n\n=\n\n").expect("the set-up's answers");
    let (lines, rest) = analysis_of(out);
    assert_eq!(lines.len(), 1, "one interval, then the empty line stopped it");
    assert_eq!(rest, "= weiqi\n\n", "the commands after it are answered");
    let (infos, ownership) = parse_line(&lines[0]);
    assert!(ownership.is_none());
    assert!(infos.len() >= 3, "{lines:?}");
    for (k, i) in infos.iter().enumerate() {
        assert_eq!(i.order, k as u64);
        assert!(i.visits > 0);
        assert!(
            (0.0..=10_000.0).contains(&i.winrate) && i.winrate.fract() == 0.0,
            "integers: {i:?}"
        );
        assert!(i.lcb <= i.winrate);
        assert_eq!(i.pv[0], i.mv, "the variation starts with the move");
        assert!(i.mv != "E5" && i.mv != "C3", "occupied points are no candidates");
    }
    assert!(
        infos.windows(2).all(|w| w[0].visits >= w[1].visits),
        "best (most visited) first"
    );
}

#[test]
fn kata_analyze_with_ownership_and_at_most_maxmoves() {
    let mut e = engine(true);
    let out = raw(
        &mut e,
        "boardsize 9\nclear_board\nplay b C5\nkata-analyze interval 20 maxmoves 3 ownership true\nplay w G5\n",
    );
    let out = out.strip_prefix("=\n\n=\n\n=\n\n").unwrap();
    let (lines, rest) = analysis_of(out);
    assert_eq!(rest, "=\n\n", "the interrupting play is played");
    let (infos, ownership) = parse_line(&lines[0]);
    assert!(!infos.is_empty() && infos.len() <= 3, "{infos:?}");
    for i in &infos {
        assert!((0.0..=1.0).contains(&i.winrate) && (0.0..=1.0).contains(&i.lcb) && i.prior == 0.0);
        assert!(Move::from_gtp(&i.mv, 9).is_some());
    }
    let own = ownership.expect("ownership was asked for");
    assert_eq!(own.len(), 81);
    assert!(own.iter().all(|v| (-1.0..=1.0).contains(v)));
    // White to move: Black's stone on the left is the opponent's, its side White's less.
    assert!(
        own[4 * 9 + 2] < 0.0,
        "C5 is Black's, negative for White: {}",
        own[4 * 9 + 2]
    );
}

#[test]
fn a_player_that_does_not_search_says_so_and_bad_options_are_refused() {
    let mut e = engine(false);
    let out = raw(&mut e, "lz-analyze 10\n");
    assert!(out.starts_with("? player light does not search"), "{out}");
    let mut e = engine(true);
    assert!(raw(&mut e, "2 kata-analyze avoid b D4 1\n").starts_with("?2 unsupported analysis option"));
    assert!(raw(&mut e, "lz-analyze ownership true\n").starts_with("? unsupported"));
    assert!(raw(&mut e, "known_command kata-analyze\n").starts_with("= true"));
}

#[test]
fn the_best_candidate_is_the_capture_that_decides_a_race() {
    // White's four stones on the left and Black's two above them share one liberty, B5:
    // whoever plays there first captures. Black to move.
    let mut e = engine(true);
    let setup = "boardsize 9\nclear_board\n\
                 play b A6\nplay w A5\nplay b B6\nplay w B4\nplay b C5\nplay w A4\n\
                 play b C4\nplay w A3\nplay b B3\nplay w A7\nplay b A2\nplay w B7\n\
                 play b G5\nplay w C6\n";
    let out = raw(&mut e, &format!("{setup}lz-analyze 100\n\n"));
    let (_, analysis) = out.split_at(out.find("=\ninfo").expect("an analysis"));
    let (lines, _) = analysis_of(analysis);
    let (infos, _) = parse_line(&lines[0]);
    assert_eq!(infos[0].mv, "B5", "{:?}", &infos[..3.min(infos.len())]);
    assert!(infos[0].winrate > 5000.0);
}
