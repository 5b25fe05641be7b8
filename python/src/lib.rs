//! `weiqi._native`: the Python door to the engine. Each module binds one Rust part and
//! only translates (numpy arrays, Python errors); the rules, the environments' stepping,
//! the shards and the searches are the workspace's own crates.
//!
//! - `state` — `State`, one game under the rules engine;
//! - `envs` — `VecEnv`, N games stepped in one call into preallocated numpy buffers;
//! - `data` — the self-play shards and their manifest, from a directory or object store;
//! - `search` — the tree search and PUCT with a Python network, self-play, the arena.
//!
//! Errors: an illegal move is `IllegalMoveError` (a `ValueError`), a bad argument
//! `ValueError` or `TypeError` naming it, a shard that cannot be read `ShardError`; a Rust
//! panic reaches Python as pyo3's `PanicException`, never as a crash.

use pyo3::prelude::*;

mod data;
mod envs;
mod errors;
mod search;
mod state;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<state::State>()?;
    m.add_class::<envs::VecEnv>()?;
    m.add("IllegalMoveError", py.get_type::<errors::IllegalMoveError>())?;
    m.add("ShardError", py.get_type::<errors::ShardError>())?;
    m.add_function(wrap_pyfunction!(data::read_manifest, m)?)?;
    m.add_function(wrap_pyfunction!(data::list_shards, m)?)?;
    m.add_function(wrap_pyfunction!(data::read_shard, m)?)?;
    m.add_function(wrap_pyfunction!(data::schema_version, m)?)?;
    m.add_function(wrap_pyfunction!(search::mcts_move, m)?)?;
    m.add_function(wrap_pyfunction!(search::puct_policy, m)?)?;
    m.add_function(wrap_pyfunction!(search::selfplay, m)?)?;
    m.add_function(wrap_pyfunction!(search::play_match, m)?)?;
    m.add_function(wrap_pyfunction!(search::wilson, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
