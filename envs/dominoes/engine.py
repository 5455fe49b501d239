"""The domino rules engine: one state machine for every line-layout variant.

Pure Python, no gymnasium/torch import.  Hands are 28-bit masks (``pipslab.envs.dominoes.tiles``).

Action encoding (one per variant, ``variant.n_ends`` end slots; 2 for a line)
--------------------------------------------------------------------------------
* ``tile * n_ends + end`` places tile ``tile`` (0..27, see ``tiles.TILES``) at open end
  ``end`` — 0 is the **left** end, 1 the **right** end; with a spinner (``n_ends = 4``,
  Triple, ``pipslab.envs.dominoes.triple``) 2 and 3 are the spinner's two side lines.  The two ends are different moves
  even when they show the same number (RULES §1).  The opening tile, placed on the empty
  table, uses end 0.
* ``28 * n_ends`` is **DRAW** (take the next boneyard tile; the turn goes on).
* ``28 * n_ends + 1`` is **PASS**.
For a line (``n_ends = 2``: Happy, Troshin): placements 0..55, DRAW 56, PASS 57, 58
actions.  With a spinner (Triple): placements 0..111, DRAW 112, PASS 113, 114 actions.

Every non-terminal state has at least one legal action: a placement when one exists
(placement has priority), else DRAW when the variant draws and the boneyard is not empty,
else PASS.

Chance
------
The deal is the only chance event: :func:`deal` shuffles with the RNG it is given (any
object with ``shuffle(list)``: ``random.Random`` or ``numpy.random.Generator``), and
shuffles again while a hand calls for a redeal (Troshin, :func:`needs_redeal`).  The
boneyard keeps its shuffled order; a DRAW takes the next tile.

Results
-------
``result()`` gives ``winner`` (a seat, None for a draw), ``winners`` (every seat that won:
both partners in pairs), ``draw``, ``blocked``, ``pips_left`` (each hand's count, RULES
§3's lone 0-0 rule included), ``points`` (what each seat's side scored in this hand —
Troshin's scoring; for Happy the win/draw/loss) and ``returns`` (zero-sum: +1 shared by
the winners, −1 shared by the others).

Public history
--------------
Each state keeps the public events (who placed what where, who drew — not what —, who
passed, and the open ends at that moment) as a shared linked list, so ``clone`` copies no
history.  :meth:`DominoState.observe` gives a seat exactly what it may see (RULES §1), and
:func:`sample_world` deals the unseen tiles consistently with such a view.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from pipslab.envs.errors import IllegalActionError, PositionError

from .tiles import (
    DOUBLES_MASK, FULL_SET, HEAVINESS, IS_DOUBLE, N_TILES, OTHER_HALF, PIPS, SUIT, TILES,
    count, tile_name, tiles_of,
)
from .variants import Variant

# kinds of public events
PLACE, DRAW, PASS = 0, 1, 2
EVENT_NAMES = ("place", "draw", "pass")

# An event is (kind, player, tile, end, left, right): tile/end are -1 for draws and passes;
# left/right are the open ends just before the event (-1 on an empty table).
# With a spinner (Triple) a draw or pass records public facts in ``end`` instead:
#   pass: the mask (bits 0..6) of the numbers it could have matched;
#   draw: the mask of the tiles that would have given a scoring placement (the drawn
#         tile is none of them: a penalty), or for a lucky draw its complement ``~mask``
#         (negative; the drawn tile is one of them and is placed next).
Event = Tuple[int, int, int, int, int, int]


def _outranking(tile: int) -> int:
    """Tiles that would have had to open instead of ``tile`` under the highest-double rule."""
    if IS_DOUBLE[tile]:
        return sum(1 << t for t in range(N_TILES) if IS_DOUBLE[t] and PIPS[t] > PIPS[tile])
    return DOUBLES_MASK | sum(1 << t for t in range(N_TILES) if HEAVINESS[t] > HEAVINESS[tile])


OUTRANKING: Tuple[int, ...] = tuple(_outranking(t) for t in range(N_TILES))


def opening_tile(variant: Variant, hands: Sequence[int]) -> Tuple[int, int]:
    """(seat, tile) that must open under the variant's opening rule; tile -1 = any tile.

    For ``opening="any"`` the seat is -1 (the caller chooses the first player by lot).
    """
    rule = variant.opening
    if rule == "any":
        return -1, -1
    if isinstance(rule, int):
        for seat, hand in enumerate(hands):
            if hand >> rule & 1:
                return seat, rule
        raise PositionError(f"opening tile {tile_name(rule)} is in no hand")
    best_seat, best_tile, best_key = -1, -1, -1
    for seat, hand in enumerate(hands):
        doubles = hand & DOUBLES_MASK
        for t in tiles_of(doubles if doubles else hand):
            key = (1000 if doubles else 0) + HEAVINESS[t]
            if key > best_key:
                best_seat, best_tile, best_key = seat, t, key
    if best_seat < 0:
        raise PositionError("no tiles in any hand: nobody can open")
    return best_seat, best_tile


def needs_redeal(variant: Variant, hands: Sequence[int]) -> bool:
    """Troshin's "перезамес": a hand with ``redeal_doubles`` doubles or ``redeal_suit`` tiles
    carrying one number (RULES §3)."""
    nd, ns = variant.redeal_doubles, variant.redeal_suit
    for hand in hands:
        if nd and count(hand & DOUBLES_MASK) >= nd:
            return True
        if ns and any(count(hand & SUIT[n]) >= ns for n in range(7)):
            return True
    return False


@dataclass(frozen=True)
class MatchInfo:
    """The public score of a match (Troshin, RULES §3): per side (team), cumulative."""

    target: int
    scores: Tuple[int, ...]                      # cumulative, one per team
    hand_index: int                              # hands finished before this one
    hand_points: Tuple[Tuple[int, ...], ...]     # each finished hand's points per team


@dataclass(frozen=True)
class DominoView:
    """What one seat may see (RULES §1): its own hand and everything public.

    The fields after ``terminal`` are for the spinner layout (Triple, RULES §4: the four
    ends, the spinner's number, the side lines, both score columns of every seat, the draws
    made this turn and a lucky tile that must be placed) and for match play (``match``).
    """

    variant: Variant
    player: int
    hand: int                      # own tiles (mask)
    hand_sizes: Tuple[int, ...]    # tiles held by every seat
    boneyard_size: int
    left: int                      # open ends; -1 when the table is empty
    right: int
    table: int                     # tiles on the table (mask)
    line: Optional[Tuple[Tuple[int, int], ...]]  # the line left to right, if known
    current: int
    passes: int                    # passes in a row
    history: Tuple[Event, ...]     # public events, oldest first
    from_deal: bool                # history starts at the empty table
    terminal: bool
    ends: Tuple[int, ...] = ()     # spinner layout: the 4 ends (-1: not open)
    spinner: int = -1              # the spinner's number (-1: no spinner yet)
    arms: Tuple = ()               # spinner layout: the two side lines, outward
    winnings: Tuple[int, ...] = ()
    penalties: Tuple[int, ...] = ()
    turn_draws: int = 0            # draws made this turn by the seat to move
    lucky: int = -1                # a lucky drawn tile that must be placed now
    match: Optional[MatchInfo] = None

    def voids(self, player: int) -> int:
        """Bit n set: ``player`` is known to hold no tile with n (passes since its last draw)."""
        void = 0
        spinner = self.variant.layout == "spinner"
        for kind, p, _t, end, left, right in self.history:
            if p != player:
                continue
            if kind == PASS:
                void |= end if spinner else (1 << left) | (1 << right)
            elif kind == DRAW:
                void = 0
        return void


class DominoState:
    """A full domino game state (every hand and the boneyard order known).

    Use :func:`deal` for a new game and ``pipslab.envs.dominoes.notation.parse_position`` for a
    position string.  Agents never get this object; they get ``observe(player)``.
    """

    __slots__ = ("variant", "hands", "left", "right", "boneyard", "bpos", "current", "passes",
                 "history", "table", "line", "opening", "winner", "blocked", "terminal",
                 "from_deal")

    def __init__(self, variant: Variant, hands: Sequence[int], boneyard: Sequence[int] = (),
                 left: int = -1, right: int = -1, current: int = 0, passes: int = 0,
                 table: Optional[int] = None, line=None, opening: int = -1,
                 history=None, from_deal: bool = True):
        self.variant = variant
        self.hands = list(hands)
        self.left, self.right = left, right
        self.boneyard = tuple(boneyard)
        self.bpos = 0
        self.current = current
        self.passes = passes
        self.history = history
        held = 0
        for h in self.hands:
            held |= h
        for t in self.boneyard:
            held |= 1 << t
        self.table = (FULL_SET & ~held) if table is None else table
        self.line = tuple(line) if line is not None else (() if left < 0 else None)
        self.opening = opening
        self.winner: Optional[int] = None   # seat, -1 for a draw, None while playing
        self.blocked = False
        self.terminal = False
        self.from_deal = from_deal

    # ------------------------------------------------------------------ basics
    @property
    def is_terminal(self) -> bool:
        return self.terminal

    @property
    def is_chance(self) -> bool:
        return False

    @property
    def current_player(self) -> int:
        return self.current

    @property
    def num_actions(self) -> int:
        return self.variant.num_actions

    @property
    def boneyard_size(self) -> int:
        return len(self.boneyard) - self.bpos

    def boneyard_tiles(self) -> Tuple[int, ...]:
        """The boneyard in draw order (next draw first)."""
        return self.boneyard[self.bpos:]

    def clone(self) -> "DominoState":
        s = object.__new__(self.__class__)
        s.variant = self.variant
        s.hands = self.hands[:]
        s.left = self.left
        s.right = self.right
        s.boneyard = self.boneyard
        s.bpos = self.bpos
        s.current = self.current
        s.passes = self.passes
        s.history = self.history
        s.table = self.table
        s.line = self.line
        s.opening = self.opening
        s.winner = self.winner
        s.blocked = self.blocked
        s.terminal = self.terminal
        s.from_deal = self.from_deal
        return s

    # ------------------------------------------------------------------ rules
    def placements(self) -> List[int]:
        """Legal placement actions of the player to move (ascending)."""
        hand = self.hands[self.current]
        left = self.left
        if left < 0:
            if self.opening >= 0:
                return [self.opening * self.variant.n_ends] if hand >> self.opening & 1 else []
            return [t * self.variant.n_ends for t in tiles_of(hand)]
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
        if self.terminal:
            return []
        acts = self.placements()
        if acts:
            return acts
        if self.variant.draw and self.bpos < len(self.boneyard):
            return [self.variant.draw_action]
        return [self.variant.pass_action]

    def is_legal(self, action: int) -> bool:
        return action in self.legal_actions()

    def apply(self, action: int) -> None:
        """Play ``action`` for the player to move; raises IllegalActionError if it is not legal."""
        if self.terminal:
            raise IllegalActionError(f"action {action} in a finished game: no action is legal")
        v = self.variant
        ne = v.n_ends
        player = self.current
        if 0 <= action < N_TILES * ne and ne == 2:
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
            self.history = ((PLACE, player, tile, end, left, right), self.history)
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
            self.history = ((DRAW, player, -1, -1, self.left, self.right), self.history)
            return  # drawing does not end the turn
        elif action == v.pass_action:
            if self.placements():
                self._illegal(action, "a placement exists, and a placement has priority")
            if v.draw and self.bpos < len(self.boneyard):
                self._illegal(action, "the boneyard is not empty: draw first")
            self.history = ((PASS, player, -1, -1, self.left, self.right), self.history)
            self.passes += 1
            if self.passes >= v.players:
                self._finish(winner=None, blocked=True)
                return
        else:
            self._illegal(action, "not an action id of this game")
        self.current = (player + 1) % v.players

    def _illegal(self, action: int, why: str):
        raise IllegalActionError(
            f"illegal action {action} ({self.action_name(action)}) for player {self.current}: {why}; "
            f"legal: {', '.join(f'{a} ({self.action_name(a)})' for a in self.legal_actions())}")

    def _finish(self, winner: Optional[int], blocked: bool) -> None:
        """End the game: ``winner`` went out, or (None) the lowest count — by pair totals
        with pairs — wins a blocked game; a shared lowest count is a draw (-1)."""
        self.terminal = True
        self.blocked = blocked
        if winner is None:
            totals = self.team_counts()
            low = min(totals)
            holders = [team for team, c in enumerate(totals) if c == low]
            winner = holders[0] if len(holders) == 1 else -1  # team t's first seat is t
        self.winner = winner

    # ------------------------------------------------------------------ results
    def hand_count(self, player: int) -> int:
        """Pips left in a hand; a hand holding only 0-0 counts ``variant.lone_blank_double``."""
        hand = self.hands[player]
        if hand == 1:  # only 0-0
            return self.variant.lone_blank_double
        return sum(PIPS[t] for t in tiles_of(hand))

    def pips_left(self) -> List[int]:
        return [self.hand_count(p) for p in range(self.variant.players)]

    def team_counts(self) -> List[int]:
        """Each side's count: a seat's own, or with pairs the two partners' together."""
        counts = self.pips_left()
        if not self.variant.pairs:
            return counts
        return [counts[0] + counts[2], counts[1] + counts[3]]

    def winners(self) -> List[int]:
        """The seats that won (both partners with pairs); empty while playing or in a draw."""
        if not self.terminal or self.winner is None or self.winner < 0:
            return []
        teams = self.variant.teams
        return [p for p in range(self.variant.players) if teams[p] == teams[self.winner]]

    def team_points(self) -> List[int]:
        """Troshin's score of this hand, per side (RULES §3): going out scores the losers'
        counts (a partner's count is nobody's); a blocked game scores the losers' total
        minus the winners'.  A draw, or an unfinished game, scores nothing."""
        totals = self.team_counts()
        out = [0] * len(totals)
        if not self.terminal or self.winner is None or self.winner < 0:
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
    def events(self) -> Tuple[Event, ...]:
        out = []
        node = self.history
        while node is not None:
            out.append(node[0])
            node = node[1]
        out.reverse()
        return tuple(out)

    def observe(self, player: int) -> DominoView:
        """Exactly what ``player`` may see (RULES §1)."""
        return DominoView(
            variant=self.variant, player=player, hand=self.hands[player],
            hand_sizes=tuple(count(h) for h in self.hands), boneyard_size=self.boneyard_size,
            left=self.left, right=self.right, table=self.table, line=self.line,
            current=self.current, passes=self.passes, history=self.events(),
            from_deal=self.from_deal, terminal=self.terminal)

    def action_name(self, action: int) -> str:
        return action_name(self.variant, action)

    def __repr__(self) -> str:
        from .notation import format_position
        return f"DominoState({format_position(self)!r})"


END_NAMES = ("left", "right", "side1", "side2")


def zero_sum_returns(won: Sequence[int], players: int, split: bool = False) -> List[float]:
    """Returns that add up to 0: +1 to each seat in ``won`` (+1/k each when ``split``), the
    other seats share the loss equally; all 0 when nobody (or everybody) won."""
    k = len(won)
    if not k or k == players:
        return [0.0] * players
    gain = 1.0 / k if split else 1.0
    loss = -1.0 / (players - k) if split else -k / (players - k)
    return [gain if p in won else loss for p in range(players)]


def action_name(variant: Variant, action: int) -> str:
    """``"3-5@left"``, ``"5-3@side1"`` (a spinner's side line), ``"draw"``, ``"pass"``."""
    ne = variant.n_ends
    if 0 <= action < N_TILES * ne:
        end = action % ne
        return f"{tile_name(action // ne)}@{END_NAMES[end]}"
    if action == variant.draw_action:
        return "draw"
    if action == variant.pass_action:
        return "pass"
    return "invalid"


def encode_place(variant: Variant, tile: int, end: int) -> int:
    return tile * variant.n_ends + end


def decode(variant: Variant, action: int) -> Tuple[str, int, int]:
    """``("place", tile, end)``, ``("draw", -1, -1)`` or ``("pass", -1, -1)``."""
    ne = variant.n_ends
    if 0 <= action < N_TILES * ne:
        return "place", action // ne, action % ne
    if action == variant.draw_action:
        return "draw", -1, -1
    if action == variant.pass_action:
        return "pass", -1, -1
    raise IllegalActionError(f"{action} is not an action id of {variant.name} (0..{variant.num_actions - 1})")


def deal_hands(variant: Variant, rng) -> Tuple[List[int], List[int]]:
    """Shuffle and deal: ``(hands, boneyard)``, dealt again while a hand calls for a redeal."""
    tiles = list(range(N_TILES))
    k = variant.hand_size
    redeal = variant.redeal_doubles or variant.redeal_suit
    while True:
        rng.shuffle(tiles)
        hands = []
        for p in range(variant.players):
            m = 0
            for t in tiles[p * k:(p + 1) * k]:
                m |= 1 << t
            hands.append(m)
        if not redeal or not needs_redeal(variant, hands):
            return hands, tiles[variant.players * k:]


def deal(variant: Variant, rng) -> DominoState:
    """Shuffle the 28 tiles with ``rng`` and deal a new game under ``variant``'s rules
    (a :class:`pipslab.envs.dominoes.triple.TripleState` for a spinner layout)."""
    hands, boneyard = deal_hands(variant, rng)
    seat, tile = opening_tile(variant, hands)
    if seat < 0:  # first player by lot
        seat = int(rng.integers(variant.players)) if hasattr(rng, "integers") else rng.randrange(variant.players)
    if variant.layout == "spinner":
        from .triple import TripleState
        return TripleState(variant, hands, boneyard, current=seat, table=0)
    return DominoState(variant, hands, boneyard, current=seat, opening=tile, table=0)


# ---------------------------------------------------------------------------- worlds
def _constraint_groups(view: DominoView):
    """Per seat, groups ``[count, forbidden_tiles]`` of the tiles it holds now.

    Tiles are grouped by when the seat got them (the deal, or a draw): a pass or a draw
    proves that every tile held at that moment lacks both open numbers, so it forbids those
    numbers to every group held then — not to tiles drawn later.  A placed tile is taken
    from the oldest group it is compatible with (after draws that is always the tile just
    drawn), which leaves the remaining tiles as free as the history allows.
    """
    v = view.variant
    n = v.players
    draws = [0] * n
    places = [0] * n
    for kind, p, *_ in view.history:
        if kind == DRAW:
            draws[p] += 1
        elif kind == PLACE:
            places[p] += 1
    groups = [[[view.hand_sizes[p] - draws[p] + places[p], 0]] for p in range(n)]
    if v.layout == "spinner":
        return _spinner_groups(view, groups)
    first = True
    for kind, p, tile, _end, left, right in view.history:
        if kind == PLACE:
            if first and view.from_deal and v.opening == "highest_double":
                # the opener held the highest double (or, with none dealt, the heaviest tile)
                for q in range(n):
                    groups[q][0][1] |= OUTRANKING[tile]
            first = False
            gs = groups[p]
            for g in gs:
                if g[0] > 0 and not (g[1] >> tile & 1):
                    g[0] -= 1
                    break
            else:  # inconsistent history (cannot happen in play): take the newest slot
                for g in reversed(gs):
                    if g[0] > 0:
                        g[0] -= 1
                        break
        else:
            lacking = (SUIT[left] | SUIT[right]) if left >= 0 else 0
            for g in groups[p]:
                g[1] |= lacking
            if kind == DRAW:
                groups[p].append([1, 0])
    # An observer about to open knows nobody holds a tile outranking its own opening tile.
    if (view.left < 0 and view.current == view.player and v.opening == "highest_double"
            and not view.terminal and view.hand):
        hands = [0] * n
        hands[view.player] = view.hand
        _seat, best = opening_tile(v, hands)
        for q in range(n):
            groups[q][0][1] |= OUTRANKING[best]
    return groups


def _spinner_groups(view: DominoView, groups):
    """Triple (RULES §4): drawing for luck is a choice, so a draw proves nothing about the
    hand; a pass proves it lacks every number it could have matched; a lucky drawn tile is
    one that scores, and is placed at once."""
    lucky = [False] * view.variant.players
    for kind, p, tile, end, _left, _right in view.history:
        if kind == PLACE:
            gs = groups[p]
            if lucky[p] and gs[-1][0] > 0:
                gs[-1][0] -= 1
            else:
                for g in gs:
                    if g[0] > 0 and not (g[1] >> tile & 1):
                        g[0] -= 1
                        break
                else:
                    for g in reversed(gs):
                        if g[0] > 0:
                            g[0] -= 1
                            break
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
            # nesting of the groups' constraints that the greedy accounting above relies on.
            lucky[p] = end < 0
            groups[p].append([1, end & FULL_SET if end < 0 else 0])
    return groups


def sample_world(view: DominoView, rng, attempts: int = 20) -> DominoState:
    """A full state consistent with ``view``: the unseen tiles dealt to the other hands
    and the boneyard so that no hand holds a tile its passes and draws ruled out.

    Depends only on the view and ``rng`` (``shuffle(list)``), never on the true state.
    For a match view (Troshin) it returns a :class:`pipslab.envs.dominoes.match.TroshinMatch` with
    the view's scores whose later deals come from ``rng``; for Triple a
    :class:`pipslab.envs.dominoes.triple.TripleState`.

    What it leaves out (the samples are consistent with the view, but not every public fact
    narrows them): Troshin's redeal rule (no dealt hand held 5 doubles or 6 of a number),
    and in Triple the proof an unlucky draw gives that the drawn tile scores nowhere.
    """
    v = view.variant
    unseen_all = FULL_SET & ~view.hand & ~view.table
    groups = _constraint_groups(view)
    slots = []  # (player, count, forbidden)
    for p in range(v.players):
        if p == view.player:
            continue
        for c, forbidden in groups[p]:
            if c > 0:
                slots.append((p, c, forbidden))
    hands = _deal_unseen(slots, unseen_all, v.players, rng, attempts)
    if hands is None:
        raise PositionError("no deal of the unseen tiles is consistent with this view")
    hands[view.player] = view.hand
    unseen = unseen_all
    for h in hands:
        unseen &= ~h
    rest = list(tiles_of(unseen))
    if len(rest) != view.boneyard_size:
        raise PositionError("view is inconsistent: unseen tiles do not match the hand and boneyard sizes")
    rng.shuffle(rest)
    history = None
    for ev in view.history:
        history = (ev, history)
    if v.layout == "spinner":
        from .triple import TripleState
        state = TripleState.from_view(view, hands, rest, history)
    else:
        state = DominoState(v, hands, rest, left=view.left, right=view.right, current=view.current,
                            passes=view.passes, table=view.table, line=view.line,
                            history=history, from_deal=view.from_deal)
        if view.left < 0 and not view.terminal:
            state.opening = opening_tile(v, hands)[1]
        state.terminal = view.terminal
    if view.match is not None:
        from .match import TroshinMatch
        return TroshinMatch.from_view(view, state, rng)
    return state


def _deal_unseen(slots, unseen_all: int, players: int, rng, attempts: int):
    """Hands (masks) for the other seats: each slot ``(seat, count, forbidden)`` gets
    ``count`` unseen tiles outside ``forbidden``; the rest is left for the boneyard.

    First a few quick tries that fill the most constrained slots first (always enough with
    two players, whose constraints nest); if they all fail — several opponents whose
    constraints cross — an exact assignment by augmenting paths, which finds a deal
    whenever one exists.  None when none does."""
    order = sorted(slots, key=lambda s: count(unseen_all & ~s[2]) - s[1])
    for _ in range(attempts):
        unseen = unseen_all
        hands = [0] * players
        for p, c, forbidden in order:
            pool = list(tiles_of(unseen & ~forbidden))
            if len(pool) < c:
                break
            rng.shuffle(pool)
            for t in pool[:c]:
                hands[p] |= 1 << t
                unseen ^= 1 << t
        else:
            return hands
    return _match_unseen(slots, unseen_all, players, rng)


def _match_unseen(slots, unseen_all: int, players: int, rng):
    """Exact version of :func:`_deal_unseen`: a bipartite assignment of tiles to slots
    with capacities (the boneyard takes any tile), by augmenting paths in random order."""
    tiles = list(tiles_of(unseen_all))
    need = sum(c for _, c, _ in slots)
    groups = list(slots) + [(-1, len(tiles) - need, 0)]  # the boneyard
    if groups[-1][1] < 0:
        return None
    eligible = {}
    for t in tiles:
        gs = [g for g, (_, _, forbidden) in enumerate(groups) if not forbidden >> t & 1]
        rng.shuffle(gs)
        eligible[t] = gs
    holders = [[] for _ in groups]

    def augment(t, seen) -> bool:
        for g in eligible[t]:
            if g in seen:
                continue
            seen.add(g)
            if len(holders[g]) < groups[g][1]:
                holders[g].append(t)
                return True
            for i, u in enumerate(holders[g]):
                if augment(u, seen):
                    holders[g][i] = t
                    return True
        return False

    rng.shuffle(tiles)
    for t in tiles:
        if not augment(t, set()):
            return None
    hands = [0] * players
    for g, (p, _, _) in enumerate(groups[:-1]):
        for t in holders[g]:
            hands[p] |= 1 << t
    return hands
