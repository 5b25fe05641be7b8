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
use grid::Grid;

mod grid;
mod moves;
mod queries;
mod setup;

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

/// Stones on a rectangular grid with chain bookkeeping. Cheap to clone (copies only the
/// cells its size uses).
pub struct Board {
    width: u8,
    height: u8,
    stride: usize,
    /// Padded cells in use: `(height + 2) * stride`.
    n_cells: usize,
    cells: Grid<u8>,
    /// Head of the chain a stone belongs to.
    chain: Grid<u16>,
    /// Next stone of the same chain (circular).
    next: Grid<u16>,
    /// Per chain, indexed by head (one record, so one bounds check and one cache line).
    chains: Grid<ChainStats>,
    /// The empty points in arbitrary order, and each point's index in that list.
    empties: Grid<u16>,
    n_empty: usize,
    empty_pos: Grid<u16>,
    /// Per point, packed neighbour counts (see [`nbc`]): the eye test and the "has an
    /// empty neighbour" half of legality in one load, as Pachi and libego keep them.
    nbc: Grid<u16>,
    hash: u128,
}

/// A chain's size and pseudo-liberties: count, sum and sum of squares of the liberty
/// cells (a liberty shared by two stones counts twice).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ChainStats {
    size: u16,
    libs: u16,
    lib_sum: u32,
    lib_sq: u32,
}

/// Packed neighbour counts: four bits each of empty neighbours, Black-or-border neighbours
/// and White-or-border neighbours. The border counts for both colours, so "every neighbour
/// is `c` or border" (a one-point eye of `c`) is one field equal to 4.
pub(crate) mod nbc {
    /// The field of empty neighbours.
    pub const EMPTY_MASK: u16 = 0xF;
    /// Shift of the field of colour value `c` (1 Black, 2 White).
    #[inline(always)]
    pub const fn shift(c: u8) -> u32 {
        4 * c as u32
    }
    /// Counts of a point with no neighbour at all.
    pub const ZERO: u16 = 0;
    /// What a neighbour turning from empty to colour `c` adds (wrapping).
    #[inline(always)]
    pub const fn filled(c: u8) -> u16 {
        (1u16 << shift(c)).wrapping_sub(1)
    }
    /// What a border neighbour adds.
    pub const BORDER: u16 = (1 << 4) | (1 << 8);
    /// What an empty neighbour adds.
    pub const EMPTY: u16 = 1;
}

impl PartialEq for Board {
    /// Two boards are equal when they have the same size and the same stones.
    fn eq(&self, other: &Board) -> bool {
        let n = self.n_cells;
        self.width == other.width && self.height == other.height && self.cells.prefix(n) == other.cells.prefix(n)
    }
}
impl Eq for Board {}

impl Clone for Board {
    fn clone(&self) -> Board {
        let mut b = Board::blank(self.width, self.height);
        b.copy_from(self);
        b
    }

    fn clone_from(&mut self, other: &Board) {
        self.copy_from(other);
    }
}

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

    /// A board of this size whose every cell is border (the caller fills it).
    fn blank(width: u8, height: u8) -> Board {
        let stride = width as usize + 1;
        Board {
            width,
            height,
            stride,
            n_cells: (height as usize + 2) * stride,
            cells: Grid::filled(BORDER),
            chain: Grid::filled(0),
            next: Grid::filled(0),
            chains: Grid::filled(ChainStats::default()),
            empties: Grid::filled(0),
            n_empty: 0,
            empty_pos: Grid::filled(0),
            nbc: Grid::filled(nbc::ZERO),
            hash: EMPTY_BOARD,
        }
    }

    /// This board's storage made [`Board::blank`] of another size: every cell that size
    /// uses is reset, and the cells beyond keep stale values, which nothing reads (as
    /// after [`Board::copy_from`] from a smaller board). Costs the cells used, where a
    /// fresh board allocates and fills every array at the largest board's capacity.
    fn reset_blank(&mut self, width: u8, height: u8) {
        let stride = width as usize + 1;
        let n = (height as usize + 2) * stride;
        (self.width, self.height, self.stride, self.n_cells) = (width, height, stride, n);
        self.cells.fill_prefix(BORDER, n);
        self.chain.fill_prefix(0, n);
        self.next.fill_prefix(0, n);
        self.chains.fill_prefix(ChainStats::default(), n);
        self.empties.fill_prefix(0, n);
        self.n_empty = 0;
        self.empty_pos.fill_prefix(0, n);
        self.nbc.fill_prefix(nbc::ZERO, n);
        self.hash = EMPTY_BOARD;
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
        let mut b = Board::blank(width, height);
        for y in 0..height {
            for x in 0..width {
                let i = b.index(Point::new(x, y));
                b.cells[i] = EMPTY;
                b.add_empty(i);
            }
        }
        b.recount_neighbors();
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
        self.n_cells
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
        self.n_empty
    }

    /// Empty points, in no particular order.
    pub fn empty_points(&self) -> impl Iterator<Item = Point> + '_ {
        self.empties().iter().map(|&i| self.point(i as usize))
    }

    #[inline]
    pub(crate) fn empties(&self) -> &[u16] {
        self.empties.prefix(self.n_empty)
    }

    /// The `k`th entry of the empty list (`k < empty_count()`).
    #[inline(always)]
    pub(crate) fn empty_at(&self, k: usize) -> usize {
        debug_assert!(k < self.n_empty);
        self.empties[k] as usize
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
        out.resize(self.width as usize * self.height as usize, 0);
        self.copy_cells(out);
    }

    /// [`Board::write_cells`] into a slice of exactly `width * height` bytes (a row of a
    /// caller's buffer).
    pub fn copy_cells(&self, out: &mut [u8]) {
        let w = self.width as usize;
        for (y, dst) in out.chunks_exact_mut(w).take(self.height as usize).enumerate() {
            let row = (y + 1) * self.stride;
            dst.copy_from_slice(&self.cells.prefix(self.n_cells)[row..row + w]);
        }
    }

    /// Every point, row by row from the top, as `x` (Black), `o` (White), `.` (empty):
    /// [`Board::rows`] joined, in one allocation.
    pub fn points_text(&self) -> String {
        let mut text = Vec::with_capacity(self.width as usize * self.height as usize);
        for y in 0..self.height {
            text.extend((0..self.width).map(|x| match self.cell(self.index(Point::new(x, y))) {
                BLACK => b'x',
                WHITE => b'o',
                _ => b'.',
            }));
        }
        String::from_utf8(text).expect("the points are ASCII")
    }

    /// Rows from top to bottom as `x` (Black), `o` (White), `.` (empty).
    pub fn rows(&self) -> Vec<String> {
        text_rows(&self.points_text(), self.width)
    }
}

/// [`Board::points_text`] cut into its rows of `width` points (none for an empty text): the
/// service keeps a board as one string and splits it only for an answer that carries it.
pub fn text_rows(points: &str, width: u8) -> Vec<String> {
    points
        .as_bytes()
        .chunks(usize::from(width.max(1)))
        .map(|row| String::from_utf8_lossy(row).into_owned())
        .collect()
}
