//! `VecEnv`: N games stepped in one call (`weiqi_selfplay::env::Envs`). The numpy arrays it
//! returns are allocated once and written in place by every step, with the GIL released
//! while the engine works, so that two Python threads stepping two environments use two
//! cores.

use numpy::{PyArray1, PyArray2, PyArrayDyn, PyArrayMethods, PyReadonlyArray1};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use weiqi_rules::State;
use weiqi_selfplay::PLANES;
use weiqi_selfplay::env::{EnvConfig, Envs, Layout, OnIllegal, Out, StepError};

use crate::errors::{IllegalMoveError, value};

pub(crate) fn layout(name: &str) -> PyResult<Layout> {
    match name {
        "planes" => Ok(Layout::Planes),
        "channels_last" | "pettingzoo" => Ok(Layout::ChannelsLast),
        other => Err(PyValueError::new_err(format!(
            "layout is 'planes' or 'channels_last', not {other:?}"
        ))),
    }
}

pub(crate) fn observe(state: &State, layout: Layout) -> Vec<u8> {
    weiqi_selfplay::env::observe(state, layout)
}

/// N games of Go stepped together.
///
/// `observations` (uint8, `[N, 17, size, size]`, or `[N, size, size, 17]` with
/// `layout="channels_last"`), `legal` (uint8, `[N, size*size+1]`), `rewards` (float32,
/// `[N, 2]`: Black's, White's), `dones` (uint8, `[N]`: 1 when the game ended) and `to_play` (uint8, `[N]`: 0
/// Black, 1 White) are the same arrays after every step, written in place. A game that
/// ends (two passes, or `max_moves`) is counted by area with every stone alive, its
/// rewards reported with `dones` set, and its row is then the next game's start.
#[pyclass(module = "weiqi")]
pub struct VecEnv {
    envs: Envs,
    observations: Py<PyArrayDyn<u8>>,
    legal: Py<PyArray2<u8>>,
    rewards: Py<PyArray2<f32>>,
    dones: Py<PyArray1<u8>>,
    to_play: Py<PyArray1<u8>>,
}

/// `actions` as int64 without a copy when it is one (any integer array or sequence
/// otherwise, converted): TypeError for another dtype, ValueError for another shape, each
/// naming the argument.
fn actions_arg<'py>(py: Python<'py>, actions: &Bound<'py, PyAny>) -> PyResult<PyReadonlyArray1<'py, i64>> {
    if let Ok(a) = actions.extract::<PyReadonlyArray1<'py, i64>>() {
        return Ok(a);
    }
    let array = py.import("numpy")?.call_method1("asarray", (actions,))?;
    let dtype = array.getattr("dtype")?;
    let kind: String = dtype.getattr("kind")?.extract()?;
    if kind != "i" && kind != "u" {
        return Err(PyTypeError::new_err(format!(
            "actions must be integers (int64, one per game), not {}",
            dtype.str()?
        )));
    }
    let ndim: usize = array.getattr("ndim")?.extract()?;
    if ndim != 1 {
        return Err(PyValueError::new_err(format!(
            "actions must be one-dimensional (one per game), not of shape {}",
            array.getattr("shape")?.str()?
        )));
    }
    array.call_method1("astype", ("int64",))?.extract()
}

fn step_error(e: StepError) -> PyErr {
    match e {
        StepError::Illegal { .. } => IllegalMoveError::new_err(e.to_string()),
        StepError::Buffer { .. } => PyValueError::new_err(e.to_string()),
    }
}

impl VecEnv {
    /// Runs `f` on the engine's games and the arrays' memory with the GIL released (numpy's
    /// borrow tracking keeps other Rust code from writing them meanwhile).
    fn with_buffers<T: Send>(&mut self, py: Python<'_>, f: impl FnOnce(&mut Envs, Out<'_>) -> T + Send) -> PyResult<T> {
        let mut observations = self.observations.bind(py).readwrite();
        let mut legal = self.legal.bind(py).readwrite();
        let mut rewards = self.rewards.bind(py).readwrite();
        let mut dones = self.dones.bind(py).readwrite();
        let mut to_play = self.to_play.bind(py).readwrite();
        let contiguous = |_| PyValueError::new_err("the VecEnv's arrays must stay contiguous");
        let out = Out {
            observations: observations.as_slice_mut().map_err(contiguous)?,
            legal: legal.as_slice_mut().map_err(contiguous)?,
            rewards: rewards.as_slice_mut().map_err(contiguous)?,
            dones: dones.as_slice_mut().map_err(contiguous)?,
            to_play: to_play.as_slice_mut().map_err(contiguous)?,
        };
        let envs = &mut self.envs;
        Ok(py.detach(move || f(envs, out)))
    }

    fn arrays<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyTuple> {
        pyo3::types::PyTuple::new(
            py,
            [
                self.observations.bind(py).as_any(),
                self.legal.bind(py).as_any(),
                self.rewards.bind(py).as_any(),
                self.dones.bind(py).as_any(),
            ],
        )
        .expect("a tuple of four")
    }
}

#[pymethods]
impl VecEnv {
    /// `num_envs` games of `size` (2..=25) under `rules` with `komi`; `layout` `planes` or
    /// `channels_last`; an illegal action raises IllegalMoveError naming its game
    /// (`on_illegal="raise"`, and no game moves) or is played as a pass
    /// (`on_illegal="pass"`); a game is cut off after `max_moves` (default 4 * size^2).
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (num_envs, size = 19, komi = 7.5, rules = "chinese", layout = "planes", on_illegal = "raise", max_moves = None))]
    fn new(
        py: Python<'_>,
        num_envs: usize,
        size: u8,
        komi: f64,
        rules: &str,
        layout: &str,
        on_illegal: &str,
        max_moves: Option<usize>,
    ) -> PyResult<VecEnv> {
        let on_illegal = match on_illegal {
            "raise" => OnIllegal::Error,
            "pass" => OnIllegal::Pass,
            other => {
                return Err(PyValueError::new_err(format!(
                    "on_illegal is 'raise' or 'pass', not {other:?}"
                )));
            }
        };
        let config = EnvConfig {
            size,
            rules: crate::state::rules(rules, komi)?,
            max_moves: max_moves.unwrap_or(4 * size as usize * size as usize),
            layout: self::layout(layout)?,
            on_illegal,
        };
        if num_envs > 1 << 20 {
            return Err(PyValueError::new_err("num_envs is at most 1048576"));
        }
        let envs = Envs::new(num_envs, config.clone()).map_err(value)?;
        let n = size as usize;
        let shape = match config.layout {
            Layout::Planes => vec![num_envs, PLANES, n, n],
            Layout::ChannelsLast => vec![num_envs, n, n, PLANES],
        };
        let env = VecEnv {
            envs,
            observations: PyArrayDyn::zeros(py, shape, false).unbind(),
            legal: PyArray2::zeros(py, [num_envs, config.actions()], false).unbind(),
            rewards: PyArray2::zeros(py, [num_envs, 2], false).unbind(),
            dones: PyArray1::zeros(py, num_envs, false).unbind(),
            to_play: PyArray1::zeros(py, num_envs, false).unbind(),
        };
        let mut env = env;
        env.with_buffers(py, |envs, out| envs.reset(out))?.map_err(step_error)?;
        Ok(env)
    }

    /// Every game from the start: `(observations, legal)`.
    fn reset<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
        self.with_buffers(py, |envs, out| envs.reset(out))?
            .map_err(step_error)?;
        let a = self.arrays(py);
        pyo3::types::PyTuple::new(py, [a.get_item(0)?, a.get_item(1)?])
    }

    /// Plays `actions` (int64, one per game) and returns `(observations, legal, rewards,
    /// dones)`, the same arrays every time.
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        actions: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
        let actions = actions_arg(py, actions)?;
        let actions = actions
            .as_slice()
            .map_err(|_| PyValueError::new_err("actions must be contiguous"))?;
        if actions.len() != self.envs.len() {
            return Err(PyValueError::new_err(format!(
                "actions holds {} values; the VecEnv has {} games",
                actions.len(),
                self.envs.len()
            )));
        }
        self.with_buffers(py, |envs, out| envs.step(actions, out))?
            .map_err(step_error)?;
        Ok(self.arrays(py))
    }

    /// A copy of game `k`'s position.
    fn state(&self, k: usize) -> PyResult<crate::state::State> {
        self.envs
            .state(k)
            .map(|s| crate::state::State { inner: s.clone() })
            .ok_or_else(|| pyo3::exceptions::PyIndexError::new_err(format!("k is 0..{}", self.envs.len())))
    }

    #[getter]
    fn num_envs(&self) -> usize {
        self.envs.len()
    }

    #[getter]
    fn size(&self) -> u8 {
        self.envs.config().size
    }

    #[getter]
    fn num_actions(&self) -> usize {
        self.envs.config().actions()
    }

    #[getter]
    fn observations<'py>(&self, py: Python<'py>) -> Bound<'py, PyArrayDyn<u8>> {
        self.observations.bind(py).clone()
    }

    #[getter]
    fn legal<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<u8>> {
        self.legal.bind(py).clone()
    }

    #[getter]
    fn rewards<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f32>> {
        self.rewards.bind(py).clone()
    }

    #[getter]
    fn dones<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u8>> {
        self.dones.bind(py).clone()
    }

    #[getter]
    fn to_play<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u8>> {
        self.to_play.bind(py).clone()
    }
}
