"""Triple domino for luck (RULES §4, source ``001``): the spinner layout and its scoring.

Every rule of the spinner layout is here — :class:`TripleState` shares with the line
layout (``line.DominoState``) only the bookkeeping and helpers of ``common`` (hands,
boneyard, public history, the view, the deal, the dealing of unseen tiles):

* **Ends**: ``ends[0]`` left, ``ends[1]`` right, ``ends[2]``/``ends[3]`` the spinner's two
  side lines (-1 while not open).  The first double placed after the opening tile — or a
  double that opens — is the **spinner**: from then on a tile carrying its number may start
  either side line (actions ``tile*4 + 2`` and ``tile*4 + 3``).  A side line is an open end
  only once a tile lies on it.
* **Count**: the sum of the numbers at the open ends (a crosswise double shows its number
  once).  A placement scores ``spinner_score`` (8) when it lays the spinner; otherwise
  nothing while fewer than ``min_scoring_ends`` (3) ends are open; otherwise a double that
  makes the count a positive multiple of 3 scores 7, any other tile 5.
* **Drawing for luck** (DRAW): up to ``luck_draws`` (5) per turn, whether or not the seat
  can place.  A drawn tile with no scoring placement costs ``luck_penalty`` (5) penalty
  points; one with a scoring placement is **lucky**: it must be placed at once on a scoring
  end and scores ``lucky_draw`` (10) instead of its placement score.
* **PASS** only with no legal placement, and — while the boneyard is not empty — only
  after at least one draw this turn.  A seat with an empty hand keeps playing by drawing.
* **Winnings cancel penalties** first (``cancel_penalties``).
* **End**: the boneyard is empty and every seat in turn has passed with no placement
  between (``passes >= players``), or every hand and the boneyard are empty.
* **Result**: seats without penalty points rank above those with some; within each group
  higher ``winnings - penalties`` ranks higher; equal is a tie.  ``returns`` are
  rank-based and zero-sum: the top seat(s) share +1, the others share −1; a tie of every
  seat is a draw (all 0).  ``result()["settlement"]`` records the source's settlement.
"""
from __future__ import annotations

from typing import List, Optional, Sequence

from pipslab.envs.errors import IllegalActionError

from .common import (
    DRAW, PASS, PLACE, DominoView, Event, StateBase, deal_hands, first_player, initial_groups, take_placed,
    zero_sum_returns,
)
from .tiles import (
    DOUBLES_MASK, FULL_SET, IS_DOUBLE, N_TILES, OTHER_HALF, SUIT, TILES, count, tile_name, tiles_of,
)
from .variants import Variant

PENDING = -2  # DominoView.lucky for seats that only know a lucky tile is pending


def shown_number(ends, spinner: int, end: int) -> int:
    """The number a tile must match at ``end`` (-1: nothing can be placed there)."""
    e = ends[end]
    if e >= 0 or end < 2:
        return e
    return spinner  # an unstarted side line of the spinner (-1 without one)


def placement_score(variant: Variant, ends, spinner: int, tile: int, end: int) -> int:
    """What placing ``tile`` at ``end`` scores on a table with these ends and spinner
    (RULES §4; a lucky draw's 10 aside).  Works on a state's or a view's fields."""
    v = variant
    if ends[0] < 0:  # the opening tile
        new = [TILES[tile][0], TILES[tile][1], -1, -1]
    else:
        if spinner < 0 and IS_DOUBLE[tile]:
            return v.spinner.spinner_score
        new = list(ends)
        new[end] = OTHER_HALF[tile][shown_number(ends, spinner, end)]
    n_open = 0
    total = 0
    for e in new:
        if e >= 0:
            n_open += 1
            total += e
    if n_open < v.spinner.min_scoring_ends or total <= 0 or total % v.spinner.count_multiple:
        return 0
    return v.spinner.double_score if IS_DOUBLE[tile] else v.spinner.triple_score


def placements_of(ends, spinner: int, hand: int) -> List[int]:
    """Every placement action (``tile * 4 + end``) of the tiles in ``hand``, ascending."""
    if ends[0] < 0:
        return [t * 4 for t in tiles_of(hand)]
    acts = []
    for end in range(4):
        n = shown_number(ends, spinner, end)
        if n >= 0:
            m = hand & SUIT[n]
            while m:
                low = m & -m
                acts.append((low.bit_length() - 1) * 4 + end)
                m ^= low
    acts.sort()
    return acts


def scoring_mask(variant: Variant, ends, spinner: int, candidates: int) -> int:
    """The tiles among ``candidates`` that have a scoring placement on this table."""
    v = variant
    if ends[0] < 0:  # the opening tile
        mask = 0
        for t in tiles_of(candidates):
            if placement_score(v, ends, spinner, t, 0) > 0:
                mask |= 1 << t
        return mask
    shown = [shown_number(ends, spinner, end) for end in range(4)]
    mask = 0
    if spinner < 0:  # any double that can be placed lays the spinner
        doubles = 0
        for n in shown:
            if n >= 0:
                doubles |= candidates & SUIT[n] & DOUBLES_MASK
        if v.spinner.spinner_score > 0:
            mask |= doubles
        candidates &= ~DOUBLES_MASK
    n_open = 0
    total = 0
    for e in ends:
        if e >= 0:
            n_open += 1
            total += e
    k = v.spinner.count_multiple
    for end in range(4):
        n = shown[end]
        if n < 0:
            continue
        opened = ends[end] >= 0
        if n_open + (not opened) < v.spinner.min_scoring_ends:
            continue
        base = total - (ends[end] if opened else 0)
        m = candidates & SUIT[n] & ~mask
        while m:
            low = m & -m
            m ^= low
            t = low.bit_length() - 1
            tot = base + OTHER_HALF[t][n]
            if tot > 0 and tot % k == 0 and (v.spinner.double_score if IS_DOUBLE[t] else v.spinner.triple_score) > 0:
                mask |= low
    return mask


class TripleState(StateBase):
    """A Triple-for-luck game state; see the module docstring.

    Use ``engine.deal`` (or :meth:`deal`) for a new game and
    ``pipslab.envs.dominoes.notation.parse_position`` for a position string."""

    __slots__ = ("ends", "spinner", "arms", "winnings", "penalties", "turn_draws", "lucky")

    def __init__(self, variant: Variant, hands: Sequence[int], boneyard: Sequence[int] = (),
                 ends: Optional[Sequence[int]] = None, spinner: int = -1, arms=((), ()),
                 line=None, current_player: int = 0, passes: int = 0, table: Optional[int] = None,
                 winnings: Optional[Sequence[int]] = None, penalties: Optional[Sequence[int]] = None,
                 turn_draws: int = 0, lucky: int = -1, history=None, from_deal: bool = True):
        ends = list(ends) if ends is not None else [-1, -1, -1, -1]
        self._init_base(variant, hands, boneyard, current_player, passes, table,
                        tuple(line) if line is not None else (() if ends[0] < 0 else None),
                        history, from_deal)
        self.ends = ends
        self.spinner = spinner
        self.arms = tuple(tuple(a) for a in arms) if arms is not None else None
        n = variant.players
        self.winnings = list(winnings) if winnings is not None else [0] * n
        self.penalties = list(penalties) if penalties is not None else [0] * n
        self.turn_draws = turn_draws
        self.lucky = lucky

    @classmethod
    def deal(cls, variant: Variant, rng) -> "TripleState":
        """Shuffle the 28 tiles with ``rng`` and deal a new game; the first player by lot."""
        hands, boneyard = deal_hands(variant, rng)
        seat, _tile = first_player(variant, hands, rng)
        return cls(variant, hands, boneyard, current_player=seat, table=0)

    # ------------------------------------------------------------------ layout
    def shown(self, end: int) -> int:
        """The number a tile must match at ``end`` (-1: nothing can be placed there)."""
        return shown_number(self.ends, self.spinner, end)

    def count(self) -> int:
        """The sum of the numbers at the open ends."""
        return sum(e for e in self.ends if e >= 0)

    def open_ends(self) -> int:
        return sum(1 for e in self.ends if e >= 0)

    def placement_score(self, tile: int, end: int) -> int:
        """What placing ``tile`` at ``end`` would score (before a lucky draw's 10)."""
        return placement_score(self.variant, self.ends, self.spinner, tile, end)

    def _all_placements(self, hand: int) -> List[int]:
        return placements_of(self.ends, self.spinner, hand)

    def placements(self) -> List[int]:
        if self.lucky >= 0:
            t = self.lucky
            return [a for a in self._all_placements(1 << t) if self.placement_score(t, a & 3) > 0]
        return self._all_placements(self.hands[self.current_player])

    def scoring_tiles(self) -> int:
        """Mask of the tiles off the table that would have a scoring placement now."""
        return scoring_mask(self.variant, self.ends, self.spinner, FULL_SET & ~self.table)

    def open_numbers(self) -> int:
        """Bits n set for every number a tile could be matched against now."""
        m = 0
        for end in range(4):
            n = self.shown(end)
            if n >= 0:
                m |= 1 << n
        return m

    # ------------------------------------------------------------------ rules
    def legal_actions(self) -> List[int]:
        if self.is_terminal:
            return []
        acts = self.placements()
        if self.lucky >= 0:
            return acts
        v = self.variant
        if self.bpos < len(self.boneyard) and self.turn_draws < v.spinner.luck_draws:
            acts.append(v.draw_action)
        if not acts or (acts == [v.draw_action] and self.turn_draws >= 1):
            acts.append(v.pass_action)
        return acts

    def _credit(self, player: int, points: int) -> None:
        if points <= 0:
            return
        if self.variant.spinner.cancel_penalties and self.penalties[player]:
            cancel = min(points, self.penalties[player])
            self.penalties[player] -= cancel
            points -= cancel
        self.winnings[player] += points

    def apply(self, action: int) -> None:
        if self.is_terminal:
            raise IllegalActionError(f"action {action} in a finished game: no action is legal")
        v = self.variant
        player = self.current_player
        if 0 <= action < N_TILES * 4:
            tile, end = action >> 2, action & 3
            if self.lucky >= 0 or self.ends[0] < 0:
                ok = action in self.placements()
            else:
                n = self.shown(end)
                ok = n >= 0 and self.hands[player] >> tile & 1 and OTHER_HALF[tile][n] >= 0
            if not ok:
                self._illegal(action, self._why_not(tile, end))
            left, right = self.ends[0], self.ends[1]
            if self.lucky >= 0:
                points = v.spinner.lucky_draw
                self.lucky = -1
            else:
                points = self.placement_score(tile, end)
            self._lay(tile, end)
            self.history = (Event(PLACE, player, tile, end, left, right), self.history)
            self.hands[player] ^= 1 << tile
            self.table |= 1 << tile
            self.passes = 0
            self.turn_draws = 0
            self._credit(player, points)
            if self.bpos >= len(self.boneyard) and not any(self.hands):
                self._finish(winner=None, blocked=False)
                return
        elif action == v.draw_action:
            if self.lucky >= 0:
                self._illegal(action, f"the lucky {tile_name(self.lucky)} must be placed at once")
            if self.bpos >= len(self.boneyard):
                self._illegal(action, "the boneyard is empty")
            if self.turn_draws >= v.spinner.luck_draws:
                self._illegal(action, f"already {v.spinner.luck_draws} draws this turn")
            scoring = self.scoring_tiles()
            tile = self.boneyard[self.bpos]
            self.bpos += 1
            self.hands[player] |= 1 << tile
            self.turn_draws += 1
            if scoring >> tile & 1:
                self.lucky = tile
                code = ~scoring  # negative: lucky, the tile is among ~code
            else:
                self.penalties[player] += v.spinner.luck_penalty
                code = scoring
            self.history = (Event(DRAW, player, -1, code, self.ends[0], self.ends[1]), self.history)
            return  # drawing does not end the turn
        elif action == v.pass_action:
            if self.lucky >= 0:
                self._illegal(action, f"the lucky {tile_name(self.lucky)} must be placed at once")
            if self.placements():
                self._illegal(action, "a placement exists: pass only without a legal placement")
            if self.bpos < len(self.boneyard) and self.turn_draws == 0:
                self._illegal(action, "with no placement, draw at least once before passing")
            self.history = (Event(PASS, player, -1, self.open_numbers(), self.ends[0], self.ends[1]), self.history)
            self.passes += 1
            self.turn_draws = 0
            if self.passes >= v.players and self.bpos >= len(self.boneyard):
                self._finish(winner=None, blocked=True)
                return
        else:
            self._illegal(action, "not an action id of this game")
        self.current_player = (player + 1) % v.players

    def _why_not(self, tile: int, end: int) -> str:
        if self.lucky >= 0:
            return f"the lucky {tile_name(self.lucky)} must be placed at once, on a scoring end"
        if not self.hands[self.current_player] >> tile & 1:
            return f"{tile_name(tile)} is not in player {self.current_player}'s hand"
        if self.ends[0] < 0:
            return "the opening tile is placed at end 0 (left)"
        n = self.shown(end)
        if n < 0:
            return "that side line of the spinner is not there (no spinner yet)"
        return f"{tile_name(tile)} does not match {('the left end', 'the right end', 'side line 1', 'side line 2')[end]} ({n})"

    def _lay(self, tile: int, end: int) -> None:
        a, b = TILES[tile]
        ends = self.ends
        if ends[0] < 0:
            ends[0], ends[1] = a, b
            self.line = ((a, b),)
            if a == b:
                self.spinner = a
        else:
            shown = self.shown(end)
            other = OTHER_HALF[tile][shown]
            ends[end] = other
            if end >= 2:
                if self.arms is not None:
                    arms = list(self.arms)
                    arms[end - 2] = arms[end - 2] + ((shown, other),)
                    self.arms = tuple(arms)
            elif self.line is not None:
                self.line = self.line + ((shown, other),) if end else ((other, shown),) + self.line
            if self.spinner < 0 and a == b:
                self.spinner = a

    def _finish(self, winner: Optional[int], blocked: bool) -> None:
        self.is_terminal = True
        self.blocked = blocked
        won = self.winners()
        self.winner = won[0] if len(won) == 1 else -1

    # ------------------------------------------------------------------ results
    def ranking_keys(self) -> List[tuple]:
        """Per seat ``(no penalty points, winnings - penalties)``; larger ranks higher."""
        return [(self.penalties[p] == 0, self.winnings[p] - self.penalties[p])
                for p in range(self.variant.players)]

    def ranks(self) -> List[int]:
        """1 for the best; tied seats share a rank (1, 1, 3, …)."""
        keys = self.ranking_keys()
        return [1 + sum(1 for k in keys if k > mine) for mine in keys]

    def winners(self) -> List[int]:
        """Seats ranked first; empty while playing, or when every seat ties (a draw)."""
        if not self.is_terminal:
            return []
        ranks = self.ranks()
        top = [p for p, r in enumerate(ranks) if r == 1]
        return [] if len(top) == len(ranks) else top

    def returns(self) -> List[float]:
        return zero_sum_returns(self.winners(), self.variant.players, split=True)

    def points(self) -> List[int]:
        """Per seat: winnings minus penalties."""
        return [w - p for w, p in zip(self.winnings, self.penalties)]

    def settlement(self) -> List[int]:
        """The source's settlement, per seat: a winner is credited the losers' points
        (winnings - penalties) summed, minus its own winnings; others 0."""
        won = self.winners()
        net = self.points()
        lost = sum(net[p] for p in range(self.variant.players) if p not in won)
        return [lost - self.winnings[p] if p in won else 0 for p in range(self.variant.players)]

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
            "winnings": list(self.winnings),
            "penalties": list(self.penalties),
            "ranks": self.ranks() if self.is_terminal else [],
            "settlement": self.settlement() if self.is_terminal else [],
        }

    # ------------------------------------------------------------------ views
    def observe(self, player: int) -> DominoView:
        lucky = self.lucky
        if lucky >= 0 and player != self.current_player:
            lucky = PENDING
        return DominoView(
            variant=self.variant, player=player, hand=self.hands[player],
            hand_sizes=tuple(count(h) for h in self.hands), boneyard_size=self.boneyard_size,
            left=self.ends[0], right=self.ends[1], table=self.table, line=self.line,
            current_player=self.current_player, passes=self.passes, history=self.events(),
            from_deal=self.from_deal, is_terminal=self.is_terminal, ends=tuple(self.ends),
            spinner=self.spinner, arms=self.arms, winnings=tuple(self.winnings),
            penalties=tuple(self.penalties), turn_draws=self.turn_draws, lucky=lucky)

    @staticmethod
    def constraint_groups(view: DominoView):
        """Per seat, groups ``[count, forbidden_tiles]`` of the tiles it holds now (see
        ``line.DominoState.constraint_groups``).  Drawing for luck is a choice, so a draw
        proves nothing about the hand; a pass proves it lacks every number it could have
        matched; a lucky drawn tile is one that scores, and is placed at once."""
        groups = initial_groups(view)
        lucky = [False] * view.variant.players
        for kind, p, tile, end, _left, _right in view.history:
            if kind == PLACE:
                gs = groups[p]
                if lucky[p] and gs[-1][0] > 0:
                    gs[-1][0] -= 1
                else:
                    take_placed(gs, tile)
                lucky[p] = False
            elif kind == PASS:
                lacking = 0
                for num in range(7):
                    if end >> num & 1:
                        lacking |= SUIT[num]
                for g in groups[p]:
                    g[1] |= lacking
                lucky[p] = False
            else:  # DRAW
                # A lucky tile is one of the scoring tiles (``~end``) and is placed next.  An
                # unlucky draw's proof (not a scoring tile) is left out: it would break the
                # nesting of the groups' constraints that the greedy accounting relies on.
                lucky[p] = end < 0
                groups[p].append([1, end & FULL_SET if end < 0 else 0])
        return groups

    @classmethod
    def from_view(cls, view: DominoView, hands, boneyard, history) -> "TripleState":
        """The state of a sampled world: ``view``'s public part with these hands and boneyard."""
        lucky = view.lucky
        if lucky == PENDING:  # another seat's lucky tile: one of its scoring tiles
            last = view.history[-1]
            allowed = ~last[3] & hands[view.current_player]
            lucky = next(tiles_of(allowed)) if allowed else next(tiles_of(hands[view.current_player]))
        s = cls(view.variant, hands, boneyard, ends=view.ends, spinner=view.spinner, arms=view.arms,
                line=view.line, current_player=view.current_player, passes=view.passes, table=view.table,
                winnings=view.winnings, penalties=view.penalties, turn_draws=view.turn_draws,
                lucky=lucky, history=history, from_deal=view.from_deal)
        if view.is_terminal:
            s._finish(None, blocked=view.passes >= view.variant.players)
        return s
