//! The playout runner: a scratch board played to the end with simple ko only, or the
//! exact engine when asked.
//!
//! The simple-ko path keeps no position keys, no hash set and no move list (unless
//! recording), and tests legality from the chain bookkeeping alone (no probe hash): that
//! is where the exact path spends most of its time per move.

use rand_core::RngCore;

use super::options::{KoCheck, PlayoutOptions};
use super::{Policy, below, heavy};
use crate::board::{Board, stone};
use crate::color::Color;
use crate::coord::Move;
use crate::state::State;

/// Sampler modes (see [`Playout::sample`]).
const UNIFORM: u8 = 0;
const LIGHT: u8 = 1;
const HEAVY: u8 = 2;

/// Draws with replacement before the exhaustive shuffle (see [`Playout::sample`]).
const QUICK_TRIES: usize = 8;

/// A reusable playout runner; keeps its scratch board between runs.
#[derive(Clone, Debug)]
pub struct Playout {
    opts: PlayoutOptions,
    board: Board,
    to_move: Color,
    /// Simple-ko point for the player to move; 0 (a border cell) when none.
    ko: usize,
    passes: u32,
    plies: usize,
    suicide: bool,
    /// Cell of the last placement (0: none or a pass), for the heavy policy.
    last: usize,
    moves: Vec<Move>,
    /// Position keys after each move that removed stones: a cycle (double ko and the like,
    /// which simple ko allows forever) must pass through one of them again.
    removal_keys: Vec<u128>,
    /// One bit per value of a key's low byte among `removal_keys`: most keys are new, and
    /// the bit says so without scanning the list.
    removal_filter: [u64; 4],
    cycled: bool,
    exact: Option<State>,
}

impl Playout {
    pub fn new(opts: PlayoutOptions) -> Playout {
        Playout {
            opts,
            board: Board::new(2).expect("2x2 is a valid size"),
            to_move: Color::Black,
            ko: 0,
            passes: 0,
            plies: 0,
            suicide: false,
            last: 0,
            moves: Vec::new(),
            removal_keys: Vec::new(),
            removal_filter: [0; 4],
            cycled: false,
            exact: None,
        }
    }

    pub fn options(&self) -> &PlayoutOptions {
        &self.opts
    }

    /// Plays from `from` until two consecutive passes or `max_moves` plies; returns the
    /// plies played. `from` is not changed; the end position is [`Playout::board`].
    ///
    /// With simple ko, a playout also stops when a move that removed stones recreates a
    /// position seen after an earlier such move ([`Playout::cycled`]): the game would turn
    /// in that cycle until the cap, as search engines' playouts do. The exact rules forbid
    /// that move as superko.
    pub fn run<R: RngCore + ?Sized>(&mut self, from: &State, rng: &mut R) -> usize {
        self.moves.clear();
        if self.opts.ko == KoCheck::Exact {
            return self.run_exact(from, rng);
        }
        self.board.copy_from(from.board());
        self.to_move = from.to_move();
        self.ko = from.ko_index().unwrap_or(0);
        self.passes = from.consecutive_passes();
        self.suicide = from.rules().suicide_allowed;
        // The heavy policy answers the last move, the start position's included (a search
        // tree's leaf move is the playout's first to answer).
        self.last = from.last_placed().unwrap_or(0);
        self.plies = 0;
        self.removal_keys.clear();
        self.removal_filter = [0; 4];
        self.cycled = false;
        while self.passes < 2 && !self.cycled && self.plies < self.opts.max_moves {
            self.step(rng);
        }
        self.plies
    }

    fn run_exact<R: RngCore + ?Sized>(&mut self, from: &State, rng: &mut R) -> usize {
        let s = match &mut self.exact {
            Some(s) => {
                s.clone_from(from);
                s
            }
            None => self.exact.insert(from.clone()),
        };
        let start = s.move_number();
        let n = s.play_random_game(self.opts.policy, rng, start.saturating_add(self.opts.max_moves));
        if self.opts.record {
            self.moves.extend(s.moves()[start..].iter().map(|&(_, m)| m));
        }
        self.plies = n;
        n
    }

    /// The position at the end of the last run.
    pub fn board(&self) -> &Board {
        match (&self.exact, self.opts.ko) {
            (Some(s), KoCheck::Exact) => s.board(),
            _ => &self.board,
        }
    }

    /// The moves of the last run, when recording.
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// Whether the last run stopped on a repeated position (simple ko only).
    pub fn cycled(&self) -> bool {
        self.cycled
    }

    /// Plies played by the last run.
    pub fn plies(&self) -> usize {
        self.plies
    }

    /// Chooses and plays one move for the player to move.
    #[inline]
    fn step<R: RngCore + ?Sized>(&mut self, rng: &mut R) {
        let me = stone(self.to_move);
        let choice = match self.opts.policy {
            Policy::Uniform => self.sample::<R, UNIFORM>(rng, me),
            Policy::Light => self.sample::<R, LIGHT>(rng, me),
            Policy::Heavy => {
                let (b, ko, suicide) = (&self.board, self.ko, self.suicide);
                let legal = |c: usize| c != ko && b.is_legal_simple(c, me, suicide);
                heavy::choose(b, me, self.last, legal, rng)
                    .or_else(|| self.sample::<R, HEAVY>(rng, me))
                    // Only big self-ataris left: play one rather than pass while the
                    // opponent throws in forever (a cycle light play would break).
                    .or_else(|| self.sample::<R, LIGHT>(rng, me))
            }
        };
        match choice {
            Some(cell) => self.place(cell, me),
            None => self.pass(),
        }
        self.plies += 1;
    }

    /// Draws without replacement from the empty list (a partial Fisher-Yates shuffle) until
    /// a legal candidate. `UNIFORM` counts pass as one more candidate and takes eyes too;
    /// `LIGHT` skips own eyes; `HEAVY` skips big self-ataris as well.
    ///
    /// A few draws with replacement come first: they need no swap, and most moves are
    /// found there. Each phase alone picks uniformly among the acceptable candidates, so
    /// the two together do too.
    #[inline(always)]
    fn sample<R: RngCore + ?Sized, const MODE: u8>(&mut self, rng: &mut R, me: u8) -> Option<usize> {
        let n = self.board.empty_count();
        let with_pass = (MODE == UNIFORM) as usize;
        for _ in 0..QUICK_TRIES {
            let k = below(rng, n + with_pass);
            if k == n {
                return None; // pass drawn (uniform), or no empty point at all
            }
            let cell = self.board.empty_at(k);
            if self.acceptable::<MODE>(cell, me) {
                return Some(cell);
            }
        }
        let mut i = 0;
        loop {
            let pick = if MODE == UNIFORM {
                let k = below(rng, n - i + 1);
                if k == n - i {
                    return None;
                }
                i + k
            } else {
                if i == n {
                    return None;
                }
                i + below(rng, n - i)
            };
            let cell = self.board.empty_at(pick);
            if self.acceptable::<MODE>(cell, me) {
                // Only rejected candidates need to leave the undrawn part of the list.
                return Some(cell);
            }
            self.board.swap_empties(i, pick);
            i += 1;
        }
    }

    /// Whether the sampler may play `me` at empty `cell`.
    #[inline(always)]
    fn acceptable<const MODE: u8>(&self, cell: usize, me: u8) -> bool {
        cell != self.ko
            && (MODE == UNIFORM || !self.board.is_eye(cell, me))
            && self.board.is_legal_simple(cell, me, self.suicide)
            && (MODE != HEAVY || !heavy::is_big_self_atari(&self.board, cell, me))
    }

    #[inline]
    fn place(&mut self, cell: usize, me: u8) {
        let removed = self.board.place(cell, me);
        let captures = removed[(me ^ 3) as usize - 1];
        self.ko = self.board.ko_after(cell, captures).unwrap_or(0);
        self.last = cell;
        self.passes = 0;
        self.to_move = self.to_move.opponent();
        if removed != [0, 0] {
            // Situational key: the same stones with the other player to move differ.
            let key = self.board.hash() ^ (self.to_move == Color::White) as u128;
            let (word, bit) = ((key as usize >> 6) & 3, 1u64 << (key & 63));
            if self.removal_filter[word] & bit != 0 && self.removal_keys.contains(&key) {
                self.cycled = true;
            } else {
                self.removal_filter[word] |= bit;
                self.removal_keys.push(key);
            }
        }
        if self.opts.record {
            self.moves.push(Move::Place(self.board.point(cell)));
        }
    }

    fn pass(&mut self) {
        self.ko = 0;
        self.last = 0;
        self.passes += 1;
        self.to_move = self.to_move.opponent();
        if self.opts.record {
            self.moves.push(Move::Pass);
        }
    }
}
