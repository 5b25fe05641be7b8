//! The package's exceptions, and the translation of the engine's errors into them.

use pyo3::PyErr;
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};

create_exception!(
    weiqi,
    IllegalMoveError,
    PyValueError,
    "A move the rules refuse (occupied, suicide, ko, superko, or off the board)."
);
create_exception!(
    weiqi,
    ShardError,
    PyValueError,
    "A self-play shard or manifest that cannot be read: corrupt, missing, or of another schema version."
);

/// A failure of the harness (object store, self-play, the arena) as a RuntimeError.
pub fn runtime(e: impl std::fmt::Display) -> PyErr {
    PyRuntimeError::new_err(e.to_string())
}

pub fn value(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}
