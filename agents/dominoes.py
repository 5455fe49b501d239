"""Heuristic domino agents: ``heaviest`` and ``suits``.

Both look only at their seat's view (own hand, open ends) and the legal actions, and
work in every domino variant.  Among equally good placements they take the lowest action
id (the left end first), so they are deterministic.
"""
from __future__ import annotations

import numpy as np

from envs.dominoes.engine import decode
from envs.dominoes.tiles import HEAVINESS, OTHER_HALF, SUIT, TILES

from .base import Agent, Observation
from .registry import register

DOMINO_GAMES = ["happy", "troshin", "triple"]


class _ScoredAgent(Agent):
    """Plays the legal placement with the highest ``score``; draws or passes when it must."""

    def score(self, view, tile: int, end: int):
        raise NotImplementedError

    def act(self, observation: Observation, rng: np.random.Generator) -> int:
        legal = observation.legal_actions
        if len(legal) == 1:
            return legal[0]
        view = observation.view
        best, best_key = legal[0], None
        for a in legal:
            kind, tile, end = decode(view.variant, a)
            if kind != "place":
                continue
            key = self.score(view, tile, end)
            if best_key is None or key > best_key:
                best, best_key = a, key
        return best


class HeaviestAgent(_ScoredAgent):
    """"Bota gorda": plays the heaviest legal tile (more pips; ties -> the higher half)."""

    name = "heaviest"

    def score(self, view, tile, end):
        return HEAVINESS[tile]


class SuitsAgent(_ScoredAgent):
    """Plays the tile whose numbers it holds most of: a placement leaves a number showing
    at the end it covers (on the empty table, both halves); the score is how many of its
    other tiles carry that number — so it keeps suits it can follow.  Ties go to the
    heavier tile.  (Of the readings tried, this one beats ``heaviest``; counting the tile's
    own two numbers instead did not beat ``random`` in draw mode.)"""

    name = "suits"

    def score(self, view, tile, end):
        others = view.hand & ~(1 << tile)
        if view.left < 0:
            numbers = set(TILES[tile])
        else:
            numbers = {OTHER_HALF[tile][view.right if end else view.left]}
        follow = sum(bin(others & SUIT[n]).count("1") for n in numbers)
        return follow, HEAVINESS[tile]


@register("heaviest", games=DOMINO_GAMES)
def _make_heaviest(game: str) -> HeaviestAgent:
    return HeaviestAgent()


@register("suits", games=DOMINO_GAMES)
def _make_suits(game: str) -> SuitsAgent:
    return SuitsAgent()
