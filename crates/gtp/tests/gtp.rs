//! GTP conformance of the engine: the framing (ids, comments, empty lines, malformed
//! lines), every command it lists, and the rules behind `play` (superko R6, sizes, undo,
//! handicap R9, SGF R11). Each test sends a transcript through `serve` and reads the
//! answers back as a controller would.

use std::time::Duration;

use weiqi_gtp::{GtpEngine, RandomPlayer, serve};
use weiqi_rules::{Policy, Preset};

fn engine(kind: Policy) -> GtpEngine {
    GtpEngine::new(
        Preset::Chinese,
        Box::new(RandomPlayer::new(kind, 7)),
        Duration::from_secs(1),
    )
}

/// The raw output of a script.
fn raw(e: &mut GtpEngine, script: &str) -> String {
    let mut out = Vec::new();
    serve(e, script.as_bytes(), &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// The answers to a script: whether each succeeded, and its text (the id stripped).
fn answers(e: &mut GtpEngine, script: &str) -> Vec<(bool, String)> {
    let out = raw(e, script);
    assert!(
        out.is_empty() || out.ends_with("\n\n"),
        "every answer ends with an empty line: {out:?}"
    );
    out.split_terminator("\n\n")
        .map(|a| {
            let ok = a.starts_with('=');
            assert!(ok || a.starts_with('?'), "{a:?}");
            let text = a[1..]
                .trim_start_matches(|c: char| c.is_ascii_digit())
                .trim()
                .to_string();
            (ok, text)
        })
        .collect()
}

fn one(e: &mut GtpEngine, cmd: &str) -> (bool, String) {
    let mut a = answers(e, &format!("{cmd}\n"));
    assert_eq!(a.len(), 1, "{cmd}");
    a.remove(0)
}

fn fixture(name: &str) -> String {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../rules/tests/fixtures");
    dir.join(name).display().to_string()
}

#[test]
fn framing_ids_comments_and_unknown_commands() {
    let mut e = engine(Policy::Light);
    let out = raw(
        &mut e,
        "\n# a comment\n1 protocol_version\nname # trailing\n7 frobnicate\n  \n3 version\n",
    );
    assert_eq!(
        out,
        format!(
            "=1 2\n\n= weiqi\n\n?7 unknown command\n\n=3 {}\n\n",
            env!("CARGO_PKG_VERSION")
        )
    );
    // Control characters are dropped, tabs are spaces.
    assert_eq!(one(&mut e, "known_\u{1}command\tplay"), (true, "true".into()));
    assert_eq!(one(&mut e, "known_command frobnicate"), (true, "false".into()));
    let (ok, list) = one(&mut e, "list_commands");
    assert!(ok);
    for name in weiqi_gtp::COMMANDS {
        assert!(list.lines().any(|l| l == *name), "{name}");
        assert_eq!(one(&mut e, &format!("known_command {name}")), (true, "true".into()));
    }
    // Missing or malformed arguments are syntax errors, never a crash.
    for bad in [
        "boardsize",
        "boardsize x",
        "komi z",
        "play",
        "play black",
        "play purple D4",
        "play black Z99",
        "genmove",
        "time_left black",
        "final_status_list",
        "fixed_handicap",
        "kgs-time_settings hourglass",
    ] {
        let (ok, text) = one(&mut e, bad);
        assert!(!ok, "{bad}: {text}");
    }
    // Nothing after quit is read.
    assert_eq!(answers(&mut e, "quit\nname\n"), [(true, String::new())]);
}

#[test]
fn board_sizes_play_undo_and_showboard() {
    let mut e = engine(Policy::Light);
    for bad in ["boardsize 1", "boardsize 26", "boardsize 0"] {
        assert_eq!(one(&mut e, bad), (false, "unacceptable size".into()), "{bad}");
    }
    let a = answers(
        &mut e,
        "boardsize 9\nclear_board\nkomi 6.5\nplay black E5\nplay white E5\nplay b D5\nplay W pass\n",
    );
    assert_eq!(
        a.iter().map(|x| x.0).collect::<Vec<_>>(),
        [true, true, true, true, false, true, true]
    );
    assert_eq!(a[4].1, "illegal move");
    // Two moves of one colour in a row are allowed (a controller's setup).
    assert!(one(&mut e, "play white A1").0 && one(&mut e, "play white B1").0);
    assert_eq!(e.state().move_number(), 5);
    let undone = answers(&mut e, "undo\nundo\nundo\nundo\nundo\nundo\n");
    assert_eq!(undone.iter().filter(|x| x.0).count(), 5);
    assert_eq!(undone[5], (false, "cannot undo".into()));
    one(&mut e, "play black C3");
    let (ok, board) = one(&mut e, "showboard");
    assert!(ok && board.contains(" 3 . . X . . . . . . 3"), "{board}");
}

/// R6: positional superko. The fixture's 11th move repeats a position: refused by `play`,
/// and a file holding it is refused by `loadsgf` (the board as it was).
#[test]
fn superko_and_loadsgf_refusals() {
    let mut e = engine(Policy::Light);
    let file = fixture("superko_sending_two_returning_one.sgf");
    assert!(one(&mut e, "boardsize 9").0);
    let (ok, why) = one(&mut e, &format!("loadsgf {file}"));
    assert!(!ok && why.contains("move 11"), "{why}");
    assert_eq!(e.state().board().height(), 9, "the board is as it was");
    assert_eq!(one(&mut e, &format!("loadsgf {file} 11")), (true, String::new()));
    assert_eq!(e.state().move_number(), 10);
    // Move 11 is Black at the top-left corner, which superko forbids.
    let height = e.state().board().height();
    let corner = weiqi_rules::Point::new(0, 0).to_gtp(height);
    assert_eq!(
        one(&mut e, &format!("play black {corner}")),
        (false, "illegal move".into())
    );
    assert!(!one(&mut e, "loadsgf /nonexistent/game.sgf").0);
    // Under simple ko (Japanese rules) the same move is legal.
    assert_eq!(one(&mut e, "kgs-rules japanese"), (true, String::new()));
    assert_eq!(one(&mut e, &format!("play black {corner}")), (true, String::new()));
    // Back to positional superko: the game as played is now illegal, and refused.
    assert!(!one(&mut e, "kgs-rules chinese").0);
}

/// R9: handicap stones on an empty board only, at the standard points or placed freely.
#[test]
fn handicap_commands() {
    let mut e = engine(Policy::Light);
    one(&mut e, "boardsize 19");
    let (ok, two) = one(&mut e, "fixed_handicap 2");
    assert!(ok && two.split_whitespace().count() == 2, "{two}");
    assert_eq!(one(&mut e, "fixed_handicap 3"), (false, "board not empty".into()));
    one(&mut e, "clear_board");
    assert_eq!(
        one(&mut e, "fixed_handicap 10"),
        (false, "invalid number of stones".into())
    );
    let (ok, placed) = one(&mut e, "place_free_handicap 5");
    assert!(ok);
    assert_eq!(placed.split_whitespace().count(), 5);
    assert_eq!(e.state().to_move(), weiqi_rules::Color::White);
    one(&mut e, "clear_board");
    assert_eq!(one(&mut e, "set_free_handicap D4 Q16 K10"), (true, String::new()));
    assert_eq!(e.state().handicap(), 3);
    one(&mut e, "clear_board");
    assert!(!one(&mut e, "set_free_handicap D4 D4").0, "a point twice");
    assert!(!one(&mut e, "set_free_handicap D4").0, "one stone is no handicap");
}

/// The engine plays a whole game against itself: moves are legal, the game ends by two
/// passes, and the end commands answer.
#[test]
fn genmove_to_the_end_then_score_and_status() {
    let mut e = engine(Policy::Light);
    one(&mut e, "boardsize 9");
    one(&mut e, "kgs-time_settings byoyomi 0 1 3");
    one(&mut e, "time_left black 1 3");
    let mut passes = 0;
    let mut moves = 0;
    let mut color = "black";
    while passes < 2 && moves < 400 {
        let (ok, v) = one(&mut e, &format!("genmove {color}"));
        assert!(ok, "{v}");
        passes = if v == "pass" { passes + 1 } else { 0 };
        moves += 1;
        color = if color == "black" { "white" } else { "black" };
    }
    assert_eq!(passes, 2, "light players end the game by passing");
    let (ok, score) = one(&mut e, "final_score");
    assert!(
        ok && (score == "0" || score.starts_with("B+") || score.starts_with("W+")),
        "{score}"
    );
    let (_, dead) = one(&mut e, "final_status_list dead");
    let (_, alive) = one(&mut e, "final_status_list alive");
    let (_, seki) = one(&mut e, "final_status_list seki");
    let stones = e.state().board().stone_counts();
    let listed = [&dead, &alive, &seki]
        .iter()
        .map(|l| l.split_whitespace().count())
        .sum::<usize>();
    assert_eq!(
        listed as u32,
        stones[0] + stones[1],
        "every stone is dead, alive or in seki"
    );
    // reg_genmove chooses without playing; cleanup genmove never passes while it can move.
    let n = e.state().move_number();
    assert!(one(&mut e, "reg_genmove black").0);
    assert_eq!(e.state().move_number(), n);
    let (ok, sgf) = one(&mut e, "printsgf");
    assert!(ok && sgf.starts_with("(;") && sgf.contains("SZ[9]"), "{sgf}");
}

/// C6: `final_status_list seki` lists both sides of a seki (a GNU Go level-10 game whose
/// end has White's 17-stone group and Black's H8-J8-J7 sharing four liberties and nothing
/// else); no stone is dead, and the seki stones are not listed as alive.
#[test]
fn final_status_list_names_seki_stones() {
    let mut e = engine(Policy::Light);
    let (ok, _) = one(
        &mut e,
        &format!("loadsgf {}", fixture("seki_shared_liberties_gnugo.sgf")),
    );
    assert!(ok);
    assert_eq!(one(&mut e, "final_status_list dead"), (true, String::new()));
    let (_, seki) = one(&mut e, "final_status_list seki");
    let seki: Vec<&str> = seki.split_whitespace().collect();
    assert_eq!(seki.len(), 17 + 3, "{seki:?}");
    for v in ["H8", "J8", "J7", "G7", "D9", "J5"] {
        assert!(seki.contains(&v), "{v} in {seki:?}");
    }
    let (_, alive) = one(&mut e, "final_status_list alive");
    assert!(!alive.split_whitespace().any(|v| v == "H8"), "{alive}");
}

/// R11: printsgf then loadsgf gives back the same position.
#[test]
fn printsgf_and_loadsgf_round_trip() {
    let mut e = engine(Policy::Uniform);
    answers(
        &mut e,
        "boardsize 7\nkomi 0.5\nplay black D4\nplay white C3\nplay black E5\n",
    );
    let path = std::env::temp_dir().join(format!("weiqi-gtp-{}.sgf", std::process::id()));
    assert_eq!(
        one(&mut e, &format!("printsgf {}", path.display())),
        (true, String::new())
    );
    let before = e.state().board().rows();
    one(&mut e, "clear_board");
    assert_eq!(
        one(&mut e, &format!("loadsgf {}", path.display())),
        (true, String::new())
    );
    assert_eq!(e.state().board().rows(), before);
    assert_eq!(e.state().move_number(), 3);
    let _ = std::fs::remove_file(path);
    for rules in ["chinese", "japanese", "tromp-taylor", "new_zealand"] {
        assert_eq!(
            one(&mut e, &format!("kgs-rules {rules}")),
            (true, String::new()),
            "{rules}"
        );
    }
    assert!(!one(&mut e, "kgs-rules calvinball").0);
    assert_eq!(one(&mut e, "time_settings 300 30 5"), (true, String::new()));
}
