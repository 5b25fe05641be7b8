#!/usr/bin/env python3
"""GNU Go's self-play as game records, for fitting the tree search's shape weights
(`weiqi shapes`). Each game opens with four random plies (so games differ; `weiqi shapes
--skip 4` leaves them out), then one GNU Go process plays both colours until two passes
or a resignation. Game N uses seed N for both the opening and GNU Go (`--seed`), so a
range of games is the same on every machine with the same GNU Go.

    python3 bench/gnugo_selfplay.py --size 9 --level 10 --first 1 --last 400 --out DIR
"""
import argparse
import os
import random
import subprocess

COLUMNS = "ABCDEFGHJKLMNOPQRST"
SGF = "abcdefghijklmnopqrs"


def gtp(proc, command):
    proc.stdin.write(command + "\n")
    proc.stdin.flush()
    lines = []
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"GNU Go exited after {command!r}")
        if line.strip():
            lines.append(line.strip())
        elif lines:
            break
    answer = "\n".join(lines)
    if answer.startswith("?"):
        raise RuntimeError(f"GNU Go refused {command!r}: {answer}")
    return answer[1:].strip()


def play_game(gnugo, size, level, seed):
    rng = random.Random(seed)
    proc = subprocess.Popen(
        [gnugo, "--mode", "gtp", "--level", str(level), "--chinese-rules", "--seed", str(seed)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        for command in (f"boardsize {size}", "clear_board", "komi 7.5"):
            gtp(proc, command)
        moves, colour = [], "b"
        # Four random plies on distinct points of the empty board.
        for point in rng.sample([(x, y) for x in range(size) for y in range(size)], 4):
            vertex = f"{COLUMNS[point[0]]}{point[1] + 1}"
            gtp(proc, f"play {colour} {vertex}")
            moves.append((colour, vertex))
            colour = "w" if colour == "b" else "b"
        passes, result = 0, ""
        while passes < 2 and len(moves) < 3 * size * size:
            vertex = gtp(proc, f"genmove {colour}").lower()
            if vertex == "resign":
                result = ("W" if colour == "b" else "B") + "+R"
                break
            moves.append((colour, vertex))
            passes = passes + 1 if vertex == "pass" else 0
            colour = "w" if colour == "b" else "b"
        if not result:
            result = gtp(proc, "final_score")
        gtp(proc, "quit")
    finally:
        proc.kill()
        proc.wait()
    return moves, result


def sgf_point(vertex, size):
    if vertex.lower() == "pass":
        return ""
    x = COLUMNS.index(vertex[0].upper())
    y = size - int(vertex[1:])
    return SGF[x] + SGF[y]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=9)
    ap.add_argument("--level", type=int, default=10)
    ap.add_argument("--first", type=int, default=1)
    ap.add_argument("--last", type=int, default=100)
    ap.add_argument("--out", required=True)
    ap.add_argument("--gnugo", default="/usr/games/gnugo")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for seed in range(args.first, args.last + 1):
        moves, result = play_game(args.gnugo, args.size, args.level, seed)
        body = "".join(f";{c.upper()}[{sgf_point(v, args.size)}]" for c, v in moves)
        with open(os.path.join(args.out, f"game-{seed:05d}.sgf"), "w") as f:
            f.write(f"(;GM[1]FF[4]SZ[{args.size}]KM[7.5]RU[Chinese]"
                    f"PB[GNU Go {args.level}]PW[GNU Go {args.level}]RE[{result}]"
                    f"C[bench/gnugo_selfplay.py seed {seed}: 4 random plies, then GNU Go self-play]\n{body})\n")


if __name__ == "__main__":
    main()
