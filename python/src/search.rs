//! The searches, self-play and the arena from Python: the engine's tree search (as
//! `weiqi gtp` plays), PUCT over a Python network (a callable on numpy batches), self-play
//! shards (as `weiqi selfplay` writes them), and matches of a Python policy against a GTP
//! engine through the project's referee, with the Wilson interval.

use std::time::Duration;

use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rand::SeedableRng;
use rand::rngs::SmallRng;
use weiqi_gtp::{
    Budget, Choice, EnginePlayer, GameOutcome, MatchSettings, MctsPlayer, MctsSettings, Player, Tally, play_out,
};
use weiqi_rules::{Color, Move, Policy, State as RulesState};
use weiqi_selfplay::{Eval, EvalError, Evaluator, Objects, SearchConfig};

use crate::errors::{runtime, value};
use crate::state::{State, action_move, move_action};

/// The engine's tree search (UCT over heavy playouts, `weiqi gtp --player mcts`) from
/// `state`: `(action, win rate of the player to move)`.
#[pyfunction]
#[pyo3(signature = (state, visits = 1000, threads = 1, seed = 1))]
pub fn mcts_move(py: Python<'_>, state: &State, visits: u32, threads: usize, seed: u64) -> PyResult<(i64, f64)> {
    if !(1..=256).contains(&threads) || visits == 0 {
        return Err(PyValueError::new_err("threads is 1..=256 and visits at least 1"));
    }
    let s = state.inner.clone();
    let size = square(&s)?;
    let top = py.detach(move || {
        let mut player = MctsPlayer::new(MctsSettings {
            playouts: visits,
            threads,
            seed,
            policy: Policy::Heavy,
            resign_below: 0.0,
            shape_prior: weiqi_gtp::DEFAULT_SHAPE_PRIOR,
        });
        player.candidates(&s, s.to_move()).into_iter().next()
    });
    Ok(top.map_or((move_action(Move::Pass, size, size), 0.5), |c| {
        (move_action(c.mv, size, size), c.winrate)
    }))
}

/// The board's size; the searches play square boards only.
fn square(s: &RulesState) -> PyResult<u8> {
    let (w, h) = (s.board().width(), s.board().height());
    if w != h {
        return Err(PyValueError::new_err(format!(
            "the searches play square boards, not {w}x{h}"
        )));
    }
    Ok(w)
}

/// A network as Python gives it: `evaluate(features)` with features uint8 `[B, 17, N, N]`
/// returns `(logits float32 [B, N*N+1], values float32 [B])`, values from the mover's view.
/// Called with the GIL taken for the call only, so that the search around it runs without.
struct PyNet {
    evaluate: Py<PyAny>,
    size: usize,
}

impl Evaluator for PyNet {
    fn evaluate(&mut self, features: &[u8], batch: usize) -> Result<Vec<Eval>, EvalError> {
        let n = self.size;
        Python::attach(|py| {
            let fail = |e: PyErr| EvalError(e.to_string());
            let x = PyArray1::from_slice(py, features)
                .reshape([batch, weiqi_selfplay::PLANES, n, n])
                .map_err(fail)?;
            let answer = self.evaluate.bind(py).call1((x,)).map_err(fail)?;
            let (logits, values): (PyReadonlyArray2<f32>, PyReadonlyArray1<f32>) = answer
                .extract()
                .map_err(|e| EvalError(format!("evaluate must return (float32 [B, N*N+1], float32 [B]): {e}")))?;
            let actions = n * n + 1;
            if logits.shape() != [batch, actions] || values.len() != batch {
                return Err(EvalError(format!(
                    "evaluate returned logits {:?} and values {:?}; expected [{batch}, {actions}] and [{batch}]",
                    logits.shape(),
                    values.shape()
                )));
            }
            let logits = logits.as_array();
            let values = values.as_array();
            Ok((0..batch)
                .map(|b| Eval {
                    logits: logits.row(b).to_vec(),
                    value: values[b].clamp(-1.0, 1.0),
                })
                .collect())
        })
    }
}

/// PUCT (AlphaZero's search) from `state` with `evaluate` as the network (see `PyNet`):
/// `(visit policy float32 [N*N+1], action, value)`. Dirichlet noise at the root when
/// `noise` (self-play's); the action is the most visited move. With `gumbel=m`, Gumbel
/// AlphaZero's root over m sampled moves instead (Gumbel noise when `noise`), and the
/// policy is the completed-Q improved policy.
#[pyfunction]
#[pyo3(signature = (state, evaluate, visits = 100, c_puct = 1.5, noise = false, seed = 0, gumbel = None))]
#[allow(clippy::too_many_arguments)]
pub fn puct_policy<'py>(
    py: Python<'py>,
    state: &State,
    evaluate: &Bound<'py, PyAny>,
    visits: u32,
    c_puct: f32,
    noise: bool,
    seed: u64,
    gumbel: Option<u32>,
) -> PyResult<(Bound<'py, PyArray1<f32>>, i64, f32)> {
    if state.inner.is_over() {
        return Err(PyValueError::new_err("the game is over"));
    }
    let size = square(&state.inner)?;
    let mut cfg = SearchConfig::for_size(size, visits.max(1));
    cfg.c_puct = c_puct;
    cfg.temperature_plies = 0;
    cfg.gumbel = gumbel.map(|m| m.max(1));
    if !noise {
        // (No Dirichlet noise; with `gumbel`, no Gumbel noise either.)
        cfg.dirichlet_epsilon = 0.0;
        cfg.dirichlet_alpha = 0.0;
    }
    let mut net = PyNet {
        evaluate: evaluate.clone().unbind(),
        size: size as usize,
    };
    let mut rng = SmallRng::seed_from_u64(seed);
    let (s, history) = (state.inner.clone(), weiqi_selfplay::recent_boards(&state.inner, 8));
    let root = py
        .detach(move || weiqi_selfplay::search(&s, &history, &cfg, &mut net, &mut rng))
        .map_err(runtime)?;
    Ok((
        PyArray1::from_vec(py, root.policy),
        move_action(root.mv, size, size),
        root.value,
    ))
}

/// Self-play into `location` (a directory, `file://` or `s3://`), as `weiqi selfplay`
/// writes it: shards of `games_per_shard` games and `manifest.json`, returned as a dict.
/// With `evaluate` (a network, as for `puct_policy`), PUCT self-play of `visits` a move
/// with Dirichlet noise, the leaves of `in_flight` games evaluated in one batch, the visit
/// counts as the policy targets (with `gumbel=m`, Gumbel AlphaZero's root over m sampled
/// moves and its improved policy as the targets); else moves of the playout `policy`.
#[pyfunction]
#[pyo3(signature = (location, games, size = 9, seed = 0, policy = "light", komi = 7.5, rules = "chinese", games_per_shard = 64, max_moves = None, evaluate = None, visits = 32, in_flight = 64, gumbel = None))]
#[allow(clippy::too_many_arguments)]
pub fn selfplay<'py>(
    py: Python<'py>,
    location: &str,
    games: u64,
    size: u8,
    seed: u64,
    policy: &str,
    komi: f64,
    rules: &str,
    games_per_shard: u64,
    max_moves: Option<usize>,
    evaluate: Option<Py<PyAny>>,
    visits: u32,
    in_flight: usize,
    gumbel: Option<u32>,
) -> PyResult<Bound<'py, PyAny>> {
    let search = evaluate.as_ref().map(|_| SearchConfig {
        in_flight: in_flight.max(1),
        gumbel: gumbel.map(|m| m.max(1)),
        ..SearchConfig::for_size(size, visits.max(1))
    });
    let mut config = weiqi_selfplay::Config {
        size,
        games,
        seed,
        policy: policy.parse().map_err(value)?,
        rules: rules.to_string(),
        komi,
        games_per_shard: games_per_shard.max(1),
        max_moves: max_moves.unwrap_or(4 * size as usize * size as usize),
        sgf: false,
        player: None,
        search,
        variant: None,
        partition: Default::default(),
    };
    crate::state::rules(rules, komi)?;
    let out = Objects::open(location).map_err(crate::errors::runtime)?;
    let manifest = match evaluate {
        Some(evaluate) => {
            config.player = Some("python".into());
            let net = std::sync::Mutex::new(PyNet {
                evaluate,
                size: size as usize,
            });
            py.detach(|| weiqi_selfplay::run_search(&config, &out, false, std::slice::from_ref(&net)))
        }
        None => py.detach(|| weiqi_selfplay::run(&config, &out, false)),
    }
    .map_err(runtime)?;
    let text = serde_json::to_string(&manifest).map_err(runtime)?;
    py.import("json")?.call_method1("loads", (text,))
}

/// A Python policy as a referee's player: `policy(state)` gives an action, or -1 to resign.
struct PyPlayer {
    policy: Py<PyAny>,
    name: String,
    failure: Option<String>,
}

impl Player for PyPlayer {
    fn genmove(&mut self, state: &RulesState, _color: Color, _budget: Budget, _cleanup: bool) -> Choice {
        let size = state.board().width();
        let asked = Python::attach(|py| -> PyResult<i64> {
            let s = Py::new(py, State { inner: state.clone() })?;
            self.policy.bind(py).call1((s,))?.extract()
        });
        match asked {
            Ok(-1) => Choice::Resign,
            Ok(a) => match action_move(a, size, size) {
                Ok(m) => Choice::Play(m),
                Err(e) => Choice::Fail(e.to_string()),
            },
            Err(e) => {
                let why = format!("the policy raised: {e}");
                self.failure = Some(why.clone());
                Choice::Fail(why)
            }
        }
    }

    fn name(&self) -> String {
        self.name.clone()
    }

    fn failure(&self) -> Option<String> {
        self.failure.clone()
    }
}

/// A match of `policy` (a callable: State -> action, -1 to resign) against a GTP engine
/// (`engine`: its command line, e.g. `gnugo --mode gtp --level 1`), colours alternating
/// (the policy Black in even games), through the project's referee (`weiqi match`'s):
/// a dict of wins, losses, draws, the score (a draw half) and its 95% Wilson interval,
/// and each game's result.
#[pyfunction]
#[pyo3(signature = (policy, engine, games = 10, size = 9, komi = 7.5, rules = "chinese", seconds_per_move = None, max_moves = None, seed = 1))]
#[allow(clippy::too_many_arguments)]
pub fn play_match<'py>(
    py: Python<'py>,
    policy: Py<PyAny>,
    engine: &str,
    games: u32,
    size: u8,
    komi: f64,
    rules: &str,
    seconds_per_move: Option<f64>,
    max_moves: Option<usize>,
    seed: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let r = crate::state::rules(rules, komi)?;
    RulesState::new(size, r).map_err(value)?;
    let per_move = seconds_per_move
        .map(|s| {
            Duration::try_from_secs_f64(s)
                .ok()
                .filter(|d| !d.is_zero())
                .ok_or_else(|| PyValueError::new_err("seconds_per_move must be positive"))
        })
        .transpose()?;
    let settings = MatchSettings {
        max_moves: max_moves.unwrap_or(4 * size as usize * size as usize),
        opening: 0,
        seconds_per_move: per_move,
        lag: Duration::from_secs(1),
    };
    let timeout = per_move.unwrap_or(Duration::from_secs(60)) + Duration::from_secs(30);
    let command = engine.to_string();
    let (results, tally) = py
        .detach(|| -> Result<_, String> {
            let mut ours = PyPlayer {
                policy,
                name: "python".into(),
                failure: None,
            };
            let mut theirs = EnginePlayer::spawn(&command, timeout).map_err(|e| e.to_string())?;
            let mut rng = SmallRng::seed_from_u64(seed);
            let mut results = Vec::new();
            let mut tally = Tally::default();
            for g in 0..games {
                let start = RulesState::new(size, r).map_err(|e| e.to_string())?;
                let ours_black = g % 2 == 0;
                let played = if ours_black {
                    play_out(&mut ours, &mut theirs, start, &settings, &mut rng)
                } else {
                    play_out(&mut theirs, &mut ours, start, &settings, &mut rng)
                };
                if let Some(why) = ours.failure.take() {
                    return Err(why);
                }
                let outcome = GameOutcome {
                    a_black: ours_black,
                    winner: played.winner,
                    moves: played.state.move_number(),
                    ending: played.ending,
                };
                tally.add(&outcome);
                results.push(outcome);
            }
            Ok((results, tally))
        })
        .map_err(runtime)?;
    // (The policy is the tally's A.)
    let d = PyDict::new(py);
    d.set_item("games", tally.games)?;
    d.set_item("wins", tally.a_wins)?;
    d.set_item("losses", tally.b_wins)?;
    d.set_item("draws", tally.draws)?;
    d.set_item("score", tally.a_win_rate())?;
    d.set_item("wilson95", tally.wilson95())?;
    let rows: Vec<_> = results
        .into_iter()
        .map(|o| {
            let d = PyDict::new(py);
            d.set_item("policy_black", o.a_black)?;
            d.set_item("ending", format!("{:?}", o.ending))?;
            d.set_item("black_won", o.winner.map(|c| c == Color::Black))?;
            Ok(d)
        })
        .collect::<PyResult<_>>()?;
    d.set_item("results", rows)?;
    Ok(d)
}

/// The 95% Wilson interval of `score` (wins, a draw half) out of `n` games.
#[pyfunction]
pub fn wilson(score: f64, n: f64) -> (f64, f64) {
    weiqi_rating::wilson95(score, n)
}
