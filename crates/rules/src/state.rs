//! A game in progress: board, player to move, history, ko and superko, passes, undo.
//!
//! Superko is exact over the whole game, start position and setup stones included. Every
//! position's 128-bit Zobrist key goes into a hash set; a hit is confirmed by rebuilding the
//! earlier position and comparing stones, so a hash collision can never make a legal move
//! illegal. Immediate single-stone recaptures are caught first by the simple-ko point, which
//! is exact by construction and keeps the common case free of any replay.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use crate::board::{BadSize, Board, BoardIllegal, EMPTY, Probe, stone};
use crate::color::Color;
use crate::coord::{Move, Point};
use crate::rules::{KoRule, Rules};
use crate::zobrist::WHITE_TO_MOVE;

mod packed;
pub use packed::PackedState;

/// Why a move is refused. Every illegal move gets exactly one of these.
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum Illegal {
    #[error("the point is occupied")]
    Occupied,
    #[error("suicide is not allowed (R5)")]
    Suicide,
    #[error("immediate ko recapture (R6)")]
    Ko,
    #[error("the move repeats an earlier position (superko, R6)")]
    Superko,
    #[error("the point is off the board")]
    OffBoard,
    #[error("the game is over")]
    GameOver,
    #[error("it is not this player's turn")]
    NotYourTurn,
}

impl Illegal {
    /// Stable machine-readable name (`occupied`, `suicide`, `ko`, `superko`, `off_board`,
    /// `game_over`, `not_your_turn`).
    pub fn code(self) -> &'static str {
        match self {
            Illegal::Occupied => "occupied",
            Illegal::Suicide => "suicide",
            Illegal::Ko => "ko",
            Illegal::Superko => "superko",
            Illegal::OffBoard => "off_board",
            Illegal::GameOver => "game_over",
            Illegal::NotYourTurn => "not_your_turn",
        }
    }
}

/// Keys are already uniformly random: use their low bits as the hash.
#[derive(Default)]
pub(crate) struct KeyHasher(u64);
impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes.iter().take(8) {
            self.0 = (self.0 << 8) | b as u64;
        }
    }
    fn write_u128(&mut self, k: u128) {
        self.0 = k as u64;
    }
}
type KeySet = HashSet<u128, BuildHasherDefault<KeyHasher>>;

/// The start position of a state, shared: an empty square board is one allocation per
/// size for the whole process (a server holds thousands of games, each otherwise with its
/// own 23 KB copy of the same empty board).
fn shared_start(board: &Board) -> std::sync::Arc<Board> {
    use std::sync::{Arc, OnceLock};
    static EMPTY: [OnceLock<Arc<Board>>; crate::coord::MAX_SIZE as usize + 1] =
        [const { OnceLock::new() }; crate::coord::MAX_SIZE as usize + 1];
    let (w, h) = (board.width(), board.height());
    if w == h && board.empty_count() == w as usize * h as usize {
        return EMPTY[w as usize].get_or_init(|| Arc::new(board.clone())).clone();
    }
    Arc::new(board.clone())
}

/// What a played move did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Played {
    /// Opposing stones captured by the move.
    pub captures: u32,
    /// Own stones removed by an allowed suicide.
    pub suicided: u32,
}

/// A game position with its full history under a rule set. `clone_from` reuses the
/// target's allocations (search keeps one scratch state and copies the root into it).
pub struct State {
    rules: Rules,
    board: Board,
    to_move: Color,
    /// Shared: it never changes after set-up, and states are cloned often (search, referee).
    initial: std::sync::Arc<Board>,
    initial_to_move: Color,
    moves: Vec<(Color, Move)>,
    /// Repetition key after each ply; `keys[0]` is the start position.
    keys: Vec<u128>,
    seen: KeySet,
    /// Point the player to move may not play on (simple ko), as a padded index.
    ko: Option<usize>,
    passes: u32,
    /// Stones captured by Black and by White (suicides count for the opponent).
    captures: [u32; 2],
    handicap: u32,
    /// Under simple ko: some move recreated an earlier position with the same player to
    /// move (a cycle, C7).
    cycle: bool,
}

impl Clone for State {
    fn clone(&self) -> State {
        State {
            rules: self.rules,
            board: self.board.clone(),
            to_move: self.to_move,
            initial: self.initial.clone(),
            initial_to_move: self.initial_to_move,
            moves: self.moves.clone(),
            keys: self.keys.clone(),
            seen: self.seen.clone(),
            ko: self.ko,
            passes: self.passes,
            captures: self.captures,
            handicap: self.handicap,
            cycle: self.cycle,
        }
    }

    fn clone_from(&mut self, o: &State) {
        self.rules = o.rules;
        self.board.clone_from(&o.board);
        self.to_move = o.to_move;
        self.initial.clone_from(&o.initial);
        self.initial_to_move = o.initial_to_move;
        self.moves.clone_from(&o.moves);
        self.keys.clone_from(&o.keys);
        self.seen.clone_from(&o.seen);
        self.ko = o.ko;
        self.passes = o.passes;
        self.captures = o.captures;
        self.handicap = o.handicap;
        self.cycle = o.cycle;
    }
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:?}to move: {}, moves: {}",
            self.board,
            self.to_move,
            self.moves.len()
        )
    }
}

impl State {
    /// An empty square board, Black to move.
    pub fn new(size: u8, rules: Rules) -> Result<State, BadSize> {
        Ok(State::from_board(Board::new(size)?, Color::Black, rules))
    }

    /// Starts from a given board (setup or handicap stones) with `to_move` to play.
    pub fn from_board(board: Board, to_move: Color, rules: Rules) -> State {
        let mut s = State {
            rules,
            initial: shared_start(&board),
            board,
            to_move,
            initial_to_move: to_move,
            moves: Vec::new(),
            keys: Vec::new(),
            seen: KeySet::default(),
            ko: None,
            passes: 0,
            captures: [0; 2],
            handicap: 0,
            cycle: false,
        };
        let k = s.key_of(s.board.hash(), to_move);
        s.keys.push(k);
        s.seen.insert(k);
        s
    }

    /// A handicap game: `stones` black stones on the standard points (R9), White to move.
    /// 0 or 1 stone means an even game with Black to move ("taking Black" when komi is 0).
    pub fn with_handicap(size: u8, stones: u32, rules: Rules) -> Result<State, crate::HandicapError> {
        let points = crate::handicap::fixed_handicap(size, stones)?;
        State::with_free_handicap(size, &points, rules)
    }

    /// A handicap game with freely placed stones (R9 option).
    pub fn with_free_handicap(size: u8, points: &[Point], rules: Rules) -> Result<State, crate::HandicapError> {
        let mut board = Board::new(size).map_err(|_| crate::HandicapError::BadSize(size))?;
        for (k, &p) in points.iter().enumerate() {
            if !board.contains(p) || board.get(p).is_some() || points[..k].contains(&p) {
                return Err(crate::HandicapError::BadPoint(p));
            }
            board.set_raw(p, Some(Color::Black));
        }
        board.rebuild();
        let to_move = if points.len() >= 2 { Color::White } else { Color::Black };
        let mut s = State::from_board(board, to_move, rules);
        s.handicap = if points.len() >= 2 { points.len() as u32 } else { 0 };
        Ok(s)
    }

    pub fn rules(&self) -> &Rules {
        &self.rules
    }
    /// Changes komi (it does not affect legality).
    pub fn set_komi(&mut self, komi: f64) {
        self.rules.komi = komi;
    }
    pub fn board(&self) -> &Board {
        &self.board
    }
    pub fn initial_board(&self) -> &Board {
        &self.initial
    }
    pub fn initial_to_move(&self) -> Color {
        self.initial_to_move
    }
    pub fn to_move(&self) -> Color {
        self.to_move
    }
    /// Moves played so far (passes included), with who played them.
    pub fn moves(&self) -> &[(Color, Move)] {
        &self.moves
    }
    /// Number of plies played (passes included).
    pub fn move_number(&self) -> usize {
        self.moves.len()
    }
    /// Handicap stones placed at the start (0 for an even game).
    pub fn handicap(&self) -> u32 {
        self.handicap
    }
    /// Records a handicap count for scoring (e.g. from SGF `HA` with setup stones).
    pub fn set_handicap(&mut self, stones: u32) {
        self.handicap = stones;
    }
    /// Stones captured by `c` so far (prisoners held by `c`).
    pub fn captures(&self, c: Color) -> u32 {
        self.captures[c.index()]
    }
    /// Consecutive passes at the end of the move list.
    pub fn consecutive_passes(&self) -> u32 {
        self.passes
    }
    /// Play has ended by two consecutive passes (R7a).
    pub fn is_over(&self) -> bool {
        self.passes >= 2
    }
    /// Under simple ko, whether some move recreated an earlier position with the same
    /// player to move: the game is in a cycle (triple ko and the like, C7).
    pub fn cycle_detected(&self) -> bool {
        self.cycle
    }
    /// Resumes play after two passes (a dispute settled by play, C6): the pass count resets.
    pub fn resume(&mut self) {
        self.passes = 0;
    }
    /// The point banned by simple ko for the player to move, if any.
    pub fn ko_point(&self) -> Option<Point> {
        self.ko.map(|i| self.board.point(i))
    }
    /// The simple-ko point as a padded index.
    pub(crate) fn ko_index(&self) -> Option<usize> {
        self.ko
    }
    /// Repetition key of the current position (what superko compares).
    pub fn key(&self) -> u128 {
        *self.keys.last().expect("start key")
    }

    #[inline]
    fn key_of(&self, board_hash: u128, to_move: Color) -> u128 {
        match self.rules.ko {
            KoRule::Positional => board_hash,
            KoRule::Situational | KoRule::Simple => {
                if to_move == Color::White {
                    board_hash ^ WHITE_TO_MOVE
                } else {
                    board_hash
                }
            }
        }
    }

    /// Checks a placement by the player to move at padded index `i`; returns the probe.
    #[inline]
    pub(crate) fn check_index(&self, i: usize) -> Result<Probe, Illegal> {
        let c = stone(self.to_move);
        let probe = self
            .board
            .probe(i, c, self.rules.suicide_allowed)
            .map_err(|e| match e {
                BoardIllegal::Occupied => Illegal::Occupied,
                BoardIllegal::Suicide => Illegal::Suicide,
            })?;
        if self.ko == Some(i) {
            return Err(Illegal::Ko);
        }
        if self.rules.ko != KoRule::Simple {
            let key = self.key_of(probe.hash, self.to_move.opponent());
            if self.seen.contains(&key) && self.confirm_repeat(i, key) {
                return Err(Illegal::Superko);
            }
        }
        Ok(probe)
    }

    /// A key hit: rebuild each earlier position with that key and compare stones.
    #[cold]
    fn confirm_repeat(&self, i: usize, key: u128) -> bool {
        let mut after = self.board.clone();
        after.place(i, stone(self.to_move));
        let next = self.to_move.opponent();
        self.keys
            .iter()
            .enumerate()
            .filter(|&(_, &k)| k == key)
            .any(|(ply, _)| {
                let (b, to_move) = self.replayed(ply);
                b == after && (self.rules.ko == KoRule::Positional || to_move == next)
            })
    }

    /// The board and player to move after the first `ply` moves.
    fn replayed(&self, ply: usize) -> (Board, Color) {
        let mut b = (*self.initial).clone();
        for &(c, m) in &self.moves[..ply] {
            if let Move::Place(p) = m {
                let i = b.index(p);
                b.place(i, stone(c));
            }
        }
        let to_move = match self.moves.get(ply) {
            Some(&(c, _)) => c,
            None => self.to_move,
        };
        (b, to_move)
    }

    /// Whether the player to move may play `m`, and if not, why.
    pub fn check(&self, m: Move) -> Result<(), Illegal> {
        self.check_captures(m).map(|_| ())
    }

    /// Like [`State::check`], returning how many stones the move would capture.
    pub fn check_captures(&self, m: Move) -> Result<u32, Illegal> {
        if self.is_over() {
            return Err(Illegal::GameOver);
        }
        match m {
            Move::Pass => Ok(0),
            Move::Place(p) => {
                if !self.board.contains(p) {
                    return Err(Illegal::OffBoard);
                }
                self.check_index(self.board.index(p)).map(|probe| probe.captures)
            }
        }
    }

    /// Whether the player to move may play `m`.
    pub fn is_legal(&self, m: Move) -> bool {
        self.check(m).is_ok()
    }

    /// Plays `m` for the player to move, or says why it is illegal (nothing changes then).
    pub fn play(&mut self, m: Move) -> Result<Played, Illegal> {
        if self.is_over() {
            return Err(Illegal::GameOver);
        }
        match m {
            Move::Pass => {
                self.pass();
                Ok(Played {
                    captures: 0,
                    suicided: 0,
                })
            }
            Move::Place(p) => {
                if !self.board.contains(p) {
                    return Err(Illegal::OffBoard);
                }
                let i = self.board.index(p);
                self.check_index(i)?;
                Ok(self.place_unchecked(i))
            }
        }
    }

    /// Plays `m` for colour `c`; refuses with `NotYourTurn` when `c` is not to move.
    pub fn play_as(&mut self, c: Color, m: Move) -> Result<Played, Illegal> {
        if self.is_over() {
            return Err(Illegal::GameOver);
        }
        if c != self.to_move {
            return Err(Illegal::NotYourTurn);
        }
        self.play(m)
    }

    /// Reserves room for `plies` more moves, so a long playout does not reallocate.
    pub fn reserve(&mut self, plies: usize) {
        self.moves.reserve(plies);
        self.keys.reserve(plies);
        self.seen.reserve(plies);
    }

    /// Plays `m` for colour `c` even out of turn, as an SGF node may (two moves of one
    /// colour in a row). The ko ban belongs to the player to move, so it lapses on a switch.
    pub fn play_color(&mut self, c: Color, m: Move) -> Result<Played, Illegal> {
        if self.is_over() {
            return Err(Illegal::GameOver);
        }
        let saved = (self.to_move, self.ko);
        self.switch_to(c);
        let r = self.play(m);
        if r.is_err() {
            (self.to_move, self.ko) = saved;
        }
        r
    }

    fn switch_to(&mut self, c: Color) {
        if self.to_move != c {
            self.to_move = c;
            self.ko = None;
        }
    }

    /// Passes for the player to move (always legal while play is on, R2).
    pub fn pass(&mut self) {
        self.moves.push((self.to_move, Move::Pass));
        self.to_move = self.to_move.opponent();
        self.ko = None;
        self.passes += 1;
        let k = self.key_of(self.board.hash(), self.to_move);
        self.record_key(k);
    }

    fn record_key(&mut self, k: u128) {
        self.keys.push(k);
        if !self.seen.insert(k) && self.rules.ko == KoRule::Simple {
            // Only a placement can start a cycle: a pass never violates superko.
            if !matches!(self.moves.last(), Some((_, Move::Pass))) {
                self.cycle = true;
            }
        }
    }

    /// Places a stone for the player to move at padded index `i`, already checked legal.
    pub(crate) fn place_unchecked(&mut self, i: usize) -> Played {
        let me = self.to_move;
        let c = stone(me);
        let opp = c ^ 3;
        // Remember which neighbours hold opposing stones to locate a single capture (ko).
        let nb = self.board.neighbors(i);
        let was_opp = nb.map(|n| self.board.cell(n) == opp);
        let removed = self.board.place(i, c);
        let captures = removed[opp as usize - 1];
        let suicided = removed[c as usize - 1];
        self.captures[me.index()] += captures;
        self.captures[me.opponent().index()] += suicided;
        self.ko = None;
        if captures == 1 && suicided == 0 {
            // A lone stone that captured one stone and has that point as its only liberty
            // may not be recaptured at once.
            let mut lone = true;
            let mut libs = 0;
            let mut lib = 0;
            for (k, &n) in nb.iter().enumerate() {
                match self.board.cell(n) {
                    EMPTY => {
                        libs += 1;
                        lib = k;
                    }
                    v if v == c => lone = false,
                    _ => {}
                }
            }
            if lone && libs == 1 && was_opp[lib] {
                self.ko = Some(nb[lib]);
            }
        }
        self.moves.push((me, Move::Place(self.board.point(i))));
        self.to_move = me.opponent();
        self.passes = 0;
        let k = self.key_of(self.board.hash(), self.to_move);
        self.record_key(k);
        Played { captures, suicided }
    }

    /// Takes back the last move (pass or placement). Returns it, or `None` at the start.
    pub fn undo(&mut self) -> Option<(Color, Move)> {
        let last = *self.moves.last()?;
        let moves = self.moves[..self.moves.len() - 1].to_vec();
        let mut fresh = State::from_board((*self.initial).clone(), self.initial_to_move, self.rules);
        fresh.handicap = self.handicap;
        for (c, m) in moves {
            fresh.switch_to(c);
            match m {
                Move::Pass => fresh.pass(),
                Move::Place(p) => {
                    let i = fresh.board.index(p);
                    fresh.place_unchecked(i);
                }
            }
        }
        fresh.cycle = self.cycle && fresh.cycle;
        *self = fresh;
        Some(last)
    }

    /// Every legal move for the player to move, pass included (last), points row by row.
    pub fn legal_moves(&self) -> Vec<Move> {
        if self.is_over() {
            return Vec::new();
        }
        let mut out: Vec<Move> = self
            .board
            .indices()
            .filter(|&i| self.board.cell(i) == EMPTY && self.check_index(i).is_ok())
            .map(|i| Move::Place(self.board.point(i)))
            .collect();
        out.push(Move::Pass);
        out
    }

    /// Marks the legal moves for the player to move in `mask` (`width * height + 1` long,
    /// cleared first): a point at `y * width + x`, the pass last; all 0 once the game is
    /// over. The batched environments' action mask, without an allocation.
    pub fn write_legal(&self, mask: &mut [u8]) {
        mask.fill(0);
        if self.is_over() {
            return;
        }
        let w = self.board.width() as usize;
        for &i in self.board.empties() {
            let i = i as usize;
            if self.check_index(i).is_ok() {
                let p = self.board.point(i);
                mask[p.y as usize * w + p.x as usize] = 1;
            }
        }
        let area = self.board.area() as usize;
        mask[area] = 1;
    }

    /// Number of legal moves for the player to move, pass included.
    pub fn count_legal(&self) -> usize {
        if self.is_over() {
            return 0;
        }
        1 + self
            .board
            .empties()
            .iter()
            .filter(|&&i| self.check_index(i as usize).is_ok())
            .count()
    }

    /// Points where a placement by the player to move is refused only by superko (not by
    /// occupancy, suicide or simple ko).
    pub fn superko_banned(&self) -> Vec<Point> {
        self.board
            .indices()
            .filter(|&i| self.check_index(i) == Err(Illegal::Superko))
            .map(|i| self.board.point(i))
            .collect()
    }

    /// Liberties the placed chain would have if the player `c` played at `p`, after
    /// captures; 0 for suicide; `None` if `p` is occupied or off the board.
    pub fn liberties_after(&self, p: Point, c: Color) -> Option<usize> {
        if !self.board.contains(p) || self.board.get(p).is_some() {
            return None;
        }
        let mut b = self.board.clone();
        let i = b.index(p);
        b.place(i, stone(c));
        Some(if b.get(p).is_some() { b.liberties(p) } else { 0 })
    }

    /// Mutable board access for samplers in this crate.
    pub(crate) fn board_mut(&mut self) -> &mut Board {
        &mut self.board
    }

    /// Cheap internal check used by property tests.
    pub fn check_consistency(&self) -> Result<(), String> {
        self.board.check_consistency()?;
        let (b, to_move) = self.replayed(self.moves.len());
        if b != self.board || to_move != self.to_move {
            return Err("replaying the moves gives another position".into());
        }
        if self.key() != self.key_of(self.board.hash(), self.to_move) {
            return Err("current key out of date".into());
        }
        Ok(())
    }
}

impl PartialEq for State {
    /// Same stones, same player to move, same history of moves.
    fn eq(&self, other: &State) -> bool {
        self.board == other.board
            && self.to_move == other.to_move
            && self.moves == other.moves
            && self.initial == other.initial
    }
}
