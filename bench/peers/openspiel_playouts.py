"""Uniform random playouts in OpenSpiel's C++ Go (pyspiel.evaluate_bots runs the whole game
loop in C++ with uniform random bots; Python only starts each game).
Usage: python3 openspiel_playouts.py SIZE SECONDS  -> one JSON line."""
import json
import sys
import time

import pyspiel

size = int(sys.argv[1]) if len(sys.argv) > 1 else 9
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 5.0
game = pyspiel.load_game("go", {"board_size": size, "komi": 7.5})
bots = [pyspiel.make_uniform_random_bot(0, 1), pyspiel.make_uniform_random_bot(1, 2)]
games = moves = 0
seed = 0
cpu0, t0 = time.process_time(), time.perf_counter()
while time.perf_counter() - t0 < seconds:
    state = game.new_initial_state()
    seed += 1
    pyspiel.evaluate_bots(state, bots, seed)
    games += 1
    moves += len(state.history())
wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
print(json.dumps({"engine": "open_spiel", "size": size, "games": games, "moves": moves,
                  "wall_s": wall, "cpu_s": cpu, "moves_per_cpu_s": moves / cpu,
                  "games_per_cpu_s": games / cpu, "max_game_length": game.max_game_length()}))
