#!/usr/bin/env python3
"""The review's verdict at the end of a game against GNU Go's count (issue 46).

For GNU Go's own 9x9 games (GNU Go against itself to two passes, as bench/dead_stones.py
plays them, at GNUGO_LEVEL, default 10, seeds 1..GAMES), runs `weiqi review FILE --json` and asks whether
Black's win rate at the last position the search judges (the one after the first of the
two closing passes) names the winner of GNU Go's count (`final_score`), and the same of the
position after the last stone. A game that repeats an earlier one is counted once.

Usage: bench/review_winner.py [GAMES] [WEIQI] [VISITS] [GNUGO]
CORPUS_DIR keeps and reuses the games (moves-gameN-9-lLEVEL.json: the moves, as
dead_stones.py's records hold only the final position).
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dead_stones import Gtp  # noqa: E402


def sgf_point(vertex):
    """GTP's `D4` on 9x9 as SGF's `df`."""
    col = "ABCDEFGHJ".index(vertex[0].upper())
    row = int(vertex[1:])
    return "abcdefghi"[col] + "abcdefghi"[9 - row]


def gnugo_game(gnugo, seed, level):
    """GNU Go against itself on 9x9 to two passes: the record (moves) and GNU Go's count,
    or None when the game ended otherwise."""
    go = Gtp([gnugo, "--mode", "gtp", "--level", str(level), "--chinese-rules", "--seed", str(seed)])
    go.send("boardsize 9")
    go.send("clear_board")
    go.send("komi 7.5")
    moves, color = [], "black"
    while len(moves) < 4 * 81 and moves[-2:] != ["pass", "pass"]:
        v = go.send(f"genmove {color}").lower()
        if v == "resign":
            break
        moves.append(v)
        color = "white" if color == "black" else "black"
    if moves[-2:] != ["pass", "pass"]:
        go.close()
        return None
    score = go.send("final_score")
    go.close()
    body = "".join(
        f";{'B' if k % 2 == 0 else 'W'}[{'' if v == 'pass' else sgf_point(v)}]" for k, v in enumerate(moves)
    )
    return {"sgf": f"(;GM[1]FF[4]SZ[9]KM[7.5]RU[Chinese]{body})", "score": score}


def main():
    games = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    weiqi = sys.argv[2] if len(sys.argv) > 2 else "target/release/weiqi"
    visits = sys.argv[3] if len(sys.argv) > 3 else "1000"
    gnugo = sys.argv[4] if len(sys.argv) > 4 else "/usr/games/gnugo"
    level = int(os.environ.get("GNUGO_LEVEL", "10"))
    corpus = os.environ.get("CORPUS_DIR")
    suffix = "" if level == 1 else f"-l{level}"
    seen = set()
    judged = last_right = stone_right = draws = 0
    wrong = []
    for g in range(games):
        cached = os.path.join(corpus, f"moves-game{g + 1}-9{suffix}.json") if corpus else None
        if cached and os.path.exists(cached):
            with open(cached) as f:
                game = json.load(f)
        else:
            game = gnugo_game(gnugo, g + 1, level)
            if cached:
                os.makedirs(corpus, exist_ok=True)
                with open(cached, "w") as f:
                    json.dump(game, f)
        if game is None or game["sgf"] in seen:
            continue
        seen.add(game["sgf"])
        score = game["score"]
        if score.startswith("0"):
            draws += 1
            continue
        black_won = score.startswith("B")
        with tempfile.NamedTemporaryFile("w", suffix=".sgf", delete=False) as f:
            f.write(game["sgf"])
            path = f.name
        out = subprocess.run(
            weiqi.split() + ["review", path, "--json", "--visits", visits],
            check=True, capture_output=True, text=True,
        ).stdout
        os.unlink(path)
        moves = json.loads(out)["moves"]
        # The last two moves are the closing passes: the position after the first is the
        # last one searched, the one before it the last after a stone.
        last, after_stone = moves[-1]["black_before"], moves[-2]["black_before"]
        judged += 1
        last_right += (last > 0.5) == black_won
        stone_right += (after_stone > 0.5) == black_won
        if (last > 0.5) != black_won:
            wrong.append({"seed": g + 1, "gnugo": score, "black_win_rate": round(last, 3)})
    print(json.dumps({
        "gnugo_level": level, "seeds": games, "distinct_games_judged": judged, "draws_skipped": draws,
        "visits": int(visits),
        "last_position_names_winner": last_right,
        "share": last_right / judged if judged else None,
        "after_last_stone_names_winner": stone_right,
        "wrong": wrong,
    }))


if __name__ == "__main__":
    main()
