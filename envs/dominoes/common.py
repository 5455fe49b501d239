"""What both domino layouts share: public events, the view, the action encoding, the deal,
the bookkeeping of a state, and the dealing of unseen tiles for ``sample_world``.

The rules themselves are elsewhere, one module per layout: ``line`` (Happy, Troshin) and
``triple`` (the spinner of Triple for luck).  ``engine`` is the front door that picks one
by ``variant.layout``.  This module imports only ``tiles`` and ``variants``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, NamedTuple, Optional, Sequence, Tuple

from pipslab.envs.errors import IllegalActionError, PositionError

from .tiles import (
    DOUBLES_MASK, HEAVINESS, IS_DOUBLE, N_TILES, PIPS, SUIT, count, tile_list, tile_name, tiles_of,
)
from .variants import Variant

# kinds of public events
PLACE, DRAW, PASS = 0, 1, 2
EVENT_NAMES = ("place", "draw", "pass")

class Event(NamedTuple):
    """One public event of a hand, oldest first in a state's ``events()`` and a view's
    ``history`` (a plain tuple underneath: it unpacks, compares and indexes as
    ``(kind, seat, tile, end, left, right)``).

    kind:  ``PLACE``, ``DRAW`` or ``PASS``.
    seat:  the seat that acted.
    tile:  the tile placed; -1 for draws and passes (a draw is public, the tile is not).
    end:   what it means depends on ``kind``:
             place: the end slot the tile went to (0 left, 1 right; with a spinner also
                    2 and 3, the side lines: ``END_NAMES``);
             pass:  the mask (bits 0..6) of the numbers the pass proves the seat lacks
                    (every number it could have matched);
             draw:  -1 on a line; with a spinner (Triple) the mask of the tiles that would
                    have given a scoring placement (the drawn tile is none of them: a
                    penalty), or for a lucky draw its complement ``~mask`` (negative; the
                    drawn tile is one of them and is placed next).
    left, right: the left and right open ends just before the event (-1 on an empty table).
    """

    kind: int
    seat: int
    tile: int
    end: int
    left: int
    right: int

END_NAMES = ("left", "right", "side1", "side2")


# ---------------------------------------------------------------------------- actions
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


def zero_sum_returns(won: Sequence[int], players: int, split: bool = False) -> List[float]:
    """Returns that add up to 0: +1 to each seat in ``won`` (+1/k each when ``split``), the
    other seats share the loss equally; all 0 when nobody (or everybody) won."""
    k = len(won)
    if not k or k == players:
        return [0.0] * players
    gain = 1.0 / k if split else 1.0
    loss = -1.0 / (players - k) if split else -k / (players - k)
    return [gain if p in won else loss for p in range(players)]


# ---------------------------------------------------------------------------- the deal
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


def deal_hands(variant: Variant, rng) -> Tuple[List[int], List[int]]:
    """Shuffle and deal: ``(hands, boneyard)``, dealt again while a hand calls for a redeal.
    Only the variant's set is dealt (``variant.tile_set``; all 28 tiles, in id order before
    the shuffle, for the double-six)."""
    tiles = list(tiles_of(variant.tile_set))
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


def first_player(variant: Variant, hands: Sequence[int], rng) -> Tuple[int, int]:
    """(seat, tile) that opens a fresh deal: by the variant's opening rule, or — with
    ``opening="any"`` — a seat drawn by lot from ``rng`` (tile -1: any tile)."""
    seat, tile = opening_tile(variant, hands)
    if seat < 0:
        seat = int(rng.integers(variant.players)) if hasattr(rng, "integers") else rng.randrange(variant.players)
    return seat, tile


# ---------------------------------------------------------------------------- views
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

    The fields after ``is_terminal`` are for the spinner layout (Triple, RULES §4: the four
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
    current_player: int
    passes: int                    # passes in a row
    history: Tuple[Event, ...]     # public events, oldest first
    from_deal: bool                # history starts at the empty table
    is_terminal: bool
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
        for kind, p, _t, end, _left, _right in self.history:
            if p != player:
                continue
            if kind == PASS:
                void |= end
            elif kind == DRAW:
                void = 0
        return void

    def shown(self, end: int) -> int:
        """The number a tile must match at ``end`` (-1: nothing can be placed there); with
        a spinner, an unstarted side line shows the spinner's number."""
        if end < 2:
            return self.right if end else self.left
        e = self.ends[end]
        return e if e >= 0 else self.spinner


# ---------------------------------------------------------------------------- states
class StateBase:
    """The bookkeeping every domino state shares — hands, boneyard, public history, whose
    turn, the result fields — with no rules in it: each layout's module
    (``line.DominoState``, ``triple.TripleState``) implements ``legal_actions``, ``apply``,
    ``observe`` and the results; ``clone`` is here, generic over every slot.

    ``current_player`` and ``is_terminal`` are plain attributes (the state protocol's
    names), read in every hot loop."""

    __slots__ = ("variant", "hands", "boneyard", "bpos", "current_player", "passes", "history",
                 "table", "line", "winner", "blocked", "is_terminal", "from_deal")

    is_chance = False  # a hand's deal happens before it exists (a match deals its next hands: match.py)

    def __init_subclass__(cls, **kw) -> None:
        super().__init_subclass__(**kw)
        if "clone" not in cls.__dict__:   # a subclass may still write its own
            cls.clone = _make_clone(cls)

    def clone(self):
        """A copy that shares everything immutable (the variant, the boneyard tuple, the
        line, the history linked list) and copies each list slot (hands, ends, ...) shallowly:
        hands are bitmasks, so the copy is a few list slices.  Generated per class from
        every slot in its MRO (see :func:`_make_clone`)."""
        return _make_clone(type(self))(self)

    def _init_base(self, variant: Variant, hands: Sequence[int], boneyard: Sequence[int],
                   current_player: int, passes: int, table: Optional[int], line, history,
                   from_deal: bool) -> None:
        self.variant = variant
        self.hands = list(hands)
        self.boneyard = tuple(boneyard)
        self.bpos = 0
        self.current_player = current_player
        self.passes = passes
        self.history = history
        if table is None:
            held = 0
            for h in self.hands:
                held |= h
            for t in self.boneyard:
                held |= 1 << t
            table = variant.tile_set & ~held
        self.table = table
        self.line = line
        self.winner: Optional[int] = None   # seat, -1 for a draw, None while playing
        self.blocked = False
        self.is_terminal = False
        self.from_deal = from_deal

    def apply_chance(self, rng) -> None:
        """Never called: a hand is never a chance node (``is_chance`` is False)."""
        raise IllegalActionError("a domino hand has no chance node: its deal happens in engine.deal "
                                 "(a match deals its next hands: TroshinMatch.apply_chance)")

    @property
    def num_actions(self) -> int:
        return self.variant.num_actions

    @property
    def boneyard_size(self) -> int:
        return len(self.boneyard) - self.bpos

    def boneyard_tiles(self) -> Tuple[int, ...]:
        """The boneyard in draw order (next draw first)."""
        return self.boneyard[self.bpos:]

    def is_legal(self, action: int) -> bool:
        return action in self.legal_actions()

    def events(self) -> Tuple[Event, ...]:
        """The public events, oldest first (the history is a shared linked list)."""
        out = []
        node = self.history
        while node is not None:
            out.append(node[0])
            node = node[1]
        out.reverse()
        return tuple(out)

    def action_name(self, action: int) -> str:
        return action_name(self.variant, action)

    def _illegal(self, action: int, why: str):
        raise IllegalActionError(
            f"illegal action {action} ({self.action_name(action)}) for player {self.current_player}: {why}; "
            f"legal: {', '.join(f'{a} ({self.action_name(a)})' for a in self.legal_actions())}")

    def hand_count(self, player: int) -> int:
        """Pips left in a hand; a hand holding only 0-0 counts ``variant.lone_blank_double``."""
        hand = self.hands[player]
        if hand == 1:  # only 0-0
            return self.variant.lone_blank_double
        return sum(PIPS[t] for t in tiles_of(hand))

    def pips_left(self) -> List[int]:
        return [self.hand_count(p) for p in range(self.variant.players)]

    def __repr__(self) -> str:
        state = "over" if self.is_terminal else f"seat {self.current_player} to move"
        return (f"<{type(self).__name__} {self.variant.name}: {state}; hands "
                f"{'/'.join(str(count(h)) for h in self.hands)} tiles; boneyard {self.boneyard_size}>")


def _make_clone(cls):
    """``clone`` for ``cls``: every ``__slots__`` name in its MRO, a list slot copied with
    ``[:]``, any other value shared.  Compiled once per class (a loop of getattr/setattr
    would be several times slower, and clone is on every search's hot path)."""
    names = []
    for k in reversed(cls.__mro__):
        slots = k.__dict__.get("__slots__", ())
        for n in (slots,) if isinstance(slots, str) else slots:
            if n not in names:
                names.append(n)
    lines = ["def clone(self):", "    s = _new(self.__class__)"]
    for n in names:
        lines.append(f"    v = self.{n}")
        lines.append(f"    s.{n} = v[:] if v.__class__ is list else v")
    lines.append("    return s")
    ns = {"_new": object.__new__}
    exec("\n".join(lines), ns)
    fn = ns["clone"]
    fn.__qualname__ = f"{cls.__qualname__}.clone"
    fn.__doc__ = StateBase.clone.__doc__
    return fn


# ---------------------------------------------------------------------------- worlds
def linked_history(events: Sequence[Event]):
    """Events, oldest first, as a state's shared history list (newest at the head):
    the inverse of :meth:`StateBase.events`."""
    history = None
    for ev in events:
        history = (ev, history)
    return history


def initial_groups(view: DominoView) -> List[List[List[int]]]:
    """Per seat, one group ``[count, forbidden_tiles]``: the tiles it holds now that it
    got at the deal (before any constraint).  The layouts' ``constraint_groups`` refine
    them from the history, appending a group per draw."""
    n = view.variant.players
    draws = [0] * n
    places = [0] * n
    for kind, p, *_ in view.history:
        if kind == DRAW:
            draws[p] += 1
        elif kind == PLACE:
            places[p] += 1
    return [[[view.hand_sizes[p] - draws[p] + places[p], 0]] for p in range(n)]


def take_placed(groups: List[List[int]], tile: int) -> None:
    """A placed tile leaves the oldest group it is compatible with (inconsistent history —
    which cannot happen in play — takes the newest slot)."""
    for g in groups:
        if g[0] > 0 and not (g[1] >> tile & 1):
            g[0] -= 1
            return
    for g in reversed(groups):
        if g[0] > 0:
            g[0] -= 1
            return


def deal_unseen(view: DominoView, groups, rng, attempts: int = 20):
    """Deal the tiles ``view`` does not show: ``(hands, boneyard, history)`` such that every
    other seat's groups (``[count, forbidden]``, from its layout's ``constraint_groups``)
    are filled with allowed tiles; the rest, shuffled, is the boneyard; ``history`` is the
    view's events as a state's linked list."""
    return UnseenDeal(view, groups, attempts)(rng)


class UnseenDeal:
    """:func:`deal_unseen` for one view, prepared once (the slots, their order, the unseen
    tiles, the history list) and dealt by each call with an ``rng`` — the same deal
    ``deal_unseen`` gives from the same ``rng`` state."""

    __slots__ = ("players", "player", "hand", "unseen_all", "slots", "order", "attempts", "boneyard_size",
                 "history")

    def __init__(self, view: DominoView, groups, attempts: int = 20):
        v = view.variant
        self.players, self.player, self.hand = v.players, view.player, view.hand
        self.unseen_all = v.tile_set & ~view.hand & ~view.table
        self.slots = [(p, c, forbidden) for p in range(v.players) if p != view.player
                      for c, forbidden in groups[p] if c > 0]   # (player, count, forbidden)
        self.order = _slot_order(self.slots, self.unseen_all)
        self.attempts, self.boneyard_size = attempts, view.boneyard_size
        self.history = linked_history(view.history)

    def __call__(self, rng):
        hands = _deal_in_order(self.order, self.slots, self.unseen_all, self.players, rng, self.attempts)
        if hands is None:
            raise PositionError("no deal of the unseen tiles is consistent with this view")
        hands[self.player] = self.hand
        unseen = self.unseen_all
        for h in hands:
            unseen &= ~h
        rest = tile_list(unseen)
        if len(rest) != self.boneyard_size:
            raise PositionError("view is inconsistent: unseen tiles do not match the hand and boneyard sizes")
        rng.shuffle(rest)
        return hands, rest, self.history


def _slot_order(slots, unseen_all: int):
    """The most constrained slots first (fewest spare allowed tiles)."""
    return sorted(slots, key=lambda s: count(unseen_all & ~s[2]) - s[1])


def deal_slots(slots, unseen_all: int, players: int, rng, attempts: int):
    """Hands (masks) for the other seats: each slot ``(seat, count, forbidden)`` gets
    ``count`` unseen tiles outside ``forbidden``; the rest is left for the boneyard.

    First a few quick tries that fill the most constrained slots first (always enough with
    two players, whose constraints nest); if they all fail — several opponents whose
    constraints cross — an exact assignment by augmenting paths, which finds a deal
    whenever one exists.  None when none does."""
    return _deal_in_order(_slot_order(slots, unseen_all), slots, unseen_all, players, rng, attempts)


def _deal_in_order(order, slots, unseen_all: int, players: int, rng, attempts: int):
    for _ in range(attempts):
        unseen = unseen_all
        hands = [0] * players
        for p, c, forbidden in order:
            pool = tile_list(unseen & ~forbidden)
            if len(pool) < c:
                break
            rng.shuffle(pool)
            for t in pool[:c]:
                hands[p] |= 1 << t
                unseen ^= 1 << t
        else:
            return hands
    return match_slots(slots, unseen_all, players, rng)


def match_slots(slots, unseen_all: int, players: int, rng):
    """Exact version of :func:`deal_slots`: a bipartite assignment of tiles to slots
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
