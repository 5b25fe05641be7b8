//! What playouts and analysis read of chains and points: liberties, atari, eyes, simple
//! legality without a hash.

use super::*;

impl Board {
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
        self.liberty_cells(p).len()
    }

    /// The distinct liberties (padded indices) of the chain through `p` (none if empty).
    pub(crate) fn liberty_cells(&self, p: Point) -> Vec<usize> {
        let mut libs: Vec<usize> = Vec::new();
        for q in self.chain_points(p) {
            for n in self.neighbors(self.index(q)) {
                if self.cells[n] == EMPTY && !libs.contains(&n) {
                    libs.push(n);
                }
            }
        }
        libs
    }

    /// Whether placing `c` on empty cell `i` keeps a liberty or captures: the board part of
    /// legality without computing the hash (playouts that check only simple ko). With
    /// `suicide_allowed` every empty point passes.
    #[inline(always)]
    pub(crate) fn is_legal_simple(&self, i: usize, c: u8, suicide_allowed: bool) -> bool {
        if self.nbc[i] & nbc::EMPTY_MASK != 0 {
            return true;
        }
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
        let lone = self.cells[i] != EMPTY && self.chains[self.chain[i] as usize].size == 1;
        (captures == 1 && lone && self.chains[i].libs == 1).then(|| self.chains[i].lib_sum as usize)
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
        (self.chains[h].lib_sum / self.chains[h].libs as u32) as usize
    }

    /// Stones in the chain with head `h`.
    #[inline]
    pub(crate) fn chain_size(&self, h: usize) -> u32 {
        self.chains[h].size as u32
    }

    /// Whether the empty point `p` is a single-point eye of `c`: every neighbour on the
    /// board is a stone of `c` (what light playouts never fill).
    pub fn is_eye_of(&self, p: Point, c: Color) -> bool {
        self.contains(p) && self.cells[self.index(p)] == EMPTY && self.is_eye(self.index(p), stone(c))
    }

    /// Whether the empty point `p` is a true one-point eye of `c`: every neighbour is a stone
    /// of `c`, and of its diagonal points at most one holds an opposing stone (none when
    /// `p` is on the edge). A false eye is a point `c` may need to fill to connect.
    pub fn is_true_eye_of(&self, p: Point, c: Color) -> bool {
        if !self.is_eye_of(p, c) {
            return false;
        }
        let i = self.index(p);
        let s = self.stride;
        let diagonals = [(i - s).saturating_sub(1), i - s + 1, i + s - 1, i + s + 1];
        let opp = stone(c.opponent());
        let (mut enemies, mut off) = (0, 0);
        for d in diagonals {
            match self.cells[d] {
                BORDER => off += 1,
                v if v == opp => enemies += 1,
                _ => {}
            }
        }
        enemies == 0 || (enemies == 1 && off == 0)
    }

    /// Whether `i` is a single-point eye of colour value `c`: every neighbour on the board is
    /// a stone of `c`.
    #[inline]
    pub(crate) fn is_eye(&self, i: usize, c: u8) -> bool {
        (self.nbc[i] >> nbc::shift(c)) & 0xF == 4
    }
}
