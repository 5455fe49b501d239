"""Tesauro's 198-input encoding of a backgammon position (TD-Gammon), numpy only.

From the side of the *observer* ("me"; the position is given from my side, my checkers
positive, see :mod:`pipslab.envs.backgammon.board`)::

    [  0: 96]  my checkers on my points 1..24, four units per point:
               n >= 1, n >= 2, n >= 3, (n - 3) / 2 if n > 3 else 0
    [ 96:192]  the opponent's checkers on *his* points 1..24 (his point j is my 25 - j),
               the same four units per point
    [192]      my checkers on the bar / 2          [193]  his on the bar / 2
    [194]      my checkers borne off / 15          [195]  his borne off / 15
    [196]      1 if I am on roll                   [197]  1 if he is on roll

All values lie in [0, 7.5].  The dice are not part of the 198 inputs (Tesauro evaluated
afterstates).  The env, which steps one checker move at a time, appends what is left of
the roll (:func:`observation`, :data:`OBS_SIZE` inputs), so that its observation says
which dice remain — and how many moves of a double — and is Markov.
"""
from __future__ import annotations

import numpy as np

NUM_FEATURES = 198
#: the dice block of :func:`observation`: 4 units per face 1..6, then the moves left / 4
DICE_INPUTS = 25
#: the size of the env's observation (:func:`observation`)
OBS_SIZE = NUM_FEATURES + DICE_INPUTS


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


def observation(position, on_roll: bool, dice=(), moves_left: int = 0) -> np.ndarray:
    """The ``pipslab/Backgammon-v0`` observation, float32[223], from the observer's side::

        [  0:198]  Tesauro's inputs (tesauro_features(position, on_roll))
        [198:222]  the dice the observer has left to play this turn, 4 units per face
                   d = 1..6 at 198 + 4 * (d - 1): at least 1, 2, 3, 4 dice showing d
                   (a roll of 6-4 is one unit of 6 and one of 4; 5-5 before any move
                   is all four units of 5, after two moves two of them)
        [222]      checker moves left in the turn / 4 (the maximal play's remaining
                   length: fewer than the dice when not all of them can be played)

    The dice block is zero when the observer is not on roll (the game is over, or it is
    the other side's turn: the env shows the learner only its own turns).  ``dice``:
    the dice still to play (a double's as four), ``moves_left``: checker moves left."""
    x = np.zeros(OBS_SIZE, dtype=np.float32)
    x[:NUM_FEATURES] = tesauro_features(position, on_roll)
    if on_roll:
        seen = {}
        for d in dice:
            d = int(d)
            n = seen.get(d, 0)
            if n < 4:
                x[NUM_FEATURES + 4 * (d - 1) + n] = 1.0
            seen[d] = n + 1
        x[NUM_FEATURES + 24] = moves_left / 4.0
    return x


# --------------------------------------------------------------------- batched, compiled
# The same inputs for many positions at once, for the neural evaluator and its training
# (:mod:`pipslab.agents.td`).  Every row is a position with its player ON ROLL (GNU BG's
# convention), so inputs 196/197 are always (1, 0) and kept only so that ``"tesauro"`` is
# exactly :func:`tesauro_features`.  ``"plus"`` appends hand-made features a net would
# otherwise have to discover:
#
#     [198, 199]  my / his pip count / 100
#     [200]       1 if no contact is left (a pure race)
#     [201, 202]  my / his blots (single checkers on points 1..24) / 5
#     [203, 204]  my / his longest run of made points (a prime) / 6
#     [205, 206]  my / his checkers back in the other side's home board or on the bar / 5
#
# ``"contact"`` appends to those what GNU BG's contact inputs measure and a small net
# learns slowly from points alone (:func:`contact_features` is the plain reference):
#
#     [207]       his shots: of the 36 rolls, those with which he could hit a blot of mine / 36
#     [208]       my shots at his blots / 36
#     [209, 210]  my / his rearmost checker's escapes: the rolls that carry it past every
#                 point the other side holds in the 12 in front of it / 36
#
# ``"containment"`` appends the rest of what a point-by-point net misses in GNU BG's
# contact inputs (:func:`containment_features` is the plain reference):
#
#     [211, 212]  my / his pip loss: over the 36 rolls, the most pips a hit of one of my
#                 (his) blots would cost me (him), a blot on point p losing 25 - p / 900
#     [213, 214]  my / his containment: the fewest escapes a checker of mine (his) would
#                 have from any point 15..24 of my (his) numbering past the points the
#                 other side holds from 7 up / 36
#     [215, 216]  my / his pips to break contact: what I (he) must move to bring every
#                 checker past the other side's rearmost one / 100
#     [217, 218]  the square of the points he (I) holds in his (my) home board / 36: the
#                 chance that one of my (his) checkers on the bar stays out

from . import fast  # noqa: E402  (the compiled encoder lives with the other compiled kernels)

FEATURE_SETS = {"tesauro": NUM_FEATURES, "plus": NUM_FEATURES + 9, "contact": NUM_FEATURES + 13,
                "containment": NUM_FEATURES + 21}
#: the compiled encoder's number for each feature set; each set extends the one before
FEATURE_LEVELS = {"tesauro": 0, "plus": 1, "contact": 2, "containment": 3}


def encode(rows: np.ndarray, features: str = "tesauro") -> np.ndarray:
    """The inputs of positions ``rows`` (k x 26, each from the side of its player on
    roll) as a ``k x FEATURE_SETS[features]`` float32 array."""
    if features not in FEATURE_SETS:
        raise ValueError(f"unknown feature set {features!r}; known: {', '.join(FEATURE_SETS)}")
    rows = np.ascontiguousarray(np.asarray(rows).reshape(-1, 26), dtype=np.int8)
    out = np.empty((len(rows), FEATURE_SETS[features]), dtype=np.float32)
    fast.encode_rows(rows, FEATURE_LEVELS[features], out)
    return out


def _rolls():
    """The 21 rolls with their weights out of 36."""
    return [(a, b, 1 if a == b else 2) for a in range(1, 7) for b in range(a, 7)]


def _hits(side, blot, bar, a, b) -> bool:
    """Whether ``side``'s opponent (his checkers negative, moving up from his bar at 0)
    rolling ``a``-``b`` reaches the blot on point ``blot``."""
    steps = [a] * (4 if bar == 0 else 5 - bar) if a == b else None
    sources = [0] if bar else [i for i in range(1, blot) if side[i] < 0]
    for i in sources:
        d = blot - i
        if a != b:
            if d in (a, b):
                return True
            if bar > 1:
                continue
            if d == a + b and (side[i + a] < 2 or side[i + b] < 2):
                return True
        else:
            at = i
            for s in steps:
                at += s
                if at > blot or (at < blot and side[at] >= 2):
                    break
                if at == blot:
                    return True
    return False


def _hit_blots(side, a, b):
    """The blots of ``side`` that its opponent rolling ``a``-``b`` can hit."""
    bar = -side[0]
    return [p for p in range(1, 25) if side[p] == 1 and _hits(side, p, bar, a, b)]


def _shots_of(side) -> int:
    return sum(w for a, b, w in _rolls() if _hit_blots(side, a, b))


def _pip_loss_of(side) -> int:
    return sum(w * max((25 - p for p in _hit_blots(side, a, b)), default=0) for a, b, w in _rolls())


def _escapes_of(side) -> int:
    mine = [p for p in range(1, 26) if side[p] > 0]
    return _escapes_from(side, max(mine, default=0), 1)


def _escapes_from(side, rear, floor) -> int:
    held = [q for q in range(max(floor, rear - 12), rear) if side[q] <= -2]
    if not held:
        return 36
    lo = min(held)
    free = lambda q: 1 <= q and side[q] > -2       # noqa: E731
    total = 0
    for a, b, w in _rolls():
        if a != b:
            ways = [[rear - a, rear - a - b], [rear - b, rear - a - b]]
        else:
            ways = [[rear - a * k for k in range(1, 5)]]
        for way in ways:
            past = False
            for q in way:
                if not free(q):
                    break
                if q < lo:
                    past = True
                    break
            if past:
                total += w
                break
    return total


def _contact_pips_of(side) -> int:
    his = [p for p in range(0, 25) if side[p] < 0]
    rear = min(his, default=25)
    return sum(side[p] * (p - rear) for p in range(rear + 1, 26) if side[p] > 0)


def contact_features(position) -> np.ndarray:
    """The four ``"contact"`` inputs 207-210 of ``position`` (from its player on roll's
    side), written plainly: the reference the compiled encoder is tested against."""
    p = [int(v) for v in position]
    swapped = [-v for v in reversed(p)]
    return np.array([_shots_of(p), _shots_of(swapped), _escapes_of(p), _escapes_of(swapped)],
                    dtype=np.float32) / np.float32(36.0)


def containment_features(position) -> np.ndarray:
    """The eight ``"containment"`` inputs 211-218 of ``position`` (from its player on
    roll's side), written plainly: the reference the compiled encoder is tested against."""
    p = [int(v) for v in position]
    swapped = [-v for v in reversed(p)]
    x = []
    for scale, measure in ((900.0, _pip_loss_of), (36.0, lambda s: min(_escapes_from(s, r, 7) for r in range(15, 25))),
                           (100.0, _contact_pips_of),
                           (36.0, lambda s: sum(1 for q in range(19, 25) if s[q] <= -2) ** 2)):
        x += [measure(p) / scale, measure(swapped) / scale]
    return np.array(x, dtype=np.float32)
