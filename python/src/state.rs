//! `State`: one game under the rules engine (positional superko by default, as the
//! rules preset says), with numpy views of the board, the legal moves and the features.

use numpy::{PyArray1, PyArray2, PyArray3, PyArrayMethods};
use pyo3::prelude::*;
use weiqi_rules::sgf::GameRecord;
use weiqi_rules::{Color, Move, Point, Preset, Rules};

use crate::errors::{IllegalMoveError, value};

/// A game of Go. Actions are move indices: `y * size + x` for a point (rows from the top),
/// `size * size` for a pass.
#[pyclass(module = "weiqi")]
#[derive(Clone)]
pub struct State {
    pub(crate) inner: weiqi_rules::State,
}

/// The rules a preset names, with `komi`.
pub(crate) fn rules(name: &str, komi: f64) -> PyResult<Rules> {
    let preset: Preset = name.parse().map_err(value)?;
    let mut r = preset.rules();
    r.komi = komi;
    Ok(r)
}

/// The move an action names on a board `width` wide and `height` high (square but for
/// rule cases on strips), or IllegalMoveError naming it.
pub(crate) fn action_move(action: i64, width: u8, height: u8) -> PyResult<Move> {
    weiqi_selfplay::index_move(action, width, height).ok_or_else(|| {
        IllegalMoveError::new_err(format!(
            "action {action} is off the board (0..={})",
            width as i64 * height as i64
        ))
    })
}

/// A move's action on a board `width` wide and `height` high.
pub(crate) fn move_action(m: Move, width: u8, height: u8) -> i64 {
    match m {
        Move::Place(p) => p.y as i64 * width as i64 + p.x as i64,
        Move::Pass => width as i64 * height as i64,
    }
}

impl State {
    fn width(&self) -> u8 {
        self.inner.board().width()
    }

    fn height(&self) -> u8 {
        self.inner.board().height()
    }

    fn to_move(&self, action: i64) -> PyResult<Move> {
        action_move(action, self.width(), self.height())
    }

    fn to_action(&self, m: Move) -> i64 {
        move_action(m, self.width(), self.height())
    }
}

#[pymethods]
impl State {
    /// A new game: `size` 2..=25, `komi`, and a rules preset (`chinese`, `tromp-taylor`,
    /// `japanese`, ...).
    #[new]
    #[pyo3(signature = (size = 19, komi = 7.5, rules = "chinese"))]
    fn new(size: u8, komi: f64, rules: &str) -> PyResult<State> {
        let r = self::rules(rules, komi)?;
        let inner = weiqi_rules::State::new(size, r).map_err(value)?;
        Ok(State { inner })
    }

    /// A position from rows (top first; `x` Black, `o` White, `.` empty) with `to_play`
    /// (0 Black, 1 White) to move: the start of a rule case or a problem.
    #[staticmethod]
    #[pyo3(signature = (rows, to_play = 0, komi = 7.5, rules = "chinese"))]
    fn from_rows(rows: Vec<String>, to_play: u8, komi: f64, rules: &str) -> PyResult<State> {
        let board = weiqi_rules::Board::from_rows(&rows).map_err(value)?;
        let first = if to_play == 0 { Color::Black } else { Color::White };
        Ok(State {
            inner: weiqi_rules::State::from_board(board, first, self::rules(rules, komi)?),
        })
    }

    /// SGF replayed up to its first illegal move, if any: `(state, None)` or `(state
    /// before it, (move number from 1, reason))`. `komi` and `rules` override the record's
    /// (the komi then the record's, else the rules preset's).
    #[staticmethod]
    #[pyo3(signature = (text, komi = None, rules = None))]
    fn replay_sgf(text: &str, komi: Option<f64>, rules: Option<&str>) -> PyResult<(State, Option<(usize, String)>)> {
        let record = GameRecord::parse(text).map_err(value)?;
        let mut r = match rules {
            Some(name) => name.parse::<Preset>().map_err(value)?.rules(),
            None => record.named_rules().unwrap_or_else(|| Preset::Chinese.rules()),
        };
        if let Some(k) = komi.or(record.komi) {
            r.komi = k;
        }
        let replay = record.replay(r).map_err(value)?;
        let illegal = replay.first_illegal.map(|(n, _, why)| (n, why.code().to_string()));
        Ok((State { inner: replay.state }, illegal))
    }

    /// A game from SGF (its moves replayed through the rules; an illegal one is refused).
    #[staticmethod]
    fn from_sgf(text: &str) -> PyResult<State> {
        let record = GameRecord::parse(text).map_err(value)?;
        let mut r = record.named_rules().unwrap_or_else(|| Preset::Chinese.rules());
        if let Some(k) = record.komi {
            r.komi = k;
        }
        let replay = record.replay(r).map_err(value)?;
        if let Some((n, m, why)) = replay.first_illegal {
            return Err(IllegalMoveError::new_err(format!("move {n} ({m:?}) is illegal: {why}")));
        }
        Ok(State { inner: replay.state })
    }

    /// The game as SGF FF[4].
    fn to_sgf(&self) -> String {
        GameRecord::from_state(&self.inner).to_sgf()
    }

    #[getter]
    fn size(&self) -> u8 {
        self.width()
    }

    #[getter]
    fn komi(&self) -> f64 {
        self.inner.rules().komi
    }

    /// 0 when Black is to play, 1 when White is.
    #[getter]
    fn to_play(&self) -> u8 {
        (self.inner.to_move() == Color::White) as u8
    }

    /// Moves played so far, passes included.
    #[getter]
    fn move_number(&self) -> usize {
        self.inner.move_number()
    }

    /// Two passes in a row ended the game.
    #[getter]
    fn is_over(&self) -> bool {
        self.inner.is_over()
    }

    /// The moves played, as actions.
    #[getter]
    fn moves(&self) -> Vec<i64> {
        self.inner.moves().iter().map(|&(_, m)| self.to_action(m)).collect()
    }

    /// Plays `action` for the player to move; IllegalMoveError if the rules refuse it.
    fn play(&mut self, action: i64) -> PyResult<()> {
        let m = self.to_move(action)?;
        self.inner
            .play(m)
            .map(|_| ())
            .map_err(|why| IllegalMoveError::new_err(format!("action {action}: {why}")))
    }

    /// Why the rules refuse `action` for the player to move (`occupied`, `suicide`, `ko`,
    /// `superko`), or None when it is legal.
    fn illegal_reason(&self, action: i64) -> PyResult<Option<String>> {
        let m = self.to_move(action)?;
        Ok(self.inner.check(m).err().map(|why| why.code().to_string()))
    }

    /// Liberties of the chain at `action` (0 on an empty point).
    fn liberties(&self, action: i64) -> PyResult<usize> {
        match self.to_move(action)? {
            Move::Place(p) if self.inner.board().get(p).is_some() => Ok(self.inner.board().liberties(p)),
            _ => Ok(0),
        }
    }

    /// Liberties the chain would have after `color` (0 Black, 1 White) plays `action`;
    /// None where it cannot.
    fn liberties_after(&self, action: i64, color: u8) -> PyResult<Option<usize>> {
        let c = if color == 0 { Color::Black } else { Color::White };
        match self.to_move(action)? {
            Move::Place(p) => Ok(self.inner.liberties_after(p, c)),
            Move::Pass => Ok(None),
        }
    }

    /// Stones that are dead whatever is played (Benson's pass-alive analysis), as actions.
    fn unconditionally_dead(&self) -> Vec<i64> {
        weiqi_rules::benson::unconditionally_dead(self.inner.board())
            .into_iter()
            .map(|p| self.to_action(Move::Place(p)))
            .collect()
    }

    /// Stones captured so far by Black and by White.
    #[getter]
    fn captures(&self) -> (u32, u32) {
        (self.inner.captures(Color::Black), self.inner.captures(Color::White))
    }

    /// The board as rows (top first): `x` Black, `o` White, `.` empty.
    fn rows(&self) -> Vec<String> {
        self.inner.board().rows()
    }

    fn is_legal(&self, action: i64) -> bool {
        self.to_move(action)
            .is_ok_and(|m| !self.inner.is_over() && self.inner.is_legal(m))
    }

    /// Takes back the last move; returns it, or None at the start.
    fn undo(&mut self) -> Option<i64> {
        self.inner.undo().map(|(_, m)| self.to_action(m))
    }

    /// 1 for each legal action (uint8, size*size+1; the pass last), all 0 once over.
    fn legal_mask<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u8>> {
        let mut mask = vec![0u8; self.width() as usize * self.height() as usize + 1];
        self.inner.write_legal(&mut mask);
        PyArray1::from_vec(py, mask)
    }

    /// The legal actions, in order (int64).
    fn legal_actions<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        let actions: Vec<i64> = self
            .inner
            .legal_moves()
            .into_iter()
            .map(|m| self.to_action(m))
            .collect();
        PyArray1::from_vec(py, actions)
    }

    /// The board (int8, size x size, rows from the top): 1 Black, -1 White, 0 empty.
    fn board<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<i8>>> {
        let mut cells = Vec::new();
        self.inner.board().write_cells(&mut cells);
        let signed: Vec<i8> = cells.iter().map(|&c| [0, 1, -1][c as usize]).collect();
        PyArray1::from_vec(py, signed).reshape([self.height() as usize, self.width() as usize])
    }

    /// The feature planes of the position (uint8): `planes` layout `[17, N, N]` (the
    /// shards' and the trainer's) or `channels_last` `[N, N, 17]` (PettingZoo's go_v5).
    #[pyo3(signature = (layout = "planes"))]
    fn observation<'py>(&self, py: Python<'py>, layout: &str) -> PyResult<Bound<'py, PyArray3<u8>>> {
        if self.width() != self.height() {
            return Err(value("observations are of square boards"));
        }
        let n = self.width() as usize;
        let layout = crate::envs::layout(layout)?;
        let obs = crate::envs::observe(&self.inner, layout);
        let shape = match layout {
            weiqi_selfplay::env::Layout::Planes => [weiqi_selfplay::PLANES, n, n],
            weiqi_selfplay::env::Layout::ChannelsLast => [n, n, weiqi_selfplay::PLANES],
        };
        PyArray1::from_vec(py, obs).reshape(shape)
    }

    /// The count by area with `dead` (actions) removed, komi included: White minus Black.
    #[pyo3(signature = (dead = None))]
    fn score(&self, dead: Option<Vec<i64>>) -> PyResult<f64> {
        let dead = dead
            .unwrap_or_default()
            .into_iter()
            .map(|a| match self.to_move(a)? {
                Move::Place(p) => Ok(p),
                Move::Pass => Err(value("a pass is not a stone")),
            })
            .collect::<PyResult<Vec<Point>>>()?;
        Ok(self.inner.area_score(&dead).map_err(value)?.white_minus_black)
    }

    /// The result as SGF writes it ("B+3.5", "W+0.5", "0") with every stone alive.
    fn result(&self) -> PyResult<String> {
        Ok(self.inner.area_score(&[]).map_err(value)?.outcome.sgf())
    }

    /// The engine's estimate of the position: each point's ownership (float32, size x
    /// size, +1 Black's .. -1 White's), the stones that look dead (actions), and White
    /// minus Black with them removed.
    fn estimate<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyArray2<f32>>, Vec<i64>, f64)> {
        let e = py
            .detach(|| weiqi_rules::estimate::estimate(&self.inner))
            .map_err(value)?;
        let dead = e.dead.iter().map(|&p| self.to_action(Move::Place(p))).collect();
        Ok((
            PyArray1::from_vec(py, e.ownership).reshape([self.height() as usize, self.width() as usize])?,
            dead,
            e.score.white_minus_black,
        ))
    }

    /// A move drawn by a playout policy (`uniform`, `light`: never filling its own eye, or
    /// `heavy`: answering the last move, as the tree search's playouts do), seeded.
    #[pyo3(signature = (policy = "light", seed = 0))]
    fn random_action(&self, policy: &str, seed: u64) -> PyResult<i64> {
        let policy: weiqi_rules::Policy = policy.parse().map_err(value)?;
        let mut rng = <rand::rngs::SmallRng as rand::SeedableRng>::seed_from_u64(seed);
        let m = self.inner.clone().choose_random(policy, &mut rng);
        Ok(self.to_action(m))
    }

    fn copy(&self) -> State {
        self.clone()
    }

    fn __copy__(&self) -> State {
        self.clone()
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> State {
        self.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "State(size={}, move_number={}, to_play={})\n{}",
            self.width(),
            self.inner.move_number(),
            if self.inner.to_move() == Color::Black {
                "black"
            } else {
                "white"
            },
            self.inner.board().rows().join("\n")
        )
    }
}
