"""State: moves, undo, masks, scoring, SGF both ways, the estimate, copies."""

import copy

import numpy as np
import pytest

import weiqi


def test_play_undo_and_the_masks():
    s = weiqi.State(9)
    assert (s.size, s.komi, s.to_play, s.move_number) == (9, 7.5, 0, 0)
    s.play(40)
    assert s.board()[4, 4] == 1 and s.to_play == 1
    assert s.legal_mask()[40] == 0 and s.legal_mask()[81] == 1
    assert len(s.legal_actions()) == 81
    with pytest.raises(weiqi.IllegalMoveError, match="occupied"):
        s.play(40)
    with pytest.raises(weiqi.IllegalMoveError, match="off the board"):
        s.play(82)
    assert s.illegal_reason(40) == "occupied" and s.illegal_reason(41) is None
    assert s.undo() == 40 and s.move_number == 0 and s.undo() is None


def test_a_capture_and_the_count():
    # Black takes White's corner stone, then both pass: the whole board is Black's.
    t = weiqi.State(5, 0.5)
    for a in (1, 0, 5):
        t.play(a)
    assert t.board()[0, 0] == 0 and t.captures == (1, 0)
    t.play(25)
    t.play(25)
    assert t.is_over and t.result() == "B+24.5"
    assert t.score() == -24.5


def test_sgf_round_trip_and_copies():
    s = weiqi.State(9)
    for a in (40, 41, 30, 81):
        s.play(a)
    again = weiqi.State.from_sgf(s.to_sgf())
    assert again.moves == s.moves and np.array_equal(again.board(), s.board())
    c = copy.deepcopy(s)
    c.play(50)
    assert s.move_number == 4 and c.move_number == 5
    with pytest.raises(ValueError):
        weiqi.State.from_sgf("not sgf")
    with pytest.raises(weiqi.IllegalMoveError):
        weiqi.State.from_sgf("(;SZ[9];B[ee];W[ee])")


def test_the_estimate_and_the_planes():
    s = weiqi.State(9)
    for a in (40, 0, 41, 1):
        s.play(a)
    ownership, dead, wmb = s.estimate()
    assert ownership.shape == (9, 9) and ownership.dtype == np.float32
    assert np.all(np.abs(ownership) <= 1)
    assert isinstance(dead, list) and isinstance(wmb, float)
    planes = s.observation()
    assert planes.shape == (17, 9, 9) and planes.dtype == np.uint8
    # Black to move: its stones in plane 0, White's in plane 8, the colour plane ones.
    assert planes[0, 4, 4] == 1 and planes[8, 0, 0] == 1 and planes[16].all()
    assert s.observation("channels_last").shape == (9, 9, 17)
    assert 0 <= s.random_action("light", 3) <= 81
    with pytest.raises(ValueError):
        s.random_action("greedy")
