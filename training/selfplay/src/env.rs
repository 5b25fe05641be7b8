//! Batched environments for reinforcement learning: N games stepped in one call, every
//! move through the rules engine (superko as the rules say), each step writing the new
//! observations, legal-move masks, rewards and done flags into the caller's buffers (the
//! Python package's numpy arrays, allocated once), with games that end starting again at
//! once (auto-reset).
//!
//! Actions are move indices: `y * size + x` for a point (rows from the top), `size * size`
//! for a pass, as the shards' `policy` and PettingZoo's `go_v5` number them. A game ends
//! after two passes in a row, or at `max_moves` (truncated); it is then counted by area
//! with every stone alive (Tromp-Taylor), as self-play counts, and the rewards are +1 for
//! the winner, -1 for the loser, 0 each for a draw.

use std::fmt;

use weiqi_rules::{Color, Move, Rules, State};

use crate::PLANES;
use crate::play::{index_move, outcome_value};

/// How an observation's planes are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `[17, N, N]`: the shards' and the trainer's planes (AlphaGo Zero's): the mover's
    /// stones in the last 8 positions, newest first, then the opponent's, then a plane of
    /// ones when Black is to move.
    Planes,
    /// `[N, N, 17]`, channels last, in the shape of PettingZoo's `go_v5`: pairs (the
    /// mover's stones, the opponent's) for the last 8 positions, newest first, then a plane
    /// of ones when White is to move (go_v5's colour plane; its pairs are each from the view
    /// of the player who had just moved, these all from the mover's).
    ChannelsLast,
}

/// What a step does with an illegal action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnIllegal {
    /// Refuse the whole step (no game moves) with the first offending game's index.
    Error,
    /// Play a pass instead.
    Pass,
}

/// The games' settings.
#[derive(Debug, Clone)]
pub struct EnvConfig {
    pub size: u8,
    pub rules: Rules,
    /// A game longer than this is cut off and counted as it stands.
    pub max_moves: usize,
    pub layout: Layout,
    pub on_illegal: OnIllegal,
}

impl EnvConfig {
    /// Moves: the points and the pass.
    pub fn actions(&self) -> usize {
        self.area() + 1
    }
    pub fn area(&self) -> usize {
        self.size as usize * self.size as usize
    }
    /// Bytes of one observation.
    pub fn observation_len(&self) -> usize {
        PLANES * self.area()
    }
}

/// A step refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepError {
    /// Game `env` cannot play `action` (outside 0..=size*size, or illegal there).
    Illegal { env: usize, action: i64, why: String },
    /// A buffer of the wrong length (`what`: its name).
    Buffer {
        what: &'static str,
        expected: usize,
        got: usize,
    },
}

impl fmt::Display for StepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StepError::Illegal { env, action, why } => {
                write!(f, "environment {env}: action {action} is illegal ({why})")
            }
            StepError::Buffer { what, expected, got } => {
                write!(f, "{what} holds {got} values; it must hold {expected}")
            }
        }
    }
}

impl std::error::Error for StepError {}

/// The buffers a step writes, one row per game: observations (`observation_len` bytes a
/// game), legal masks (`actions` bytes), rewards (2 a game: Black's, White's), done flags
/// (1 when the game ended with this step; its row then holds the next game's start), and
/// the player to move (0 Black, 1 White).
pub struct Out<'a> {
    pub observations: &'a mut [u8],
    pub legal: &'a mut [u8],
    pub rewards: &'a mut [f32],
    pub dones: &'a mut [u8],
    pub to_play: &'a mut [u8],
}

/// One game and the boards of its last 8 positions (a ring of 8 slots in one buffer, newest
/// at `newest`: contiguous, as a batch of a thousand games is walked once a step).
#[derive(Clone)]
struct Game {
    state: State,
    history: Vec<u8>,
    newest: usize,
    /// Positions recorded so far (up to 8).
    seen: usize,
}

impl Game {
    fn new(config: &EnvConfig) -> Game {
        let state = State::new(config.size, config.rules).expect("a size checked by Envs::new");
        let mut g = Game {
            state,
            history: vec![0; 8 * config.area()],
            newest: 7,
            seen: 0,
        };
        g.record();
        g
    }

    /// Adds the current board to the history.
    fn record(&mut self) {
        self.newest = (self.newest + 1) % 8;
        let area = self.history.len() / 8;
        let slot = &mut self.history[self.newest * area..(self.newest + 1) * area];
        self.state.board().copy_cells(slot);
        self.seen = (self.seen + 1).min(8);
    }

    /// Writes row `k` of `out`: this game's planes, legal moves and player to move.
    fn write(&self, config: &EnvConfig, k: usize, out: &mut Out<'_>) {
        let (o, a) = (config.observation_len(), config.actions());
        let area = self.history.len() / 8;
        let boards = (0..self.seen).map(|back| {
            let slot = (self.newest + 8 - back) % 8;
            &self.history[slot * area..(slot + 1) * area]
        });
        let black = self.state.to_move() == Color::Black;
        write_planes(boards, black, config.layout, &mut out.observations[k * o..(k + 1) * o]);
        self.state.write_legal(&mut out.legal[k * a..(k + 1) * a]);
        out.to_play[k] = !black as u8;
    }

    /// Black's and White's rewards for the game as it stands, counted by area with every
    /// stone alive (as self-play's value targets are).
    fn rewards(&self) -> [f32; 2] {
        let winner = self.state.tromp_taylor_score().outcome.winner();
        [outcome_value(winner, Color::Black), outcome_value(winner, Color::White)]
    }
}

/// Writes a position's planes into `obs` (`PLANES * area` bytes) from its boards, newest
/// first (at most 8 are read), with `black` to move.
pub fn write_planes<'a>(boards: impl Iterator<Item = &'a [u8]>, black: bool, layout: Layout, obs: &mut [u8]) {
    let area = obs.len() / PLANES;
    let (me, them) = if black { (1u8, 2u8) } else { (2u8, 1u8) };
    obs.fill(0);
    for (k, cells) in boards.take(8).enumerate() {
        match layout {
            Layout::Planes => {
                let (mine, theirs) = obs.split_at_mut(8 * area);
                let mine = &mut mine[k * area..(k + 1) * area];
                let theirs = &mut theirs[k * area..(k + 1) * area];
                for (i, &c) in cells.iter().enumerate() {
                    mine[i] = (c == me) as u8;
                    theirs[i] = (c == them) as u8;
                }
            }
            Layout::ChannelsLast => {
                for (i, &c) in cells.iter().enumerate() {
                    obs[i * PLANES + 2 * k] = (c == me) as u8;
                    obs[i * PLANES + 2 * k + 1] = (c == them) as u8;
                }
            }
        }
    }
    match layout {
        Layout::Planes if black => obs[16 * area..].fill(1),
        Layout::ChannelsLast if !black => (0..area).for_each(|i| obs[i * PLANES + 16] = 1),
        _ => {}
    }
}

/// The planes of one game's position (its last 8 boards), as a step of [`Envs`] writes
/// them.
pub fn observe(state: &State, layout: Layout) -> Vec<u8> {
    let boards = crate::recent_boards(state, 8);
    let area = state.board().area() as usize;
    let mut obs = vec![0u8; PLANES * area];
    write_planes(
        boards.iter().rev().map(Vec::as_slice),
        state.to_move() == Color::Black,
        layout,
        &mut obs,
    );
    obs
}

/// N games stepped together.
#[derive(Clone)]
pub struct Envs {
    config: EnvConfig,
    games: Vec<Game>,
}

/// A board size the rules engine cannot play.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadConfig(pub String);

impl fmt::Display for BadConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadConfig {}

impl Envs {
    pub fn new(n: usize, config: EnvConfig) -> Result<Envs, BadConfig> {
        State::new(config.size, config.rules).map_err(|e| BadConfig(e.to_string()))?;
        if n == 0 {
            return Err(BadConfig("at least one environment".into()));
        }
        let game = Game::new(&config);
        Ok(Envs {
            games: vec![game; n],
            config,
        })
    }

    pub fn len(&self) -> usize {
        self.games.len()
    }

    pub fn is_empty(&self) -> bool {
        self.games.is_empty()
    }

    pub fn config(&self) -> &EnvConfig {
        &self.config
    }

    /// Game `k`'s position.
    pub fn state(&self, k: usize) -> Option<&State> {
        self.games.get(k).map(|g| &g.state)
    }

    fn check(&self, out: &Out<'_>) -> Result<(), StepError> {
        let n = self.games.len();
        let lens = [
            (
                "observations",
                out.observations.len(),
                n * self.config.observation_len(),
            ),
            ("legal", out.legal.len(), n * self.config.actions()),
            ("rewards", out.rewards.len(), 2 * n),
            ("dones", out.dones.len(), n),
            ("to_play", out.to_play.len(), n),
        ];
        for (what, got, expected) in lens {
            if got != expected {
                return Err(StepError::Buffer { what, expected, got });
            }
        }
        Ok(())
    }

    /// Every game from the start; rewards and dones zero.
    pub fn reset(&mut self, mut out: Out<'_>) -> Result<(), StepError> {
        self.check(&out)?;
        for (k, g) in self.games.iter_mut().enumerate() {
            *g = Game::new(&self.config);
            g.write(&self.config, k, &mut out);
        }
        out.rewards.fill(0.0);
        out.dones.fill(0);
        Ok(())
    }

    /// Plays `actions[k]` in game `k`, for every game, and writes the results.
    pub fn step(&mut self, actions: &[i64], mut out: Out<'_>) -> Result<(), StepError> {
        self.check(&out)?;
        if actions.len() != self.games.len() {
            return Err(StepError::Buffer {
                what: "actions",
                expected: self.games.len(),
                got: actions.len(),
            });
        }
        // Every action checked before any is played: a refused step changes nothing.
        let moves = self.moves(actions)?;
        let config = &self.config;
        // One pass: each game is played and written while it is in the cache (a batch of a
        // thousand games is megabytes of boards and histories).
        for (k, (g, m)) in self.games.iter_mut().zip(moves).enumerate() {
            // (Legal by the check above, or a pass.)
            let _ = g.state.play(m);
            g.record();
            let ended = g.state.is_over() || g.state.move_number() >= config.max_moves;
            let [b, w] = if ended { g.rewards() } else { [0.0, 0.0] };
            out.rewards[2 * k] = b;
            out.rewards[2 * k + 1] = w;
            out.dones[k] = ended as u8;
            if ended {
                *g = Game::new(config);
            }
            g.write(config, k, &mut out);
        }
        Ok(())
    }

    /// The moves `actions` name, or the first game's refusal.
    fn moves(&self, actions: &[i64]) -> Result<Vec<Move>, StepError> {
        let size = self.config.size;
        actions
            .iter()
            .zip(&self.games)
            .enumerate()
            .map(|(k, (&a, g))| {
                let Some(m) = index_move(a, size, size) else {
                    return match self.config.on_illegal {
                        OnIllegal::Pass => Ok(Move::Pass),
                        OnIllegal::Error => Err(StepError::Illegal {
                            env: k,
                            action: a,
                            why: format!("actions are 0..={}", self.config.area()),
                        }),
                    };
                };
                match (g.state.check(m), self.config.on_illegal) {
                    (Ok(()), _) => Ok(m),
                    (Err(_), OnIllegal::Pass) => Ok(Move::Pass),
                    (Err(why), OnIllegal::Error) => Err(StepError::Illegal {
                        env: k,
                        action: a,
                        why: why.to_string(),
                    }),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::play::{cells, encode_planes};
    use weiqi_rules::Point;
    use weiqi_rules::Preset;

    fn config(size: u8, layout: Layout, on_illegal: OnIllegal) -> EnvConfig {
        EnvConfig {
            size,
            rules: Preset::Chinese.rules(),
            max_moves: 4 * size as usize * size as usize,
            layout,
            on_illegal,
        }
    }

    struct Buffers {
        obs: Vec<u8>,
        legal: Vec<u8>,
        rewards: Vec<f32>,
        dones: Vec<u8>,
        to_play: Vec<u8>,
    }

    impl Buffers {
        fn new(n: usize, c: &EnvConfig) -> Buffers {
            Buffers {
                obs: vec![9; n * c.observation_len()],
                legal: vec![9; n * c.actions()],
                rewards: vec![9.0; 2 * n],
                dones: vec![9; n],
                to_play: vec![9; n],
            }
        }
        fn out(&mut self) -> Out<'_> {
            Out {
                observations: &mut self.obs,
                legal: &mut self.legal,
                rewards: &mut self.rewards,
                dones: &mut self.dones,
                to_play: &mut self.to_play,
            }
        }
    }

    /// The planes are the shards' (`encode_planes` over the game's boards), the mask the
    /// engine's legal moves, through a game with captures and passes.
    #[test]
    fn observations_are_the_shards_planes_and_masks_the_legal_moves() {
        let c = config(5, Layout::Planes, OnIllegal::Error);
        let mut envs = Envs::new(1, c.clone()).unwrap();
        let mut b = Buffers::new(1, &c);
        envs.reset(b.out()).unwrap();
        let mut reference = State::new(5, c.rules).unwrap();
        let mut boards = vec![cells(&reference, 5)];
        // Black captures White's corner stone at (0, 0), then both pass.
        for a in [1, 0, 5, 25, 25] {
            let mut planes = vec![0u8; c.observation_len()];
            encode_planes(&boards, reference.to_move() == Color::Black, 25, &mut planes);
            assert_eq!(b.obs, planes, "before action {a}");
            let mut mask = vec![0u8; 26];
            reference.write_legal(&mut mask);
            assert_eq!(b.legal, mask);
            envs.step(&[a], b.out()).unwrap();
            let m = if a == 25 {
                Move::Pass
            } else {
                Move::Place(Point::new(a as u8 % 5, a as u8 / 5))
            };
            reference.play(m).unwrap();
            boards.push(cells(&reference, 5));
            if reference.is_over() {
                break;
            }
        }
        // Two passes ended it: Black's two stones own the board (White's was taken).
        assert_eq!(b.dones, [1]);
        assert_eq!(b.rewards, [1.0, -1.0]);
        // And the row is the next game's start.
        assert_eq!(envs.state(0).unwrap().move_number(), 0);
        assert_eq!(b.to_play, [0]);
        assert!(b.obs[16 * 25..].iter().all(|&v| v == 1) && b.obs[..16 * 25].iter().all(|&v| v == 0));
    }

    /// One game's planes from its moves alone are those the batched step kept.
    #[test]
    fn a_states_planes_are_the_steps() {
        for layout in [Layout::Planes, Layout::ChannelsLast] {
            let c = config(5, layout, OnIllegal::Error);
            let mut envs = Envs::new(1, c.clone()).unwrap();
            let mut b = Buffers::new(1, &c);
            envs.reset(b.out()).unwrap();
            for a in [12, 7, 13, 8, 11, 6, 17, 16, 18, 25, 3] {
                envs.step(&[a], b.out()).unwrap();
                assert_eq!(observe(envs.state(0).unwrap(), layout), b.obs);
            }
        }
    }

    #[test]
    fn channels_last_holds_the_same_stones_paired() {
        let mut planes = config(5, Layout::Planes, OnIllegal::Error);
        let mut last = planes.clone();
        last.layout = Layout::ChannelsLast;
        let (mut a, mut b) = (
            Envs::new(1, planes.clone()).unwrap(),
            Envs::new(1, last.clone()).unwrap(),
        );
        let (mut ba, mut bb) = (Buffers::new(1, &planes), Buffers::new(1, &last));
        a.reset(ba.out()).unwrap();
        b.reset(bb.out()).unwrap();
        for action in [12, 7, 13, 8] {
            a.step(&[action], ba.out()).unwrap();
            b.step(&[action], bb.out()).unwrap();
            for i in 0..25 {
                for k in 0..8 {
                    assert_eq!(bb.obs[i * 17 + 2 * k], ba.obs[k * 25 + i]);
                    assert_eq!(bb.obs[i * 17 + 2 * k + 1], ba.obs[(8 + k) * 25 + i]);
                }
                // go_v5's colour plane: ones for White.
                assert_eq!(bb.obs[i * 17 + 16], 1 - ba.obs[16 * 25 + i]);
            }
            assert_eq!(ba.legal, bb.legal);
        }
        planes.size = 0;
        assert!(Envs::new(1, planes).is_err());
    }

    #[test]
    fn an_illegal_action_is_refused_with_its_game_or_played_as_a_pass() {
        let c = config(5, Layout::Planes, OnIllegal::Error);
        let mut envs = Envs::new(3, c.clone()).unwrap();
        let mut b = Buffers::new(3, &c);
        envs.reset(b.out()).unwrap();
        envs.step(&[0, 0, 0], b.out()).unwrap();
        // Game 1 plays on an occupied point; nothing moves anywhere.
        let before = b.obs.clone();
        let err = envs.step(&[1, 0, 2], b.out()).unwrap_err();
        assert!(matches!(err, StepError::Illegal { env: 1, action: 0, .. }), "{err}");
        assert!(
            err.to_string().starts_with("environment 1: action 0 is illegal"),
            "{err}"
        );
        assert_eq!(envs.state(0).unwrap().move_number(), 1);
        assert_eq!(b.obs, before);
        let out_of_range = envs.step(&[1, 1, 26], b.out()).unwrap_err();
        assert!(matches!(out_of_range, StepError::Illegal { env: 2, action: 26, .. }));
        // The other policy: a pass.
        let mut c = c;
        c.on_illegal = OnIllegal::Pass;
        let mut envs = Envs::new(1, c.clone()).unwrap();
        let mut one = Buffers::new(1, &c);
        envs.reset(one.out()).unwrap();
        envs.step(&[0], one.out()).unwrap();
        envs.step(&[0], one.out()).unwrap();
        assert_eq!(envs.state(0).unwrap().moves()[1], (Color::White, Move::Pass));
        // Buffers of the wrong length are named.
        let mut short = Buffers::new(2, &c);
        let err = envs.step(&[0], short.out()).unwrap_err();
        assert!(
            matches!(
                err,
                StepError::Buffer {
                    what: "observations",
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn a_game_past_the_move_limit_is_cut_off_and_counted() {
        let mut c = config(5, Layout::Planes, OnIllegal::Error);
        c.max_moves = 3;
        let mut envs = Envs::new(1, c.clone()).unwrap();
        let mut b = Buffers::new(1, &c);
        envs.reset(b.out()).unwrap();
        for a in [12, 0] {
            envs.step(&[a], b.out()).unwrap();
            assert_eq!(b.dones, [0]);
        }
        envs.step(&[25], b.out()).unwrap();
        // Black's centre stone against White's corner one, komi 7.5: White's.
        assert_eq!((b.dones[0], b.rewards[0], b.rewards[1]), (1, -1.0, 1.0));
    }
}
