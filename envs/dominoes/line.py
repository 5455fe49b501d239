"""The line layout's rules (RULES §2 Happy, §3 Troshin): :class:`DominoState`.

Pure Python, no gymnasium/torch import.  Hands are 28-bit masks (``tiles``); the Happy and
Troshin rules are data (``variants.Variant``): draw or block, the opening rule, the
redeal, pairs, the lone 0-0's count, the scoring.

* **Actions** (``n_ends = 2``): ``tile * 2 + end`` places ``tile`` at the left (0) or
  right (1) end — the two ends are different moves even when they show the same number;
  the opening tile uses end 0.  56 is DRAW (the next boneyard tile; the turn goes on),
  57 is PASS.
* **Legal**: the placements when any exist (placement has priority), else DRAW when the
  variant draws and the boneyard is not empty, else PASS.  The opening is the tile the
  opening rule names (``common.opening_tile``), placed by its holder.
* **End**: a seat places its last tile (it wins), or every seat passes in a row (blocked):
  the lowest count — by pair totals with pairs — wins; a shared lowest count is a draw.
* **Results**: ``pips_left``, Troshin's ``team_points``, ``points`` and zero-sum
  ``returns`` (+1 shared by the winners, −1 shared by the others).
* **Views and worlds**: ``observe(player)``; :meth:`DominoState.constraint_groups` is
  what a view's passes, draws and opening prove about the hidden hands, and
  :meth:`DominoState.from_view` rebuilds a state from a view and sampled hands
  (``engine.sample_world``).
"""
from __future__ import annotations

from typing import List, Optional, Sequence

from pipslab.envs.errors import IllegalActionError

from .common import (
    DRAW, OUTRANKING, PASS, PLACE, DominoView, Event, StateBase, deal_hands, first_player, initial_groups,
    opening_tile, take_placed, zero_sum_returns,
)
from .tiles import OTHER_HALF, SUIT, TILES, count, tile_name, tiles_of
from .variants import Variant

PLACEMENTS = 56  # placement action ids 0..55 (28 tiles x 2 ends)


class DominoState(StateBase):
    """A full line-layout game state (every hand and the boneyard order known).

    Use ``engine.deal`` (or :meth:`deal`) for a new game and
    ``pipslab.envs.dominoes.notation.parse_position`` for a position string.  Agents never
    get this object; they get ``observe(player)``.
    """

    __slots__ = ("left", "right", "opening")

    def __init__(self, variant: Variant, hands: Sequence[int], boneyard: Sequence[int] = (),
                 left: int = -1, right: int = -1, current_player: int = 0, passes: int = 0,
                 table: Optional[int] = None, line=None, opening: int = -1,
                 history=None, from_deal: bool = True):
        self._init_base(variant, hands, boneyard, current_player, passes, table,
                        tuple(line) if line is not None else (() if left < 0 else None),
                        history, from_deal)
        self.left, self.right = left, right
        self.opening = opening

    @classmethod
    def deal(cls, variant: Variant, rng) -> "DominoState":
        """Shuffle the 28 tiles with ``rng`` and deal a new game (redealt while a hand calls for it)."""
        hands, boneyard = deal_hands(variant, rng)
        seat, tile = first_player(variant, hands, rng)
        return cls(variant, hands, boneyard, current_player=seat, opening=tile, table=0)

    # ------------------------------------------------------------------ rules
    def placements(self) -> List[int]:
        """Legal placement actions of the player to move (ascending)."""
        hand = self.hands[self.current_player]
        left = self.left
        if left < 0:
            if self.opening >= 0:
                return [self.opening * 2] if hand >> self.opening & 1 else []
            return [t * 2 for t in tiles_of(hand)]
        ml = hand & SUIT[left]
        mr = hand & SUIT[self.right]
        acts = []
        m = ml | mr
        while m:
            low = m & -m
            t = low.bit_length() - 1
            m ^= low
            if ml & low:
                acts.append(t + t)
            if mr & low:
                acts.append(t + t + 1)
        return acts

    def legal_actions(self) -> List[int]:
        if self.is_terminal:
            return []
        acts = self.placements()
        if acts:
            return acts
        if self.variant.draw and self.bpos < len(self.boneyard):
            return [self.variant.draw_action]
        return [self.variant.pass_action]

    def apply(self, action: int) -> None:
        """Play ``action`` for the player to move; raises IllegalActionError if it is not legal."""
        if self.is_terminal:
            raise IllegalActionError(f"action {action} in a finished game: no action is legal")
        v = self.variant
        player = self.current_player
        if 0 <= action < PLACEMENTS:
            tile, end = action >> 1, action & 1
            hand = self.hands[player]
            if not hand >> tile & 1:
                self._illegal(action, f"{tile_name(tile)} is not in player {player}'s hand")
            left, right = self.left, self.right
            if left < 0:
                if end != 0 or (self.opening >= 0 and tile != self.opening):
                    self._illegal(action, "the opening must be "
                                  + (f"{tile_name(self.opening)} at end 0" if self.opening >= 0
                                     else "placed at end 0"))
                a, b = TILES[tile]
                self.left, self.right = a, b
                self.line = ((a, b),)
                self.opening = -1
            else:
                shown = right if end else left
                other = OTHER_HALF[tile][shown]
                if other < 0:
                    self._illegal(action, f"{tile_name(tile)} does not match the "
                                  f"{'right' if end else 'left'} end ({shown})")
                if end:
                    self.right = other
                    if self.line is not None:
                        self.line = self.line + ((shown, other),)
                else:
                    self.left = other
                    if self.line is not None:
                        self.line = ((other, shown),) + self.line
            self.history = (Event(PLACE, player, tile, end, left, right), self.history)
            hand ^= 1 << tile
            self.hands[player] = hand
            self.table |= 1 << tile
            self.passes = 0
            if not hand:
                self._finish(winner=player, blocked=False)
                return
        elif action == v.draw_action:
            if not v.draw or self.bpos >= len(self.boneyard):
                self._illegal(action, "this game has no boneyard to draw from" if not v.draw
                              else "the boneyard is empty")
            if self.placements():
                self._illegal(action, "a placement exists, and a placement has priority")
            tile = self.boneyard[self.bpos]
            self.bpos += 1
            self.hands[player] |= 1 << tile
            self.history = (Event(DRAW, player, -1, -1, self.left, self.right), self.history)
            return  # drawing does not end the turn
        elif action == v.pass_action:
            if self.placements():
                self._illegal(action, "a placement exists, and a placement has priority")
            if v.draw and self.bpos < len(self.boneyard):
                self._illegal(action, "the boneyard is not empty: draw first")
            left, right = self.left, self.right
            lacking = (1 << left | 1 << right) if left >= 0 else 0
            self.history = (Event(PASS, player, -1, lacking, left, right), self.history)
            self.passes += 1
            if self.passes >= v.players:
                self._finish(winner=None, blocked=True)
                return
        else:
            self._illegal(action, "not an action id of this game")
        self.current_player = (player + 1) % v.players

    def _finish(self, winner: Optional[int], blocked: bool) -> None:
        """End the game: ``winner`` went out, or (None) the lowest count — by pair totals
        with pairs — wins a blocked game; a shared lowest count is a draw (-1)."""
        self.is_terminal = True
        self.blocked = blocked
        if winner is None:
            totals = self.team_counts()
            low = min(totals)
            holders = [team for team, c in enumerate(totals) if c == low]
            winner = holders[0] if len(holders) == 1 else -1  # team t's first seat is t
        self.winner = winner

    # ------------------------------------------------------------------ results
    def team_counts(self) -> List[int]:
        """Each side's count: a seat's own, or with pairs the two partners' together."""
        counts = self.pips_left()
        if not self.variant.pairs:
            return counts
        return [counts[0] + counts[2], counts[1] + counts[3]]

    def winners(self) -> List[int]:
        """The seats that won (both partners with pairs); empty while playing or in a draw."""
        if not self.is_terminal or self.winner is None or self.winner < 0:
            return []
        teams = self.variant.teams
        return [p for p in range(self.variant.players) if teams[p] == teams[self.winner]]

    def team_points(self) -> List[int]:
        """Troshin's score of this hand, per side (RULES §3): going out scores the losers'
        counts (a partner's count is nobody's); a blocked game scores the losers' total
        minus the winners'.  A draw, or an unfinished game, scores nothing."""
        totals = self.team_counts()
        out = [0] * len(totals)
        if not self.is_terminal or self.winner is None or self.winner < 0:
            return out
        win = self.variant.teams[self.winner]
        losers = sum(c for team, c in enumerate(totals) if team != win)
        out[win] = losers - totals[win] if self.blocked else losers
        return out

    def points(self) -> List[float]:
        """Per seat: Troshin's points of its side (partners both show the pair's score);
        for the other scorings, the win/draw/loss (``returns``)."""
        if self.variant.scoring != "troshin":
            return self.returns()
        tp = self.team_points()
        return [tp[team] for team in self.variant.teams]

    def returns(self) -> List[float]:
        """+1 for each winner (partners alike), the others share the loss (zero-sum); 0 for all in a draw."""
        return zero_sum_returns(self.winners(), self.variant.players)

    def result(self) -> dict:
        won = self.winners()
        return {
            "winner": None if self.winner is None or self.winner < 0 else self.winner,
            "winners": won,
            "draw": self.winner == -1,
            "blocked": self.blocked,
            "pips_left": self.pips_left(),
            "points": self.points(),
            "returns": self.returns(),
        }

    # ------------------------------------------------------------------ views
    def observe(self, player: int) -> DominoView:
        """Exactly what ``player`` may see (RULES §1)."""
        return DominoView(
            variant=self.variant, player=player, hand=self.hands[player],
            hand_sizes=tuple(count(h) for h in self.hands), boneyard_size=self.boneyard_size,
            left=self.left, right=self.right, table=self.table, line=self.line,
            current_player=self.current_player, passes=self.passes, history=self.events(),
            from_deal=self.from_deal, is_terminal=self.is_terminal)

    @staticmethod
    def constraint_groups(view: DominoView):
        """Per seat, groups ``[count, forbidden_tiles]`` of the tiles it holds now.

        Tiles are grouped by when the seat got them (the deal, or a draw): a pass or a draw
        proves that every tile held at that moment lacks both open numbers, so it forbids
        those numbers to every group held then — not to tiles drawn later.  A placed tile
        is taken from the oldest group it is compatible with (after draws that is always the
        tile just drawn), which leaves the remaining tiles as free as the history allows.
        """
        v = view.variant
        n = v.players
        groups = initial_groups(view)
        first = True
        for kind, p, tile, _end, left, right in view.history:
            if kind == PLACE:
                if first and view.from_deal and v.opening == "highest_double":
                    # the opener held the highest double (or, with none dealt, the heaviest tile)
                    for q in range(n):
                        groups[q][0][1] |= OUTRANKING[tile]
                first = False
                take_placed(groups[p], tile)
            else:
                lacking = (SUIT[left] | SUIT[right]) if left >= 0 else 0
                for g in groups[p]:
                    g[1] |= lacking
                if kind == DRAW:
                    groups[p].append([1, 0])
        # An observer about to open knows nobody holds a tile outranking its own opening tile.
        if (view.left < 0 and view.current_player == view.player and v.opening == "highest_double"
                and not view.is_terminal and view.hand):
            hands = [0] * n
            hands[view.player] = view.hand
            _seat, best = opening_tile(v, hands)
            for q in range(n):
                groups[q][0][1] |= OUTRANKING[best]
        return groups

    @classmethod
    def from_view(cls, view: DominoView, hands, boneyard, history) -> "DominoState":
        """The state of a sampled world: ``view``'s public part with these hands and boneyard."""
        v = view.variant
        state = cls(v, hands, boneyard, left=view.left, right=view.right, current_player=view.current_player,
                    passes=view.passes, table=view.table, line=view.line,
                    history=history, from_deal=view.from_deal)
        if view.left < 0 and not view.is_terminal:
            state.opening = opening_tile(v, hands)[1]
        state.is_terminal = view.is_terminal
        return state
