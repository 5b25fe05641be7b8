"""Shared helpers of the package's tests (run on the built wheel: `pytest python/tests`)."""

import os
import pathlib
import shutil

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFORMANCE = ROOT.parent / "shared" / "conformance"


def conformance_dir() -> pathlib.Path:
    """The shared conformance data, or a skip saying it is absent (a fresh clone)."""
    if not CONFORMANCE.is_dir():
        pytest.skip(f"no conformance data at {CONFORMANCE}")
    return CONFORMANCE


def gnugo() -> str:
    """GNU Go's path (Debian installs it in /usr/games), or a skip."""
    path = shutil.which("gnugo") or ("/usr/games/gnugo" if os.path.exists("/usr/games/gnugo") else None)
    if path is None:
        pytest.skip("GNU Go is not installed (apt-get install gnugo)")
    return path
