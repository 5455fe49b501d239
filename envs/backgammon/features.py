"""Tesauro's 198-input encoding of a backgammon position (TD-Gammon), numpy only.

From the side of the *observer* ("me"; the position is given from my side, my checkers
positive, see :mod:`envs.backgammon.board`)::

    [  0: 96]  my checkers on my points 1..24, four units per point:
               n >= 1, n >= 2, n >= 3, (n - 3) / 2 if n > 3 else 0
    [ 96:192]  the opponent's checkers on *his* points 1..24 (his point j is my 25 - j),
               the same four units per point
    [192]      my checkers on the bar / 2          [193]  his on the bar / 2
    [194]      my checkers borne off / 15          [195]  his borne off / 15
    [196]      1 if I am on roll                   [197]  1 if he is on roll

All values lie in [0, 7.5].  The dice are not part of the 198 inputs (Tesauro evaluated
afterstates); in the env the per-checker action mask carries them.
"""
from __future__ import annotations

import numpy as np

NUM_FEATURES = 198


def _units(counts: np.ndarray) -> np.ndarray:
    out = np.zeros((24, 4), dtype=np.float32)
    out[:, 0] = counts >= 1
    out[:, 1] = counts >= 2
    out[:, 2] = counts >= 3
    out[:, 3] = np.where(counts > 3, (counts - 3) / 2.0, 0.0)
    return out.reshape(-1)


def tesauro_features(position, on_roll: bool = True) -> np.ndarray:
    """The 198 inputs of ``position`` (from the observer's side); ``on_roll``: whether
    the observer is the player on roll."""
    p = np.asarray(position, dtype=np.int64)
    mine = np.clip(p[1:25], 0, None)
    theirs = np.clip(-p[24:0:-1], 0, None)        # his points 1..24 = my 24..1
    x = np.empty(NUM_FEATURES, dtype=np.float32)
    x[0:96] = _units(mine)
    x[96:192] = _units(theirs)
    x[192] = p[25] / 2.0
    x[193] = -p[0] / 2.0
    x[194] = (15 - mine.sum() - p[25]) / 15.0
    x[195] = (15 - theirs.sum() + p[0]) / 15.0
    x[196] = 1.0 if on_roll else 0.0
    x[197] = 0.0 if on_roll else 1.0
    return x
