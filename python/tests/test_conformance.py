"""The rules through the Python API on the shared conformance data, as the Rust tests
check them (crates/rules/tests/conformance.rs): KataGo's 13 rule cases step by step, and
the 786 game records' final boards, captures, move counts, superko refusals and counts."""

import json

import pytest

import weiqi
from conftest import conformance_dir


def action(at, width, height):
    return width * height if at == "pass" else at[1] * width + at[0]


def color(name):
    return 0 if name.lower().startswith("b") else 1


def test_katago_rule_cases():
    doc = json.loads((conformance_dir() / "rules_cases_katago.json").read_text())
    cases = doc["cases"]
    assert len(cases) == 13
    for case in cases:
        rows = case["board"]
        w, h = len(rows[0]), len(rows)
        if case.get("kind") == "liberty_grid":
            check_liberty_grid(case)
            continue
        state = weiqi.State.from_rows(rows, color(case["first_player"]), case["komi"])
        for k, step in enumerate(case["steps"]):
            ctx = f"{case['id']} step {k}: {step}"
            op = step["op"]
            if op == "play":
                assert state.to_play == color(step["color"]), ctx
                state.play(action(step["at"], w, h))
            elif op == "superko_illegal_set":
                assert state.to_play == color(step["color"]), ctx
                got = sorted(
                    a for a in range(w * h) if state.illegal_reason(a) in ("ko", "superko")
                )
                assert got == sorted(action(p, w, h) for p in step["points"]), ctx
            elif op == "illegal":
                assert state.to_play == color(step["color"]), ctx
                why = state.illegal_reason(action(step["at"], w, h))
                if step["reason"] == "superko":
                    assert why in ("ko", "superko"), ctx
                else:
                    assert why == step["reason"], ctx
            elif op == "game_over":
                assert state.is_over == step["value"], ctx
            elif op == "board":
                assert state.rows() == step["rows"], ctx
            elif op == "num_legal_incl_pass":
                assert state.to_play == color(step["color"]), ctx
                assert int(state.legal_mask().sum()) == step["count"], ctx
                assert len(state.legal_actions()) == step["count"], ctx
            elif op == "area_score_now":
                want = step["white_minus_black"]
                if step.get("katago"):
                    # KataGo also credits pass-alive territory: stones inside it are dead.
                    assert state.score(state.unconditionally_dead()) == want, ctx
                    assert state.score() == step.get("tromp_taylor", want), ctx
                else:
                    assert state.score() == want, ctx
            else:
                pytest.fail(f"{ctx}: unknown op")


def check_liberty_grid(case):
    rows = case["board"]
    w = len(rows[0])
    state = weiqi.State.from_rows(rows, 0)
    grid = case.get("grid_liberties")
    if grid:
        for y, row in enumerate(grid):
            for x, ch in enumerate(row):
                a = y * w + x
                got = "." if rows[y][x] == "." else str(state.liberties(a))
                assert got == ch, f"{case['id']} at {x},{y}"
    for key, c in (("grid_black", 0), ("grid_white", 1)):
        for y, row in enumerate(case.get(key) or []):
            for x, ch in enumerate(row):
                n = state.liberties_after(y * w + x, c)
                assert ("-" if n is None else str(n)) == ch, f"{case['id']} {key} at {x},{y}"


def test_game_records():
    games = conformance_dir() / "games"
    n = illegal = 0
    for line in (games / "expected.jsonl").read_text().splitlines():
        e = json.loads(line)
        text = (games / e["file"]).read_bytes().decode("utf-8", "replace")
        komi = e.get("komi") or 0.0
        state, first_illegal = weiqi.State.replay_sgf(text, komi=komi, rules="chinese")
        assert state.rows() == e["final_board"], e["file"]
        assert sum(state.captures) == e["captures_total"], e["file"]
        if e["first_illegal"] is None:
            assert first_illegal is None, e["file"]
            assert state.move_number == e["num_moves"], e["file"]
            # Tromp-Taylor: the final board counted with every stone alive, komi alone.
            final = weiqi.State.from_rows(state.rows(), 0, komi, "tromp-taylor")
            assert final.score() == e["tt_white_minus_black"], e["file"]
        else:
            assert first_illegal == (e["first_illegal"]["move_number"], "superko"), e["file"]
            # The same move is legal under simple ko (the "japanese" preset's rule).
            simple, none = weiqi.State.replay_sgf(text, komi=komi, rules="japanese")
            assert none is None or none[0] > first_illegal[0], e["file"]
            illegal += 1
        n += 1
    assert n == 786 and illegal == 7
