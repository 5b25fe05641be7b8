//! The cross table, as JSON (for programs) and CSV (for spreadsheets and notice boards).
//!
//! A cell is the row player's result against the column player: `W`, `L`, `D` (draw),
//! `X` (both forfeited), `W+`/`L-` (not played: a walkover, or a forfeit by an absent
//! or withdrawn player), empty when not yet played, `*` on the diagonal.

use serde::Serialize;

use crate::Tournament;
use crate::events::{RoundGame, Stage};
use crate::standings::{BoardResult, Standing};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CrossTable {
    pub tournament_id: String,
    pub name: String,
    pub seed: u64,
    pub groups: Vec<GroupTable>,
    pub knockout: Vec<KnockoutRound>,
    pub champion: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupTable {
    /// "A", "B", ...
    pub group: String,
    /// In the draw's order (the columns).
    pub players: Vec<String>,
    pub rows: Vec<Row>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    #[serde(flatten)]
    pub standing: Standing,
    pub name: String,
    /// Against each player of `players`, in that order.
    pub cells: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KnockoutRound {
    pub round: u32,
    pub games: Vec<KnockoutGame>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KnockoutGame {
    pub slot: u32,
    pub attempt: u32,
    pub black: Option<String>,
    pub white: Option<String>,
    pub game_id: String,
    pub result: Option<BoardResult>,
}

pub fn group_letter(g: usize) -> String {
    char::from(b'A' + (g % 26) as u8).to_string()
}

fn cell(board: &RoundGame, me: &str) -> &'static str {
    let black = board.black.as_deref() == Some(me);
    match (board.result, black, board.is_unplayed()) {
        (Some(BoardResult::Draw), ..) => "D",
        (Some(BoardResult::BothLose), ..) => "X",
        (Some(BoardResult::BlackWins), true, false) | (Some(BoardResult::WhiteWins), false, false) => "W",
        (Some(BoardResult::BlackWins), false, false) | (Some(BoardResult::WhiteWins), true, false) => "L",
        (Some(BoardResult::BlackWins), true, true) | (Some(BoardResult::WhiteWins), false, true) => "W+",
        (Some(BoardResult::BlackWins), false, true) | (Some(BoardResult::WhiteWins), true, true) => "L-",
        (Some(BoardResult::NoResult) | None, ..) => "",
    }
}

pub fn cross_table(t: &Tournament) -> CrossTable {
    let name_of = |id: &str| t.entrant(id).map(|e| e.name.clone()).unwrap_or_default();
    let groups = t
        .groups
        .iter()
        .enumerate()
        .map(|(g, players)| {
            let games = t.group_games(g);
            let rows = t
                .group_standings(g)
                .into_iter()
                .map(|standing| {
                    let me = standing.player_id.as_str();
                    let cells = players
                        .iter()
                        .map(|them| {
                            if them == me {
                                return "*".to_string();
                            }
                            let between = |b: &&&RoundGame| {
                                let (x, y) = (b.black.as_deref(), b.white.as_deref());
                                (x, y) == (Some(me), Some(them.as_str())) || (x, y) == (Some(them.as_str()), Some(me))
                            };
                            games
                                .iter()
                                .find(between)
                                .map(|b| cell(b, me))
                                .unwrap_or("")
                                .to_string()
                        })
                        .collect();
                    Row {
                        name: name_of(me),
                        standing,
                        cells,
                    }
                })
                .collect();
            GroupTable {
                group: group_letter(g),
                players: players.clone(),
                rows,
            }
        })
        .collect();
    let knockout = t
        .rounds
        .iter()
        .filter(|r| r.stage == Stage::Knockout)
        .map(|r| KnockoutRound {
            round: r.number,
            games: r
                .boards
                .iter()
                .map(|b| KnockoutGame {
                    slot: b.slot,
                    attempt: b.attempt,
                    black: b.black.clone(),
                    white: b.white.clone(),
                    game_id: b.game_id.clone(),
                    result: b.result,
                })
                .collect(),
        })
        .collect();
    CrossTable {
        tournament_id: t.id.clone(),
        name: t.settings.name.clone(),
        seed: t.seed,
        groups,
        knockout,
        champion: t.champion.clone(),
    }
}

/// One line per player: group, place, id, name, points, record, tie-breaks, then the
/// cells against the group's players by their draw number (1, 2, ...).
pub fn cross_table_csv(t: &Tournament) -> String {
    let table = cross_table(t);
    let width = table.groups.iter().map(|g| g.players.len()).max().unwrap_or(0);
    let mut out = String::from("group,place,player_id,name,points,wins,draws,losses,head_to_head,sonneborn_berger_x2");
    for k in 1..=width {
        out.push_str(&format!(",{k}"));
    }
    out.push('\n');
    for g in &table.groups {
        for r in &g.rows {
            let s = &r.standing;
            let fields = [
                g.group.clone(),
                s.place.to_string(),
                s.player_id.clone(),
                r.name.clone(),
                s.points.to_string(),
                s.wins.to_string(),
                s.draws.to_string(),
                s.losses.to_string(),
                s.head_to_head.to_string(),
                s.sonneborn_berger_x2.to_string(),
            ];
            let line: Vec<String> = fields.iter().chain(&r.cells).map(|f| csv_field(f)).collect();
            out.push_str(&line.join(","));
            out.push('\n');
        }
    }
    out
}

/// RFC 4180 quoting; a leading `=`, `+`, `-` or `@` is prefixed with `'` so a spreadsheet
/// never runs a player's name as a formula.
fn csv_field(f: &str) -> String {
    let f = if f.starts_with(['=', '+', '@']) || (f.starts_with('-') && f.len() > 2) {
        format!("'{f}")
    } else {
        f.to_string()
    };
    if f.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", f.replace('"', "\"\""))
    } else {
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_are_quoted_and_never_formulas() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("=cmd()"), "'=cmd()");
        assert_eq!(csv_field("L-"), "L-");
    }
}
