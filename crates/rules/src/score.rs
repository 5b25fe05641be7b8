//! Counting: area (R8), territory (R10) and Tromp-Taylor, and the typed result.

use std::fmt;

use crate::board::{BLACK, BORDER, Board, EMPTY, WHITE};
use crate::color::Color;
use crate::coord::Point;
use crate::rules::ScoringRule;

/// Area count of a position (R8): stones plus empty points reached only by one colour.
/// `neutral` points (dame, seki eyes) touch both colours or none; R8 splits them half and
/// half, which gives the same margin as counting them for nobody (Tromp-Taylor).
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AreaCount {
    pub black: u32,
    pub white: u32,
    pub neutral: u32,
}

impl AreaCount {
    /// Black's score with neutral points split (R8).
    pub fn black_points(&self) -> f64 {
        self.black as f64 + self.neutral as f64 / 2.0
    }
    /// White's score with neutral points split (R8).
    pub fn white_points(&self) -> f64 {
        self.white as f64 + self.neutral as f64 / 2.0
    }
}

/// Territory count (R10): surrounded empty points plus prisoners (captures and dead stones).
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TerritoryCount {
    pub black_territory: u32,
    pub white_territory: u32,
    /// Stones Black has taken: White stones captured in play or marked dead.
    pub black_prisoners: u32,
    pub white_prisoners: u32,
}

impl TerritoryCount {
    pub fn black_points(&self) -> f64 {
        (self.black_territory + self.black_prisoners) as f64
    }
    pub fn white_points(&self) -> f64 {
        (self.white_territory + self.white_prisoners) as f64
    }
}

/// Who won and by how much.
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome {
    Win { winner: Color, margin: f64 },
    Draw,
}

impl Outcome {
    /// From White's points minus Black's, komi and compensation included.
    pub fn from_white_minus_black(d: f64) -> Outcome {
        if d > 0.0 {
            Outcome::Win {
                winner: Color::White,
                margin: d,
            }
        } else if d < 0.0 {
            Outcome::Win {
                winner: Color::Black,
                margin: -d,
            }
        } else {
            Outcome::Draw
        }
    }

    pub fn winner(&self) -> Option<Color> {
        match self {
            Outcome::Win { winner, .. } => Some(*winner),
            Outcome::Draw => None,
        }
    }

    /// As SGF's `RE` and GTP's `final_score` write it: `B+3.5`, `W+0.5`, `0` for a draw.
    pub fn sgf(&self) -> String {
        match self {
            Outcome::Draw => "0".to_string(),
            win => win.to_string(),
        }
    }
}

impl fmt::Display for Outcome {
    /// SGF-style: `B+3.5`, `W+0.5`, `Draw`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Win { winner, margin } => write!(f, "{}+{}", winner.letter(), margin),
            Outcome::Draw => f.write_str("Draw"),
        }
    }
}

/// A scored position: the breakdown and the result.
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Debug, Clone, PartialEq)]
pub struct Score {
    pub method: ScoringRule,
    /// Black's points (area with split neutral points, or territory plus prisoners).
    pub black: f64,
    /// White's points before komi and handicap compensation.
    pub white: f64,
    /// Komi plus handicap compensation, added to White.
    pub white_bonus: f64,
    pub white_minus_black: f64,
    pub outcome: Outcome,
}

/// Invalid dead-stone list.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScoreError {
    #[error("dead stone {0} is off the board")]
    OffBoard(Point),
    #[error("point {0} holds no stone and cannot be marked dead")]
    NoStone(Point),
}

/// The board with the given dead stones removed. Marking one stone of a chain marks the
/// whole chain.
pub fn remove_dead(board: &Board, dead: &[Point]) -> Result<(Board, [u32; 2]), ScoreError> {
    let mut b = board.clone();
    let mut removed = [0u32; 2];
    for &p in dead {
        if !board.contains(p) {
            return Err(ScoreError::OffBoard(p));
        }
        let Some(c) = board.get(p) else {
            return Err(ScoreError::NoStone(p));
        };
        for q in board.chain_points(p) {
            if b.get(q).is_some() {
                b.set_raw(q, None);
                removed[c.index()] += 1;
            }
        }
    }
    b.rebuild();
    Ok((b, removed))
}

/// Labels every empty region by the colours it reaches: bit 1 Black, bit 2 White.
/// Returns, per padded index, the reach mask of the region holding that empty point.
pub(crate) fn region_reach(board: &Board) -> Vec<u8> {
    let n = board.cell_count();
    let mut reach = vec![0u8; n];
    let mut seen = vec![false; n];
    let mut stack = Vec::new();
    let mut region = Vec::new();
    for start in board.indices() {
        if board.cell(start) != EMPTY || seen[start] {
            continue;
        }
        let mut mask = 0u8;
        region.clear();
        stack.push(start);
        seen[start] = true;
        while let Some(i) = stack.pop() {
            region.push(i);
            for nb in board.neighbors(i) {
                match board.cell(nb) {
                    EMPTY if !seen[nb] => {
                        seen[nb] = true;
                        stack.push(nb);
                    }
                    BLACK => mask |= 1,
                    WHITE => mask |= 2,
                    _ => {}
                }
            }
        }
        for &i in &region {
            reach[i] = mask;
        }
    }
    reach
}

/// Area count of `board` as it stands (every stone alive).
pub fn area(board: &Board) -> AreaCount {
    let reach = region_reach(board);
    let mut a = AreaCount {
        black: 0,
        white: 0,
        neutral: 0,
    };
    for i in board.indices() {
        match board.cell(i) {
            BLACK => a.black += 1,
            WHITE => a.white += 1,
            EMPTY => match reach[i] {
                1 => a.black += 1,
                2 => a.white += 1,
                _ => a.neutral += 1,
            },
            BORDER => unreachable!("indices are on the board"),
            _ => {}
        }
    }
    a
}

/// The area owner of every point, row by row from the top: the stone's colour, or for an
/// empty point the only colour its region reaches (`None`: neutral). Every stone alive.
pub fn owners(board: &Board) -> Vec<Option<Color>> {
    let reach = region_reach(board);
    board
        .indices()
        .map(|i| match board.cell(i) {
            BLACK => Some(Color::Black),
            WHITE => Some(Color::White),
            _ => match reach[i] {
                1 => Some(Color::Black),
                2 => Some(Color::White),
                _ => None,
            },
        })
        .collect()
}

/// Area count after removing `dead` stones (R8).
pub fn area_with_dead(board: &Board, dead: &[Point]) -> Result<AreaCount, ScoreError> {
    Ok(area(&remove_dead(board, dead)?.0))
}

/// The area owner of every point (as [`owners`]) after removing `dead` stones.
pub fn owners_with_dead(board: &Board, dead: &[Point]) -> Result<Vec<Option<Color>>, ScoreError> {
    Ok(owners(&remove_dead(board, dead)?.0))
}

/// Territory count (R10): `captures` are the stones each side captured in play
/// (`[by black, by white]`); dead stones become the opponent's prisoners. Points listed in
/// `seki` (eyes of groups in seki, marked by the players) count for nobody; so do regions
/// reaching both colours.
pub fn territory(
    board: &Board,
    dead: &[Point],
    captures: [u32; 2],
    seki: &[Point],
) -> Result<TerritoryCount, ScoreError> {
    let (b, removed) = remove_dead(board, dead)?;
    let reach = region_reach(&b);
    let mut t = TerritoryCount {
        black_territory: 0,
        white_territory: 0,
        black_prisoners: captures[0] + removed[1],
        white_prisoners: captures[1] + removed[0],
    };
    for i in b.indices() {
        if b.cell(i) != EMPTY || seki.contains(&b.point(i)) {
            continue;
        }
        match reach[i] {
            1 => t.black_territory += 1,
            2 => t.white_territory += 1,
            _ => {}
        }
    }
    Ok(t)
}

/// Tromp-Taylor count: `[black, white]`, every stone alive, neutral points for nobody.
pub fn tromp_taylor(board: &Board) -> [u32; 2] {
    let a = area(board);
    [a.black, a.white]
}

/// Builds a [`Score`] from both sides' points and White's bonus.
pub fn make_score(method: ScoringRule, black: f64, white: f64, white_bonus: f64) -> Score {
    let d = white + white_bonus - black;
    Score {
        method,
        black,
        white,
        white_bonus,
        white_minus_black: d,
        outcome: Outcome::from_white_minus_black(d),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn area_plus_neutral_is_board_size_r8() {
        let b = Board::from_rows(&["x.o..", "x.o..", "xxo.x", ".xoo.", "xxxo."]).unwrap();
        let a = area(&b);
        assert_eq!(a.black + a.white + a.neutral, 25);
        assert_eq!(a.black_points() + a.white_points(), 25.0);
    }

    #[test]
    fn dead_stones_go_to_the_surrounding_side() {
        let b = Board::from_rows(&[".....", ".xxx.", ".xo..", ".xxx.", "....."]).unwrap();
        assert_eq!(
            area(&b),
            AreaCount {
                black: 7,
                white: 1,
                neutral: 17
            }
        );
        let a = area_with_dead(&b, &[Point::new(2, 2)]).unwrap();
        assert_eq!(
            a,
            AreaCount {
                black: 25,
                white: 0,
                neutral: 0
            }
        );
        assert!(area_with_dead(&b, &[Point::new(0, 0)]).is_err());
        let t = territory(&b, &[Point::new(2, 2)], [0, 0], &[]).unwrap();
        assert_eq!(t.black_territory, 18);
        assert_eq!(t.black_prisoners, 1);
    }

    #[test]
    fn result_strings() {
        assert_eq!(Outcome::from_white_minus_black(0.5).to_string(), "W+0.5");
        assert_eq!(Outcome::from_white_minus_black(-3.0).to_string(), "B+3");
        assert_eq!(Outcome::from_white_minus_black(0.0).to_string(), "Draw");
    }
}
