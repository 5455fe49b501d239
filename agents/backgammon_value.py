"""State values for backgammon search: what a position is worth to the player on roll.

Search compares positions that come from *different* plays — a 1-ply search scores each
candidate play by the positions the opponent's 21 rolls and replies lead to — so its
leaves need a value that means the same thing in every position.  ``pubeval`` and the
``race`` heuristic do not give one: they are *rankers*, built to order the plays of one
position and roll.  Two things go wrong when their score is used as a value across
positions:

* the score of a play is blind to most of the opponent's side: pubeval's inputs see the
  other side only as blots (the ones a hit could take) and checkers on the bar, since
  nothing else about the opponent differs between the plays of one roll;
* its offsets are not a probability: pubeval's race score even falls as the race
  lead grows (on pubeval self-play the fitted slope of win probability on it is
  negative), because within one roll every play moves the same number of pips.

A 1-ply search that took the opponent's best reply score as its leaf value (minus it)
therefore judged a play only by what it left the opponent, never by the mover's own
points, and won 15% of its games against plain pubeval.

:func:`state_features` looks at a position from **both** sides — the ranker's score of
the position as if each side had just moved, the pip lead, the checkers on the bar and
borne off — and :class:`Calibration` turns them into the probability that the player on
roll wins, by a logistic regression fitted on the ranker's own self-play games
(``pipslab calibrate``, :mod:`pipslab.experiments.calibrate`), one fit for contact positions and
one for races.  The state value is the cubeless equity ``2·p - 1`` (gammons are not
modelled; a finished game scores its points, ±1, 2 or 3, in the search).

The committed fits (``agents/calibrations/*.json``, :func:`calibration`) are the
``calibration.json`` written by::

    pipslab calibrate --eval pubeval --games 20000 --seed 0
    pipslab calibrate --eval race --games 4000 --seed 0
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Dict, Sequence

import numpy as np

from pipslab.envs.backgammon import fast
from pipslab.envs.errors import PipslabError

FEATURES = ("score_mine", "score_theirs", "pip_lead", "bar_mine", "bar_theirs",
            "off_mine", "off_theirs")
PHASES = ("contact", "race")

_POINT = np.arange(26)


def swap(rows: np.ndarray) -> np.ndarray:
    """Boards turned round to the other side (``swapped[i] == -board[25 - i]``)."""
    return -np.asarray(rows)[..., ::-1]


def race_mask(rows: np.ndarray) -> np.ndarray:
    """For each board: no contact left (every checker of mine is past every one of his)."""
    rows = np.asarray(rows).reshape(-1, 26)
    mine = rows[:, 1:26] > 0
    theirs = rows[:, 0:25] < 0
    # my rearmost checker's point (0 if none), his rearmost from my side (25 if none)
    my_back = np.where(mine.any(axis=1), 25 - np.argmax(mine[:, ::-1], axis=1), 0)
    opp_back = np.where(theirs.any(axis=1), np.argmax(theirs, axis=1), 25)
    return my_back < opp_back


def finished_points(rows: np.ndarray) -> np.ndarray:
    """For afterstates (k x 26, the mover's side) where the mover has borne off all 15:
    the points won (1, 2 for a gammon, 3 for a backgammon); 0 for the others."""
    rows = np.asarray(rows).reshape(-1, 26)
    mine_left = np.clip(rows[:, 1:], 0, None).sum(axis=1)
    theirs = np.clip(-rows[:, :25], 0, None)
    opp_off = 15 - theirs.sum(axis=1)
    # backgammon: the loser still has a checker on the bar (index 0) or in the winner's home (1-6)
    in_home = theirs[:, 0:7].sum(axis=1) > 0
    points = np.where(opp_off > 0, 1.0, np.where(in_home, 3.0, 2.0))
    return np.where(mine_left == 0, points, 0.0)


# a ranker: (afterstates k x 26 from the mover's side, race flag) -> k scores for the mover
Ranker = Callable[[np.ndarray, bool], np.ndarray]


def play_out(board, ranker: Ranker, dice: np.random.Generator, record: list = None) -> float:
    """Both sides play ``ranker``'s best play (0-ply) from ``board`` (k=26, the side of
    the player on roll, who has not rolled yet) to the end of the game, with rolls from
    ``dice``.  Returns the points (+-1, 2, 3) for the player on roll at the start.
    ``record``: if given, each position met with a player on roll is appended to it as
    ``(board from that player's side, +1 if it is the starting player else -1)``."""
    board, sign = np.asarray(board, dtype=np.int64), 1.0
    for _ in range(10_000):
        if record is not None:
            record.append((board, sign))
        a, b = dice.integers(1, 7, size=2)
        plays = fast.afterstates(board, int(a), int(b))
        if len(plays):
            plays = np.asarray(plays, dtype=np.int64)
            board = plays[int(np.argmax(ranker(plays, bool(race_mask(board)[0]))))]
            done = finished_points(board)[0]
            if done:
                return sign * done
        board, sign = swap(board), -sign
    raise RuntimeError("play_out: no end after 10,000 turns")


def _scores(ranker: Ranker, rows: np.ndarray, race: np.ndarray) -> np.ndarray:
    out = np.zeros(len(rows))
    for flag in (False, True):
        m = race == flag
        if m.any():
            out[m] = ranker(rows[m], flag)
    return out


def state_features(rows, ranker: Ranker, race: np.ndarray = None) -> np.ndarray:
    """The :data:`FEATURES` of positions ``rows`` (k x 26, each from the side of the player
    on roll): ``ranker``'s score of the position as if I had just made it and as if he had
    (his side), the pip lead (his pips minus mine, /100), checkers on the bar (mine, his)
    and borne off (mine, his; /15).  ``race``: :func:`race_mask` of ``rows``, if known."""
    rows = np.asarray(rows, dtype=np.int64).reshape(-1, 26)
    race = race_mask(rows) if race is None else race
    mine, theirs = np.clip(rows, 0, None), np.clip(-rows, 0, None)
    x = np.empty((len(rows), len(FEATURES)))
    x[:, 0] = _scores(ranker, rows, race)
    x[:, 1] = _scores(ranker, swap(rows), race)
    x[:, 2] = (theirs @ (25 - _POINT) - mine @ _POINT) / 100.0
    x[:, 3] = rows[:, 25]
    x[:, 4] = -rows[:, 0]
    x[:, 5] = (15 - mine.sum(axis=1)) / 15.0
    x[:, 6] = (15 - theirs.sum(axis=1)) / 15.0
    return x


@dataclass(frozen=True)
class Calibration:
    """Logistic weights per phase: ``P(on roll wins) = sigmoid(features · w + bias)``."""

    weights: Dict[str, Sequence[float]]   # phase -> len(FEATURES) weights
    bias: Dict[str, float]                # phase -> intercept

    def win_probability(self, rows, ranker: Ranker) -> np.ndarray:
        rows = np.asarray(rows, dtype=np.int64).reshape(-1, 26)
        race = race_mask(rows)
        x = state_features(rows, ranker, race)
        z = np.empty(len(rows))
        for phase, flag in zip(PHASES, (False, True)):
            m = race == flag
            z[m] = x[m] @ np.asarray(self.weights[phase], dtype=float) + self.bias[phase]
        return 1.0 / (1.0 + np.exp(-z))

    def state_values(self, rows, ranker: Ranker) -> np.ndarray:
        """Cubeless equity (-1..1) of ``rows`` for the player on roll."""
        return 2.0 * self.win_probability(rows, ranker) - 1.0

    def to_json(self) -> dict:
        return {"features": list(FEATURES),
                "weights": {p: [float(v) for v in self.weights[p]] for p in PHASES},
                "bias": {p: float(self.bias[p]) for p in PHASES}}

    @classmethod
    def from_json(cls, data: dict) -> "Calibration":
        if list(data.get("features", [])) != list(FEATURES):
            raise ValueError(f"calibration features {data.get('features')} are not {list(FEATURES)}")
        return cls(weights={p: tuple(data["weights"][p]) for p in PHASES},
                   bias={p: float(data["bias"][p]) for p in PHASES})


CALIBRATION_DIR = Path(__file__).with_name("calibrations")


@lru_cache(maxsize=None)
def calibration(name: str) -> Calibration:
    """The committed fit for evaluator ``name`` (``agents/calibrations/NAME.json``, made
    by the commands in the module docstring)."""
    path = CALIBRATION_DIR / f"{name}.json"
    try:
        data = json.loads(path.read_text())
        return Calibration.from_json(data)
    except FileNotFoundError:
        raise PipslabError(f"no calibration for evaluator {name!r} ({path} is missing); "
                           f"make one with: pipslab calibrate --eval {name}") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise PipslabError(f"{path} is not a valid calibration: {exc}") from None
