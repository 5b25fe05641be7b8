//! Random playouts: the policies used by benchmarks, search and search-free self-play.
//!
//! The samplers draw without replacement from the board's own empty-point list (a partial
//! Fisher-Yates shuffle in place), rejecting illegal candidates, so the chosen move is
//! uniform over the legal ones without listing them all first.
//!
//! Two paths: [`State::play_random_game`] and friends play through the exact engine
//! (history, superko); [`Playout`] runs a scratch board with simple ko only, as search
//! engines do in their playouts ([`KoCheck`]).

mod fast;
mod heavy;
mod hints;
mod options;
mod patterns;

pub use fast::Playout;
pub use hints::{LastMoveDistances, MoveHints};
pub use options::{BadKoCheck, KoCheck, PlayoutOptions, move_cap};

use rand_core::RngCore;

use crate::board::stone;
use crate::coord::Move;
use crate::state::State;

/// How a random player picks its move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Policy {
    /// Uniform over all legal moves and pass.
    Uniform,
    /// Uniform over legal moves that do not fill the mover's own single-point eye; pass
    /// only when none is left.
    Light,
    /// Light, answering the last move first (MoGo/moggy style): capture it if in atari,
    /// save own chains it put in atari, play a 3x3 pattern next to it; never a self-atari
    /// of two stones or more.
    Heavy,
}

impl std::str::FromStr for Policy {
    type Err = String;
    fn from_str(s: &str) -> Result<Policy, String> {
        match s {
            "uniform" => Ok(Policy::Uniform),
            "light" => Ok(Policy::Light),
            "heavy" => Ok(Policy::Heavy),
            _ => Err(format!("unknown policy {s:?} (uniform, light or heavy)")),
        }
    }
}

/// A number in `0..n` (Lemire's multiply-shift; the bias is below 2^-22 for n < 1024).
#[inline]
pub(crate) fn below<R: RngCore + ?Sized>(rng: &mut R, n: usize) -> usize {
    ((rng.next_u32() as u64 * n as u64) >> 32) as usize
}

impl State {
    /// Chooses a move for the player to move with `policy`, without playing it.
    /// Returns `Move::Pass` when play is over. Reorders the board's internal empty list.
    pub fn choose_random<R: RngCore + ?Sized>(&mut self, policy: Policy, rng: &mut R) -> Move {
        if self.is_over() {
            return Move::Pass;
        }
        let n = self.board().empty_count();
        let me = stone(self.to_move());
        if policy == Policy::Heavy {
            return self.choose_heavy(rng);
        }
        let mut i = 0;
        loop {
            let pick = match policy {
                Policy::Uniform => {
                    let k = below(rng, n - i + 1);
                    if k == n - i {
                        return Move::Pass;
                    }
                    i + k
                }
                Policy::Light | Policy::Heavy => {
                    if i == n {
                        return Move::Pass;
                    }
                    i + below(rng, n - i)
                }
            };
            self.board_mut().swap_empties(i, pick);
            let cell = self.board().empty_at(i);
            let skip = policy != Policy::Uniform && self.board().is_eye(cell, me);
            if !skip && self.check_index(cell).is_ok() {
                return Move::Place(self.board().point(cell));
            }
            i += 1;
        }
    }

    /// The heavy policy through the exact rules: tactics and patterns, else a light move
    /// that is no big self-atari, else any light move.
    fn choose_heavy<R: RngCore + ?Sized>(&mut self, rng: &mut R) -> Move {
        let me = stone(self.to_move());
        let last = self.last_placed().unwrap_or(0);
        let tactic = heavy::choose(self.board(), me, last, |c| self.check_index(c).is_ok(), rng);
        if let Some(cell) = tactic {
            return Move::Place(self.board().point(cell));
        }
        let n = self.board().empty_count();
        for i in 0..n {
            let pick = i + below(rng, n - i);
            self.board_mut().swap_empties(i, pick);
            let cell = self.board().empty_at(i);
            let ok = !self.board().is_eye(cell, me)
                && !heavy::is_big_self_atari(self.board(), cell, me)
                && self.check_index(cell).is_ok();
            if ok {
                return Move::Place(self.board().point(cell));
            }
        }
        // Only big self-ataris left: play one as light would rather than pass.
        self.choose_random(Policy::Light, rng)
    }

    /// Padded index of the last move when it was a placement.
    pub(crate) fn last_placed(&self) -> Option<usize> {
        match self.moves().last() {
            Some(&(_, Move::Place(p))) => Some(self.board().index(p)),
            _ => None,
        }
    }

    /// Chooses and plays a random move; returns it.
    pub fn play_random<R: RngCore + ?Sized>(&mut self, policy: Policy, rng: &mut R) -> Move {
        let m = self.choose_random(policy, rng);
        match m {
            Move::Pass => self.pass(),
            Move::Place(p) => {
                let i = self.board().index(p);
                self.place_unchecked(i);
            }
        }
        m
    }

    /// Plays random moves until two consecutive passes or `max_moves` plies in all.
    /// Returns the number of plies played by this call.
    pub fn play_random_game<R: RngCore + ?Sized>(&mut self, policy: Policy, rng: &mut R, max_moves: usize) -> usize {
        let start = self.move_number();
        self.reserve(max_moves.saturating_sub(start).min(4 * self.board().area() as usize));
        while !self.is_over() && self.move_number() < max_moves {
            self.play_random(policy, rng);
        }
        self.move_number() - start
    }
}
