"""VecEnv: N games in one call equal to N single games step by step (auto-reset
included), its arrays written in place, and bad input refused with errors that name it."""

import threading

import numpy as np
import pytest

import weiqi


def reference_rewards(state):
    wmb = state.score()
    black = 1.0 if wmb < 0 else -1.0 if wmb > 0 else 0.0
    return [black, -black]


@pytest.mark.parametrize("layout", ["planes", "channels_last"])
def test_a_vec_env_is_n_single_games(layout):
    n, size, max_moves = 8, 5, 40
    env = weiqi.VecEnv(n, size=size, komi=0.5, layout=layout, max_moves=max_moves)
    games = [weiqi.State(size, 0.5) for _ in range(n)]
    rng = np.random.default_rng(7)
    obs, legal = env.reset()
    ended = 0
    for _ in range(400):
        for k, g in enumerate(games):
            assert np.array_equal(obs[k], g.observation(layout)), k
            assert np.array_equal(legal[k], g.legal_mask()), k
            assert env.to_play[k] == g.to_play
        # Legal actions drawn from the masks, passes often enough to end games.
        actions = np.array(
            [size * size if rng.random() < 0.15 else rng.choice(np.flatnonzero(legal[k])) for k in range(n)],
            dtype=np.int64,
        )
        o2, l2, rewards, dones = env.step(actions)
        assert o2 is obs and l2 is legal, "the same arrays every step"
        for k, g in enumerate(games):
            g.play(int(actions[k]))
            done = g.is_over or g.move_number >= max_moves
            assert bool(dones[k]) == done, k
            if done:
                assert list(rewards[k]) == reference_rewards(g), k
                games[k] = weiqi.State(size, 0.5)
                ended += 1
            else:
                assert list(rewards[k]) == [0.0, 0.0]
    assert ended > 20, "games ended and started again"


def test_the_state_of_a_game_is_a_copy():
    env = weiqi.VecEnv(2, size=5)
    env.step(np.array([12, 0]))
    s = env.state(0)
    assert s.moves == [12]
    s.play(13)
    assert env.state(0).moves == [12]
    with pytest.raises(IndexError):
        env.state(2)


def test_bad_input_is_refused_and_named():
    env = weiqi.VecEnv(3, size=5)
    with pytest.raises(TypeError, match="actions must be integers"):
        env.step(np.zeros(3, dtype=np.float32))
    with pytest.raises(ValueError, match="actions holds 2 values; the VecEnv has 3 games"):
        env.step(np.zeros(2, dtype=np.int64))
    with pytest.raises(ValueError, match="one-dimensional"):
        env.step(np.zeros((3, 1), dtype=np.int64))
    # Other integer types and lists are taken.
    env.step(np.array([0, 1, 2], dtype=np.int32))
    env.step([5, 6, 7])
    # An occupied point in game 1: refused with its index, and no game moved.
    before = env.observations.copy()
    with pytest.raises(weiqi.IllegalMoveError, match="environment 1: action 6 is illegal"):
        env.step(np.array([10, 6, 11]))
    assert np.array_equal(env.observations, before)
    with pytest.raises(weiqi.IllegalMoveError, match="environment 2: action 26"):
        env.step(np.array([10, 11, 26]))
    with pytest.raises(ValueError):
        weiqi.VecEnv(3, size=5, layout="nhwc")
    with pytest.raises(ValueError):
        weiqi.VecEnv(3, size=5, on_illegal="ignore")
    with pytest.raises(ValueError):
        weiqi.VecEnv(3, size=1)
    with pytest.raises(ValueError):
        weiqi.VecEnv(0, size=5)
    with pytest.raises(ValueError):
        weiqi.VecEnv(3, size=5, rules="nonsense")


def test_illegal_actions_can_be_passes():
    env = weiqi.VecEnv(2, size=5, on_illegal="pass")
    env.step(np.array([0, 0]))
    env.step(np.array([0, 99]))
    assert env.state(0).moves == [0, 25]
    assert env.state(1).moves == [0, 25]


def test_two_threads_step_two_envs_at_once():
    """The GIL is released while the engine steps: two threads each stepping their own
    environment both finish, with the same results as one after the other."""
    def run(env, out):
        rng = np.random.default_rng(1)
        for _ in range(200):
            legal = env.legal
            env.step(np.array([rng.choice(np.flatnonzero(row)) for row in legal]))
        out.append(env.observations.copy())

    results = []
    envs = [weiqi.VecEnv(16, size=9) for _ in range(2)]
    threads = [threading.Thread(target=run, args=(e, results)) for e in envs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    alone = []
    run(weiqi.VecEnv(16, size=9), alone)
    assert len(results) == 2
    assert all(np.array_equal(r, alone[0]) for r in results)
