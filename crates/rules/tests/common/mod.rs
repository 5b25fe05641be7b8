//! Shared helpers for the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// `../shared/conformance` from the project root, or `$WEIQI_CONFORMANCE`; `None` (and a
/// message) when absent, so a fresh clone still passes.
pub fn conformance_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("WEIQI_CONFORMANCE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance"));
    if dir.is_dir() {
        Some(dir)
    } else {
        // CI sets WEIQI_REQUIRE_CONFORMANCE=1: there, missing data is a failure, not a skip.
        assert!(
            std::env::var_os("WEIQI_REQUIRE_CONFORMANCE").is_none(),
            "WEIQI_REQUIRE_CONFORMANCE is set but the conformance data is not at {}",
            dir.display()
        );
        eprintln!(
            "SKIPPED: conformance data not found at {} (set WEIQI_CONFORMANCE)",
            dir.display()
        );
        None
    }
}

pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}
