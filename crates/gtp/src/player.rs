//! Who chooses moves: the one `Player` trait, for `weiqi gtp` (the engine's `genmove`),
//! the referee's in-process games and the trainer's arena.

use rand::SeedableRng;
use rand::rngs::SmallRng;
use weiqi_rules::{Color, Move, Policy, State};

use crate::timing::Budget;

/// A move chosen, a resignation, or a player that could not choose (why).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    Play(Move),
    Resign,
    /// The player failed (an engine that exited or answered nonsense, a network that
    /// could not evaluate): the referee forfeits its game.
    Fail(String),
}

/// Chooses moves for the engine.
pub trait Player {
    /// A move for `color` in `state` within `budget`. `cleanup`: the controller wants the
    /// game played out (KGS's `kgs-genmove_cleanup`): no pass while dead stones of the
    /// opponent are left to capture.
    fn genmove(&mut self, state: &State, color: Color, budget: Budget, cleanup: bool) -> Choice;

    /// Gets ready to be asked for `color`'s move in `state`, before the referee's clock
    /// starts: an engine is told the moves it has not seen (and set up for a new game) and
    /// its time. An error forfeits the game (an engine that refuses a legal move loses).
    fn prepare(&mut self, _state: &State, _color: Color) -> Result<(), String> {
        Ok(())
    }

    /// The player's name in reports (`light`, `mcts`, `gtp:COMMAND`, `net:PATH@VISITS`).
    fn name(&self) -> String;

    /// Why the player stopped choosing real moves (an engine that failed, a network that
    /// could not evaluate): its games' results are then no measurement.
    fn failure(&self) -> Option<String> {
        None
    }

    /// Searches `state` for `color` about `slice` longer (a GUI's live analysis asks again
    /// and again, and a searching player keeps what it found), and gives its candidates
    /// so far, best first; none when the player does not search.
    fn analyze(&mut self, _state: &State, _color: Color, _slice: std::time::Duration) -> Option<Vec<crate::Candidate>> {
        None
    }

    /// The dead stones at the end of `state`'s game as the player sees them, when it keeps
    /// its own count (an engine's `final_status_list dead`); the referee counts with them
    /// when both players agree.
    fn dead_stones(&mut self, _state: &State) -> Option<Vec<weiqi_rules::Point>> {
        None
    }
}

/// The players `weiqi gtp --player` offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlayerKind {
    /// A uniformly random legal move (or pass).
    Uniform,
    /// A random legal move that fills none of its own one-point eyes; pass when none is left.
    Light,
    /// The heavy playout policy's move: captures, atari escapes, 3x3 patterns around the
    /// last move, no big self-atari, no eye filling.
    Heavy,
    /// Monte Carlo tree search over playouts (`MctsPlayer`).
    Mcts,
}

impl std::str::FromStr for PlayerKind {
    type Err = String;
    fn from_str(s: &str) -> Result<PlayerKind, String> {
        match s {
            "uniform" => Ok(PlayerKind::Uniform),
            "light" => Ok(PlayerKind::Light),
            "heavy" => Ok(PlayerKind::Heavy),
            "mcts" => Ok(PlayerKind::Mcts),
            _ => Err(format!("unknown player {s:?} (uniform, light, heavy or mcts)")),
        }
    }
}

/// A player that plays one random move by a playout policy.
pub struct RandomPlayer {
    policy: Policy,
    rng: SmallRng,
}

impl RandomPlayer {
    pub fn new(policy: Policy, seed: u64) -> RandomPlayer {
        RandomPlayer {
            policy,
            rng: SmallRng::seed_from_u64(seed),
        }
    }
}

impl Player for RandomPlayer {
    fn genmove(&mut self, state: &State, color: Color, _budget: Budget, cleanup: bool) -> Choice {
        let mut s = to_move(state, color);
        // Playing it out: never a pass while a move that fills no own eye is left.
        let policy = if cleanup && self.policy == Policy::Uniform {
            Policy::Light
        } else {
            self.policy
        };
        Choice::Play(s.choose_random(policy, &mut self.rng))
    }

    fn name(&self) -> String {
        format!("{:?}", self.policy).to_lowercase()
    }
}

/// A copy of `state` with `color` to move (GTP lets the controller ask either colour for
/// a move; asking the other one is as if the player to move had passed).
pub fn to_move(state: &State, color: Color) -> State {
    let mut s = state.clone();
    if s.to_move() != color {
        s.pass();
    }
    // (A pass may have ended play in the copy; the choice is for a game that goes on.)
    s.resume();
    s
}
