//! `weiqi referee SCRIPT.jsonl`: runs a game script through the referee library.
//!
//! Line 1 holds the settings (a `Settings` object, where `rules` may name a preset and a
//! top-level `komi` overrides its komi; or `{"settings": {...},
//! "nigiri_commitment": "..."}`); each further line is `{"t": MS, "by": "host"|"guest"|
//! "server", "cmd": COMMAND}`, or `{"t": MS}` alone to let time pass. Commands are the
//! library's, in JSON (`{"play": {"point": {"x": 3, "y": 3}}}`), with shorthands: a bare
//! name for commands without arguments (`"pass"`, `"resign"`), and GTP vertices for points
//! and sealed moves (`{"play": "D4"}`, `{"seal": {"mv": "D4", "nonce": "..."}}`) and seat
//! stones of the variant (`{"place_seat_stone": "D4"}`).
//! Output: one JSON line per event (`{"event": ...}`) or rejection (`{"rejected": ...}`),
//! then `{"final": ...}`. Deterministic for a given script.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};
use serde_json::{Value, json};
use weiqi_game::{Actor, Command, Game, Settings};
use weiqi_rules::{Move, Point};

fn vertex(v: &Value, size: u8) -> anyhow::Result<Value> {
    match v.as_str() {
        Some(s) if s.eq_ignore_ascii_case("pass") => Ok(json!("pass")),
        Some(s) => {
            let p = Point::from_gtp(s, size).with_context(|| format!("bad vertex {s:?}"))?;
            Ok(serde_json::to_value(p)?)
        }
        None => Ok(v.clone()),
    }
}

/// Expands the script shorthands into the library's JSON.
fn normalize(cmd: &Value, size: u8) -> anyhow::Result<Value> {
    if let Some(name) = cmd.as_str() {
        // A bare name: a unit variant, or a struct variant with all-default fields.
        let unit = json!(name);
        if serde_json::from_value::<Command>(unit.clone()).is_ok() {
            return Ok(unit);
        }
        return Ok(json!({ name: {} }));
    }
    let mut cmd = cmd.clone();
    if let Some(play) = cmd.get_mut("play")
        && play.is_string()
    {
        *play = json!({ "point": vertex(play, size)? });
    }
    if let Some(stone) = cmd.get_mut("place_seat_stone")
        && stone.is_string()
    {
        *stone = json!({ "point": vertex(stone, size)? });
    }
    if let Some(mv) = cmd.get_mut("seal").and_then(|s| s.get_mut("mv"))
        && mv.is_string()
    {
        let v = vertex(mv, size)?;
        *mv = if v == json!("pass") {
            serde_json::to_value(Move::Pass)?
        } else {
            json!({ "place": v })
        };
    }
    for key in ["propose_dead", "place_handicap"] {
        let field = if key == "propose_dead" { "stones" } else { "points" };
        if let Some(list) = cmd
            .get_mut(key)
            .and_then(|c| c.get_mut(field))
            .and_then(Value::as_array_mut)
        {
            for v in list.iter_mut() {
                *v = vertex(v, size)?;
            }
        }
    }
    Ok(cmd)
}

/// `"rules": "japanese"` names a preset; a top-level `"komi"` overrides its komi.
fn resolve_preset(mut v: Value) -> anyhow::Result<Value> {
    if let Some(name) = v.get("rules").and_then(Value::as_str) {
        let preset: weiqi_rules::Preset = name.parse()?;
        v["rules"] = serde_json::to_value(preset.rules())?;
    }
    if let Some(k) = v.get("komi").cloned() {
        if v.get("rules").is_none() {
            v["rules"] = serde_json::to_value(weiqi_rules::Rules::default())?;
        }
        v["rules"]["komi"] = k;
    }
    Ok(v)
}

pub fn run(script: &Path) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(script).with_context(|| format!("reading {}", script.display()))?;
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with("//"));
    let Some((_, first)) = lines.next() else {
        bail!("the script is empty")
    };
    let head: Value = serde_json::from_str(first).context("line 1: settings")?;
    let (settings_v, commitment) = match head.get("settings") {
        Some(s) => (
            s.clone(),
            head.get("nigiri_commitment").and_then(Value::as_str).map(String::from),
        ),
        None => (head.clone(), None),
    };
    let settings: Settings = serde_json::from_value(resolve_preset(settings_v)?).context("line 1: settings")?;
    let size = settings.size;
    let mut game = Game::new();
    let mut out = std::io::stdout().lock();
    use std::io::Write;
    let step = |game: &mut Game, by: Actor, cmd: &Command, t: u64, out: &mut dyn Write| -> anyhow::Result<()> {
        match game.decide(by, cmd, t) {
            Ok(events) => {
                for e in events {
                    game.apply(&e)?;
                    writeln!(out, "{}", json!({ "event": e }))?;
                }
            }
            Err(r) => writeln!(
                out,
                "{}",
                json!({ "t": t, "by": by, "rejected": r, "message": r.to_string() })
            )?,
        }
        Ok(())
    };
    let create = Command::Create {
        host: None,
        settings,
        nigiri_commitment: commitment,
    };
    step(
        &mut game,
        Actor::Host,
        &create,
        head.get("t").and_then(Value::as_u64).unwrap_or(0),
        &mut out,
    )?;
    let mut now = 0;
    for (n, line) in lines {
        let v: Value = serde_json::from_str(line).with_context(|| format!("line {}", n + 1))?;
        let t = v
            .get("t")
            .and_then(Value::as_u64)
            .with_context(|| format!("line {}: \"t\" (ms) is required", n + 1))?;
        now = t;
        let (by, cmd) = match v.get("cmd") {
            None => (Actor::Server, Command::Tick),
            Some(c) => {
                let by: Actor = serde_json::from_value(v.get("by").cloned().unwrap_or(json!("server")))
                    .with_context(|| format!("line {}: \"by\"", n + 1))?;
                let cmd: Command = serde_json::from_value(normalize(c, size)?)
                    .with_context(|| format!("line {}: command {c}", n + 1))?;
                (by, cmd)
            }
        };
        step(&mut game, by, &cmd, t, &mut out)?;
    }
    let state = game.state();
    let fin = json!({
        "final": {
            "phase": game.phase(),
            "seq": game.seq(),
            "move_number": game.move_number(),
            "to_move": game.to_move(),
            "result": game.result(),
            "result_sgf": game.result().map(|r| r.sgf()),
            "clocks": game.clocks(now),
            "board": state.map(|s| s.board().rows()),
        }
    });
    writeln!(out, "{fin}")?;
    Ok(ExitCode::SUCCESS)
}
