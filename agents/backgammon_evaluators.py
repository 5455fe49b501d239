"""The backgammon evaluators of the seam (:mod:`pipslab.agents.evaluators`, family
``"backgammon"``): ``pubeval`` and ``race`` (rankers with a calibrated state value,
:mod:`pipslab.agents.backgammon_value`), ``gnubg`` (GNU BG's 0-ply net: outcome
probabilities; ``[bench]`` extra) and ``rollout`` (:class:`BackgammonRollout`:
pubeval-vs-pubeval rollouts in points).  ``td`` is registered by :mod:`pipslab.agents.td`.
Search (:mod:`pipslab.agents.search_backgammon`) finds them by ``eval=NAME``."""
from __future__ import annotations

import numpy as np

from pipslab.envs.backgammon import Position
from pipslab.envs.backgammon import fast

from .backgammon import PUBEVAL_CONTACT, PUBEVAL_RACE, RaceAgent, gnubg_module, pubeval_scores
from .backgammon_value import calibration, swap
from .evaluators import WIN, BackgammonEvaluator, boards, register_evaluator, rollout_count


class CalibratedEvaluator(BackgammonEvaluator):
    """A ranker whose state value is its calibration (:mod:`pipslab.agents.backgammon_value`)."""

    calibration_name = ""

    def state_values(self, rows):
        return calibration(self.calibration_name).state_values(rows, self.afterstate_values)


class PubevalEvaluator(CalibratedEvaluator):
    calibration_name = "pubeval"

    def afterstate_values(self, rows, race):
        s = pubeval_scores(rows, race)
        return np.where(np.isfinite(s), s, WIN)


class RaceEvaluator(CalibratedEvaluator):
    calibration_name = "race"

    def __init__(self):
        self._agent = RaceAgent()

    def afterstate_values(self, rows, race):
        return np.array([self._agent.score(Position._trusted(tuple(int(v) for v in r))) for r in rows])


class GnubgEvaluator(BackgammonEvaluator):
    """GNU Backgammon's net (``gnubg_nn.probabilities``) at ``plies`` (0: the net alone;
    1, 2: gnubg-nn's own search below the position): outcome probabilities and cubeless
    equity, natively of a position with a player on roll.  For evaluation and as a
    reference only (``[bench]`` extra)."""

    in_points = True

    def __init__(self, plies: int = 0):
        self._g = gnubg_module()
        self.plies = int(plies)

    def probabilities(self, rows):
        rows = boards(rows)
        out = np.empty((len(rows), 5))
        for i, r in enumerate(rows):
            on_roll = Position._trusted(tuple(int(v) for v in r))
            out[i] = self._g.probabilities(on_roll.to_gnubg(), self.plies)
        return out

    def state_values(self, rows):
        p = self.probabilities(rows)
        return (2 * p[:, 0] - 1) + (p[:, 1] - p[:, 3]) + (p[:, 2] - p[:, 4])

    def afterstate_values(self, rows, race):
        return -self.state_values(swap(np.asarray(rows, dtype=np.int64)))


class BackgammonRollout(BackgammonEvaluator):
    """Monte Carlo rollouts: from each afterstate both sides play on with ``pubeval``'s
    choices to the end of the game; the value is the mean result in points (±1/2/3) for the
    player who made the play.  Every afterstate of one call sees the same dice sequences
    (common random numbers), so differences between plays are not drowned in dice luck.
    The dice come from the game: :meth:`reseed` draws one number from the game's rng at
    each decision, and the calls within that decision count on from it; ``seed`` only
    serves an evaluator used by hand, never reseeded."""

    in_points = True

    def __init__(self, rollouts: int = 16, seed: int = 0):
        self.rollouts = rollout_count(rollouts)
        self.seed = seed
        self._calls = 0

    def reseed(self, rng: np.random.Generator) -> None:
        self.seed = int(rng.integers(2 ** 63))
        self._calls = 0

    def afterstate_values(self, rows, race):
        self._calls += 1
        before = swap(boards(rows))
        out = np.zeros(len(before))
        for k in range(self.rollouts):
            out -= pubeval_play_outs(before, [self.seed, self._calls, k])
        return out / self.rollouts


def pubeval_play_outs(rows, dice_seed, limit: int = 10_000) -> np.ndarray:
    """``play_out(row, pubeval_scores, numpy.random.default_rng(dice_seed))`` of every row
    (k x 26, each from the side of the player on roll, before his roll), all with the
    same dice, in one compiled call (:func:`pipslab.envs.backgammon.fast.pubeval_rollouts`):
    the points for the player on roll.  The rolls are drawn from the seed in blocks
    (numpy's block draws are its one-at-a-time draws, so the dice are ``play_out``'s)."""
    size = 256
    while True:
        rolls = np.random.default_rng(dice_seed).integers(1, 7, size=(min(size, limit), 2))
        points = fast.pubeval_rollouts(rows, rolls, PUBEVAL_CONTACT, PUBEVAL_RACE, limit)
        if points is not None:
            if (points == 0).any():
                raise RuntimeError(f"play_out: no end after {limit:,} turns")
            return points
        size *= 4


for _name, _factory in (("pubeval", PubevalEvaluator), ("race", RaceEvaluator), ("gnubg", GnubgEvaluator),
                       ("rollout", BackgammonRollout)):
    register_evaluator("backgammon", _name, _factory)


__all__ = ["BackgammonRollout", "CalibratedEvaluator", "GnubgEvaluator", "PubevalEvaluator", "RaceEvaluator",
           "pubeval_play_outs"]
