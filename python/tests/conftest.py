"""Shared helpers of the package's tests (run on the built wheel: `pytest python/tests`)."""

import os
import pathlib
import shutil

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFORMANCE = pathlib.Path(os.environ.get("WEIQI_CONFORMANCE") or ROOT.parent / "shared" / "conformance")


def absent(why: str, require: str):
    """A skip, or a failure when `require` is set (as .ci/run sets the WEIQI_REQUIRE_*
    variables for the Rust tests)."""
    if os.environ.get(require):
        pytest.fail(f"{why} ({require} is set)")
    pytest.skip(why)


def conformance_dir() -> pathlib.Path:
    """The shared conformance data (`../shared/conformance`, or `$WEIQI_CONFORMANCE`), or a
    skip saying it is absent (a fresh clone)."""
    if not CONFORMANCE.is_dir():
        absent(f"no conformance data at {CONFORMANCE}", "WEIQI_REQUIRE_CONFORMANCE")
    return CONFORMANCE


def gnugo() -> str:
    """GNU Go's path (Debian installs it in /usr/games), or a skip."""
    path = shutil.which("gnugo") or ("/usr/games/gnugo" if os.path.exists("/usr/games/gnugo") else None)
    if path is None:
        absent("GNU Go is not installed (apt-get install gnugo)", "WEIQI_REQUIRE_GNUGO")
    return path
