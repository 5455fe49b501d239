"""Match play (Troshin, RULES §3): hands are dealt one after another and their points add
up; the first side (a player, or a pair) to reach ``variant.match_target`` (100) wins.

:class:`TroshinMatch` implements the same state protocol as a hand (``is_terminal``,
``is_chance`` — always False: the next deal happens inside ``apply`` with the match's own
RNG —, ``current_player``, ``legal_actions``, ``apply``, ``clone``, ``observe``,
``returns``, ``result``, ``num_actions``), so the game loop, the agents and the env drive
a whole match like a single hand.  Each hand opens by the variant's opening rule (6-6,
else the highest double, else the heaviest tile), whoever holds it.

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


def _child_rng(rng) -> random.Random:
    if hasattr(rng, "integers"):
        return random.Random(int(rng.integers(1 << 62)))
    return random.Random(rng.getrandbits(62))


class TroshinMatch:
    """A match of hands to ``target`` points; see the module docstring."""

    __slots__ = ("variant", "hand", "rng", "scores", "hand_points", "hand_index", "target",
                 "match_winner", "last_hand")

    def __init__(self, variant: Variant, hand: DominoState, rng, scores: Optional[Sequence[int]] = None,
                 hand_points=(), hand_index: int = 0, target: Optional[int] = None):
        self.variant = variant
        self.hand = hand
        self.rng = rng if isinstance(rng, random.Random) else _child_rng(rng)
        self.scores: List[int] = list(scores) if scores is not None else [0] * variant.n_teams
        self.hand_points = [tuple(h) for h in hand_points]
        self.hand_index = hand_index
        self.target = variant.match_target if target is None else target
        self.match_winner: Optional[int] = None   # team
        self.last_hand: Optional[dict] = None     # result() of the last finished hand
        if max(self.scores) >= self.target:
            self.match_winner = self.scores.index(max(self.scores))
        elif hand.is_terminal:
            self._hand_over()

    # ------------------------------------------------------------------ protocol
    @property
    def is_terminal(self) -> bool:
        return self.match_winner is not None

    @property
    def is_chance(self) -> bool:
        return False

    @property
    def current_player(self) -> int:
        return self.hand.current_player

    def apply_chance(self, rng) -> None:
        """Never called: the next hand is dealt inside ``apply`` (``is_chance`` is False)."""
        raise IllegalActionError("a match has no chance node: each hand is dealt inside apply")

    @property
    def num_actions(self) -> int:
        return self.variant.num_actions

    @property
    def blocked(self) -> bool:
        return self.hand.blocked

    def legal_actions(self) -> List[int]:
        return [] if self.is_terminal else self.hand.legal_actions()

    def apply(self, action: int) -> None:
        if self.is_terminal:
            raise IllegalActionError(f"action {action} in a finished match: no action is legal")
        self.hand.apply(action)
        if self.hand.is_terminal:
            self._hand_over()

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
            self.hand = DominoState.deal(self.variant, self.rng)

    def clone(self) -> "TroshinMatch":
        m = object.__new__(TroshinMatch)
        m.variant = self.variant
        m.hand = self.hand.clone()
        m.rng = random.Random()
        m.rng.setstate(self.rng.getstate())
        m.scores = self.scores[:]
        m.hand_points = self.hand_points[:]
        m.hand_index = self.hand_index
        m.target = self.target
        m.match_winner = self.match_winner
        m.last_hand = self.last_hand
        return m

    def match_info(self) -> MatchInfo:
        return MatchInfo(target=self.target, scores=tuple(self.scores), hand_index=self.hand_index,
                         hand_points=tuple(self.hand_points))

    def observe(self, player: int) -> DominoView:
        return replace(self.hand.observe(player), match=self.match_info(), is_terminal=self.is_terminal)

    def events(self):
        """The public events of the current hand."""
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
    def from_view(cls, view: DominoView, hand: DominoState, rng) -> "TroshinMatch":
        """A sampled world of a match: the sampled hand, the view's scores, future deals from ``rng``."""
        info = view.match
        m = cls(view.variant, hand, _child_rng(rng), scores=info.scores, hand_points=info.hand_points,
                hand_index=info.hand_index, target=info.target)
        return m

    def __repr__(self) -> str:
        return (f"<TroshinMatch {self.variant.name} to {self.target}: scores "
                f"{' / '.join(map(str, self.scores))} after {self.hand_index} hands; {self.hand!r}>")


def new_match(variant: Variant, rng, target: Optional[int] = None) -> TroshinMatch:
    """A new match: the first hand dealt with ``rng``; later deals from a child RNG of it."""
    child = _child_rng(rng)
    return TroshinMatch(variant, DominoState.deal(variant, child), child, target=target)
