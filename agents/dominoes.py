"""Heuristic domino agents: ``heaviest``, ``suits``, ``partner`` and ``greedy``.

They look only at their seat's view (own hand, open ends, public history and scores) and
the legal actions.  ``heaviest`` and ``suits`` work in every domino variant (Happy,
Troshin, Triple); ``partner`` is ``suits`` with an eye on the partner and the next
opponent (Troshin pairs, and any line game); ``greedy`` plays Triple for luck.  Among
equally good placements they take the lowest action id (the left end first), so they are
deterministic.  With no placement they draw when they must and pass when they may (in
Triple a voluntary draw for luck costs 5 points when it fails).
"""
from __future__ import annotations

import math

import numpy as np

from pipslab.envs.dominoes.engine import decode
from pipslab.envs.dominoes.tiles import FULL_SET, HEAVINESS, OTHER_HALF, SUIT, TILES, count
from pipslab.envs.dominoes.triple import placement_score, scoring_mask
from pipslab.envs.errors import PipslabError, excerpt

from .base import Agent, Observation
from .registry import register

FAMILY = "dominoes"   # the games they play: every game of the family, resolved at lookup


def _variant(game):
    """The domino variant ``game`` deals with its default options (None: not a domino game)."""
    if getattr(game, "family", "") != FAMILY:
        return None
    key = id(game)
    if _VARIANTS.get(key, (None,))[0] is not game:
        _VARIANTS[key] = (game, getattr(game.new_state(np.random.default_rng(0)), "variant", None))
    return _VARIANTS[key][1]


_VARIANTS: dict = {}


def line_game(game) -> bool:
    """A domino game laid in a line (Happy, Troshin, and any line variant registered later)."""
    v = _variant(game)
    return v is not None and v.layout == "line"


def luck_game(game) -> bool:
    """A domino game scored by Triple's rule (placements that make the count score)."""
    v = _variant(game)
    return v is not None and v.scoring == "triple"


class _ScoredAgent(Agent):
    """Plays the legal placement with the highest ``score``; draws or passes when it must."""

    def score(self, view, tile: int, end: int):
        raise NotImplementedError

    def act(self, observation: Observation, rng: np.random.Generator) -> int:
        legal = observation.legal_actions
        if len(legal) == 1:
            return legal[0]
        view = observation.view
        v = view.variant
        best, best_key = legal[0], None
        if v.pass_action in legal:
            best = v.pass_action  # with no placement, stop rather than draw for luck
        for a in legal:
            kind, tile, end = decode(view.variant, a)
            if kind != "place":
                continue
            key = self.score(view, tile, end)
            if best_key is None or key > best_key:
                best, best_key = a, key
        return best


def shown_at(view, end: int) -> int:
    """The number showing at ``end`` of the view's table (either layout)."""
    return view.shown(end)


def left_showing(view, tile: int, end: int):
    """The numbers a placement leaves showing where it lies (both halves on an empty table)."""
    if view.left < 0:
        return set(TILES[tile])
    return {OTHER_HALF[tile][shown_at(view, end)]}


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
        numbers = left_showing(view, tile, end)
        follow = sum(bin(others & SUIT[n]).count("1") for n in numbers)
        return follow, HEAVINESS[tile]


class PartnerAgent(_ScoredAgent):
    """``suits`` that plays for its side: it prefers leaving a number the next opponent is
    known to lack (its passes since its last draw), avoids leaving one its partner lacks
    (pairs: the seat opposite), and otherwise keeps the suits it can follow, heaviest
    first.  Without pairs only the next seat is watched.  Measured: level with ``suits``
    in 4-player pairs (1,500 games, mean return 0.00 ± 0.03) — in a draw game hands are
    seldom known to lack a number, so this is a starting point, not a strong player."""

    name = "partner"

    def score(self, view, tile, end):
        v = view.variant
        n = v.players
        me = view.player
        nxt = (me + 1) % n
        partner = (me + 2) % n if v.pairs else -1
        numbers = left_showing(view, tile, end)
        # the other end's number stays showing too
        if view.left >= 0 and v.n_ends == 2:
            numbers_after = numbers | {view.left if end else view.right}
        else:
            numbers_after = numbers
        opp_void = view.voids(nxt)
        block_next = all(opp_void >> k & 1 for k in numbers_after)
        partner_void = view.voids(partner) if partner >= 0 else 0
        hurt_partner = partner >= 0 and all(partner_void >> k & 1 for k in numbers_after)
        others = view.hand & ~(1 << tile)
        follow = sum(bin(others & SUIT[k]).count("1") for k in numbers)
        return block_next, not hurt_partner, follow, HEAVINESS[tile]


class GreedyAgent(Agent):
    """Triple for luck: plays the placement with the highest immediate score (ties: the
    heavier tile); draws for luck only when the expected gain of a draw beats its risk.

    The next boneyard tile is taken as uniform over the unseen tiles (not in its hand, not
    on the table).  With probability ``p`` it is lucky (``lucky_draw`` = 10, and the turn
    ends with it); otherwise it costs ``luck_penalty`` (5) and the turn goes on.  It draws
    when ``p * (10 - best) > (1 - p) * risk`` — ``best`` being the score it would give up
    by not placing now — where ``risk`` defaults to the variant's 5-point penalty
    (``greedy:risk=8`` is warier of losing the zero-penalty rank)."""

    name = "greedy"

    def __init__(self, risk: float | None = None):
        if risk is not None:
            if isinstance(risk, bool) or not isinstance(risk, (int, float)) or not math.isfinite(risk) or risk < 0:
                raise PipslabError(f"greedy: risk must be a number 0 or more (points), got {excerpt(risk)}")
            risk = float(risk)
        self.risk = risk

    def act(self, observation: Observation, rng: np.random.Generator) -> int:
        legal = observation.legal_actions
        if len(legal) == 1:
            return legal[0]
        view = observation.view
        v = view.variant
        best_action, best_key = None, None
        for a in legal:
            if a >= v.draw_action:
                continue
            tile, end = a // v.n_ends, a % v.n_ends
            if v.layout == "spinner":
                points = placement_score(v, view.ends, view.spinner, tile, end)
            else:
                points = 0
            key = (points, HEAVINESS[tile])
            if best_key is None or key > best_key:
                best_action, best_key = a, key
        if v.draw_action in legal and v.layout == "spinner":
            best_points = best_key[0] if best_key else 0
            unseen = FULL_SET & ~view.hand & ~view.table
            n_unseen = count(unseen)
            if n_unseen:
                p = count(scoring_mask(v, view.ends, view.spinner, unseen)) / n_unseen
                risk = v.spinner.luck_penalty if self.risk is None else self.risk
                if p * (v.spinner.lucky_draw - best_points) > (1 - p) * risk:
                    return v.draw_action
        if best_action is not None:
            return best_action
        return v.pass_action if v.pass_action in legal else legal[0]


@register("heaviest", family=FAMILY)
def _make_heaviest(game: str) -> HeaviestAgent:
    return HeaviestAgent()


@register("suits", family=FAMILY)
def _make_suits(game: str) -> SuitsAgent:
    return SuitsAgent()


@register("partner", when=line_game)
def _make_partner(game: str) -> PartnerAgent:
    return PartnerAgent()


@register("greedy", when=luck_game)
def _make_greedy(game: str, risk: float | None = None) -> GreedyAgent:
    return GreedyAgent(risk=risk)
