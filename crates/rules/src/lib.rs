//! # weiqi-rules
//!
//! A pure, exact rules engine for Go (weiqi, baduk) under the Chinese rules and the other
//! common rule sets. No IO, no clocks, no async: everything is a function of its inputs.
//!
//! - [`Board`]: stones, chains and liberties, incremental 128-bit Zobrist hash.
//! - [`State`]: a game position with history: turns, simple ko, positional or situational
//!   superko (exact, confirmed on every hash hit), passes, undo, legal moves.
//! - [`Rules`] and [`Preset`]: suicide, ko rule, scoring method, komi, handicap bonus.
//! - [`score`]: area (R8), territory (R10) and Tromp-Taylor counting; [`benson`]:
//!   pass-alive chains and territory.
//! - [`sgf`]: reading and writing SGF FF[4] records (R11).
//! - [`Policy`] random playouts and [`perft`] counts.
//!
//! Requirement numbers (R1..R11) refer to `shared/spec/rules.md`.
//!
//! ```
//! use weiqi_rules::{Move, Point, Rules, State, Illegal};
//! let mut game = State::new(9, Rules::default()).unwrap();
//! game.play(Move::Place(Point::new(4, 4))).unwrap();
//! assert_eq!(game.play(Move::Place(Point::new(4, 4))), Err(Illegal::Occupied));
//! ```

pub mod benson;
mod board;
mod color;
mod coord;
mod dead;
pub mod estimate;
mod handicap;
mod perft;
mod playout;
pub mod rng;
mod rules;
pub mod score;
mod seki;
pub mod sgf;
mod shape;
mod state;
mod symmetry;
mod zobrist;

pub use board::{BadSize, Board, text_rows};
pub use color::Color;
pub use coord::{MAX_SIZE, MIN_SIZE, Move, Point};
pub use dead::{DEFAULT_DEAD_PLAYOUTS, DEFAULT_DEAD_RACE, DEFAULT_DEAD_THRESHOLD, DeadEstimate, estimate_dead};
pub use handicap::{HandicapError, fixed_handicap, max_fixed_handicap, star_points};
pub use perft::perft;
pub use playout::{BadKoCheck, KoCheck, LastMoveDistances, MoveHints, Playout, PlayoutOptions, Policy, move_cap};
pub use rules::{HandicapBonus, KoRule, Preset, Rules, RulesError, ScoringRule};
pub use score::{AreaCount, Outcome, Score, ScoreError, TerritoryCount};
pub use seki::seki_stones;
pub use shape::ShapeKey;
pub use state::{Illegal, PackedState, Played, State};
pub use symmetry::Symmetry;

impl State {
    /// Komi plus handicap compensation: what White adds to its count (R9).
    pub fn white_bonus(&self) -> f64 {
        self.rules().komi + self.rules().handicap_bonus.points(self.handicap())
    }

    /// Area score (R8) with `dead` stones removed, komi and handicap compensation included.
    pub fn area_score(&self, dead: &[Point]) -> Result<Score, ScoreError> {
        let a = score::area_with_dead(self.board(), dead)?;
        Ok(score::make_score(
            ScoringRule::Area,
            a.black_points(),
            a.white_points(),
            self.white_bonus(),
        ))
    }

    /// Territory score (R10): territory plus prisoners; `seki` points count for nobody.
    pub fn territory_score(&self, dead: &[Point], seki: &[Point]) -> Result<Score, ScoreError> {
        let caps = [self.captures(Color::Black), self.captures(Color::White)];
        let t = score::territory(self.board(), dead, caps, seki)?;
        Ok(score::make_score(
            ScoringRule::Territory,
            t.black_points(),
            t.white_points(),
            self.white_bonus(),
        ))
    }

    /// Score by the rule set's own method.
    pub fn score(&self, dead: &[Point]) -> Result<Score, ScoreError> {
        match self.rules().scoring {
            ScoringRule::Area => self.area_score(dead),
            ScoringRule::Territory => self.territory_score(dead, &[]),
        }
    }

    /// Tromp-Taylor result: area with every stone alive, plus komi and compensation.
    pub fn tromp_taylor_score(&self) -> Score {
        let [b, w] = score::tromp_taylor(self.board());
        score::make_score(ScoringRule::Area, b as f64, w as f64, self.white_bonus())
    }

    /// The position under a symmetry (square boards for the transposing ones): the same
    /// moves mapped, replayed from the mapped start position.
    pub fn transformed(&self, sym: Symmetry) -> State {
        let b = self.initial_board();
        let (w, h) = (b.width(), b.height());
        let mut start =
            Board::rect(if sym.transpose { h } else { w }, if sym.transpose { w } else { h }).expect("same size");
        for p in b.points() {
            if let Some(c) = b.get(p) {
                start.set_raw(sym.apply(p, w, h), Some(c));
            }
        }
        start.rebuild();
        let mut s = State::from_board(start, self.initial_to_move(), *self.rules());
        s.set_handicap(self.handicap());
        for &(c, m) in self.moves() {
            s.play_color(c, sym.apply_move(m, w, h))
                .expect("symmetric moves stay legal");
        }
        s
    }
}
