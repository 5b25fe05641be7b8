#!/usr/bin/env python3
"""The dead-stone estimator against GNU Go (issue 15, part 4).

Plays GNU Go against itself (GTP, `genmove` for both colours) to two passes, asks it for
`final_status_list dead`, then asks `weiqi gtp` the same of the same record (`loadsgf`).
Prints, over the games where GNU Go finds dead stones, how often the two lists are equal,
and how many stones weiqi calls dead that GNU Go calls alive. A game that repeats an earlier
one move for move (GNU Go's seeds often do) is skipped and counted as a repeat.

Usage: bench/dead_stones.py [GAMES] [SIZE] [WEIQI] [GNUGO] [EXTRA WEIQI GTP FLAGS...]
With KEEP_DIR set, the records where the lists differ are kept there (gameN.sgf).
With CORPUS_DIR set, each GNU Go game (record and GNU Go's lists) is kept there as
gameN-SIZE.json and read back on later runs instead of being played again, so estimator
settings can be compared on the same games quickly.
"""
import json
import os
import subprocess
import sys
import tempfile


class Gtp:
    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def send(self, cmd):
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()
        lines = []
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError(f"engine closed on {cmd!r}")
            if line.strip() == "":
                if lines:
                    break
                continue
            lines.append(line.rstrip("\n"))
        text = "\n".join(lines)
        if not text.startswith("="):
            raise RuntimeError(f"{cmd!r}: {text}")
        return text[1:].strip()

    def close(self):
        try:
            self.send("quit")
        except Exception:
            pass
        self.p.kill()


def gnugo_game(gnugo, size, seed):
    """GNU Go level 1 against itself to two passes: the record and its dead and alive
    lists, or None when the game ended otherwise (a resignation or the move limit)."""
    go = Gtp([gnugo, "--mode", "gtp", "--level", "1", "--chinese-rules", "--seed", str(seed)])
    go.send(f"boardsize {size}")
    go.send("clear_board")
    go.send("komi 7.5")
    passes, color, moves = 0, "black", 0
    while passes < 2 and moves < 4 * size * size:
        v = go.send(f"genmove {color}")
        passes = passes + 1 if v.lower() == "pass" else 0
        if v.lower() == "resign":
            break
        color = "white" if color == "black" else "black"
        moves += 1
    if passes < 2:
        go.close()
        return None
    game = {
        "dead": go.send("final_status_list dead").split(),
        "alive": go.send("final_status_list alive").split(),
        "sgf": go.send("printsgf"),
    }
    go.close()
    return game


def main():
    games = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 9
    weiqi = sys.argv[3] if len(sys.argv) > 3 else "target/release/weiqi"
    gnugo = sys.argv[4] if len(sys.argv) > 4 else "/usr/games/gnugo"
    extra = sys.argv[5:]
    with_dead = equal = false_dead = games_with_false_dead = repeats = 0
    seen = set()
    for g in range(games):
        corpus = os.environ.get("CORPUS_DIR")
        cached = os.path.join(corpus, f"game{g + 1}-{size}.json") if corpus else None
        if cached and os.path.exists(cached):
            with open(cached) as f:
                game = json.load(f)
        else:
            game = gnugo_game(gnugo, size, g + 1)
            if cached:
                os.makedirs(corpus, exist_ok=True)
                with open(cached, "w") as f:
                    json.dump(game, f)
        if game is None:
            continue
        # GNU Go's seeds repeat games (at level 1 about half of them): a repeat is
        # counted once, not as another sample.
        if game["sgf"] in seen:
            repeats += 1
            continue
        seen.add(game["sgf"])
        theirs, alive = set(game["dead"]), set(game["alive"])
        with tempfile.NamedTemporaryFile("w", suffix=".sgf", delete=False) as f:
            f.write(game["sgf"])
            path = f.name
        wq = Gtp(weiqi.split() + ["gtp", "--player", "light"] + extra)
        wq.send(f"loadsgf {path}")
        ours = set(wq.send("final_status_list dead").split())
        wq.close()
        keep = os.environ.get("KEEP_DIR")
        if keep and (ours != theirs or ours & alive):
            os.makedirs(keep, exist_ok=True)
            os.replace(path, os.path.join(keep, f"game{g + 1}.sgf"))
            print(f"game {g + 1}: gnugo dead {sorted(theirs)} ours {sorted(ours)}", file=sys.stderr)
        else:
            os.unlink(path)
        if theirs:
            with_dead += 1
            equal += ours == theirs
            if ours != theirs and os.environ.get("SHOW"):
                print("missed", sorted(theirs - ours), "extra", sorted(ours - theirs), file=sys.stderr)
        wrong = len(ours & alive)
        false_dead += wrong
        games_with_false_dead += wrong > 0
    print(json.dumps({
        "size": size, "games": games, "repeats_skipped": repeats, "games_with_gnugo_dead": with_dead,
        "equal_when_gnugo_finds_dead": equal,
        "equal_share": equal / with_dead if with_dead else None,
        "stones_we_call_dead_gnugo_calls_alive": false_dead,
        "games_with_such_stones": games_with_false_dead,
    }))


if __name__ == "__main__":
    main()
