"""A Gymnasium single-agent environment: one colour against a chosen opponent.

``GoEnv(size=9, color="black", opponent="light")``: the agent plays ``color``; the
opponent is a playout policy (``"uniform"``, ``"light"``, ``"heavy"``) or the engine's
tree search (``"mcts"``, ``opponent_visits`` simulations a move). Observations are the
trainer's planes (uint8 ``[17, N, N]``); ``info["action_mask"]`` marks the legal actions.
An illegal action ends the episode with reward -1 (``on_illegal="lose"``, as PettingZoo's
go_v5 does), or is played as a pass (``"pass"``), or raises IllegalMoveError (``"raise"``).
The reward is +1 for a win, -1 for a loss and 0 for a draw, counted by area with every
stone alive when both pass; a game past ``max_moves`` is truncated and counted the same way.
"""

from __future__ import annotations

from typing import Any, Optional

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ._native import IllegalMoveError, State, mcts_move

OPPONENTS = ("uniform", "light", "heavy", "mcts")


class GoEnv(gym.Env):
    metadata = {"render_modes": ["ansi"]}

    def __init__(
        self,
        size: int = 9,
        komi: float = 7.5,
        rules: str = "chinese",
        color: str = "black",
        opponent: str = "light",
        opponent_visits: int = 200,
        on_illegal: str = "lose",
        max_moves: Optional[int] = None,
        render_mode: Optional[str] = None,
    ) -> None:
        if color not in ("black", "white"):
            raise ValueError(f"color is 'black' or 'white', not {color!r}")
        if opponent not in OPPONENTS:
            raise ValueError(f"opponent is one of {OPPONENTS}, not {opponent!r}")
        if on_illegal not in ("lose", "pass", "raise"):
            raise ValueError(f"on_illegal is 'lose', 'pass' or 'raise', not {on_illegal!r}")
        State(size, komi, rules)  # the size and rules checked now
        self.size, self.komi, self.rules = size, komi, rules
        self.agent = 0 if color == "black" else 1
        self.opponent, self.opponent_visits = opponent, opponent_visits
        self.on_illegal = on_illegal
        self.max_moves = max_moves if max_moves is not None else 4 * size * size
        self.render_mode = render_mode
        self.observation_space = spaces.Box(0, 1, shape=(17, size, size), dtype=np.uint8)
        self.action_space = spaces.Discrete(size * size + 1)
        self.state = State(size, komi, rules)

    def _observe(self) -> tuple[np.ndarray, dict[str, Any]]:
        return self.state.observation("planes"), {"action_mask": self.state.legal_mask()}

    def _opponent_action(self) -> int:
        seed = int(self.np_random.integers(0, 2**63))
        if self.opponent == "mcts":
            return mcts_move(self.state, visits=self.opponent_visits, seed=seed)[0]
        return self.state.random_action(self.opponent, seed)

    def _outcome(self) -> float:
        wmb = self.state.score()
        black = 1.0 if wmb < 0 else -1.0 if wmb > 0 else 0.0
        return black if self.agent == 0 else -black

    def _finished(self) -> Optional[tuple[float, bool]]:
        """(reward, truncated) once the game is over or cut off."""
        if self.state.is_over:
            return self._outcome(), False
        if self.state.move_number >= self.max_moves:
            return self._outcome(), True
        return None

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict[str, Any]] = None):
        super().reset(seed=seed)
        self.state = State(self.size, self.komi, self.rules)
        if self.agent == 1:
            self.state.play(self._opponent_action())
        return self._observe()

    def step(self, action):
        action = int(action)
        if not self.state.is_legal(action):
            if self.on_illegal == "raise":
                raise IllegalMoveError(f"action {action} is illegal here")
            if self.on_illegal == "lose":
                obs, info = self._observe()
                info["illegal_action"] = action
                return obs, -1.0, True, False, info
            action = self.size * self.size
        self.state.play(action)
        done = self._finished()
        if done is None:
            self.state.play(self._opponent_action())
            done = self._finished()
        obs, info = self._observe()
        if done is None:
            return obs, 0.0, False, False, info
        reward, truncated = done
        return obs, reward, not truncated, truncated, info

    def render(self):
        if self.render_mode == "ansi":
            return repr(self.state)
        return None
