"""The Gymnasium and PettingZoo environments pass their libraries' own API checkers, play
whole games, and PettingZoo's has go_v5's spaces."""

import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test

import weiqi.gym
import weiqi.pettingzoo


@pytest.mark.parametrize("opponent", ["uniform", "light", "heavy", "mcts"])
def test_the_gymnasium_env_passes_check_env(opponent):
    env = weiqi.gym.GoEnv(size=5, opponent=opponent, opponent_visits=20)
    check_env(env, skip_render_check=True)


@pytest.mark.parametrize("color", ["black", "white"])
def test_gymnasium_episodes_end_with_the_count(color):
    env = weiqi.gym.GoEnv(size=5, color=color, opponent="light", komi=0.5)
    rng = np.random.default_rng(0)
    for episode in range(5):
        obs, info = env.reset(seed=episode)
        assert obs.shape == (17, 5, 5)
        done = False
        while not done:
            action = rng.choice(np.flatnonzero(info["action_mask"]))
            obs, reward, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        assert reward in (-1.0, 0.0, 1.0)
    # An illegal action raises when asked to.
    strict = weiqi.gym.GoEnv(size=5, on_illegal="raise")
    strict.reset(seed=0)
    strict.step(12)
    with pytest.raises(weiqi.IllegalMoveError):
        strict.step(12)


def test_an_illegal_action_loses():
    env = weiqi.gym.GoEnv(size=5, color="black", opponent="light")
    env.reset(seed=0)
    env.step(12)
    _, reward, terminated, truncated, info = env.step(12)
    assert (reward, terminated, truncated, info["illegal_action"]) == (-1.0, True, False, 12)


def test_the_pettingzoo_env_passes_api_test():
    api_test(weiqi.pettingzoo.env(board_size=5), num_cycles=200)
    api_test(weiqi.pettingzoo.raw_env(board_size=5), num_cycles=200)


def test_the_pettingzoo_spaces_are_go_v5s():
    env = weiqi.pettingzoo.env(board_size=9, komi=7.5)
    env.reset()
    assert env.possible_agents == ["black_0", "white_0"]
    for agent in env.possible_agents:
        obs = env.observation_space(agent)
        # go_v5's, as pettingzoo/classic/go/go.py builds them.
        assert obs == spaces.Dict(
            {
                "observation": spaces.Box(low=0, high=1, shape=(9, 9, 17), dtype=bool),
                "action_mask": spaces.Box(low=0, high=1, shape=(82,), dtype=np.int8),
            }
        )
        assert env.action_space(agent) == spaces.Discrete(82)


def test_pettingzoo_games_end_with_rewards():
    env = weiqi.pettingzoo.env(board_size=5, komi=0.5)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    totals = {"black_0": 0.0, "white_0": 0.0}
    for agent in env.agent_iter():
        obs, reward, termination, truncation, _ = env.last()
        totals[agent] += reward
        if termination or truncation:
            env.step(None)
            continue
        mover = obs["observation"]
        # The colour plane is the agent's: ones for White.
        assert mover[..., 16].all() == (agent == "white_0")
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert sorted(totals.values()) in ([-1.0, 1.0], [0.0, 0.0])
