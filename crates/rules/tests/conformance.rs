//! The engine against independent data in `../shared/conformance` (R3..R8): KataGo's rule
//! cases, 786 real game records, and perft counts. Skips with a message when absent.

mod common;

use serde_json::Value;
use weiqi_rules::sgf::GameRecord;
use weiqi_rules::{Board, Color, Illegal, Move, Point, Rules, State, benson, perft};

fn pt(v: &Value) -> Move {
    if v.as_str() == Some("pass") {
        return Move::Pass;
    }
    let a = v.as_array().expect("[x, y]");
    Move::Place(Point::new(a[0].as_u64().unwrap() as u8, a[1].as_u64().unwrap() as u8))
}

fn color(v: &Value) -> Color {
    Color::parse(v.as_str().unwrap()).unwrap()
}

fn rows(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().to_string())
        .collect()
}

/// R4-R6, R8: every step of every KataGo case.
#[test]
fn katago_rule_cases() {
    let Some(dir) = common::conformance_dir() else { return };
    let text = std::fs::read_to_string(dir.join("rules_cases_katago.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let cases = doc["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 13);
    let mut checked = 0;
    for case in cases {
        let id = case["id"].as_str().unwrap();
        let board = Board::from_rows(&rows(&case["board"])).unwrap_or_else(|e| panic!("{id}: {e}"));
        if case["kind"].as_str() == Some("liberty_grid") {
            check_liberty_grid(id, case, &board);
            checked += 1;
            continue;
        }
        let komi = case["komi"].as_f64().unwrap();
        let first = color(&case["first_player"]);
        let mut state = State::from_board(board, first, Rules::default().with_komi(komi));
        for (k, step) in case["steps"].as_array().unwrap().iter().enumerate() {
            let ctx = format!("{id} step {k}: {step}");
            match step["op"].as_str().unwrap() {
                "play" => {
                    let c = color(&step["color"]);
                    assert_eq!(state.to_move(), c, "{ctx}");
                    state.play(pt(&step["at"])).unwrap_or_else(|e| panic!("{ctx}: {e}"));
                }
                "superko_illegal_set" => {
                    assert_eq!(state.to_move(), color(&step["color"]), "{ctx}");
                    // KataGo's set includes immediate ko recaptures (we call those `Ko`).
                    let mut got: Vec<Point> = state
                        .board()
                        .points()
                        .filter(|&p| matches!(state.check(Move::Place(p)), Err(Illegal::Ko | Illegal::Superko)))
                        .collect();
                    let mut want: Vec<Point> = step["points"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|v| match pt(v) {
                            Move::Place(p) => p,
                            Move::Pass => unreachable!(),
                        })
                        .collect();
                    got.sort();
                    want.sort();
                    assert_eq!(got, want, "{ctx}");
                }
                "illegal" => {
                    assert_eq!(state.to_move(), color(&step["color"]), "{ctx}");
                    let why = state.check(pt(&step["at"])).expect_err(&ctx);
                    match step["reason"].as_str().unwrap() {
                        "superko" => assert!(matches!(why, Illegal::Superko | Illegal::Ko), "{ctx}: {why:?}"),
                        other => assert_eq!(why.code(), other, "{ctx}"),
                    }
                }
                "game_over" => assert_eq!(state.is_over(), step["value"].as_bool().unwrap(), "{ctx}"),
                "board" => {
                    assert_eq!(state.board().rows(), rows(&step["rows"]), "{ctx}");
                    // (The service's answers carry the points in one string.)
                    assert_eq!(state.board().points_text(), rows(&step["rows"]).concat(), "{ctx}");
                }
                "num_legal_incl_pass" => {
                    assert_eq!(state.to_move(), color(&step["color"]), "{ctx}");
                    assert_eq!(state.count_legal(), step["count"].as_u64().unwrap() as usize, "{ctx}");
                    assert_eq!(state.legal_moves().len(), state.count_legal(), "{ctx}");
                }
                "area_score_now" => {
                    let want = step["white_minus_black"].as_f64().unwrap();
                    let tt = state.tromp_taylor_score().white_minus_black;
                    if step["katago"].as_bool() == Some(true) {
                        // KataGo also credits pass-alive territory: stones inside it are dead.
                        let dead = benson::unconditionally_dead(state.board());
                        let got = state.area_score(&dead).unwrap().white_minus_black;
                        assert_eq!(got, want, "{ctx}");
                        let want_tt = step["tromp_taylor"].as_f64().unwrap_or(want);
                        assert_eq!(tt, want_tt, "{ctx}");
                    } else {
                        assert_eq!(tt, want, "{ctx}");
                    }
                }
                op => panic!("{ctx}: unknown op {op}"),
            }
        }
        checked += 1;
    }
    assert_eq!(checked, 13);
}

fn check_liberty_grid(id: &str, case: &Value, board: &Board) {
    let state = State::from_board(board.clone(), Color::Black, Rules::default());
    if let Some(grid) = case.get("grid_liberties") {
        for (y, row) in rows(grid).iter().enumerate() {
            for (x, ch) in row.chars().enumerate() {
                let p = Point::new(x as u8, y as u8);
                let got = if board.get(p).is_some() {
                    char::from_digit(board.liberties(p) as u32, 10).unwrap()
                } else {
                    '.'
                };
                assert_eq!(got, ch, "{id} at {p}");
            }
        }
    }
    for (key, c) in [("grid_black", Color::Black), ("grid_white", Color::White)] {
        let Some(grid) = case.get(key) else { continue };
        for (y, row) in rows(grid).iter().enumerate() {
            for (x, ch) in row.chars().enumerate() {
                let p = Point::new(x as u8, y as u8);
                let got = match state.liberties_after(p, c) {
                    None => '-',
                    Some(n) => char::from_digit(n as u32, 10).unwrap(),
                };
                assert_eq!(got, ch, "{id} {key} at {p}");
            }
        }
    }
}

/// R3-R6, R11: replaying every record reproduces the final board, the captures, the move
/// count, and rejects exactly the 7 positional-superko moves.
#[test]
fn game_records() {
    let Some(dir) = common::conformance_dir() else { return };
    let dir = dir.join("games");
    let expected = std::fs::read_to_string(dir.join("expected.jsonl")).unwrap();
    let (mut n, mut illegal, mut tt_checked) = (0, 0, 0);
    for line in expected.lines() {
        let e: Value = serde_json::from_str(line).unwrap();
        let file = e["file"].as_str().unwrap();
        let text = std::fs::read(dir.join(file)).unwrap();
        let rec = GameRecord::parse(&String::from_utf8_lossy(&text)).unwrap_or_else(|err| panic!("{file}: {err}"));
        let komi = e["komi"].as_f64().unwrap_or(0.0);
        let rep = rec.replay(Rules::default().with_komi(komi)).unwrap();
        assert_eq!(rep.state.board().rows(), rows(&e["final_board"]), "{file}");
        let caps = rep.state.captures(Color::Black) + rep.state.captures(Color::White);
        assert_eq!(caps as u64, e["captures_total"].as_u64().unwrap(), "{file}: captures");
        match e["first_illegal"].as_object() {
            None => {
                assert!(rep.first_illegal.is_none(), "{file}: {:?}", rep.first_illegal);
                assert_eq!(
                    rep.moves_applied as u64,
                    e["num_moves"].as_u64().unwrap(),
                    "{file}: moves"
                );
            }
            Some(fi) => {
                let (k, _m, why) = rep
                    .first_illegal
                    .clone()
                    .unwrap_or_else(|| panic!("{file}: no illegal move found"));
                assert_eq!(k as u64, fi["move_number"].as_u64().unwrap(), "{file}");
                assert_eq!(why, Illegal::Superko, "{file}");
                assert_eq!(fi["reason"].as_str(), Some("superko"));
                // The same move is legal under simple ko.
                let simple = Rules::default().with_ko(weiqi_rules::KoRule::Simple);
                assert!(
                    rec.replay(simple).unwrap().moves_applied >= k,
                    "{file}: legal under simple ko"
                );
                illegal += 1;
            }
        }
        if e["first_illegal"].is_null() {
            let want = e["tt_white_minus_black"].as_f64().unwrap();
            let got = weiqi_rules::score::tromp_taylor(rep.state.board());
            assert_eq!(got[1] as f64 - got[0] as f64 + komi, want, "{file}: tromp-taylor");
            tt_checked += 1;
        }
        n += 1;
    }
    assert_eq!(n, 786);
    assert_eq!(illegal, 7);
    assert!(tt_checked > 700);
}

/// Perft counts (R2, R4-R6): every line of perft_dev.txt up to a work budget suited to a
/// test run (the 9x9 depth-4 figure, 39,929,136, is checked in release builds).
#[test]
fn perft_counts() {
    let Some(dir) = common::conformance_dir() else { return };
    let text = std::fs::read_to_string(dir.join("perft_dev.txt")).unwrap();
    let mut checked = 0;
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let size: u8 = f[0].split('x').next().unwrap().parse().unwrap();
        let passes = f[1] == "pass";
        let depth: u32 = f[2].parse().unwrap();
        let want: u64 = f[3].parse().unwrap();
        if size == 9 && depth == 4 && cfg!(debug_assertions) {
            continue;
        }
        let state = State::new(size, Rules::default()).unwrap();
        assert_eq!(perft(&state, depth, passes), want, "{line}");
        checked += 1;
    }
    assert!(checked >= 50, "{checked}");
}
