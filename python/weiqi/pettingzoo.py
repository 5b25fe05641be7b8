"""A PettingZoo AEC environment with the agents, spaces and wrappers of PettingZoo's
``go_v5``, on the weiqi engine (positional superko, which go_v5 does not check).

``env(board_size=19, komi=7.5)`` wraps ``raw_env`` as go_v5 does (an illegal action
ends the game with reward -1 for its player; actions out of range are refused; calls in
order). Agents ``black_0`` and ``white_0``; observation ``{"observation": bool [N, N, 17],
"action_mask": int8 [N*N+1]}``: pairs of planes (the observing agent's stones, the
opponent's) for the last 8 positions, newest first, then a plane of ones for White's agent
(go_v5's player plane). The shape is go_v5's, the planes' meaning is not quite: go_v5
stores each pair from the view of the player who had just moved, so its pairs alternate
between (opponent, self) and (self, opponent) down the history; here every pair is from
the observer's view, as AlphaGo Zero's planes are. A policy trained on go_v5's planes
needs its pairs reordered. The action mask is the agent's legal moves while it is to play,
zeros otherwise, and only the pass once the game is over (for both agents; go_v5 only
for the one whose turn it is). The game ends after
two passes, counted by area with every stone alive: +1 and -1, or 0 each for a draw.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import AgentSelector, wrappers

from ._native import State


def env(**kwargs) -> AECEnv:
    e = raw_env(**kwargs)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e


class raw_env(AECEnv):
    metadata = {"render_modes": ["ansi"], "name": "weiqi_go_v0", "is_parallelizable": False}

    def __init__(
        self,
        board_size: int = 19,
        komi: float = 7.5,
        rules: str = "chinese",
        max_moves: Optional[int] = None,
        render_mode: Optional[str] = None,
    ) -> None:
        super().__init__()
        State(board_size, komi, rules)  # the size and rules checked now
        self._n, self._komi, self._rules = board_size, komi, rules
        self._max_moves = max_moves if max_moves is not None else 4 * board_size * board_size
        self.render_mode = render_mode
        self.agents = ["black_0", "white_0"]
        self.possible_agents = self.agents[:]
        n = board_size
        self.observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(low=0, high=1, shape=(n, n, 17), dtype=bool),
                    "action_mask": spaces.Box(low=0, high=1, shape=(n * n + 1,), dtype=np.int8),
                }
            )
            for a in self.possible_agents
        }
        self.action_spaces = {a: spaces.Discrete(n * n + 1) for a in self.possible_agents}
        self._selector = AgentSelector(self.agents)
        self._state = State(board_size, komi, rules)

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def observe(self, agent):
        planes = self._state.observation("channels_last").astype(bool)
        index = self.possible_agents.index(agent)
        if index != self._state.to_play:
            # The planes are the mover's view: swap the pairs for the other agent.
            mine, theirs = planes[..., 0:16:2].copy(), planes[..., 1:16:2].copy()
            planes[..., 0:16:2], planes[..., 1:16:2] = theirs, mine
            planes[..., 16] = index == 1
        mask = np.zeros(self._n * self._n + 1, dtype=np.int8)
        if self._state.is_over or self._state.move_number >= self._max_moves:
            mask[-1] = 1
        elif index == self._state.to_play:
            mask[:] = self._state.legal_mask()
        return {"observation": planes, "action_mask": mask}

    def reset(self, seed: Optional[int] = None, options: Optional[dict[str, Any]] = None):
        self._state = State(self._n, self._komi, self._rules)
        self.agents = self.possible_agents[:]
        self._selector.reinit(self.agents)
        self.agent_selection = self._selector.reset()
        self.rewards = {a: 0 for a in self.agents}
        self._cumulative_rewards = {a: 0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}

    def step(self, action):
        if self.terminations[self.agent_selection] or self.truncations[self.agent_selection]:
            return self._was_dead_step(action)
        self._state.play(int(action))
        self._clear_rewards()
        over = self._state.is_over
        cut = not over and self._state.move_number >= self._max_moves
        if over or cut:
            wmb = self._state.score()
            black = 1 if wmb < 0 else -1 if wmb > 0 else 0
            self.rewards = {"black_0": black, "white_0": -black}
            flags = {a: True for a in self.agents}
            if over:
                self.terminations = flags
            else:
                self.truncations = flags
        self.agent_selection = self._selector.next()
        self._accumulate_rewards()

    def render(self):
        if self.render_mode == "ansi":
            return repr(self._state)
        return None

    def close(self):
        pass
