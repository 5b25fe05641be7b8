//! SGF FF[4] records (R11): reading the main line into a [`GameRecord`], replaying it through
//! the engine, and writing records back out.
//!
//! The reader is our own small parser rather than the `sgf-parse` crate: that crate rejects
//! empty nodes (`;)`), which real collections contain (GNU Go's regression games do), and we
//! only need the main line. It reads FF[1]-FF[4], drops FF[3]'s lower-case letters in
//! property names, never recurses (deeply nested variations cannot overflow the stack),
//! and validates the whole file, variations included.

use std::fmt::Write as _;

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
    OffBoard {
        node: usize,
        point: String,
        width: u8,
        height: u8,
    },
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
        let nodes = parse_main_line(text)?;
        let root = nodes.first().ok_or(SgfError::Empty)?;
        let (width, height) = match root.iter().find(|(id, _)| id == "SZ") {
            Some((_, v)) => parse_size(v.first().map_or("", String::as_str))?,
            None => (19, 19),
        };
        if !(2..=MAX_SIZE).contains(&width) || !(2..=MAX_SIZE).contains(&height) {
            return Err(SgfError::BadSize(width, height));
        }
        let mut rec = GameRecord {
            width,
            height,
            ..GameRecord::default()
        };
        let bad = |node: usize, v: &str| SgfError::OffBoard {
            node,
            point: v.to_string(),
            width,
            height,
        };
        // A point on this board, `None` for a pass (`""`, or FF[3]'s `tt` up to 19x19).
        let point = |node: usize, v: &str| -> Result<Option<Point>, SgfError> {
            if v.is_empty() || (v == "tt" && width <= 19 && height <= 19) {
                return Ok(None);
            }
            match Point::from_sgf(v) {
                Some(p) if p.x < width && p.y < height => Ok(Some(p)),
                _ => Err(bad(node, v)),
            }
        };
        let mut black: Vec<Point> = Vec::new();
        let mut white: Vec<Point> = Vec::new();
        for (node_no, node) in nodes.iter().enumerate() {
            let mut mv: Option<RecordMove> = None;
            let (mut tl, mut ol, mut comment) = (None, None, None);
            for (id, values) in node {
                let first = values.first().map_or("", String::as_str);
                let simple = || Some(first.split_whitespace().collect::<Vec<_>>().join(" "));
                match id.as_str() {
                    "B" | "W" => {
                        let color = if id == "B" { Color::Black } else { Color::White };
                        let m = point(node_no, first)?.map_or(Move::Pass, Move::Place);
                        mv = Some(RecordMove {
                            color,
                            mv: m,
                            time_left: None,
                            overtime_left: None,
                            comment: None,
                        });
                    }
                    "AB" | "AW" | "AE" => {
                        if !rec.moves.is_empty() {
                            return Err(SgfError::SetupAfterMoves(node_no));
                        }
                        for v in values {
                            for p in expand_points(v).ok_or_else(|| bad(node_no, v))? {
                                let Some(p) = point(node_no, &p.to_sgf())? else {
                                    continue;
                                };
                                black.retain(|&q| q != p);
                                white.retain(|&q| q != p);
                                match id.as_str() {
                                    "AB" => black.push(p),
                                    "AW" => white.push(p),
                                    _ => {}
                                }
                            }
                        }
                    }
                    "PL" if rec.moves.is_empty() => rec.first_player = Color::parse(first.trim()),
                    "KM" => rec.komi = first.trim().parse().ok().filter(|k: &f64| k.is_finite()),
                    "HA" => rec.handicap = first.trim().parse::<u32>().unwrap_or(0).min(1000),
                    "RU" => rec.rules = simple(),
                    "RE" => rec.result = simple(),
                    "PB" => rec.black_player = simple(),
                    "PW" => rec.white_player = simple(),
                    "DT" => rec.date = simple(),
                    "TM" => rec.time_limit = first.trim().parse().ok().filter(|t: &f64| t.is_finite()),
                    "OT" => rec.overtime = simple(),
                    "BL" | "WL" => tl = first.trim().parse().ok().filter(|t: &f64| t.is_finite()),
                    "OB" | "OW" => ol = first.trim().parse().ok(),
                    "C" => comment = Some(first.to_string()),
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
        let first = self
            .first_player
            .or_else(|| self.moves.first().map(|m| m.color))
            .unwrap_or(if self.setup_black.len() >= 2 && self.setup_white.is_empty() {
                Color::White
            } else {
                Color::Black
            });
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
                        return Ok(Replay {
                            state,
                            moves_applied: k,
                            first_illegal: Some((k + 1, m.clone(), e)),
                        });
                    }
                    continue;
                }
                return Ok(Replay {
                    state,
                    moves_applied: k,
                    first_illegal: Some((k + 1, m.clone(), e)),
                });
            }
        }
        Ok(Replay {
            moves_applied: self.moves.len(),
            state,
            first_illegal: None,
        })
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
            .map(|&(color, mv)| RecordMove {
                color,
                mv,
                time_left: None,
                overtime_left: None,
                comment: None,
            })
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
            pr.ko == r.ko
                && pr.scoring == r.scoring
                && pr.suicide_allowed == r.suicide_allowed
                && pr.handicap_bonus == r.handicap_bonus
        })
        .map_or_else(|| "custom".to_string(), |p| p.name().to_string())
}

/// A property: identifier and raw values.
type Property = (String, Vec<String>);

/// Parses the first game tree and returns the nodes of its main line.
fn parse_main_line(text: &str) -> Result<Vec<Vec<Property>>, SgfError> {
    let b = text.as_bytes();
    let err = |msg: &str, at: usize| SgfError::Syntax(format!("{msg} at byte {at}"));
    let mut i = b.iter().position(|&c| c == b'(').ok_or(SgfError::Empty)? + 1;
    let mut nodes: Vec<Vec<Property>> = Vec::new();
    // Open parentheses not yet closed; the main line ends at the first ')'.
    let mut open = 1usize;
    let mut in_main = true;
    while i < b.len() {
        let c = b[i];
        match c {
            b'(' => {
                open += 1;
                i += 1;
            }
            b')' => {
                open -= 1;
                in_main = false;
                i += 1;
                if open == 0 {
                    // The first game tree is complete; ignore the rest of the collection.
                    return if nodes.is_empty() {
                        Err(SgfError::Empty)
                    } else {
                        Ok(nodes)
                    };
                }
            }
            b';' => {
                i += 1;
                let mut props: Vec<Property> = Vec::new();
                loop {
                    while i < b.len() && b[i].is_ascii_whitespace() {
                        i += 1;
                    }
                    if i >= b.len() || !b[i].is_ascii_alphabetic() {
                        break;
                    }
                    let start = i;
                    while i < b.len() && b[i].is_ascii_alphabetic() {
                        i += 1;
                    }
                    // FF[3] allowed lower-case letters in names (`AddBlack`): keep capitals.
                    let id: String = text[start..i].chars().filter(|c| c.is_ascii_uppercase()).collect();
                    let mut values = Vec::new();
                    loop {
                        while i < b.len() && b[i].is_ascii_whitespace() {
                            i += 1;
                        }
                        if i >= b.len() || b[i] != b'[' {
                            break;
                        }
                        let (v, next) = read_value(text, i + 1).ok_or_else(|| err("unterminated value", i))?;
                        values.push(v);
                        i = next;
                    }
                    if values.is_empty() {
                        return Err(err("property without a value", start));
                    }
                    if id.is_empty() {
                        return Err(err("property without an upper-case name", start));
                    }
                    props.push((id, values));
                }
                if in_main {
                    nodes.push(props);
                }
            }
            c if c.is_ascii_whitespace() => i += 1,
            _ => return Err(err("unexpected character", i)),
        }
    }
    Err(err("unexpected end of file", b.len()))
}

/// Reads a value starting after its `[`; returns it unescaped and the index after `]`.
fn read_value(text: &str, start: usize) -> Option<(String, usize)> {
    let mut out = String::new();
    let mut chars = text[start..].char_indices();
    while let Some((k, ch)) = chars.next() {
        match ch {
            ']' => return Some((out, start + k + 1)),
            '\\' => {
                let (_, esc) = chars.next()?;
                // An escaped line break is a soft break: removed.
                if esc != '\n' && esc != '\r' {
                    out.push(esc);
                }
            }
            _ => out.push(ch),
        }
    }
    None
}

/// `19` or `19:13` (columns:rows).
fn parse_size(v: &str) -> Result<(u8, u8), SgfError> {
    let v = v.trim();
    let bad = || SgfError::Syntax(format!("bad board size {v:?}"));
    match v.split_once(':') {
        Some((w, h)) => Ok((
            w.trim().parse().map_err(|_| bad())?,
            h.trim().parse().map_err(|_| bad())?,
        )),
        None => {
            let n = v.parse().map_err(|_| bad())?;
            Ok((n, n))
        }
    }
}

/// A point or a compressed rectangle `aa:cc`.
fn expand_points(v: &str) -> Option<Vec<Point>> {
    match v.split_once(':') {
        None => Some(vec![Point::from_sgf(v)?]),
        Some((a, b)) => {
            let (a, b) = (Point::from_sgf(a)?, Point::from_sgf(b)?);
            let mut out = Vec::new();
            for y in a.y.min(b.y)..=a.y.max(b.y) {
                for x in a.x.min(b.x)..=a.x.max(b.x) {
                    out.push(Point::new(x, y));
                }
            }
            Some(out)
        }
    }
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
        for bad in [
            "",
            "(",
            "(;SZ[99])",
            "(;SZ[9];B[zz])",
            "(;B[aa]",
            "(;B[aa",
            "(;[aa])",
            "(;SZ[0])",
            "(;SZ[x])",
        ] {
            assert!(GameRecord::parse(bad).is_err(), "{bad}");
        }
        // Empty nodes and variations are fine; the main line is the first branch.
        let r = GameRecord::parse("(;SZ[9];B[aa](;W[bb];)(;W[cc]))").unwrap();
        assert_eq!(r.moves.len(), 2);
        assert_eq!(r.moves[1].mv, Move::Place(Point::new(1, 1)));
        let r = GameRecord::parse("(;SZ[9]AB[aa:bb])").unwrap();
        assert_eq!(r.setup_black.len(), 4);
        assert!(GameRecord::parse("(;SZ[9];B[zz])").is_err());
    }
}
