"""OpenSpiel's Go in a Python self-play loop that records each position for training, as
a researcher would: the observation tensor and the legal-action mask (numpy arrays), with
uniform random moves. Positions per CPU second.
Usage: python3 openspiel_selfplay.py SIZE SECONDS -> one JSON line."""
import json
import random
import sys
import time

import numpy as np
import pyspiel

size = int(sys.argv[1]) if len(sys.argv) > 1 else 9
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 5.0
game = pyspiel.load_game("go", {"board_size": size, "komi": 7.5})
rng = random.Random(1)
games = positions = 0
observations, legal_masks, actions = [], [], []
cpu0, t0 = time.process_time(), time.perf_counter()
while time.perf_counter() - t0 < seconds:
    state = game.new_initial_state()
    while not state.is_terminal():
        observations.append(np.asarray(state.observation_tensor(), dtype=np.uint8))
        legal_masks.append(np.asarray(state.legal_actions_mask(), dtype=np.uint8))
        action = rng.choice(state.legal_actions())
        actions.append(action)
        state.apply_action(action)
        positions += 1
    if len(observations) > 100_000:
        observations.clear(), legal_masks.clear(), actions.clear()
    games += 1
cpu = time.process_time() - cpu0
print(json.dumps({"engine": "open_spiel_python", "size": size, "games": games, "positions": positions,
                  "cpu_s": cpu, "positions_per_cpu_s": positions / cpu}))
