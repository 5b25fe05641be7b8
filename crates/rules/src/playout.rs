//! Random playouts: the policies used by benchmarks and search-free self-play.
//!
//! Both samplers draw without replacement from the board's own empty-point list (a partial
//! Fisher-Yates shuffle in place), rejecting illegal candidates, so the chosen move is
//! uniform over the legal ones without listing them all first.

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
}

impl std::str::FromStr for Policy {
    type Err = String;
    fn from_str(s: &str) -> Result<Policy, String> {
        match s {
            "uniform" => Ok(Policy::Uniform),
            "light" => Ok(Policy::Light),
            _ => Err(format!("unknown policy {s:?} (uniform or light)")),
        }
    }
}

/// A number in `0..n` (Lemire's multiply-shift; the bias is below 2^-22 for n < 1024).
#[inline]
fn below<R: RngCore + ?Sized>(rng: &mut R, n: usize) -> usize {
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
                Policy::Light => {
                    if i == n {
                        return Move::Pass;
                    }
                    i + below(rng, n - i)
                }
            };
            self.board_mut().swap_empties(i, pick);
            let cell = self.board().empties()[i] as usize;
            let skip = policy == Policy::Light && self.board().is_eye(cell, me);
            if !skip && self.check_index(cell).is_ok() {
                return Move::Place(self.board().point(cell));
            }
            i += 1;
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
