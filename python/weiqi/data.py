"""The self-play shards (``weiqi selfplay``, ``weiqi loop``, a cluster's workers) for
training, from a directory, ``file://`` or ``s3://`` (with the usual ``AWS_*`` settings):
every run directory under the root, each manifest's schema version checked, each shard
checked as ``weiqi index`` checks it (a corrupt one raises ShardError naming it).

``batches(location, batch_size)`` yields dicts of numpy arrays without torch;
``ShardDataset(location)`` is a PyTorch ``IterableDataset`` of the same dicts as tensors
(rows, or batches with ``batch_size``), its shards split between a DataLoader's workers.
Keys: features uint8 [B,17,N,N], policy float32 [B,N*N+1], legal uint8, value float32 [B],
ownership int8 [B,N,N], score float32 [B], game_id uint64, move_number uint16, scored uint8,
next_move int16 (the opponent's reply as a policy index, -1 when the game ended first).
"""

from __future__ import annotations

from typing import Iterator, Optional

import numpy as np

from ._native import list_shards, read_manifest, read_shard

__all__ = ["batches", "shards", "read_manifest", "read_shard", "ShardDataset"]


def shards(location: str) -> list[tuple[str, int, int]]:
    """Every shard under ``location``: (key, board size, positions)."""
    return list_shards(location)


def batches(
    location: str,
    batch_size: int = 256,
    shuffle: bool = True,
    seed: int = 0,
    drop_last: bool = False,
    _keys: Optional[list[tuple[str, int, int]]] = None,
) -> Iterator[dict[str, np.ndarray]]:
    """Batches of rows, one shard read at a time (rows shuffled within it and shards in
    a shuffled order when ``shuffle``)."""
    if batch_size < 1:
        raise ValueError("batch_size is at least 1")
    keys = list(_keys if _keys is not None else list_shards(location))
    rng = np.random.default_rng(seed)
    if shuffle:
        rng.shuffle(keys)
    for key, size, _ in keys:
        shard = read_shard(location, key, size)
        n = len(shard["value"])
        order = rng.permutation(n) if shuffle else np.arange(n)
        for start in range(0, n, batch_size):
            rows = order[start : start + batch_size]
            if drop_last and len(rows) < batch_size:
                break
            yield {k: v[rows] for k, v in shard.items()}


def __getattr__(name: str):
    # (torch is imported only when its dataset is asked for.)
    if name == "ShardDataset":
        from ._torch_data import ShardDataset

        return ShardDataset
    raise AttributeError(name)
