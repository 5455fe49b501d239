"""Domino evaluators on the seam (:mod:`pipslab.agents.evaluators`, family ``"dominoes"``).

Each values full states — the worlds ``ismcts`` and ``pimc`` sample from a seat's view,
and the states they reach from them — for a seat, as that seat's expected return on the
game's ``returns()`` scale (zero-sum; two players: +1 a win, 0 a draw, -1 a loss); a
finished state gets its exact returns.  Chosen in search with ``eval=NAME[:ARG]``:

* ``rollout`` (``rollout:N``) — both (all) seats play uniformly random legal moves from a
  copy of the state to the end of the game; the value is the result (the mean of ``N``
  playouts, default 1).  ``ismcts``'s default: its classic random playout.
* ``hand`` — the exact solver's heuristic at its depth limit: fewer tiles and fewer pips
  in hand are better, ``(20 x tiles + pips the other side holds more) / 1000``, inside
  (-1, 1) (more than two sides: against their mean).  ``pimc``'s default; the solver
  computes the same numbers on its bitmasks (:meth:`pipslab.agents.solver.Solver._evaluate`).
  A ranking of positions rather than a probability.
* ``pips`` (``pips:T``) — a win chance per side from the pip counts: a softmax of minus
  each side's count (partners together) over ``T`` pips (default 10), and the expected
  return under the game's zero-sum returns; two sides: ``tanh((his pips - mine) / 2T)``.
  A heuristic: it ignores tiles, the boneyard and whose turn it is, and Triple's winner
  is decided by points, not pips.
"""
from __future__ import annotations

import random
from typing import List

import numpy as np

from pipslab.envs.dominoes import compiled
from pipslab.envs.dominoes.engine import DominoState, TripleState, zero_sum_returns
from pipslab.envs.errors import PipslabError

from .evaluators import DominoEvaluator, register_evaluator, rollout_count

HAND_SCALE = 1000   # the solver's BIG: ``hand`` values are the solver's heuristic / 1000
TILE_WEIGHT = 20    # pips a tile in hand counts for in ``hand``


def _hands(state) -> List[int]:
    """The hands (bitmasks) of a hand state or of a match's current hand."""
    hand = getattr(state, "hand", None)
    return (hand if hand is not None else state).hands


def _sides(state):
    """``(seats of each side, side of each seat)`` (partners form one side)."""
    teams = state.variant.teams
    sides = [[s for s, t in enumerate(teams) if t == team] for team in range(max(teams) + 1)]
    return sides, teams


class DominoRollout(DominoEvaluator):
    """Uniformly random playouts to the end of the game.  The moves come from the
    generator :meth:`reseed` hands over (``ismcts``: its decision's ``random.Random``
    stream, shared with the tree; a numpy generator seeds a ``random.Random`` from one draw);
    ``seed`` only serves an evaluator used by hand, never reseeded.

    A hand (not a Troshin match) is played out by the compiled engine
    (:func:`pipslab.envs.dominoes.compiled.rollouts`), whose generator is seeded by one
    draw from that stream at the first playout after a reseed; a match by the Python
    engine (``compiled=False``: always), drawing from the stream itself — its moves and,
    at the match's chance nodes, the next hands' deals (``apply_chance``)."""

    def __init__(self, rollouts=1, seed: int = 0, compiled: bool = True):
        self.rollouts = rollout_count(rollouts)
        self._rng = random.Random(seed)
        self.compiled = compiled
        self._fast = None      # the compiled generator, seeded from _rng when first needed

    def reseed(self, rng) -> None:
        self._rng = rng if isinstance(rng, random.Random) else random.Random(int(rng.integers(1 << 62)))
        self._fast = None

    def estimate(self, state) -> List[float]:
        if self.compiled and isinstance(state, (DominoState, TripleState)):
            return self._compiled_estimate(state)
        rng, n = self._rng, self.rollouts
        total = None
        for _ in range(n):   # the inner loop is ismcts's: kept lean
            world = state.clone()
            while not world.is_terminal:
                if world.is_chance:       # a match between hands: the next deal, from the stream
                    world.apply_chance(rng)
                    continue
                acts = world.legal_actions()
                world.apply(acts[rng.randrange(len(acts))] if len(acts) > 1 else acts[0])
            result = world.returns()
            total = result if total is None else [a + b for a, b in zip(total, result)]
        return total if n == 1 else [v / n for v in total]

    def _compiled_estimate(self, state) -> List[float]:
        if self._fast is None:
            self._fast = compiled.new_rng(self._rng.getrandbits(64))
        out = np.zeros(4)
        compiled.rollouts(compiled.params(state.variant), compiled.pack(state, history=False), self._fast,
                          self.rollouts, out)
        return out[:state.variant.players].tolist()


class HandEvaluator(DominoEvaluator):
    """The solver's depth-limit heuristic on the seam (see the module docstring)."""

    def estimate(self, state) -> List[float]:
        sides, side_of = _sides(state)
        hands = _hands(state)
        pips = state.pips_left()
        # a side's burden: TILE_WEIGHT per tile and 1 per pip in its hands
        burden = [sum(TILE_WEIGHT * bin(hands[s]).count("1") + pips[s] for s in seats) for seats in sides]
        total = sum(burden)
        n = len(sides)
        return [((total - burden[side_of[s]]) / (n - 1) - burden[side_of[s]]) / HAND_SCALE
                for s in range(len(side_of))]


class PipsEvaluator(DominoEvaluator):
    """A win chance per side from the pip counts (see the module docstring)."""

    def __init__(self, temperature=10.0):
        try:
            temperature = float(temperature)
        except ValueError:
            raise PipslabError(f"eval=pips:T: T must be a number of pips, got {temperature!r}") from None
        if not temperature > 0:
            raise PipslabError(f"eval=pips:T: T must be positive, got {temperature}")
        self.temperature = temperature

    def estimate(self, state) -> np.ndarray:
        sides, _ = _sides(state)
        pips = state.pips_left()
        players = len(pips)
        counts = np.array([sum(pips[s] for s in seats) for seats in sides], dtype=float)
        z = -(counts - counts.min()) / self.temperature
        p = np.exp(z) / np.exp(z).sum()
        # the returns of every seat if side u won, one row per side
        results = np.array([zero_sum_returns(seats, players) for seats in sides])
        return p @ results


register_evaluator("dominoes", "rollout", DominoRollout)
register_evaluator("dominoes", "hand", HandEvaluator)
register_evaluator("dominoes", "pips", PipsEvaluator)
