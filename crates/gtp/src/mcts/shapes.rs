//! Learned shape weights: for each local shape ([`ShapeKey`]), the share of the times a
//! move of that shape could be played that it was, counted over game records. The tree
//! seeds new moves with them as Michi seeds them with its large patterns' probabilities
//! (Pachi's tables; Coulom's move patterns in Crazy Stone), though its patterns reach much
//! farther than these 20 points. The project fits its own table from GNU Go's self-play
//! (`weiqi shapes`), and the engine carries it built in.

use std::collections::HashMap;
use std::io::Write;
use std::sync::LazyLock;

use rustc_hash::FxHashMap;
use weiqi_rules::{Color, Illegal, Move, Point, ShapeKey, State};

/// The table the engine carries: `weiqi shapes` over GNU Go 3.8's 9x9 self-play (see the
/// file's header for the command).
static BUILTIN: LazyLock<ShapeTable> =
    LazyLock::new(|| ShapeTable::parse(include_str!("shapes.txt")).expect("the built-in shape table parses"));

/// The weights of shapes, read with one lookup per move in any orientation.
#[derive(Debug, Default)]
pub struct ShapeTable {
    /// Large shapes (the 20 points and the atari bits) by key in every orientation.
    large: FxHashMap<u64, f32>,
    /// 3x3 shapes (with the atari bits), for moves whose large shape is not in `large`.
    small: FxHashMap<u64, f32>,
}

/// A line of a shape table that does not read.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("shape table line {line}: {why}")]
pub struct ShapeTableError {
    pub line: usize,
    pub why: String,
}

impl ShapeTable {
    /// The engine's own table.
    pub fn builtin() -> &'static ShapeTable {
        &BUILTIN
    }

    /// Reads the text [`ShapeCounts::write`] writes: `L` or `S`, the canonical key in
    /// hexadecimal, times played, times seen; `#` starts a comment.
    pub fn parse(text: &str) -> Result<ShapeTable, ShapeTableError> {
        let mut table = ShapeTable::default();
        for (k, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = |why: &str| ShapeTableError {
                line: k + 1,
                why: why.to_string(),
            };
            let f: Vec<&str> = line.split_whitespace().collect();
            let [kind, key, played, seen] = f[..] else {
                return Err(bad("expected: kind key played seen"));
            };
            let key = u64::from_str_radix(key, 16).map_err(|_| bad("the key is not hexadecimal"))?;
            let played: u64 = played.parse().map_err(|_| bad("played is not a count"))?;
            let seen: u64 = seen.parse().map_err(|_| bad("seen is not a count"))?;
            if seen == 0 || played > seen {
                return Err(bad("played must be at most seen, and seen above 0"));
            }
            let map = match kind {
                "L" => &mut table.large,
                "S" => &mut table.small,
                _ => return Err(bad("the kind is L or S")),
            };
            let p = played as f32 / seen as f32;
            for s in ShapeKey(key).symmetries() {
                map.insert(s.0, p);
            }
        }
        Ok(table)
    }

    /// The share of the times a move of this shape was played: the large shape's when the
    /// table has it, else the 3x3 shape's, else none.
    #[inline]
    pub fn probability(&self, key: ShapeKey) -> Option<f32> {
        self.large
            .get(&key.0)
            .or_else(|| self.small.get(&key.small().0))
            .copied()
    }

    /// Shapes in the table (large, small), counting each orientation once.
    pub fn len(&self) -> (usize, usize) {
        let distinct = |m: &FxHashMap<u64, f32>| m.keys().filter(|&&k| ShapeKey(k).canonical().0 == k).count();
        (distinct(&self.large), distinct(&self.small))
    }

    pub fn is_empty(&self) -> bool {
        self.large.is_empty() && self.small.is_empty()
    }
}

/// The moves whose shapes are counted in a position: what the tree would expand (every
/// legal point but the mover's own true eyes).
pub(crate) fn candidate(state: &State, p: Point) -> bool {
    !state.board().is_true_eye_of(p, state.to_move()) && state.is_legal(Move::Place(p))
}

/// Counts over game records, for fitting a table.
#[derive(Debug, Default)]
pub struct ShapeCounts {
    /// Per canonical key: (played, seen).
    large: HashMap<ShapeKey, (u64, u64)>,
    small: HashMap<ShapeKey, (u64, u64)>,
    /// Positions counted.
    pub positions: u64,
}

impl ShapeCounts {
    /// Counts the positions of one game from `start` through `moves`, from move `skip`
    /// on (records that open with random moves skip them). A position whose move is a
    /// pass, or a point the tree would not expand, adds nothing.
    pub fn add_game(&mut self, start: &State, moves: &[(Color, Move)], skip: usize) -> Result<(), Illegal> {
        let mut state = start.clone();
        for (k, &(color, mv)) in moves.iter().enumerate() {
            if k >= skip
                && state.to_move() == color
                && let Move::Place(played) = mv
                && candidate(&state, played)
            {
                self.positions += 1;
                for p in state.board().empty_points() {
                    if !candidate(&state, p) {
                        continue;
                    }
                    let key = state.board().shape_key(p, color);
                    let hit = u64::from(p == played);
                    for (map, k) in [
                        (&mut self.large, key.canonical()),
                        (&mut self.small, key.small().canonical()),
                    ] {
                        let e = map.entry(k).or_default();
                        e.0 += hit;
                        e.1 += 1;
                    }
                }
            }
            state.play_color(color, mv)?;
        }
        Ok(())
    }

    /// The table as text, shapes seen fewer than `min_seen` times left out (their
    /// shares are noise), the most often seen first.
    pub fn write(&self, min_seen: u64, header: &str, out: &mut impl Write) -> std::io::Result<()> {
        for line in header.lines() {
            writeln!(out, "# {line}")?;
        }
        writeln!(
            out,
            "# kind (L: 5x5 without corners, S: 3x3), canonical key, played, seen"
        )?;
        for (kind, map) in [("L", &self.large), ("S", &self.small)] {
            let mut rows: Vec<_> = map.iter().filter(|(_, (_, seen))| *seen >= min_seen).collect();
            rows.sort_by_key(|&(k, &(_, seen))| (std::cmp::Reverse(seen), *k));
            for (k, (played, seen)) in rows {
                writeln!(out, "{kind} {:x} {played} {seen}", k.0)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weiqi_rules::Preset;

    fn fit(games: &[Vec<(Color, Move)>], min_seen: u64) -> (ShapeTable, ShapeCounts) {
        let start = State::new(5, Preset::Chinese.rules()).unwrap();
        let mut counts = ShapeCounts::default();
        for g in games {
            counts.add_game(&start, g, 0).unwrap();
        }
        let mut text = Vec::new();
        counts.write(min_seen, "test", &mut text).unwrap();
        (ShapeTable::parse(std::str::from_utf8(&text).unwrap()).unwrap(), counts)
    }

    fn at(c: Color, x: u8, y: u8) -> (Color, Move) {
        (c, Move::Place(Point::new(x, y)))
    }

    #[test]
    fn the_share_played_is_read_back_in_every_orientation() {
        // The first move of a 5x5 game in each corner: the four corners are one shape, and
        // of the four times it could be played (once per game), it was played once each.
        let games: Vec<_> = [(0, 0), (4, 0), (0, 4), (4, 4)]
            .iter()
            .map(|&(x, y)| vec![at(Color::Black, x, y)])
            .collect();
        let (table, counts) = fit(&games, 1);
        assert_eq!(counts.positions, 4);
        let empty = State::new(5, Preset::Chinese.rules()).unwrap();
        for (x, y) in [(0, 0), (4, 0), (0, 4), (4, 4)] {
            let key = empty.board().shape_key(Point::new(x, y), Color::Black);
            // Each position offers four corners and plays one of them: 4 of 16.
            assert_eq!(table.probability(key), Some(0.25));
        }
        // The centre was seen four times and never played.
        let centre = empty.board().shape_key(Point::new(2, 2), Color::Black);
        assert_eq!(table.probability(centre), Some(0.0));
    }

    #[test]
    fn rare_large_shapes_fall_back_to_their_3x3_share() {
        let games = vec![vec![
            at(Color::Black, 2, 2),
            at(Color::White, 1, 2),
            at(Color::Black, 2, 1),
        ]];
        let (all, _) = fit(&games, 1);
        let (common, _) = fit(&games, 2);
        assert!(common.len().0 < all.len().0, "some large shapes were seen once");
        // The centre of the empty 5x5 board: its large shape (every point on the board
        // and empty) was seen once and played; its 3x3 shape (an empty ring) was seen at
        // the nine inner points of that position, and played once.
        let empty = State::new(5, Preset::Chinese.rules()).unwrap();
        let centre = empty.board().shape_key(Point::new(2, 2), Color::Black);
        assert_eq!(all.probability(centre), Some(1.0));
        assert_eq!(common.probability(centre), Some(1.0 / 9.0));
    }

    #[test]
    fn passes_and_bad_lines_are_handled() {
        let (table, counts) = fit(&[vec![(Color::Black, Move::Pass), at(Color::White, 2, 2)]], 1);
        assert_eq!(counts.positions, 1, "the pass adds no position");
        assert!(!table.is_empty());
        for bad in ["X 1 1 1", "L zz 1 1", "L 1 2 1", "L 1 1 0", "L 1 1"] {
            let e = ShapeTable::parse(&format!("# header\n{bad}\n")).unwrap_err();
            assert_eq!(e.line, 2, "{bad}");
        }
    }

    #[test]
    fn the_builtin_table_loads_and_prefers_good_shape() {
        let t = ShapeTable::builtin();
        let (large, small) = t.len();
        assert!(large > 1000 && small > 100, "{large} large and {small} small shapes");
        // On an empty 9x9 board, the first line is worse than the third and fourth.
        let s = State::new(9, Preset::Chinese.rules()).unwrap();
        let p = |x, y| {
            t.probability(s.board().shape_key(Point::new(x, y), Color::Black))
                .unwrap_or(0.0)
        };
        assert!(p(4, 0) < p(4, 2), "{} vs {}", p(4, 0), p(4, 2));
        assert!(p(0, 0) < p(3, 3));
    }
}
