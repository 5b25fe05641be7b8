"""weiqi: Go (weiqi, baduk) for Python, on the weiqi engine.

- ``State``: one game under the rules engine (positional superko by default), with numpy
  views of the board, the legal moves and the feature planes; SGF in and out; scoring and
  the dead-stone estimate.
- ``VecEnv``: N games stepped in one call, writing observations, legal masks, rewards and
  dones into preallocated numpy arrays with the GIL released; games restart on their own.
- ``weiqi.gym`` (Gymnasium), ``weiqi.pettingzoo`` (an AEC environment with go_v5's spaces),
  ``weiqi.data`` (the self-play shards, with torch or without), ``weiqi.arena`` (a Python
  policy against a GTP engine through the project's referee).

Actions are move indices: ``y * size + x`` for a point (rows from the top), ``size * size``
for a pass, as the shards and PettingZoo's go_v5 number them.
"""

from ._native import (
    IllegalMoveError,
    ShardError,
    State,
    VecEnv,
    __version__,
    mcts_move,
    puct_policy,
    schema_version,
    selfplay,
    wilson,
)

__all__ = [
    "IllegalMoveError",
    "ShardError",
    "State",
    "VecEnv",
    "__version__",
    "mcts_move",
    "puct_policy",
    "schema_version",
    "selfplay",
    "wilson",
]
