//! Playing a stone: what a move would do (`probe`), and doing it (`place`), with the chain
//! bookkeeping (liberties, merges, captures, the empty list and the hash) kept incremental.

use super::*;

impl Board {
    #[inline]
    pub(super) fn in_atari(&self, head: usize) -> bool {
        let ch = &self.chains[head];
        let (n, s) = (ch.libs as u64, ch.lib_sum as u64);
        n > 0 && s * s == n * ch.lib_sq as u64
    }

    /// XOR of the keys of all stones in a chain: what removing it does to the hash.
    pub(super) fn chain_hash(&self, head: usize) -> u128 {
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
                    captures += self.chains[h].size as u32;
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
    pub(super) fn add_lib(&mut self, head: usize, lib: usize) {
        let ch = &mut self.chains[head];
        ch.libs += 1;
        ch.lib_sum += lib as u32;
        ch.lib_sq += (lib * lib) as u32;
    }

    #[inline]
    pub(super) fn remove_lib(&mut self, head: usize, lib: usize) {
        let ch = &mut self.chains[head];
        ch.libs -= 1;
        ch.lib_sum -= lib as u32;
        ch.lib_sq -= (lib * lib) as u32;
    }

    #[inline]
    pub(super) fn remove_empty(&mut self, i: usize) {
        let pos = self.empty_pos[i] as usize;
        debug_assert!(self.n_empty > 0, "point was empty");
        self.n_empty -= 1;
        let last = self.empties[self.n_empty];
        if last as usize != i {
            self.empties[pos] = last;
            self.empty_pos[last as usize] = pos as u16;
        }
    }

    #[inline]
    pub(super) fn add_empty(&mut self, i: usize) {
        self.empty_pos[i] = self.n_empty as u16;
        self.empties[self.n_empty] = i as u16;
        self.n_empty += 1;
    }

    /// Places stone value `c` on empty cell `i`, resolving captures (opponent first, R4) and
    /// suicide (own chain removed, R5). Returns the stones removed, for each colour index.
    /// The caller has checked legality with [`Board::probe`].
    pub(crate) fn place(&mut self, i: usize, c: u8) -> [u32; 2] {
        debug_assert_eq!(self.cells[i], EMPTY);
        let opp = c ^ 3;
        self.remove_empty(i);
        self.cells[i] = c;
        let filled = nbc::filled(c);
        for n in self.neighbors(i) {
            self.nbc[n] = self.nbc[n].wrapping_add(filled);
        }
        self.hash ^= KEYS[i][c as usize - 1];
        self.chain[i] = i as u16;
        self.next[i] = i as u16;
        // The new stone's own liberties, without branching on each neighbour's kind.
        let nb = self.neighbors(i);
        let mut own = ChainStats {
            size: 1,
            ..ChainStats::default()
        };
        for n in nb {
            let e = (self.cells[n] == EMPTY) as u32;
            own.libs += e as u16;
            own.lib_sum += e * n as u32;
            own.lib_sq += e * (n * n) as u32;
        }
        self.chains[i] = own;
        // Stone neighbours lose the liberty at `i`; own chains merge. Captures come after,
        // once every neighbour has lost it.
        let mut touches_opp = false;
        for n in nb {
            let v = self.cells[n];
            if v == BLACK || v == WHITE {
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
        let mut removed = [0u32; 2];
        for n in self.neighbors(i) {
            if touches_opp && self.cells[n] == opp {
                let h = self.chain[n] as usize;
                if self.chains[h].libs == 0 {
                    removed[opp as usize - 1] += self.remove_chain(h);
                }
            }
        }
        let h = self.chain[i] as usize;
        if self.chains[h].libs == 0 {
            removed[c as usize - 1] += self.remove_chain(h);
        }
        removed
    }

    pub(super) fn merge(&mut self, a: usize, b: usize) {
        // Keep the larger chain's head; relabel the smaller.
        let (big, small) = if self.chains[a].size >= self.chains[b].size {
            (a, b)
        } else {
            (b, a)
        };
        let mut s = small;
        loop {
            self.chain[s] = big as u16;
            s = self.next[s] as usize;
            if s == small {
                break;
            }
        }
        self.next.swap(big, small);
        let add = self.chains[small];
        let ch = &mut self.chains[big];
        ch.size += add.size;
        ch.libs += add.libs;
        ch.lib_sum += add.lib_sum;
        ch.lib_sq += add.lib_sq;
    }

    /// Removes a whole chain; returns its size.
    pub(super) fn remove_chain(&mut self, head: usize) -> u32 {
        let c = self.cells[head] as usize - 1;
        let emptied = nbc::filled(c as u8 + 1).wrapping_neg();
        let mut s = head;
        loop {
            for n in self.neighbors(s) {
                self.nbc[n] = self.nbc[n].wrapping_add(emptied);
            }
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
        self.chains[head].size as u32
    }
}
