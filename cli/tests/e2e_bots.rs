//! `weiqi bot` end to end (issue 15): two bot processes, one seeking and one joining, each
//! driving GNU Go (Debian's `gnugo`; CI installs it), play full 9x9 games on a real `weiqi
//! serve`, while one bot's engines are killed and the server is crashed and restarted
//! mid-game. Every game must end by two passes and agreement, with the service's result
//! equal to GNU Go's own count of the exported SGF.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::Server;
use weiqi_proto::v1 as pb;

const GAMES: u64 = 10;

fn gnugo() -> Option<&'static str> {
    let found = ["/usr/games/gnugo", "/usr/bin/gnugo"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists());
    if found.is_none() {
        assert!(
            std::env::var_os("WEIQI_REQUIRE_GNUGO").is_none(),
            "WEIQI_REQUIRE_GNUGO is set but gnugo is not installed"
        );
        eprintln!("skipped: gnugo is not installed");
    }
    found
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn bot(server: &str, engine: &str, role: &[&str], transcripts: &std::path::Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_weiqi"))
        .args(["bot", "--server", server, "--engine", engine, "--games"])
        .arg(GAMES.to_string())
        .args(["--max-games", "2", "--poll-ms", "200", "--transcripts"])
        .arg(transcripts)
        .args(role)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn weiqi bot")
}

/// Waits until some game in play has at least `moves` moves.
async fn game_in_play(server: &str, moves: u32) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while Instant::now() < deadline {
        if let Ok(mut c) = pb::game_service_client::GameServiceClient::connect(server.to_string()).await
            && let Ok(r) = c.list_games(pb::ListGamesRequest { limit: 10 }).await
            && r.into_inner().playing.iter().any(|g| g.move_number >= moves)
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no game reached move {moves}");
}

/// GNU Go's counts of an SGF record, its moves given with `play` as the bots gave them:
/// its `final_score`, and the count by area with its own `final_status_list dead` (what the
/// bots' engines are asked for). The two can differ: in an unsettled capturing race GNU Go 3.8's
/// `final_score` once judged 15 stones dead where its `final_status_list dead` named none,
/// a point apart. `level` is GNU Go's: the bots' level 1 passes with fights unsettled and
/// answers from its own play-out of them, which can differ from one process to the next
/// (the bots' engines once agreed on four dead stones, B+7.5, where a fresh level-1
/// process counted W+18.5); level 10, GNU Go's default, reads them out.
///
/// `rec` is the record and `state` its final position.
fn gnugo_counts(
    gnugo: &str,
    rec: &weiqi_rules::sgf::GameRecord,
    state: &weiqi_rules::State,
    level: &str,
) -> Vec<String> {
    let size = rec.width;
    let mut script = format!("boardsize {size}\nclear_board\nkomi {}\n", state.rules().komi);
    for m in &rec.moves {
        let v = match m.mv {
            weiqi_rules::Move::Pass => "pass".to_string(),
            weiqi_rules::Move::Place(p) => p.to_gtp(size),
        };
        script.push_str(&format!("play {} {v}\n", m.color));
    }
    script.push_str("final_status_list dead\nfinal_score\nquit\n");
    let mut go = Command::new(gnugo)
        // 1: the level the bots played and judged dead stones at.
        .args(["--mode", "gtp", "--chinese-rules", "--level", level])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = go.stdin.take().unwrap();
    stdin.write_all(script.as_bytes()).unwrap();
    drop(stdin);
    // Answers end with an empty line; `final_status_list` spans a line per group.
    let mut answers: Vec<String> = Vec::new();
    let mut current = String::new();
    for line in BufReader::new(go.stdout.take().unwrap()).lines().map(Result::unwrap) {
        if line.trim().is_empty() {
            if !current.is_empty() {
                answers.push(std::mem::take(&mut current));
            }
        } else {
            current.push_str(&line);
            current.push('\n');
        }
    }
    go.wait().unwrap();
    let n = answers.len();
    assert!(n >= 3 && answers.iter().all(|a| a.starts_with('=')), "{answers:?}");
    let (dead, score) = (&answers[n - 3], &answers[n - 2]);
    let dead: Vec<weiqi_rules::Point> = dead
        .trim_start_matches('=')
        .split_whitespace()
        .map(|v| weiqi_rules::Point::from_gtp(v, size).unwrap())
        .collect();
    vec![
        score.trim_start_matches('=').trim().to_string(),
        count_by_area(state, &dead),
    ]
}

/// The count by area of the final position with `dead` removed, written as the service
/// writes a result ("W+18.5").
fn count_by_area(state: &weiqi_rules::State, dead: &[weiqi_rules::Point]) -> String {
    let wmb = state.area_score(dead).unwrap().white_minus_black;
    if wmb > 0.0 {
        format!("W+{wmb}")
    } else {
        format!("B+{}", -wmb)
    }
}

/// Every dead list a GNU Go engine named during the game: the answers to `final_status_list
/// dead` in the bots' transcripts, each sorted as the service sorts its dead stones.
fn named_dead_lists(transcripts: &[std::path::PathBuf], size: u8) -> Vec<Vec<weiqi_rules::Point>> {
    let mut lists = Vec::new();
    for path in transcripts {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let mut lines = text.lines().peekable();
        while let Some(line) = lines.next() {
            if line.trim() != "> final_status_list dead" {
                continue;
            }
            let (mut text, mut ok) = (String::new(), false);
            while let Some(answer) = lines.peek().and_then(|l| l.strip_prefix("< ")) {
                lines.next();
                let vertices = match answer.strip_prefix('=') {
                    Some(rest) => {
                        ok = true;
                        rest.trim_start_matches(|c: char| c.is_ascii_digit())
                    }
                    None => answer,
                };
                text.push_str(vertices);
                text.push(' ');
            }
            // As the bot reads it: a list with a vertex it cannot read is no list it proposed.
            let points: Option<Vec<weiqi_rules::Point>> = text
                .split_whitespace()
                .map(|v| weiqi_rules::Point::from_gtp(v, size))
                .collect();
            if let (true, Some(mut points)) = (ok, points) {
                points.sort_by_key(|p| (p.y, p.x));
                lists.push(points);
            }
        }
    }
    lists
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gnu_go_bots_play_on_the_service_through_engine_kills_and_a_server_restart() {
    let Some(gnugo) = gnugo() else { return };
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let url = format!("http://{listen}");
    let dir = std::env::temp_dir().join(format!("weiqi-e2e-{}-bots", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let server = Server::start_on(dir.join("data"), &listen, &[]);
    // The joiner's engines carry an extra flag so that they alone can be found and killed.
    let seeker_engine = format!("{gnugo} --mode gtp --level 1 --chinese-rules");
    let joiner_engine = format!("{gnugo} --mode gtp --level 1 --chinese-rules --komi 7.5");
    let mut seeker = bot(
        &url,
        &seeker_engine,
        &["--seek", "size=9,komi=7.5,time=byoyomi:600+3x30"],
        &dir.join("seeker"),
    );
    let mut joiner = bot(&url, &joiner_engine, &["--join", "--sizes", "9"], &dir.join("joiner"));

    // Kill the joiner's engines mid-game: the bot restarts them and replays the game.
    game_in_play(&url, 12).await;
    // Anchored: the bot's own command line holds the engine's too.
    let pattern = format!("^{gnugo} .*--komi 7.5");
    let killed = Command::new("pkill").args(["-f", &pattern]).status().unwrap();
    assert!(killed.success(), "no engine process to kill");

    // Crash the server mid-game and start it again on the same port and data.
    game_in_play(&url, 20).await;
    let data = server.crash();
    let server = Server::start_on(data, &listen, &[]);

    let mut summaries = Vec::new();
    for (name, child) in [("seeker", &mut seeker), ("joiner", &mut joiner)] {
        let deadline = Instant::now() + Duration::from_secs(400);
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let mut log = String::new();
                let _ = std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut log);
                panic!("the {name} bot did not finish its games: {log}");
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        let mut out = String::new();
        std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut out).unwrap();
        let mut log = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut log).unwrap();
        assert!(status.success(), "{name}: {log}");
        let v: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{name}: {e}: {out:?}"));
        assert_eq!(v["finished"], GAMES, "{name}: {v}");
        if name == "joiner" {
            assert!(log.contains("\"engine_failed\""), "the kill was not noticed: {log}");
        }
        assert!(
            log.contains("\"reconnecting\"") || log.contains("server_unreachable"),
            "{name}: {log}"
        );
        summaries.push(v);
    }

    // Every game both bots report: finished by score (two passes, both accepted), and the
    // service's count equals GNU Go's count of the record.
    let mut c = server.client().await;
    let ids: Vec<String> = summaries[0]["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["game_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len() as u64, GAMES);
    for id in &ids {
        assert!(
            summaries[1]["games"]
                .as_array()
                .unwrap()
                .iter()
                .any(|g| g["game_id"] == id.as_str()),
            "{id} is not among the joiner's games"
        );
        let state = c
            .get_game(pb::GetGameRequest { game_id: id.clone() })
            .await
            .unwrap()
            .into_inner()
            .state
            .unwrap();
        assert_eq!(state.phase, pb::Phase::Finished as i32, "{id}");
        let result = state.result.unwrap();
        assert_eq!(result.reason, pb::EndReason::Score as i32, "{id}: {result:?}");
        assert!(state.black_accepted && state.white_accepted, "{id}: not by agreement");
        let sgf = support::sgf(&mut c, id).await;
        // The service counts the dead stones both players accepted, by area with the komi.
        let rec = weiqi_rules::sgf::GameRecord::parse(&sgf).unwrap();
        let rules = weiqi_rules::Preset::Chinese.rules().with_komi(rec.komi.unwrap_or(7.5));
        let last = rec.replay(rules).unwrap().state;
        let mut agreed: Vec<weiqi_rules::Point> = state
            .dead_stones
            .iter()
            .map(|p| weiqi_rules::Point::new(p.x as u8, p.y as u8))
            .collect();
        agreed.sort_by_key(|p| (p.y, p.x));
        assert_eq!(result.text, count_by_area(&last, &agreed), "{id}: {sgf}");
        // And those stones are GNU Go's: a fresh process counts the record the same, or one
        // of the bots' own engines named exactly them. GNU Go's level 1 reads an unsettled
        // fight by playing it out, so two processes can judge it differently (the bots'
        // engines once agreed on a big group that a fresh process counted alive, W+18.5
        // against B+19.5 at levels 1 and 10).
        let mut counts = gnugo_counts(gnugo, &rec, &last, "1");
        if !counts.contains(&result.text) {
            counts.extend(gnugo_counts(gnugo, &rec, &last, "10"));
        }
        let transcripts = [dir.join("seeker"), dir.join("joiner")].map(|d| d.join(format!("{id}.gtp")));
        let named = named_dead_lists(&transcripts, rec.width);
        assert!(
            counts.contains(&result.text) || named.contains(&agreed),
            "{id}: {} is not among GNU Go's counts {counts:?}, and the agreed dead stones \
             {agreed:?} are none of the lists the bots' engines named {named:?}: {sgf}",
            result.text
        );
        assert!(
            std::fs::read_to_string(&transcripts[0]).unwrap().contains("genmove"),
            "{id}"
        );
    }
}

/// `weiqi arena` with a GTP engine as a player (the Elo anchors of `weiqi loop`): GNU Go
/// at level 0 against uniform random play, colours alternating, every game played out.
#[test]
fn arena_takes_a_gtp_engine_as_a_player() {
    let Some(gnugo) = gnugo() else { return };
    let engine = format!("gtp:{gnugo} --mode gtp --level 0");
    let (code, out, err) = support::weiqi(&[
        "arena", &engine, "uniform", "--games", "4", "--size", "7", "--komi", "0.5", "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let r: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!((r["a"].as_str(), r["games"].as_u64()), (Some(engine.as_str()), Some(4)));
    assert!(r["a_wins"].as_u64().unwrap() >= 3, "{r}");
    // An engine that is not there is an error naming it, not a result.
    let (code, _, err) = support::weiqi(&["arena", "gtp:/nonexistent/engine", "uniform", "--games", "2"]);
    assert_eq!(code, 1);
    assert!(err.contains("/nonexistent/engine"), "{err}");
}
