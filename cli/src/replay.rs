//! `weiqi replay` and `weiqi score`: records in, JSON out.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use serde::Serialize;
use serde_json::json;
use weiqi_rules::sgf::{GameRecord, Replay};
use weiqi_rules::{Color, Move, Point, Preset, Rules, State, score};

#[derive(Serialize)]
struct AreaJson {
    black: f64,
    white: f64,
    white_minus_black: f64,
}

/// The record's rules: the preset, with the record's komi when it has one.
fn rules_for(preset: Preset, rec: &GameRecord) -> Rules {
    let r = preset.rules();
    match rec.komi {
        Some(k) => r.with_komi(k),
        None => r,
    }
}

fn load(file: &Path, preset: Preset) -> anyhow::Result<(GameRecord, Replay)> {
    let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    let text = String::from_utf8_lossy(&bytes);
    let rec = GameRecord::parse(&text)?;
    let replay = rec.replay(rules_for(preset, &rec))?;
    Ok((rec, replay))
}

fn move_text(c: Color, m: Move) -> String {
    match m {
        Move::Place(p) => format!("{}[{}]", c.letter(), p.to_sgf()),
        Move::Pass => format!("{}[]", c.letter()),
    }
}

fn replay_json(file: &Path, preset: Preset) -> anyhow::Result<serde_json::Value> {
    let (_, rep) = load(file, preset)?;
    let s = &rep.state;
    let b = s.board();
    // Every stone alive; neutral points split (R8), komi only.
    let a = score::area(b);
    let area = AreaJson {
        black: a.black_points(),
        white: a.white_points(),
        white_minus_black: a.white as f64 - a.black as f64 + s.rules().komi,
    };
    let first_illegal = rep
        .first_illegal
        .as_ref()
        .map(|(n, m, why)| json!({"move_number": n, "move": move_text(m.color, m.mv), "reason": why.code()}));
    Ok(json!({
        "file": file.display().to_string(),
        "size": [b.width(), b.height()],
        "moves_applied": rep.moves_applied,
        "first_illegal": first_illegal,
        "final_board": b.rows(),
        "captures": {"black": s.captures(Color::Black), "white": s.captures(Color::White)},
        "area": area,
    }))
}

/// Prints one JSON line per file; a file that cannot be read gives an error object and
/// makes the exit status non-zero.
pub fn replay_files(preset: Preset, files: &[PathBuf]) -> ExitCode {
    let mut failed = false;
    for file in files {
        let v = replay_json(file, preset).unwrap_or_else(|e| {
            failed = true;
            json!({"file": file.display().to_string(), "error": format!("{e:#}")})
        });
        println!("{v}");
    }
    if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}

fn parse_dead(state: &State, dead: &[String]) -> anyhow::Result<Vec<Point>> {
    let h = state.board().height();
    dead.iter()
        .filter(|d| !d.trim().is_empty())
        .map(|d| match Point::from_gtp(d, h) {
            Some(p) if state.board().contains(p) => Ok(p),
            _ => bail!("{d:?} is not a vertex on this board"),
        })
        .collect()
}

pub fn score_file(file: &Path, dead: &[String], as_json: bool, preset: Preset) -> anyhow::Result<ExitCode> {
    let (_, rep) = load(file, preset)?;
    if let Some((n, m, why)) = &rep.first_illegal {
        eprintln!(
            "warning: move {n} ({}) is illegal ({why}); scoring the position before it",
            move_text(m.color, m.mv)
        );
    }
    let s = &rep.state;
    let dead = parse_dead(s, dead)?;
    let area = s.area_score(&dead)?;
    let terr = s.territory_score(&dead, &[])?;
    let result = match s.rules().scoring {
        weiqi_rules::ScoringRule::Area => area.outcome,
        weiqi_rules::ScoringRule::Territory => terr.outcome,
    };
    if as_json {
        let v = json!({
            "area": {"black": area.black, "white": area.white, "white_minus_black": area.white_minus_black},
            "territory": {
                "black": terr.black, "white": terr.white, "white_minus_black": terr.white_minus_black,
                "black_prisoners": s.captures(Color::Black), "white_prisoners": s.captures(Color::White),
            },
            "komi": s.rules().komi,
            "white_bonus": area.white_bonus,
            "result": result.to_string(),
        });
        println!("{v}");
    } else {
        println!(
            "area:      Black {} White {} (+{} komi/compensation): {}",
            area.black, area.white, area.white_bonus, area.outcome
        );
        println!(
            "territory: Black {} White {} (+{}): {}",
            terr.black, terr.white, terr.white_bonus, terr.outcome
        );
        println!("result ({}): {result}", preset);
    }
    Ok(ExitCode::SUCCESS)
}
