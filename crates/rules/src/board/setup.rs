//! Boards built from stones (setup, handicap, copies), and the from-scratch recount that
//! checks the incremental bookkeeping.

use super::*;

impl Board {
    /// Recomputes chains, liberties, the empty list and the hash from `cells`. Used after
    /// setup stones, by undo and to unpack a state at rest; O(board), no allocation.
    pub(crate) fn rebuild(&mut self) {
        self.n_empty = 0;
        self.hash = EMPTY_BOARD;
        let (w, h, stride) = (self.width as usize, self.height as usize, self.stride);
        for y in 0..h {
            for x in 0..w {
                self.chain[(y + 1) * stride + x] = u16::MAX;
            }
        }
        // One stack for every chain's flood fill (a chain has at most every point).
        let mut stack = [0u16; MAX_SIZE as usize * MAX_SIZE as usize];
        for y in 0..h {
            for x in 0..w {
                let i = (y + 1) * stride + x;
                match self.cells[i] {
                    EMPTY => self.add_empty(i),
                    c => {
                        self.hash ^= KEYS[i][c as usize - 1];
                        if self.chain[i] == u16::MAX {
                            self.flood_chain(i, &mut stack);
                        }
                    }
                }
            }
        }
        self.recount_neighbors();
    }

    /// A board of this size whose k-th point (row by row) holds `value(k)` (EMPTY, BLACK
    /// or WHITE), with its chains, liberties and hash. The size must be valid.
    pub(crate) fn with_cells(width: u8, height: u8, value: impl FnMut(usize) -> u8) -> Board {
        let mut b = Board::blank(width, height);
        b.fill_cells(value);
        b
    }

    /// As [`Board::with_cells`], in this board's storage (whatever it held before).
    pub(crate) fn set_cells(&mut self, width: u8, height: u8, value: impl FnMut(usize) -> u8) {
        self.reset_blank(width, height);
        self.fill_cells(value);
    }

    /// Fills a blank board's points from `value` (row by row) and rebuilds the rest.
    fn fill_cells(&mut self, mut value: impl FnMut(usize) -> u8) {
        let mut k = 0;
        for y in 0..self.height as usize {
            for x in 0..self.width as usize {
                self.cells[(y + 1) * self.stride + x] = value(k);
                k += 1;
            }
        }
        self.rebuild();
    }

    /// Recomputes the packed neighbour counts of every point from `cells`.
    pub(super) fn recount_neighbors(&mut self) {
        let (w, h, stride) = (self.width as usize, self.height as usize, self.stride);
        for y in 0..h {
            for x in 0..w {
                let i = (y + 1) * stride + x;
                self.nbc[i] = self.neighbors(i).iter().fold(nbc::ZERO, |acc, &n| {
                    acc + match self.cells[n] {
                        EMPTY => nbc::EMPTY,
                        BORDER => nbc::BORDER,
                        c => nbc::EMPTY.wrapping_add(nbc::filled(c)),
                    }
                });
            }
        }
    }

    /// Labels the chain containing stone `start` (its head), links its stones in a ring
    /// and counts its pseudo-liberties; `stack` is scratch space.
    pub(super) fn flood_chain(&mut self, start: usize, stack: &mut [u16]) {
        let c = self.cells[start];
        self.chain[start] = start as u16;
        self.next[start] = start as u16;
        self.chains[start] = ChainStats::default();
        let mut size = 0u16;
        stack[0] = start as u16;
        let mut top = 1;
        while top > 0 {
            top -= 1;
            let s = stack[top] as usize;
            size += 1;
            if s != start {
                // Into the ring, right after the head.
                self.next[s] = self.next[start];
                self.next[start] = s as u16;
            }
            for n in self.neighbors(s) {
                match self.cells[n] {
                    EMPTY => self.add_lib(start, n),
                    v if v == c && self.chain[n] != start as u16 => {
                        self.chain[n] = start as u16;
                        stack[top] = n as u16;
                        top += 1;
                    }
                    _ => {}
                }
            }
        }
        self.chains[start].size = size;
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
            (v == BLACK || v == WHITE) && self.chains[self.chain[i] as usize].libs == 0
        })
    }

    /// Copies `other` into `self`, reusing the allocations (playout scratch boards).
    pub(crate) fn copy_from(&mut self, other: &Board) {
        self.width = other.width;
        self.height = other.height;
        self.stride = other.stride;
        let n = other.n_cells;
        self.n_cells = n;
        self.cells.copy_prefix(&other.cells, n);
        self.chain.copy_prefix(&other.chain, n);
        self.next.copy_prefix(&other.next, n);
        self.chains.copy_prefix(&other.chains, n);
        self.empties.copy_prefix(&other.empties, other.n_empty);
        self.n_empty = other.n_empty;
        self.empty_pos.copy_prefix(&other.empty_pos, n);
        self.nbc.copy_prefix(&other.nbc, n);
        self.hash = other.hash;
    }

    /// Checks every invariant of the chain bookkeeping against a from-scratch recount.
    /// For tests and fuzzing; O(board).
    pub fn check_consistency(&self) -> Result<(), String> {
        let mut fresh = self.clone();
        fresh.rebuild();
        if fresh.hash != self.hash {
            return Err("hash differs from a recount".into());
        }
        let mut a: Vec<u16> = self.empties().to_vec();
        let mut b: Vec<u16> = fresh.empties().to_vec();
        a.sort_unstable();
        b.sort_unstable();
        if a != b {
            return Err("empty list differs from a recount".into());
        }
        for i in self.indices() {
            if self.nbc[i] != fresh.nbc[i] {
                return Err(format!("neighbour counts at {} out of sync", self.point(i)));
            }
        }
        for (k, &e) in self.empties().iter().enumerate() {
            if self.empty_pos[e as usize] as usize != k {
                return Err("empty index out of sync".into());
            }
        }
        for i in self.indices() {
            if self.cells[i] == EMPTY || self.cells[i] == BORDER {
                continue;
            }
            let (h, fh) = (self.chain[i] as usize, fresh.chain[i] as usize);
            let same = self.chains[h] == fresh.chains[fh];
            if !same {
                return Err(format!("chain at {} out of sync", self.point(i)));
            }
            if self.chains[h].libs == 0 {
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
                if s == i || n > self.chains[h].size as usize {
                    break;
                }
            }
            if n != self.chains[h].size as usize {
                return Err("chain list length differs from size".into());
            }
        }
        Ok(())
    }
}
