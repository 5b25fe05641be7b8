"""A Python policy against a GTP engine (GNU Go, KataGo, weiqi itself) through the
project's referee, the one ``weiqi match`` uses: colours alternating (the policy Black in
even games), the count by area (with the dead stones both players name, else the engine's
estimate), and the score with its 95% Wilson interval.

    from weiqi.arena import play
    report = play(lambda s: s.random_action("light"), "gnugo --mode gtp --level 1", games=10)
    report["score"], report["wilson95"]

The policy receives a ``State`` and returns an action (-1 resigns). A policy that raises
stops the match with a RuntimeError carrying the exception.
"""

from ._native import play_match as play

__all__ = ["play"]
