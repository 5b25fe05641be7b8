"""`weiqi.data.ShardDataset`: the shards as a PyTorch IterableDataset (imported only by
those who ask for it, since torch is an optional dependency)."""

from __future__ import annotations

from typing import Optional

import numpy as np
import torch
from torch.utils.data import IterableDataset, get_worker_info

from ._native import list_shards
from .data import batches


class ShardDataset(IterableDataset):
    """The shards under ``location`` as tensors: one dict a row (``batch_size=None``, for
    a DataLoader that batches) or a dict a batch. Under a DataLoader with workers, each
    worker reads its share of the shards, shuffled with the seed the DataLoader gives it
    (a new one every epoch); without workers, each pass draws a new order from ``seed``."""

    def __init__(self, location: str, batch_size: Optional[int] = None, shuffle: bool = True, seed: int = 0):
        super().__init__()
        self.location, self.batch_size, self.shuffle, self.seed = location, batch_size, shuffle, seed
        self.keys = list_shards(location)
        self.epoch = 0

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            keys, seed = self.keys, self.seed + self.epoch * 1_000_003
            self.epoch += 1
        else:
            keys, seed = self.keys[info.id :: info.num_workers], info.seed
        for b in batches(self.location, self.batch_size or 1024, self.shuffle, seed % 2**63, _keys=keys):
            tensors = {k: torch.from_numpy(v.astype(np.int64) if v.dtype == np.uint64 else v) for k, v in b.items()}
            if self.batch_size:
                yield tensors
            else:
                for i in range(len(b["value"])):
                    yield {k: t[i] for k, t in tensors.items()}
