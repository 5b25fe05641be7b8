#!/usr/bin/env python3
"""Steps per CPU second of Go environments from Python, the weiqi package against its
peers, in one run on one machine (issue 47).

Each environment plays random legal moves (drawn from its own legal-move mask, in the
same run, the draw included in the time) in `batch` games at once, restarting games that
end, and produces an observation and a legal mask after every step:

- weiqi: `weiqi.VecEnv` (one call steps the batch; the draw is one numpy expression);
- Pgx (JAX, on the CPU): `jax.jit(jax.vmap(env.step))` with `pgx.experimental.auto_reset`,
  the draw `jax.random.categorical` on the mask, jitted with it (compilation not timed);
- OpenSpiel's Python API (`pyspiel`, C++ underneath): a Python loop over the batch's states
  (`legal_actions`, `apply_action`, `observation_tensor`);
- PettingZoo's `go_v5` (pure Python): its AEC loop (`last`, `step`) per game.

Figures are steps (one move in one game) per CPU second of this process, so run it pinned
to one core (`taskset -c 1 python bench/python_peers.py`) for per-core figures. At batch 1
it also times the environments' own calls alone, without the Python loop and the draw
(`calls_only`): weiqi's `step`, OpenSpiel's `apply_action`, `legal_actions` and
`observation_tensor`.

`bench/python_peers.py --threads` (not pinned, two cores): two Python threads stepping two
VecEnvs of 1,024 games, and the CPU seconds per wall second they use (2.0 when the GIL is
released while the engine steps).

Usage: bench/python_peers.py [SECONDS_PER_CASE | --threads]   (one JSON line per figure)
"""

import json
import sys
import threading
import time

import numpy as np

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1] != "--threads" else 3.0


def timed(step_once, steps_per_call):
    """Steps per CPU second of `step_once` (after a warm-up call), over SECONDS of CPU."""
    step_once()
    calls, start = 0, time.process_time()
    while time.process_time() - start < SECONDS:
        step_once()
        calls += 1
    cpu = time.process_time() - start
    return calls * steps_per_call / cpu


def weiqi_case(size, batch):
    import weiqi

    env = weiqi.VecEnv(batch, size=size, komi=7.5)
    rng = np.random.default_rng(0)

    def once():
        # A uniform legal move per game: the largest random key among the legal actions.
        actions = np.argmax(rng.random(env.legal.shape, dtype=np.float32) * env.legal, axis=1)
        env.step(actions)

    return timed(once, batch)


def pgx_case(size, batch):
    import jax
    import jax.numpy as jnp
    import pgx
    from pgx.experimental import auto_reset

    env = pgx.make(f"go_{size}x{size}")
    init = jax.jit(jax.vmap(env.init))
    step = jax.jit(jax.vmap(auto_reset(env.step, env.init)))

    @jax.jit
    def act(state, key):
        k1, k2 = jax.random.split(key)
        logits = jnp.log(state.legal_action_mask.astype(jnp.float32))
        action = jax.random.categorical(k1, logits, axis=-1)
        return step(state, action, jax.random.split(k2, batch)), k1

    key = jax.random.PRNGKey(0)
    holder = {"state": init(jax.random.split(key, batch)), "key": key}

    def once():
        state, key = act(holder["state"], holder["key"])
        # The observation and mask are computed in the step; wait for them.
        state.observation.block_until_ready()
        holder["state"], holder["key"] = state, key

    return timed(once, batch)


def openspiel_case(size, batch):
    import pyspiel

    game = pyspiel.load_game("go", {"board_size": size, "komi": 7.5})
    states = [game.new_initial_state() for _ in range(batch)]
    rng = np.random.default_rng(0)

    def once():
        for k, s in enumerate(states):
            legal = s.legal_actions()
            s.apply_action(legal[rng.integers(len(legal))])
            if s.is_terminal():
                s = states[k] = game.new_initial_state()
            s.observation_tensor()

    return timed(once, batch)


def pettingzoo_case(size, batch):
    from pettingzoo.classic import go_v5

    envs = [go_v5.env(board_size=size, komi=7.5) for _ in range(batch)]
    for e in envs:
        e.reset(seed=0)
    rng = np.random.default_rng(0)

    def once():
        for e in envs:
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                e.reset()
                obs = e.last()[0]
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))

    return timed(once, batch)


def calls_only(size):
    """Steps per CPU second of the environments' own calls at batch 1 (the draw untimed)."""
    import pyspiel
    import weiqi

    rng = np.random.default_rng(0)
    env = weiqi.VecEnv(1, size=size, komi=7.5)
    spent, steps = 0.0, 0
    while spent < SECONDS:
        action = np.array([rng.choice(np.flatnonzero(env.legal[0]))])
        t = time.process_time()
        env.step(action)
        spent += time.process_time() - t
        steps += 1
    ours = steps / spent
    game = pyspiel.load_game("go", {"board_size": size, "komi": 7.5})
    s = game.new_initial_state()
    spent, steps = 0.0, 0
    legal = s.legal_actions()
    while spent < SECONDS:
        action = legal[rng.integers(len(legal))]
        t = time.process_time()
        s.apply_action(action)
        if s.is_terminal():
            s = game.new_initial_state()
        legal = s.legal_actions()
        s.observation_tensor()
        spent += time.process_time() - t
        steps += 1
    return ours, steps / spent


def threads_case(size=9, batch=1024, steps=200):
    """CPU seconds per wall second of two threads each stepping its own VecEnv."""
    import weiqi

    def run(env):
        rng = np.random.default_rng(1)
        for _ in range(steps):
            env.step(np.argmax(rng.random(env.legal.shape, dtype=np.float32) * env.legal, axis=1))

    envs = [weiqi.VecEnv(batch, size=size) for _ in range(2)]
    wall, cpu = time.perf_counter(), time.process_time()
    threads = [threading.Thread(target=run, args=(e,)) for e in envs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return (time.process_time() - cpu) / (time.perf_counter() - wall)


CASES = {
    "weiqi": (weiqi_case, (1, 64, 1024)),
    "pgx": (pgx_case, (1, 64, 1024)),
    "openspiel": (openspiel_case, (1, 64)),
    "pettingzoo": (pettingzoo_case, (1,)),
}


def main():
    if sys.argv[1:] == ["--threads"]:
        print(json.dumps({"two_threads_cpu_per_wall_second": round(threads_case(), 2)}))
        return
    results = {}
    for name, (case, batches) in CASES.items():
        for size in (9, 19):
            for batch in batches:
                try:
                    rate = case(size, batch)
                except ImportError as e:
                    print(json.dumps({"env": name, "skipped": str(e)}), flush=True)
                    break
                results[(name, size, batch)] = rate
                print(json.dumps({"env": name, "size": size, "batch": batch, "steps_per_cpu_second": round(rate)}), flush=True)
    for size in (9, 19):
        for batch in (1, 64, 1024):
            ours = results.get(("weiqi", size, batch))
            for peer in ("pgx", "openspiel", "pettingzoo"):
                theirs = results.get((peer, size, batch))
                if ours and theirs:
                    print(json.dumps({"ratio": f"weiqi/{peer}", "size": size, "batch": batch, "x": round(ours / theirs, 1)}))
    for size in (9, 19):
        ours, theirs = calls_only(size)
        print(json.dumps({"calls_only": size, "weiqi_step": round(ours), "openspiel_calls": round(theirs), "x": round(ours / theirs, 1)}))


if __name__ == "__main__":
    main()
