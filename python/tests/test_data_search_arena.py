"""The shards as numpy batches and a PyTorch dataset (read as `weiqi selfplay` writes
them, corrupt ones refused), a training step, the searches, and the arena against GNU Go."""

import json
import os
import subprocess

import numpy as np
import pytest

import weiqi
import weiqi.arena
import weiqi.data
from conftest import ROOT, gnugo


def write_shards(tmp_path, games=12, size=5):
    """Shards as `weiqi selfplay` writes them: the CLI when WEIQI_BIN names it (CI), else
    the same harness called from Python."""
    out = tmp_path / "run"
    cli = os.environ.get("WEIQI_BIN")
    if cli:
        subprocess.run(
            [cli, "selfplay", "--size", str(size), "--games", str(games), "--games-per-shard", "4", "--out", str(out)],
            check=True,
            capture_output=True,
        )
    else:
        weiqi.selfplay(str(out), games, size=size, games_per_shard=4)
    return out


def test_numpy_batches_of_every_position(tmp_path):
    out = write_shards(tmp_path)
    [manifest] = weiqi.data.read_manifest(str(out))
    assert manifest["schema_version"] == weiqi.schema_version()
    shards = weiqi.data.shards(str(out))
    assert len(shards) == 3 and all(size == 5 for _, size, _ in shards)
    rows = 0
    for b in weiqi.data.batches(str(out), batch_size=32, seed=1):
        n = len(b["value"])
        assert b["features"].shape == (n, 17, 5, 5) and b["features"].dtype == np.uint8
        assert b["policy"].shape == (n, 26) and np.allclose(b["policy"].sum(1), 1)
        assert set(np.unique(b["value"])) <= {-1.0, 0.0, 1.0}
        # The opponent's reply: a move index, or -1 after a game's last move.
        assert b["next_move"].dtype == np.int16 and b["next_move"].min() >= -1 and b["next_move"].max() <= 25
        rows += n
    assert rows == manifest["positions"]


def test_a_corrupt_shard_or_another_schema_is_refused(tmp_path):
    out = write_shards(tmp_path)
    key = weiqi.data.shards(str(out))[0][0]
    (out / key).write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises(weiqi.ShardError, match=key):
        list(weiqi.data.batches(str(out), shuffle=False))
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["schema_version"] = 99
    (out / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(weiqi.ShardError, match="schema version 99"):
        weiqi.data.shards(str(out))
    with pytest.raises(weiqi.ShardError, match="no manifest"):
        weiqi.data.shards(str(tmp_path / "nothing"))


def test_a_torch_training_step_on_the_dataset(tmp_path):
    torch = pytest.importorskip("torch")
    import pickle
    out = write_shards(tmp_path, games=16)
    data = weiqi.data.ShardDataset(str(out))
    loader = torch.utils.data.DataLoader(data, batch_size=64)
    batch = next(iter(loader))
    assert batch["features"].shape[1:] == (17, 5, 5) and batch["features"].dtype == torch.uint8
    net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(17 * 25, 26))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x = batch["features"].float()
    target = batch["policy"]
    losses = []
    for _ in range(20):
        loss = torch.nn.functional.cross_entropy(net(x), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    # One class, picklable (DataLoader workers started by spawn get a copy).
    assert type(pickle.loads(pickle.dumps(data))) is weiqi.data.ShardDataset
    # Two workers share the shards, every row once.
    two = torch.utils.data.DataLoader(weiqi.data.ShardDataset(str(out)), batch_size=None, num_workers=2)
    assert sum(1 for _ in two) == sum(p for _, _, p in weiqi.data.shards(str(out)))
    # Batches straight from the dataset, and every row once per pass.
    batched = weiqi.data.ShardDataset(str(out), batch_size=50, shuffle=False)
    total = sum(len(b["value"]) for b in batched)
    assert total == sum(p for _, _, p in weiqi.data.shards(str(out)))


def test_the_tree_search_and_puct_with_a_numpy_network():
    s = weiqi.State(5, 0.5)
    action, rate = weiqi.mcts_move(s, visits=200)
    assert s.is_legal(action) and 0.0 <= rate <= 1.0
    calls = []

    def evaluate(features):
        calls.append(features.shape)
        b = features.shape[0]
        return np.zeros((b, 26), dtype=np.float32), np.zeros(b, dtype=np.float32)

    policy, action, value = weiqi.puct_policy(s, evaluate, visits=50)
    assert policy.shape == (26,) and abs(policy.sum() - 1) < 1e-5
    assert s.is_legal(action) and -1 <= value <= 1
    assert calls and calls[0][1:] == (17, 5, 5)

    def wrong(features):
        return np.zeros((1, 3), dtype=np.float32), np.zeros(1, dtype=np.float32)

    with pytest.raises(RuntimeError, match="expected"):
        weiqi.puct_policy(s, wrong, visits=5)

    def raising(features):
        raise ZeroDivisionError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        weiqi.puct_policy(s, raising, visits=5)


def test_a_python_policy_against_gnu_go():
    engine = f"{gnugo()} --mode gtp --level 1 --chinese-rules"
    report = weiqi.arena.play(lambda s: s.random_action("light", s.move_number), engine, games=2, size=5)
    assert report["games"] == 2 and report["wins"] + report["losses"] + report["draws"] == 2
    low, high = report["wilson95"]
    assert 0.0 <= low <= report["score"] <= high <= 1.0
    assert [r["policy_black"] for r in report["results"]] == [True, False]

    def broken(state):
        raise KeyError("no move")

    with pytest.raises(RuntimeError, match="no move"):
        weiqi.arena.play(broken, engine, games=1, size=5)


def test_shards_in_an_object_store(tmp_path):
    """Self-play into an S3-compatible store (CI's moto server) and batches read back from
    the same URL, as a cluster's workers write them."""
    bucket = os.environ.get("WEIQI_TEST_S3_BUCKET")
    if not (os.environ.get("AWS_ENDPOINT") or os.environ.get("AWS_ENDPOINT_URL")) or not bucket:
        if os.environ.get("WEIQI_REQUIRE_S3"):
            pytest.fail("WEIQI_REQUIRE_S3 is set but AWS_ENDPOINT or WEIQI_TEST_S3_BUCKET is not")
        pytest.skip("no S3-compatible store (AWS_ENDPOINT, WEIQI_TEST_S3_BUCKET)")
    url = f"s3://{bucket}/python-{os.getpid()}-{tmp_path.name}"
    manifest = weiqi.selfplay(url, 8, size=5, games_per_shard=4)
    assert [size for _, size, _ in weiqi.data.shards(url)] == [5, 5]
    rows = sum(len(b["value"]) for b in weiqi.data.batches(url, batch_size=16))
    assert rows == manifest["positions"] > 0
    with pytest.raises(weiqi.ShardError):
        weiqi.data.shards(f"s3://{bucket}-missing/x")


def test_selfplay_with_a_python_network_batches_its_leaves(tmp_path):
    batches = []

    def evaluate(features):
        batches.append(features.shape[0])
        b = features.shape[0]
        # A network that likes the centre a little, and calls every position even.
        logits = np.zeros((b, 26), dtype=np.float32)
        logits[:, 12] = 1.0
        return logits, np.zeros(b, dtype=np.float32)

    manifest = weiqi.selfplay(str(tmp_path / "net"), 6, size=5, evaluate=evaluate, visits=8, in_flight=6, max_moves=30)
    assert manifest["games"] == 6 and manifest["config"]["player"] == "python"
    assert max(batches) > 1, "the leaves of the games in flight are evaluated together"
    rows = next(weiqi.data.batches(str(tmp_path / "net"), batch_size=1000, shuffle=False))
    # The targets are the search's visit shares, not one-hot moves.
    assert np.allclose(rows["policy"].sum(1), 1) and (rows["policy"].max(1) < 1).any()

    def broken(features):
        return "nonsense"

    with pytest.raises(RuntimeError, match="evaluate must return"):
        weiqi.selfplay(str(tmp_path / "broken"), 2, size=5, evaluate=broken, visits=4)


def test_gumbel_roots_from_python(tmp_path):
    def evaluate(features):
        b = features.shape[0]
        return np.zeros((b, 26), dtype=np.float32), np.zeros(b, dtype=np.float32)

    s = weiqi.State(5, 0.5)
    policy, action, _ = weiqi.puct_policy(s, evaluate, visits=4, gumbel=4, noise=True, seed=1)
    # The improved policy covers every legal move, visited or not.
    assert abs(policy.sum() - 1) < 1e-5 and (policy > 0).sum() == 26 and s.is_legal(action)
    manifest = weiqi.selfplay(str(tmp_path / "g"), 4, size=5, evaluate=evaluate, visits=4, gumbel=4, max_moves=20)
    assert manifest["config"]["search"]["gumbel"] == 4
