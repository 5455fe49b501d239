"""Match play (Troshin, RULES §3): hands are dealt one after another and their points add
up; the first side (a player, or a pair) to reach ``variant.match_target`` (100) wins.

:class:`TroshinMatch` implements the state protocol (:class:`pipslab.envs.game.State`:
``is_terminal``, ``is_chance``, ``current_player``, ``legal_actions``, ``apply``,
``apply_chance``, ``clone``, ``observe``, ``returns``, ``result``, ``num_actions``), so the
game loop, the agents and the envs drive a whole match like a single hand.

Chance is explicit, as backgammon's dice: the first hand is dealt by :func:`new_match`
(``Game.new_state``); when a hand ends and no side has reached the target, the match is a
**chance node** — ``is_chance`` is True, ``legal_actions()`` is empty, ``apply`` is refused
(:class:`~pipslab.envs.errors.IllegalActionError`), ``current_player`` is still the seat
that made the finished hand's last move (no seat acts; the OpenSpiel adapter reports the
chance player) and ``hand`` is the finished hand, the scores already counting it — and
``apply_chance(rng)`` deals the next hand from the caller's ``rng`` (:meth:`set_hand`
installs a hand dealt elsewhere, as backgammon's ``set_roll`` a chosen roll).  The state
keeps no random generator: every deal flows from the caller's seeded generator.  Each hand
opens by the variant's opening rule (6-6, else the highest double, else the heaviest
tile), whoever holds it.

A deal — the first and every later one — draws one number from the caller's ``rng``
(``integers(2**62)`` of a numpy generator, ``getrandbits(62)`` of a ``random.Random``)
and shuffles with a ``random.Random`` seeded by it (:func:`deal_hand`), so a seeded game
loop deals hand ``k`` of a match the same way every time.

The view of a match is the current hand's view with ``match`` filled in
(:class:`pipslab.envs.dominoes.engine.MatchInfo`: target, cumulative scores per side, hands
finished, each finished hand's points) — agents that read a hand's view work unchanged.
"""
from __future__ import annotations

import random
from dataclasses import replace
from typing import List, Optional, Sequence

from pipslab.envs.errors import IllegalActionError

from .common import DominoView, MatchInfo, zero_sum_returns
from .line import DominoState
from .variants import Variant

__all__ = ["TroshinMatch", "new_match", "deal_hand"]


def _child_rng(rng) -> random.Random:
    if hasattr(rng, "integers"):
        return random.Random(int(rng.integers(1 << 62)))
    return random.Random(rng.getrandbits(62))


def deal_hand(variant: Variant, rng) -> DominoState:
    """One hand of a match dealt from ``rng`` (a numpy generator or a ``random.Random``):
    one draw seeds the ``random.Random`` that shuffles (see the module docstring)."""
    return DominoState.deal(variant, _child_rng(rng))


class TroshinMatch:
    """A match of hands to ``target`` points; see the module docstring.

    Built from a hand and the scores *before* it: a finished ``hand`` is counted into the
    scores at once (the match is then a chance node, or over)."""

    __slots__ = ("variant", "hand", "scores", "hand_points", "hand_index", "target",
                 "match_winner", "last_hand", "is_chance")

    def __init__(self, variant: Variant, hand: DominoState, scores: Optional[Sequence[int]] = None,
                 hand_points=(), hand_index: int = 0, target: Optional[int] = None):
        self.variant = variant
        self.hand = hand
        self.scores: List[int] = list(scores) if scores is not None else [0] * variant.n_teams
        self.hand_points = [tuple(h) for h in hand_points]
        self.hand_index = hand_index
        self.target = variant.match_target if target is None else target
        self.match_winner: Optional[int] = None   # team
        self.last_hand: Optional[dict] = None     # result() of the last finished hand
        self.is_chance = False                    # the next hand is to deal (apply_chance)
        if max(self.scores) >= self.target:
            self.match_winner = self.scores.index(max(self.scores))
        elif hand.is_terminal:
            self._hand_over()

    # ------------------------------------------------------------------ protocol
    @property
    def is_terminal(self) -> bool:
        return self.match_winner is not None

    @property
    def current_player(self) -> int:
        return self.hand.current_player

    @property
    def num_actions(self) -> int:
        return self.variant.num_actions

    @property
    def blocked(self) -> bool:
        return self.hand.blocked

    def legal_actions(self) -> List[int]:
        return [] if self.is_terminal or self.is_chance else self.hand.legal_actions()

    def apply(self, action: int) -> None:
        if self.is_terminal:
            raise IllegalActionError(f"action {action} in a finished match: no action is legal")
        if self.is_chance:
            raise IllegalActionError(f"action {action} at a chance node: the hand is over and the next "
                                     "one is dealt by apply_chance(rng); no action is legal")
        self.hand.apply(action)
        if self.hand.is_terminal:
            self._hand_over()

    def apply_chance(self, rng) -> DominoState:
        """Deal the next hand from ``rng`` (see the module docstring); returns it."""
        if not self.is_chance:
            raise IllegalActionError("apply_chance on a match that is not a chance node: a hand is on"
                                     if not self.is_terminal else "apply_chance on a finished match")
        hand = deal_hand(self.variant, rng)
        self.set_hand(hand)
        return hand

    def set_hand(self, hand: DominoState) -> None:
        """Apply a chosen chance outcome: ``hand``, a fresh deal of this variant, is the next hand."""
        if not self.is_chance:
            raise IllegalActionError("set_hand on a match that is not a chance node")
        if hand.variant != self.variant or hand.is_terminal or hand.table:
            raise IllegalActionError(f"set_hand needs a fresh deal of {self.variant.name}")
        self.hand = hand
        self.is_chance = False

    def _hand_over(self) -> None:
        points = self.hand.team_points()
        for team, p in enumerate(points):
            self.scores[team] += p
        self.hand_points.append(tuple(points))
        self.hand_index += 1
        self.last_hand = self.hand.result()
        best = max(self.scores)
        if best >= self.target:
            self.match_winner = self.scores.index(best)  # only the hand's winner scored
        else:
            self.is_chance = True

    def clone(self) -> "TroshinMatch":
        m = object.__new__(TroshinMatch)
        m.variant = self.variant
        m.hand = self.hand.clone()
        m.scores = self.scores[:]
        m.hand_points = self.hand_points[:]
        m.hand_index = self.hand_index
        m.target = self.target
        m.match_winner = self.match_winner
        m.last_hand = self.last_hand
        m.is_chance = self.is_chance
        return m

    def match_info(self) -> MatchInfo:
        return MatchInfo(target=self.target, scores=tuple(self.scores), hand_index=self.hand_index,
                         hand_points=tuple(self.hand_points))

    def observe(self, player: int) -> DominoView:
        return replace(self.hand.observe(player), match=self.match_info(), is_terminal=self.is_terminal)

    def events(self):
        """The public events of the current hand (at a chance node: of the finished hand)."""
        return self.hand.events()

    def action_name(self, action: int) -> str:
        return self.hand.action_name(action)

    # ------------------------------------------------------------------ results
    def winners(self) -> List[int]:
        if not self.is_terminal:
            return []
        teams = self.variant.teams
        return [p for p in range(self.variant.players) if teams[p] == self.match_winner]

    def returns(self) -> List[float]:
        """+1 for each seat of the side that won the match, the others share the loss."""
        return zero_sum_returns(self.winners(), self.variant.players)

    def pips_left(self) -> List[int]:
        return self.hand.pips_left()

    def result(self) -> dict:
        won = self.winners()
        teams = self.variant.teams
        return {
            "winner": self.match_winner,          # team t's first seat is seat t
            "winners": won,
            "draw": False,
            "blocked": self.hand.blocked,
            "pips_left": self.hand.pips_left(),   # of the last hand
            "points": [self.scores[teams[p]] for p in range(self.variant.players)],
            "returns": self.returns(),
            "match": True,
            "scores": list(self.scores),
            "hand_points": [list(h) for h in self.hand_points],
            "hands": self.hand_index,
            "match_winner": self.match_winner,
        }

    @classmethod
    def from_view(cls, view: DominoView, hand: DominoState) -> "TroshinMatch":
        """A sampled world of a match view: the sampled hand with the view's scores; its
        later deals are the world's chance nodes (the searcher deals them with its own
        generator).  A finished ``hand`` beside scores below the target (a world of the
        finished match's last hand never is) makes the world a chance node: the view's scores
        already count that hand."""
        info = view.match
        m = object.__new__(cls)
        m.variant, m.hand = view.variant, hand
        m.scores, m.hand_points = list(info.scores), [tuple(h) for h in info.hand_points]
        m.hand_index, m.target = info.hand_index, info.target
        m.last_hand = None
        m.match_winner = None
        m.is_chance = False
        if max(m.scores) >= m.target:
            m.match_winner = m.scores.index(max(m.scores))
        elif hand.is_terminal:
            m.is_chance = True
        return m

    def __repr__(self) -> str:
        where = "; next hand to deal" if self.is_chance else ""
        return (f"<TroshinMatch {self.variant.name} to {self.target}: scores "
                f"{' / '.join(map(str, self.scores))} after {self.hand_index} hands{where}; {self.hand!r}>")


def new_match(variant: Variant, rng, target: Optional[int] = None) -> TroshinMatch:
    """A new match: the first hand dealt from ``rng`` (:func:`deal_hand`); the later ones
    are the match's chance nodes (``apply_chance(rng)``)."""
    return TroshinMatch(variant, deal_hand(variant, rng), target=target)
