//! The board: stones, chains with pseudo-liberties, and an incremental Zobrist hash.
//!
//! Layout follows the fast playout engines (KataGo, Pachi): a padded one-dimensional array
//! with a border ring, where each row shares its right border with the next row's left
//! border. Chains are circular linked lists of stones with a head; each head stores the
//! chain's pseudo-liberty count, sum and sum of squares, so "in atari" (exactly one distinct
//! liberty) is `sum^2 == count * sum_sq` in O(1).
//!
//! The board knows nothing of turns, ko or history: that lives in [`crate::State`].

use crate::color::Color;
use crate::coord::{MAX_SIZE, MIN_SIZE, Point};
use crate::zobrist::{EMPTY_BOARD, KEYS};

pub(crate) const EMPTY: u8 = 0;
pub(crate) const BLACK: u8 = 1;
pub(crate) const WHITE: u8 = 2;
pub(crate) const BORDER: u8 = 3;

/// Cells of the largest padded board: (25 + 2) rows of stride 26.
pub(crate) const MAX_CELLS: usize = (MAX_SIZE as usize + 2) * (MAX_SIZE as usize + 1);

#[inline]
pub(crate) const fn stone(c: Color) -> u8 {
    match c {
        Color::Black => BLACK,
        Color::White => WHITE,
    }
}

#[inline]
pub(crate) fn color_of(v: u8) -> Option<Color> {
    match v {
        BLACK => Some(Color::Black),
        WHITE => Some(Color::White),
        _ => None,
    }
}

/// A board size outside 2..=25 in either dimension.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("board size {width}x{height} is not supported (each side must be 2..=25)")]
pub struct BadSize {
    pub width: u8,
    pub height: u8,
}

/// What a placement would do, found without playing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Probe {
    /// Position hash after the move (captures and suicide applied).
    pub hash: u128,
    /// Opposing stones the move captures.
    pub captures: u32,
    /// The move removes its own chain (only possible where suicide is allowed).
    pub suicide: bool,
}

/// Why a placement is impossible on the bare board (ko lives in `State`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BoardIllegal {
    Occupied,
    Suicide,
}

/// Stones on a rectangular grid with chain bookkeeping. Cheap to clone.
#[derive(Clone)]
pub struct Board {
    width: u8,
    height: u8,
    stride: usize,
    cells: Vec<u8>,
    /// Head of the chain a stone belongs to.
    chain: Vec<u16>,
    /// Next stone of the same chain (circular).
    next: Vec<u16>,
    // Per chain, indexed by head:
    size: Vec<u16>,
    libs: Vec<u16>,
    lib_sum: Vec<u32>,
    lib_sq: Vec<u32>,
    /// The empty points in arbitrary order, and each point's index in that list.
    empties: Vec<u16>,
    empty_pos: Vec<u16>,
    hash: u128,
}

impl PartialEq for Board {
    /// Two boards are equal when they have the same size and the same stones.
    fn eq(&self, other: &Board) -> bool {
        self.width == other.width && self.height == other.height && self.cells == other.cells
    }
}
impl Eq for Board {}

impl std::fmt::Debug for Board {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "Board {}x{}", self.width, self.height)?;
        for row in self.rows() {
            writeln!(f, "{row}")?;
        }
        Ok(())
    }
}

impl Board {
    /// An empty square board.
    pub fn new(size: u8) -> Result<Board, BadSize> {
        Board::rect(size, size)
    }

    /// An empty rectangular board.
    pub fn rect(width: u8, height: u8) -> Result<Board, BadSize> {
        let ok = |s: u8| (MIN_SIZE..=MAX_SIZE).contains(&s);
        // 1xN boards are allowed too (KataGo's tests use 4x1): only the area matters.
        let ok_line = |w: u8, h: u8| (w == 1 && ok(h)) || (h == 1 && ok(w));
        let valid = (ok(width) && ok(height)) || ok_line(width, height);
        if !valid {
            return Err(BadSize { width, height });
        }
        let stride = width as usize + 1;
        let n = (height as usize + 2) * stride;
        let mut b = Board {
            width,
            height,
            stride,
            cells: vec![BORDER; n],
            chain: vec![0; n],
            next: vec![0; n],
            size: vec![0; n],
            libs: vec![0; n],
            lib_sum: vec![0; n],
            lib_sq: vec![0; n],
            empties: Vec::with_capacity(width as usize * height as usize),
            empty_pos: vec![0; n],
            hash: EMPTY_BOARD,
        };
        for y in 0..height {
            for x in 0..width {
                let i = b.index(Point::new(x, y));
                b.cells[i] = EMPTY;
                b.empty_pos[i] = b.empties.len() as u16;
                b.empties.push(i as u16);
            }
        }
        Ok(b)
    }

    /// Builds a board from rows (top to bottom) of `x`/`X`/`b` (Black), `o`/`O`/`w` (White)
    /// and `.`/`+`/`-` (empty). Chains with no liberty are not allowed.
    pub fn from_rows<S: AsRef<str>>(rows: &[S]) -> Result<Board, String> {
        let height = rows.len();
        let width = rows.first().map_or(0, |r| r.as_ref().chars().count());
        if height > MAX_SIZE as usize || width > MAX_SIZE as usize {
            return Err(format!("board {width}x{height} is too large"));
        }
        let mut b = Board::rect(width as u8, height as u8).map_err(|e| e.to_string())?;
        for (y, row) in rows.iter().enumerate() {
            let row = row.as_ref();
            if row.chars().count() != width {
                return Err(format!("row {y} has {} points, expected {width}", row.len()));
            }
            for (x, ch) in row.chars().enumerate() {
                let v = match ch {
                    'x' | 'X' | 'b' | 'B' => BLACK,
                    'o' | 'O' | 'w' | 'W' => WHITE,
                    '.' | '+' | '-' => EMPTY,
                    _ => return Err(format!("unexpected character {ch:?} in row {y}")),
                };
                let i = b.index(Point::new(x as u8, y as u8));
                b.cells[i] = v;
            }
        }
        b.rebuild();
        if b.has_dead_chain() {
            return Err("a chain has no liberties".into());
        }
        Ok(b)
    }

    pub fn width(&self) -> u8 {
        self.width
    }
    pub fn height(&self) -> u8 {
        self.height
    }
    /// Number of points on the board.
    pub fn area(&self) -> u32 {
        self.width as u32 * self.height as u32
    }
    /// Zobrist hash of the stones (not of the player to move).
    pub fn hash(&self) -> u128 {
        self.hash
    }

    #[inline]
    pub(crate) fn index(&self, p: Point) -> usize {
        (p.y as usize + 1) * self.stride + p.x as usize
    }

    #[inline]
    pub(crate) fn point(&self, i: usize) -> Point {
        Point::new((i % self.stride) as u8, (i / self.stride - 1) as u8)
    }

    /// Whether the point lies on this board.
    pub fn contains(&self, p: Point) -> bool {
        p.x < self.width && p.y < self.height
    }

    /// The stone on a point, `None` when empty or off the board.
    pub fn get(&self, p: Point) -> Option<Color> {
        if !self.contains(p) {
            return None;
        }
        color_of(self.cells[self.index(p)])
    }

    /// Length of the padded cell array.
    pub(crate) fn cell_count(&self) -> usize {
        self.cells.len()
    }

    #[inline]
    pub(crate) fn cell(&self, i: usize) -> u8 {
        self.cells[i]
    }

    #[inline]
    pub(crate) fn neighbors(&self, i: usize) -> [usize; 4] {
        [i - self.stride, i - 1, i + 1, i + self.stride]
    }

    /// All points, row by row from the top.
    pub fn points(&self) -> impl Iterator<Item = Point> + use<> {
        let (w, h) = (self.width, self.height);
        (0..h).flat_map(move |y| (0..w).map(move |x| Point::new(x, y)))
    }

    /// Padded indices of all on-board points, row by row from the top.
    pub(crate) fn indices(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.height as usize).flat_map(move |y| (0..self.width as usize).map(move |x| (y + 1) * self.stride + x))
    }

    /// Number of stones of each colour: `[black, white]`.
    pub fn stone_counts(&self) -> [u32; 2] {
        let mut n = [0u32; 2];
        for i in self.indices() {
            match self.cells[i] {
                BLACK => n[0] += 1,
                WHITE => n[1] += 1,
                _ => {}
            }
        }
        n
    }

    /// Number of empty points.
    pub fn empty_count(&self) -> usize {
        self.empties.len()
    }

    /// Empty points, in no particular order.
    pub fn empty_points(&self) -> impl Iterator<Item = Point> + '_ {
        self.empties.iter().map(|&i| self.point(i as usize))
    }

    #[inline]
    pub(crate) fn empties(&self) -> &[u16] {
        &self.empties
    }

    /// Swaps two entries of the empty list (used by samplers for in-place shuffling).
    #[inline]
    pub(crate) fn swap_empties(&mut self, a: usize, b: usize) {
        self.empties.swap(a, b);
        self.empty_pos[self.empties[a] as usize] = a as u16;
        self.empty_pos[self.empties[b] as usize] = b as u16;
    }

    /// Writes every point, row by row from the top, as 0 (empty), 1 (Black) or 2 (White)
    /// into `out` (cleared first). A fast snapshot for feature encoders.
    pub fn write_cells(&self, out: &mut Vec<u8>) {
        out.clear();
        for y in 0..self.height as usize {
            let row = (y + 1) * self.stride;
            out.extend_from_slice(&self.cells[row..row + self.width as usize]);
        }
    }

    /// Rows from top to bottom as `x` (Black), `o` (White), `.` (empty).
    pub fn rows(&self) -> Vec<String> {
        (0..self.height)
            .map(|y| {
                (0..self.width)
                    .map(|x| match self.get(Point::new(x, y)) {
                        Some(c) => c.to_char(),
                        None => '.',
                    })
                    .collect()
            })
            .collect()
    }

    #[inline]
    fn in_atari(&self, head: usize) -> bool {
        let n = self.libs[head] as u64;
        let s = self.lib_sum[head] as u64;
        n > 0 && s * s == n * self.lib_sq[head] as u64
    }

    /// XOR of the keys of all stones in a chain: what removing it does to the hash.
    fn chain_hash(&self, head: usize) -> u128 {
        let c = self.cells[head] as usize - 1;
        let mut h = 0;
        let mut s = head;
        loop {
            h ^= KEYS[s][c];
            s = self.next[s] as usize;
            if s == head {
                return h;
            }
        }
    }

    /// What placing `c` at `i` would do, without doing it.
    #[inline]
    pub(crate) fn probe(&self, i: usize, c: u8, suicide_allowed: bool) -> Result<Probe, BoardIllegal> {
        if self.cells[i] != EMPTY {
            return Err(BoardIllegal::Occupied);
        }
        let opp = c ^ 3;
        let mut hash = self.hash ^ KEYS[i][c as usize - 1];
        let mut has_lib = false;
        let mut captured = [0usize; 4];
        let mut n_captured = 0;
        let mut captures = 0;
        for n in self.neighbors(i) {
            let v = self.cells[n];
            if v == EMPTY {
                has_lib = true;
            } else if v == c {
                if !self.in_atari(self.chain[n] as usize) {
                    has_lib = true;
                }
            } else if v == opp {
                let h = self.chain[n] as usize;
                if self.in_atari(h) && !captured[..n_captured].contains(&h) {
                    captured[n_captured] = h;
                    n_captured += 1;
                    hash ^= self.chain_hash(h);
                    captures += self.size[h] as u32;
                }
            }
        }
        if has_lib || n_captured > 0 {
            return Ok(Probe {
                hash,
                captures,
                suicide: false,
            });
        }
        if !suicide_allowed {
            return Err(BoardIllegal::Suicide);
        }
        // Suicide: the stone and every friendly neighbouring chain leave the board.
        let mut hash = self.hash;
        let mut seen = [0usize; 4];
        let mut n_seen = 0;
        for n in self.neighbors(i) {
            if self.cells[n] == c {
                let h = self.chain[n] as usize;
                if !seen[..n_seen].contains(&h) {
                    seen[n_seen] = h;
                    n_seen += 1;
                    hash ^= self.chain_hash(h);
                }
            }
        }
        Ok(Probe {
            hash,
            captures: 0,
            suicide: true,
        })
    }

    #[inline]
    fn add_lib(&mut self, head: usize, lib: usize) {
        self.libs[head] += 1;
        self.lib_sum[head] += lib as u32;
        self.lib_sq[head] += (lib * lib) as u32;
    }

    #[inline]
    fn remove_lib(&mut self, head: usize, lib: usize) {
        self.libs[head] -= 1;
        self.lib_sum[head] -= lib as u32;
        self.lib_sq[head] -= (lib * lib) as u32;
    }

    #[inline]
    fn remove_empty(&mut self, i: usize) {
        let pos = self.empty_pos[i] as usize;
        let last = self.empties.pop().expect("point was empty");
        if last as usize != i {
            self.empties[pos] = last;
            self.empty_pos[last as usize] = pos as u16;
        }
    }

    #[inline]
    fn add_empty(&mut self, i: usize) {
        self.empty_pos[i] = self.empties.len() as u16;
        self.empties.push(i as u16);
    }

    /// Places stone value `c` on empty cell `i`, resolving captures (opponent first, R4) and
    /// suicide (own chain removed, R5). Returns the stones removed, for each colour index.
    /// The caller has checked legality with [`Board::probe`].
    pub(crate) fn place(&mut self, i: usize, c: u8) -> [u32; 2] {
        debug_assert_eq!(self.cells[i], EMPTY);
        let opp = c ^ 3;
        self.remove_empty(i);
        self.cells[i] = c;
        self.hash ^= KEYS[i][c as usize - 1];
        self.chain[i] = i as u16;
        self.next[i] = i as u16;
        self.size[i] = 1;
        self.libs[i] = 0;
        self.lib_sum[i] = 0;
        self.lib_sq[i] = 0;
        // One pass for liberties and merges (sums do not depend on the order), then
        // captures, once every neighbour has lost the liberty at `i`.
        let mut touches_opp = false;
        for n in self.neighbors(i) {
            match self.cells[n] {
                EMPTY => {
                    let h = self.chain[i] as usize;
                    self.add_lib(h, n);
                }
                BORDER => {}
                v => {
                    let h = self.chain[n] as usize;
                    self.remove_lib(h, i);
                    if v == c {
                        let a = self.chain[i] as usize;
                        if a != h {
                            self.merge(a, h);
                        }
                    } else {
                        touches_opp = true;
                    }
                }
            }
        }
        let mut removed = [0u32; 2];
        for n in self.neighbors(i) {
            if touches_opp && self.cells[n] == opp {
                let h = self.chain[n] as usize;
                if self.libs[h] == 0 {
                    removed[opp as usize - 1] += self.remove_chain(h);
                }
            }
        }
        let h = self.chain[i] as usize;
        if self.libs[h] == 0 {
            removed[c as usize - 1] += self.remove_chain(h);
        }
        removed
    }

    fn merge(&mut self, a: usize, b: usize) {
        // Keep the larger chain's head; relabel the smaller.
        let (big, small) = if self.size[a] >= self.size[b] { (a, b) } else { (b, a) };
        let mut s = small;
        loop {
            self.chain[s] = big as u16;
            s = self.next[s] as usize;
            if s == small {
                break;
            }
        }
        self.next.swap(big, small);
        self.size[big] += self.size[small];
        self.libs[big] += self.libs[small];
        self.lib_sum[big] += self.lib_sum[small];
        self.lib_sq[big] += self.lib_sq[small];
    }

    /// Removes a whole chain; returns its size.
    fn remove_chain(&mut self, head: usize) -> u32 {
        let c = self.cells[head] as usize - 1;
        let mut s = head;
        loop {
            self.cells[s] = EMPTY;
            self.hash ^= KEYS[s][c];
            self.add_empty(s);
            s = self.next[s] as usize;
            if s == head {
                break;
            }
        }
        // Now that every stone is gone, the neighbouring chains gain those points.
        let mut s = head;
        loop {
            for n in self.neighbors(s) {
                let v = self.cells[n];
                if v == BLACK || v == WHITE {
                    let h = self.chain[n] as usize;
                    self.add_lib(h, s);
                }
            }
            s = self.next[s] as usize;
            if s == head {
                break;
            }
        }
        self.size[head] as u32
    }

    /// Recomputes chains, liberties, the empty list and the hash from `cells`. Used after
    /// setup stones and by undo; O(board).
    pub(crate) fn rebuild(&mut self) {
        self.empties.clear();
        self.hash = EMPTY_BOARD;
        let idx: Vec<usize> = self.indices().collect();
        for &i in &idx {
            self.chain[i] = u16::MAX;
        }
        for &i in &idx {
            match self.cells[i] {
                EMPTY => self.add_empty(i),
                c => {
                    self.hash ^= KEYS[i][c as usize - 1];
                    if self.chain[i] == u16::MAX {
                        self.flood_chain(i);
                    }
                }
            }
        }
    }

    /// Labels the chain containing stone `start` and recounts its pseudo-liberties.
    fn flood_chain(&mut self, start: usize) {
        let c = self.cells[start];
        let mut stack = vec![start];
        let mut members = Vec::new();
        self.chain[start] = start as u16;
        while let Some(s) = stack.pop() {
            members.push(s);
            for n in self.neighbors(s) {
                if self.cells[n] == c && self.chain[n] != start as u16 {
                    self.chain[n] = start as u16;
                    stack.push(n);
                }
            }
        }
        self.size[start] = members.len() as u16;
        self.libs[start] = 0;
        self.lib_sum[start] = 0;
        self.lib_sq[start] = 0;
        for (k, &s) in members.iter().enumerate() {
            self.next[s] = members[(k + 1) % members.len()] as u16;
            for n in self.neighbors(s) {
                if self.cells[n] == EMPTY {
                    self.add_lib(start, n);
                }
            }
        }
    }

    /// Sets or clears one point (setup stones, AB/AW/AE) without capturing anything.
    /// Call [`Board::rebuild`] afterwards.
    pub(crate) fn set_raw(&mut self, p: Point, c: Option<Color>) {
        let i = self.index(p);
        self.cells[i] = c.map_or(EMPTY, stone);
    }

    /// Whether any chain has no liberty (not a legal resting position).
    pub(crate) fn has_dead_chain(&self) -> bool {
        self.indices().any(|i| {
            let v = self.cells[i];
            (v == BLACK || v == WHITE) && self.libs[self.chain[i] as usize] == 0
        })
    }

    /// The stones of the chain through `p` (empty when `p` is empty or off board).
    pub fn chain_points(&self, p: Point) -> Vec<Point> {
        if self.get(p).is_none() {
            return Vec::new();
        }
        let head = self.chain[self.index(p)] as usize;
        let mut out = Vec::new();
        let mut s = head;
        loop {
            out.push(self.point(s));
            s = self.next[s] as usize;
            if s == head {
                return out;
            }
        }
    }

    /// Exact number of distinct liberties of the chain through `p` (0 if empty).
    pub fn liberties(&self, p: Point) -> usize {
        let mut libs: Vec<usize> = Vec::new();
        for q in self.chain_points(p) {
            for n in self.neighbors(self.index(q)) {
                if self.cells[n] == EMPTY && !libs.contains(&n) {
                    libs.push(n);
                }
            }
        }
        libs.len()
    }

    /// Whether placing `c` on empty cell `i` keeps a liberty or captures: the board part of
    /// legality without computing the hash (playouts that check only simple ko). With
    /// `suicide_allowed` every empty point passes.
    #[inline(always)]
    pub(crate) fn is_legal_simple(&self, i: usize, c: u8, suicide_allowed: bool) -> bool {
        for n in self.neighbors(i) {
            let v = self.cells[n];
            if v == EMPTY {
                return true;
            }
            if v != BORDER {
                // Joining an own chain helps unless `i` is its last liberty; touching an
                // opposing chain in atari captures it (its last liberty is `i`).
                let atari = self.in_atari(self.chain[n] as usize);
                if (v == c) != atari {
                    return true;
                }
            }
        }
        suicide_allowed
    }

    /// The simple-ko point after `c` was placed at `i` and captured `captures` stones: a
    /// lone stone that took one stone and has that point as its only liberty.
    #[inline]
    pub(crate) fn ko_after(&self, i: usize, captures: u32) -> Option<usize> {
        // A lone stone's pseudo-liberties are distinct, and the captured point is one.
        let lone = self.cells[i] != EMPTY && self.size[self.chain[i] as usize] == 1;
        (captures == 1 && lone && self.libs[i] == 1).then(|| self.lib_sum[i] as usize)
    }

    /// The next stone of the chain through stone cell `i` (circular).
    #[inline]
    pub(crate) fn next_stone(&self, i: usize) -> usize {
        self.next[i] as usize
    }

    /// Head of the chain through stone cell `i`.
    #[inline]
    pub(crate) fn head(&self, i: usize) -> usize {
        self.chain[i] as usize
    }

    /// Whether the chain with head `h` has exactly one distinct liberty.
    #[inline]
    pub(crate) fn chain_in_atari(&self, h: usize) -> bool {
        self.in_atari(h)
    }

    /// The only liberty of a chain in atari (head `h`).
    #[inline]
    pub(crate) fn atari_liberty(&self, h: usize) -> usize {
        (self.lib_sum[h] / self.libs[h] as u32) as usize
    }

    /// Stones in the chain with head `h`.
    #[inline]
    pub(crate) fn chain_size(&self, h: usize) -> u32 {
        self.size[h] as u32
    }

    /// Copies `other` into `self`, reusing the allocations (playout scratch boards).
    pub(crate) fn copy_from(&mut self, other: &Board) {
        self.width = other.width;
        self.height = other.height;
        self.stride = other.stride;
        self.cells.clone_from(&other.cells);
        self.chain.clone_from(&other.chain);
        self.next.clone_from(&other.next);
        self.size.clone_from(&other.size);
        self.libs.clone_from(&other.libs);
        self.lib_sum.clone_from(&other.lib_sum);
        self.lib_sq.clone_from(&other.lib_sq);
        self.empties.clone_from(&other.empties);
        self.empty_pos.clone_from(&other.empty_pos);
        self.hash = other.hash;
    }

    /// Whether the empty point `p` is a single-point eye of `c`: every neighbour on the
    /// board is a stone of `c` (what light playouts never fill).
    pub fn is_eye_of(&self, p: Point, c: Color) -> bool {
        self.contains(p) && self.cells[self.index(p)] == EMPTY && self.is_eye(self.index(p), stone(c))
    }

    /// Whether `i` is a single-point eye of colour value `c`: every neighbour on the board is
    /// a stone of `c`.
    #[inline]
    pub(crate) fn is_eye(&self, i: usize, c: u8) -> bool {
        self.neighbors(i).iter().all(|&n| {
            let v = self.cells[n];
            v == c || v == BORDER
        })
    }

    /// Checks every invariant of the chain bookkeeping against a from-scratch recount.
    /// For tests and fuzzing; O(board).
    pub fn check_consistency(&self) -> Result<(), String> {
        let mut fresh = self.clone();
        fresh.rebuild();
        if fresh.hash != self.hash {
            return Err("hash differs from a recount".into());
        }
        let mut a: Vec<u16> = self.empties.clone();
        let mut b: Vec<u16> = fresh.empties.clone();
        a.sort_unstable();
        b.sort_unstable();
        if a != b {
            return Err("empty list differs from a recount".into());
        }
        for (k, &e) in self.empties.iter().enumerate() {
            if self.empty_pos[e as usize] as usize != k {
                return Err("empty index out of sync".into());
            }
        }
        for i in self.indices() {
            if self.cells[i] == EMPTY || self.cells[i] == BORDER {
                continue;
            }
            let (h, fh) = (self.chain[i] as usize, fresh.chain[i] as usize);
            let same = self.size[h] == fresh.size[fh]
                && self.libs[h] == fresh.libs[fh]
                && self.lib_sum[h] == fresh.lib_sum[fh]
                && self.lib_sq[h] == fresh.lib_sq[fh];
            if !same {
                return Err(format!("chain at {} out of sync", self.point(i)));
            }
            if self.libs[h] == 0 {
                return Err(format!("chain at {} has no liberty", self.point(i)));
            }
            // Same membership: walking from i stays within one chain id and has the size.
            let mut s = i;
            let mut n = 0;
            loop {
                if self.chain[s] as usize != h {
                    return Err("chain list crosses chains".into());
                }
                n += 1;
                s = self.next[s] as usize;
                if s == i || n > self.size[h] as usize {
                    break;
                }
            }
            if n != self.size[h] as usize {
                return Err("chain list length differs from size".into());
            }
        }
        Ok(())
    }
}
