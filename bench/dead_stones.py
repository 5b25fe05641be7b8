#!/usr/bin/env python3
"""The dead-stone estimator against GNU Go (issue 15, part 4).

Plays GNU Go against itself (GTP, `genmove` for both colours) to two passes, asks it for
`final_status_list dead`, then asks `weiqi gtp` the same of the same record (`loadsgf`).
Prints, over the games where GNU Go finds dead stones, how often the two lists are equal,
and how many stones weiqi calls dead that GNU Go calls alive or seki (and how often the
two engines' `final_status_list seki` agree where GNU Go finds a seki). A game that repeats an earlier
one move for move (GNU Go's seeds often do) is skipped and counted as a repeat.

Usage: bench/dead_stones.py [GAMES] [SIZE] [WEIQI] [GNUGO] [EXTRA WEIQI GTP FLAGS...]
With KEEP_DIR set, the records where the lists differ are kept there (gameN.sgf).
With CORPUS_DIR set, each GNU Go game (record and GNU Go's lists) is kept there as
gameN-SIZE.json and read back on later runs instead of being played again, so estimator
settings can be compared on the same games quickly.
With GNUGO_LEVEL set (default 1), GNU Go plays at that level (gameN-SIZE-lLEVEL.json in the
corpus): level 1 often passes with fights unsettled, level 10 plays them out first.
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


def gnugo_game(gnugo, size, seed, level=1):
    """GNU Go at `level` against itself to two passes: the record and its dead and alive
    lists, or None when the game ended otherwise (a resignation or the move limit)."""
    go = Gtp([gnugo, "--mode", "gtp", "--level", str(level), "--chinese-rules", "--seed", str(seed)])
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
        "seki": go.send("final_status_list seki").split(),
        "sgf": go.send("printsgf"),
        # GNU Go's own count under its dead list ("B+3.5"), for bench/review_winner.py.
        "score": go.send("final_score"),
    }
    go.close()
    return game


def main():
    games = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 9
    weiqi = sys.argv[3] if len(sys.argv) > 3 else "target/release/weiqi"
    gnugo = sys.argv[4] if len(sys.argv) > 4 else "/usr/games/gnugo"
    extra = sys.argv[5:]
    level = int(os.environ.get("GNUGO_LEVEL", "1"))
    suffix = "" if level == 1 else f"-l{level}"
    with_dead = equal = false_dead = games_with_false_dead = repeats = 0
    with_seki = seki_equal = 0
    seen = set()
    for g in range(games):
        corpus = os.environ.get("CORPUS_DIR")
        cached = os.path.join(corpus, f"game{g + 1}-{size}{suffix}.json") if corpus else None
        if cached and os.path.exists(cached):
            with open(cached) as f:
                game = json.load(f)
        else:
            game = gnugo_game(gnugo, size, g + 1, level)
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
        our_seki = set(wq.send("final_status_list seki").split())
        if "seki" in game:
            their_seki = set(game["seki"])
        else:
            # Games kept before the seki list was asked for: every stone GNU Go listed
            # neither dead nor alive is one it holds in seki.
            stones = ours | our_seki | set(wq.send("final_status_list alive").split())
            their_seki = stones - theirs - alive
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
        if their_seki:
            with_seki += 1
            seki_equal += our_seki == their_seki
        # A stone in seki lives: calling it dead is as wrong as calling a live group dead.
        wrong = len(ours & (alive | their_seki))
        false_dead += wrong
        games_with_false_dead += wrong > 0
    print(json.dumps({
        "size": size, "gnugo_level": level, "games": games, "repeats_skipped": repeats, "games_with_gnugo_dead": with_dead,
        "equal_when_gnugo_finds_dead": equal,
        "equal_share": equal / with_dead if with_dead else None,
        "stones_we_call_dead_gnugo_calls_alive_or_seki": false_dead,
        "games_with_such_stones": games_with_false_dead,
        "games_with_gnugo_seki": with_seki,
        "seki_lists_equal": seki_equal,
    }))


if __name__ == "__main__":
    main()
