//! SGF FF[4] records (R11): reading the main line into a [`GameRecord`], replaying it through
//! the engine, and writing records back out. Parsing is done by the `sgf-parse` crate (which
//! also upgrades FF[3] files); this module maps its nodes onto the engine's types.

use std::fmt::Write as _;

use sgf_parse::go::{self, Prop};

use crate::board::Board;
use crate::color::Color;
use crate::coord::{MAX_SIZE, Move, Point};
use crate::rules::{Preset, Rules};
use crate::state::{Illegal, State};

/// Why a file is not a usable Go record.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SgfError {
    #[error("SGF syntax: {0}")]
    Syntax(String),
    #[error("the file holds no game")]
    Empty,
    #[error("board size {0}x{1} is not supported (2..=25)")]
    BadSize(u8, u8),
    #[error("point {point} in node {node} is off the {width}x{height} board")]
    OffBoard { node: usize, point: String, width: u8, height: u8 },
    #[error("setup stones (AB/AW/AE) after the first move (node {0}) are not supported")]
    SetupAfterMoves(usize),
    #[error("setup stones leave a chain without liberties")]
    BadSetup,
}

/// One move of a record, with the clock annotations that came with it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordMove {
    pub color: Color,
    pub mv: Move,
    /// Seconds left on the mover's clock after the move (`BL`/`WL`).
    pub time_left: Option<f64>,
    /// Byo-yomi periods or stones left (`OB`/`OW`).
    pub overtime_left: Option<i64>,
    pub comment: Option<String>,
}

/// The main line of an SGF game and its game information.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GameRecord {
    pub width: u8,
    pub height: u8,
    pub komi: Option<f64>,
    pub handicap: u32,
    /// `RU` as written.
    pub rules: Option<String>,
    /// `RE` as written.
    pub result: Option<String>,
    pub black_player: Option<String>,
    pub white_player: Option<String>,
    pub date: Option<String>,
    /// Main time in seconds (`TM`).
    pub time_limit: Option<f64>,
    /// Overtime description (`OT`).
    pub overtime: Option<String>,
    pub comment: Option<String>,
    pub setup_black: Vec<Point>,
    pub setup_white: Vec<Point>,
    /// `PL`: who moves first after the setup.
    pub first_player: Option<Color>,
    pub moves: Vec<RecordMove>,
}

/// The outcome of replaying a record through the engine.
#[derive(Debug, Clone)]
pub struct Replay {
    /// The position after the last legal move.
    pub state: State,
    /// Moves applied before stopping.
    pub moves_applied: usize,
    /// The first illegal move: its 1-based number, the move, and why.
    pub first_illegal: Option<(usize, RecordMove, Illegal)>,
}

fn sorted(points: impl IntoIterator<Item = Point>) -> Vec<Point> {
    let mut v: Vec<Point> = points.into_iter().collect();
    v.sort_by_key(|p| (p.y, p.x));
    v.dedup();
    v
}

impl GameRecord {
    /// Parses the first game of an SGF collection, following the main line.
    pub fn parse(text: &str) -> Result<GameRecord, SgfError> {
        let trees = go::parse(text).map_err(|e| SgfError::Syntax(e.to_string()))?;
        let root = trees.into_iter().next().ok_or(SgfError::Empty)?;
        let (width, height) = match root.get_property("SZ") {
            Some(Prop::SZ((w, h))) => (*w, *h),
            _ => (19, 19),
        };
        if !(2..=MAX_SIZE).contains(&width) || !(2..=MAX_SIZE).contains(&height) {
            return Err(SgfError::BadSize(width, height));
        }
        let mut rec = GameRecord { width, height, ..GameRecord::default() };
        let on_board = |node: usize, p: go::Point| -> Result<Option<Point>, SgfError> {
            // FF[3] wrote a pass as `tt` on boards up to 19x19.
            if p.x == 19 && p.y == 19 && width <= 19 && height <= 19 {
                return Ok(None);
            }
            if p.x >= width || p.y >= height {
                return Err(SgfError::OffBoard { node, point: format!("{}{}", (b'a' + p.x) as char, (b'a' + p.y) as char), width, height });
            }
            Ok(Some(Point::new(p.x, p.y)))
        };
        let mut black: Vec<Point> = Vec::new();
        let mut white: Vec<Point> = Vec::new();
        for (node_no, node) in root.main_variation().enumerate() {
            let mut mv: Option<RecordMove> = None;
            let (mut tl, mut ol, mut comment) = (None, None, None);
            for prop in node.properties() {
                match prop {
                    Prop::B(m) | Prop::W(m) => {
                        let color = if matches!(prop, Prop::B(_)) { Color::Black } else { Color::White };
                        let m = match m {
                            go::Move::Pass => Move::Pass,
                            go::Move::Move(p) => on_board(node_no, *p)?.map_or(Move::Pass, Move::Place),
                        };
                        mv = Some(RecordMove { color, mv: m, time_left: None, overtime_left: None, comment: None });
                    }
                    Prop::AB(ps) | Prop::AW(ps) | Prop::AE(ps) => {
                        if !rec.moves.is_empty() {
                            return Err(SgfError::SetupAfterMoves(node_no));
                        }
                        for p in ps {
                            let Some(p) = on_board(node_no, *p)? else { continue };
                            black.retain(|&q| q != p);
                            white.retain(|&q| q != p);
                            match prop {
                                Prop::AB(_) => black.push(p),
                                Prop::AW(_) => white.push(p),
                                _ => {}
                            }
                        }
                    }
                    Prop::PL(c) if rec.moves.is_empty() => {
                        rec.first_player = Some(match c {
                            sgf_parse::Color::Black => Color::Black,
                            sgf_parse::Color::White => Color::White,
                        });
                    }
                    Prop::KM(k) => rec.komi = Some(*k),
                    Prop::HA(h) => rec.handicap = (*h).clamp(0, 1000) as u32,
                    Prop::RU(t) => rec.rules = Some(t.text.clone()),
                    Prop::RE(t) => rec.result = Some(t.text.clone()),
                    Prop::PB(t) => rec.black_player = Some(t.text.clone()),
                    Prop::PW(t) => rec.white_player = Some(t.text.clone()),
                    Prop::DT(t) => rec.date = Some(t.text.clone()),
                    Prop::TM(t) => rec.time_limit = Some(*t),
                    Prop::OT(t) => rec.overtime = Some(t.text.clone()),
                    Prop::BL(t) | Prop::WL(t) => tl = Some(*t),
                    Prop::OB(n) | Prop::OW(n) => ol = Some(*n),
                    Prop::C(t) => comment = Some(t.text.clone()),
                    _ => {}
                }
            }
            match mv {
                Some(mut m) => {
                    m.time_left = tl;
                    m.overtime_left = ol;
                    m.comment = comment;
                    rec.moves.push(m);
                }
                None if node_no == 0 => rec.comment = comment,
                None => {}
            }
        }
        rec.setup_black = sorted(black);
        rec.setup_white = sorted(white);
        Ok(rec)
    }

    /// The rules the record names (`RU`), if we know them, with its komi.
    pub fn named_rules(&self) -> Option<Rules> {
        let preset = Preset::from_sgf_ru(self.rules.as_deref()?)?;
        let r = preset.rules();
        Some(match self.komi {
            Some(k) => r.with_komi(k),
            None => r,
        })
    }

    /// The start position: setup stones, and who moves first.
    pub fn start(&self, rules: Rules) -> Result<State, SgfError> {
        let mut board = Board::rect(self.width, self.height).map_err(|_| SgfError::BadSize(self.width, self.height))?;
        for &p in &self.setup_black {
            board.set_raw(p, Some(Color::Black));
        }
        for &p in &self.setup_white {
            board.set_raw(p, Some(Color::White));
        }
        board.rebuild();
        if board.has_dead_chain() {
            return Err(SgfError::BadSetup);
        }
        let first = self.first_player.or_else(|| self.moves.first().map(|m| m.color)).unwrap_or(
            if self.setup_black.len() >= 2 && self.setup_white.is_empty() { Color::White } else { Color::Black },
        );
        let mut state = State::from_board(board, first, rules);
        if self.setup_white.is_empty() && self.setup_black.len() >= 2 {
            state.set_handicap(self.setup_black.len() as u32);
        } else if self.handicap >= 2 {
            state.set_handicap(self.handicap);
        }
        Ok(state)
    }

    /// Replays the main line under `rules`; stops at the first illegal move.
    pub fn replay(&self, rules: Rules) -> Result<Replay, SgfError> {
        let mut state = self.start(rules)?;
        for (k, m) in self.moves.iter().enumerate() {
            if let Err(e) = state.play_color(m.color, m.mv) {
                // Two passes end play (R7), but records may go on: let play resume.
                if e == Illegal::GameOver {
                    state.resume();
                    if let Err(e) = state.play_color(m.color, m.mv) {
                        return Ok(Replay { state, moves_applied: k, first_illegal: Some((k + 1, m.clone(), e)) });
                    }
                    continue;
                }
                return Ok(Replay { state, moves_applied: k, first_illegal: Some((k + 1, m.clone(), e)) });
            }
        }
        Ok(Replay { moves_applied: self.moves.len(), state, first_illegal: None })
    }

    /// A record of a game in progress or finished, from the engine's state.
    pub fn from_state(state: &State) -> GameRecord {
        let b = state.initial_board();
        let mut rec = GameRecord {
            width: b.width(),
            height: b.height(),
            komi: Some(state.rules().komi),
            handicap: state.handicap(),
            rules: Some(rules_name(state.rules())),
            ..GameRecord::default()
        };
        for p in b.points() {
            match b.get(p) {
                Some(Color::Black) => rec.setup_black.push(p),
                Some(Color::White) => rec.setup_white.push(p),
                None => {}
            }
        }
        if state.initial_to_move() == Color::White && !rec.setup_black.is_empty() && state.moves().is_empty() {
            rec.first_player = Some(Color::White);
        }
        rec.moves = state
            .moves()
            .iter()
            .map(|&(color, mv)| RecordMove { color, mv, time_left: None, overtime_left: None, comment: None })
            .collect();
        rec
    }

    /// Writes the record as SGF FF[4].
    pub fn to_sgf(&self) -> String {
        let mut s = String::from("(;GM[1]FF[4]CA[UTF-8]AP[weiqi]");
        if self.width == self.height {
            let _ = write!(s, "SZ[{}]", self.width);
        } else {
            let _ = write!(s, "SZ[{}:{}]", self.width, self.height);
        }
        let text = |s: &mut String, id: &str, v: &Option<String>| {
            if let Some(v) = v {
                let _ = write!(s, "{id}[{}]", escape(v));
            }
        };
        if let Some(k) = self.komi {
            let _ = write!(s, "KM[{k}]");
        }
        if self.handicap >= 2 {
            let _ = write!(s, "HA[{}]", self.handicap);
        }
        text(&mut s, "RU", &self.rules);
        text(&mut s, "RE", &self.result);
        text(&mut s, "PB", &self.black_player);
        text(&mut s, "PW", &self.white_player);
        text(&mut s, "DT", &self.date);
        if let Some(t) = self.time_limit {
            let _ = write!(s, "TM[{t}]");
        }
        text(&mut s, "OT", &self.overtime);
        text(&mut s, "C", &self.comment);
        for (id, pts) in [("AB", &self.setup_black), ("AW", &self.setup_white)] {
            if !pts.is_empty() {
                s.push_str(id);
                for p in pts {
                    let _ = write!(s, "[{}]", p.to_sgf());
                }
            }
        }
        if let Some(c) = self.first_player {
            let _ = write!(s, "PL[{}]", c.letter());
        }
        for m in &self.moves {
            let v = match m.mv {
                Move::Place(p) => p.to_sgf(),
                Move::Pass => String::new(),
            };
            let _ = write!(s, "\n;{}[{v}]", m.color.letter());
            let c = m.color.letter();
            if let Some(t) = m.time_left {
                let _ = write!(s, "{c}L[{t}]");
            }
            if let Some(n) = m.overtime_left {
                let _ = write!(s, "O{c}[{n}]");
            }
            if let Some(t) = &m.comment {
                let _ = write!(s, "C[{}]", escape(t));
            }
        }
        s.push_str(")\n");
        s
    }
}

/// The SGF `RU` value for a rule set: the preset's name when it matches one.
pub fn rules_name(r: &Rules) -> String {
    Preset::ALL
        .into_iter()
        .find(|p| {
            let pr = p.rules();
            pr.ko == r.ko && pr.scoring == r.scoring && pr.suicide_allowed == r.suicide_allowed && pr.handicap_bonus == r.handicap_bonus
        })
        .map_or_else(|| "custom".to_string(), |p| p.name().to_string())
}

fn escape(t: &str) -> String {
    t.replace('\\', "\\\\").replace(']', "\\]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_root_properties_and_moves_r11() {
        let sgf = "(;GM[1]FF[4]SZ[9]KM[6.5]HA[2]RU[Chinese]RE[W+0.5]PB[a]PW[b]DT[2024-01-01]TM[600]OT[3x30 byo-yomi]AB[cc][gg]C[root]\n;W[ee]WL[590.5]OW[3]C[hi \\] there];B[]BL[580])";
        let r = GameRecord::parse(sgf).unwrap();
        assert_eq!((r.width, r.komi, r.handicap), (9, Some(6.5), 2));
        assert_eq!(r.setup_black, vec![Point::new(2, 2), Point::new(6, 6)]);
        assert_eq!(r.moves.len(), 2);
        assert_eq!(r.moves[0].time_left, Some(590.5));
        assert_eq!(r.moves[0].overtime_left, Some(3));
        assert_eq!(r.moves[0].comment.as_deref(), Some("hi ] there"));
        assert_eq!(r.moves[1].mv, Move::Pass);
        let again = GameRecord::parse(&r.to_sgf()).unwrap();
        assert_eq!(again, r);
        let rep = r.replay(r.named_rules().unwrap()).unwrap();
        assert!(rep.first_illegal.is_none());
        assert_eq!(rep.state.handicap(), 2);
    }

    #[test]
    fn reports_the_first_illegal_move() {
        let sgf = "(;SZ[5];B[cc];W[cc];B[dd])";
        let r = GameRecord::parse(sgf).unwrap();
        let rep = r.replay(Rules::default()).unwrap();
        assert_eq!(rep.moves_applied, 1);
        let (n, m, why) = rep.first_illegal.unwrap();
        assert_eq!((n, m.mv, why), (2, Move::Place(Point::new(2, 2)), Illegal::Occupied));
    }

    #[test]
    fn rejects_garbage_without_panicking() {
        for bad in ["", "(", "(;SZ[99])", "(;SZ[9];B[zz])", "(;B[aa]", "((;))"] {
            let _ = GameRecord::parse(bad);
        }
        assert!(GameRecord::parse("(;SZ[9];B[zz])").is_err());
    }
}
