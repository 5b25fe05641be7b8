"""Type stubs of the extension module (the Rust side); see the package's docstring."""

from typing import Any, Callable, Optional, Sequence

import numpy as np
import numpy.typing as npt

__version__: str

class IllegalMoveError(ValueError): ...
class ShardError(ValueError): ...

class State:
    """A game of Go. Actions: ``y * size + x`` for a point, ``size * size`` for a pass."""

    def __init__(self, size: int = 19, komi: float = 7.5, rules: str = "chinese") -> None: ...
    @staticmethod
    def from_sgf(text: str) -> "State":
        """Raises IllegalMoveError at the record's first illegal move."""
    @staticmethod
    def from_rows(rows: Sequence[str], to_play: int = 0, komi: float = 7.5, rules: str = "chinese") -> "State":
        """A position from rows (top first; x Black, o White, . empty)."""
    @staticmethod
    def replay_sgf(
        text: str, komi: Optional[float] = None, rules: Optional[str] = None
    ) -> tuple["State", Optional[tuple[int, str]]]:
        """(the position before the first illegal move, (its number, why)) or (the end, None)."""
    def to_sgf(self) -> str: ...
    @property
    def size(self) -> int: ...
    @property
    def komi(self) -> float: ...
    @property
    def to_play(self) -> int:
        """0 when Black is to play, 1 when White is."""
    @property
    def move_number(self) -> int: ...
    @property
    def is_over(self) -> bool: ...
    @property
    def moves(self) -> list[int]: ...
    def play(self, action: int) -> None:
        """Raises IllegalMoveError when the rules refuse the move."""
    def is_legal(self, action: int) -> bool: ...
    def illegal_reason(self, action: int) -> Optional[str]:
        """None, "occupied", "suicide", "ko" or "superko"."""
    def liberties(self, action: int) -> int: ...
    def liberties_after(self, action: int, color: int) -> Optional[int]: ...
    def unconditionally_dead(self) -> list[int]: ...
    @property
    def captures(self) -> tuple[int, int]: ...
    def rows(self) -> list[str]: ...
    def undo(self) -> Optional[int]: ...
    def legal_mask(self) -> npt.NDArray[np.uint8]: ...
    def legal_actions(self) -> npt.NDArray[np.int64]: ...
    def board(self) -> npt.NDArray[np.int8]:
        """size x size, rows from the top: 1 Black, -1 White, 0 empty."""
    def observation(self, layout: str = "planes") -> npt.NDArray[np.uint8]:
        """[17, N, N] ("planes") or [N, N, 17] ("channels_last")."""
    def score(self, dead: Optional[Sequence[int]] = None) -> float:
        """White minus Black by area, komi included, with ``dead`` removed."""
    def result(self) -> str: ...
    def estimate(self) -> tuple[npt.NDArray[np.float32], list[int], float]:
        """(ownership [N, N] in -1..1, dead stones as actions, White minus Black)."""
    def random_action(self, policy: str = "light", seed: int = 0) -> int:
        """A move of a playout policy: "uniform", "light" or "heavy"."""
    def copy(self) -> "State": ...
    def __copy__(self) -> "State": ...
    def __deepcopy__(self, memo: Any) -> "State": ...

class VecEnv:
    """N games stepped in one call into preallocated arrays (the same ones every step)."""

    def __init__(
        self,
        num_envs: int,
        size: int = 19,
        komi: float = 7.5,
        rules: str = "chinese",
        layout: str = "planes",
        on_illegal: str = "raise",
        max_moves: Optional[int] = None,
    ) -> None: ...
    def reset(self) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]: ...
    def step(
        self, actions: npt.ArrayLike
    ) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8], npt.NDArray[np.float32], npt.NDArray[np.uint8]]:
        """(observations, legal, rewards [N, 2], dones)."""
    def state(self, k: int) -> State: ...
    @property
    def num_envs(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def num_actions(self) -> int: ...
    @property
    def observations(self) -> npt.NDArray[np.uint8]: ...
    @property
    def legal(self) -> npt.NDArray[np.uint8]: ...
    @property
    def rewards(self) -> npt.NDArray[np.float32]: ...
    @property
    def dones(self) -> npt.NDArray[np.uint8]: ...
    @property
    def to_play(self) -> npt.NDArray[np.uint8]: ...

def schema_version() -> int: ...
def read_manifest(location: str) -> list[dict[str, Any]]: ...
def list_shards(location: str) -> list[tuple[str, int, int]]: ...
def read_shard(location: str, key: str, size: int) -> dict[str, npt.NDArray[Any]]: ...
def mcts_move(state: State, visits: int = 1000, threads: int = 1, seed: int = 1) -> tuple[int, float]: ...
def puct_policy(
    state: State,
    evaluate: Callable[[npt.NDArray[np.uint8]], tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]],
    visits: int = 100,
    c_puct: float = 1.5,
    noise: bool = False,
    seed: int = 0,
    gumbel: Optional[int] = None,
) -> tuple[npt.NDArray[np.float32], int, float]: ...
def selfplay(
    location: str,
    games: int,
    size: int = 9,
    seed: int = 0,
    policy: str = "light",
    komi: float = 7.5,
    rules: str = "chinese",
    games_per_shard: int = 64,
    max_moves: Optional[int] = None,
    evaluate: Optional[Callable[[npt.NDArray[np.uint8]], tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]]] = None,
    visits: int = 32,
    in_flight: int = 64,
    gumbel: Optional[int] = None,
) -> dict[str, Any]:
    """Shards as `weiqi selfplay` writes them; with `evaluate`, PUCT self-play whose leaves
    (of `in_flight` games at once) are evaluated in batches by the Python network."""
def play_match(
    policy: Callable[[State], int],
    engine: str,
    games: int = 10,
    size: int = 9,
    komi: float = 7.5,
    rules: str = "chinese",
    seconds_per_move: Optional[float] = None,
    max_moves: Optional[int] = None,
    seed: int = 1,
) -> dict[str, Any]: ...
def wilson(score: float, n: float) -> tuple[float, float]: ...
