"""The README's ten-line training loop runs as written (with fewer games)."""

import re

import pytest

from conftest import ROOT


def test_the_readmes_training_loop_runs(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"### Python\n.*?```python\n(.*?)```", readme, re.S)
    assert block, "the README's Python section has its code block"
    code = block.group(1)
    assert len(code.strip().splitlines()) <= 10
    monkeypatch.chdir(tmp_path)
    exec(compile(code.replace("games=200", "games=8"), "README.md", "exec"), {})
    assert (tmp_path / "shards" / "manifest.json").exists()
