//! The self-play shards, as `weiqi selfplay` (one machine or a cluster's workers) writes
//! them, from a directory, `file://` or `s3://` (credentials and endpoint from the usual
//! `AWS_*` environment): every run directory's manifest (its schema version checked) and
//! each shard read and checked as `weiqi index` checks it, as numpy arrays.

use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use weiqi_selfplay::Objects;
use weiqi_selfplay::index::{read_checked, run_dirs};

use crate::errors::ShardError;

fn shard_error(e: weiqi_selfplay::Error) -> PyErr {
    ShardError::new_err(e.to_string())
}

/// The shard schema this build reads.
#[pyfunction]
pub fn schema_version() -> u32 {
    weiqi_selfplay::SCHEMA_VERSION
}

/// Every run directory's manifest under `location`, as dicts (with `dir`, the directory
/// below the root): ShardError for none, or one of another schema version.
#[pyfunction]
pub fn read_manifest<'py>(py: Python<'py>, location: &str) -> PyResult<Bound<'py, PyList>> {
    let root = Objects::open(location).map_err(shard_error)?;
    let found = py.detach(|| run_dirs(&root)).map_err(shard_error)?;
    let json = py.import("json")?;
    let out = PyList::empty(py);
    for f in found {
        let text = serde_json::to_string(&f.manifest).map_err(crate::errors::runtime)?;
        let d = json.call_method1("loads", (text,))?;
        d.set_item("dir", f.rel)?;
        out.append(d)?;
    }
    Ok(out)
}

/// Every shard under `location`: `(key, board size, positions)`, in order.
#[pyfunction]
pub fn list_shards(py: Python<'_>, location: &str) -> PyResult<Vec<(String, u8, u64)>> {
    let root = Objects::open(location).map_err(shard_error)?;
    let found = py.detach(|| run_dirs(&root)).map_err(shard_error)?;
    Ok(found
        .iter()
        .flat_map(|f| {
            f.manifest
                .shards
                .iter()
                .map(|s| (f.key(&s.file), f.manifest.board_size, s.positions))
        })
        .collect())
}

/// One shard (`key` below `location`, of `size`x`size` boards), checked, as a dict of
/// numpy arrays: features uint8 [n,17,N,N], policy float32 [n,N*N+1], legal uint8,
/// value float32 [n], ownership int8 [n,N,N], score float32, game_id uint64,
/// move_number uint16, scored uint8, next_move int16 (the opponent's reply, -1 for none).
#[pyfunction]
pub fn read_shard<'py>(py: Python<'py>, location: &str, key: &str, size: usize) -> PyResult<Bound<'py, PyDict>> {
    let root = Objects::open(location).map_err(shard_error)?;
    let s = py.detach(|| read_checked(&root, key, size)).map_err(shard_error)?;
    let d = PyDict::new(py);
    d.set_item("features", s.features.into_pyarray(py))?;
    d.set_item("policy", s.policy.into_pyarray(py))?;
    d.set_item("legal", s.legal.into_pyarray(py))?;
    d.set_item("value", s.value.into_pyarray(py))?;
    d.set_item("ownership", s.ownership.into_pyarray(py))?;
    d.set_item("score", s.score.into_pyarray(py))?;
    d.set_item("game_id", s.game_id.into_pyarray(py))?;
    d.set_item("move_number", s.move_number.into_pyarray(py))?;
    d.set_item("scored", s.scored.into_pyarray(py))?;
    d.set_item("next_move", s.next_move.into_pyarray(py))?;
    Ok(d)
}
