"""Domino position strings: human-writable, parsed with clear errors, round-tripping.

Format: the variant name, then ``key=value`` fields, separated by ``;``::

    happy-block; turn=1; passes=0; ends=6|3; hands=4-4 2-3 / 0-1 1-1 2-2; boneyard=-

* ``hands``    every seat's tiles, seat 0 first, seats separated by ``/`` (required).
* ``turn``     the seat to move (default 0).
* ``passes``   passes in a row just before this position (default 0).
* ``line``     the tiles on the table from left to right, each written as it lies
               (``6-6 6-0`` — touching halves equal), or ``-`` for an empty table; or
* ``ends``     just the open ends ``LEFT|RIGHT`` when the line itself does not matter.
  Give ``line`` or ``ends``, not both; neither means an empty table.
* ``boneyard`` the boneyard in draw order, next draw first (``-`` or omitted: empty).
  In block mode it is out of play.
Tiles listed nowhere are on the table (with ``ends``) — every one of the 28 tiles is in
exactly one place.  Tiles are written ``a-b`` (``a:b`` is accepted).
"""
from __future__ import annotations

from envs.errors import PipslabError, PositionError

from .engine import DominoState, opening_tile
from .tiles import (
    FULL_SET, SUIT, TILE_ID, TILES, format_tiles, parse_oriented, parse_tile, tile_name, tiles_of,
)
from .variants import variant_by_name

_KEYS = ("turn", "passes", "line", "ends", "hands", "boneyard")


def _tiles(text: str, where: str):
    text = text.strip()
    if text in ("", "-"):
        return []
    try:
        return [parse_tile(tok) for tok in text.replace(",", " ").split()]
    except PositionError as exc:
        raise PositionError(f"{where}: {exc}") from None


def _int(text: str, key: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise PositionError(f"{key}={text!r} is not a whole number") from None


def parse_position(text: str) -> DominoState:
    """Parse a position string into a :class:`DominoState` (raises PositionError)."""
    if not isinstance(text, str) or not text.strip():
        raise PositionError("empty position string")
    parts = [p.strip() for p in text.strip().split(";")]
    try:
        variant = variant_by_name(parts[0])
    except PipslabError as exc:
        raise PositionError(str(exc)) from None
    fields = {}
    for part in parts[1:]:
        if not part:
            continue
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq:
            raise PositionError(f"field {part!r} is not key=value")
        if key not in _KEYS:
            raise PositionError(f"unknown field {key!r}; fields: {', '.join(_KEYS)}")
        if key in fields:
            raise PositionError(f"field {key!r} given twice")
        fields[key] = value.strip()
    if "hands" not in fields:
        raise PositionError("missing field 'hands' (seats separated by '/')")
    hand_texts = fields["hands"].split("/")
    if len(hand_texts) != variant.players:
        raise PositionError(f"{variant.name} has {variant.players} seats but hands lists {len(hand_texts)}")
    seen = {}

    def claim(t, where):
        if t in seen:
            raise PositionError(f"tile {tile_name(t)} appears twice ({seen[t]} and {where})")
        seen[t] = where

    hands = []
    for seat, ht in enumerate(hand_texts):
        m = 0
        for t in _tiles(ht, f"hand of seat {seat}"):
            claim(t, f"hand of seat {seat}")
            m |= 1 << t
        hands.append(m)
    boneyard = _tiles(fields.get("boneyard", "-"), "boneyard")
    for t in boneyard:
        claim(t, "boneyard")
    turn = _int(fields.get("turn", "0"), "turn")
    if not 0 <= turn < variant.players:
        raise PositionError(f"turn={turn} is not a seat of {variant.name} (0..{variant.players - 1})")
    passes = _int(fields.get("passes", "0"), "passes")
    if not 0 <= passes <= variant.players:
        raise PositionError(f"passes={passes}: must be 0..{variant.players} "
                            f"({variant.players} in a row is a blocked, finished game)")
    if "line" in fields and "ends" in fields:
        raise PositionError("give 'line' or 'ends', not both")
    held = 0
    for t in seen:
        held |= 1 << t
    left = right = -1
    line = ()
    table = FULL_SET & ~held
    if "line" in fields and fields["line"] not in ("", "-"):
        oriented = []
        for tok in fields["line"].replace(",", " ").split():
            a, b = parse_oriented(tok)
            t = TILE_ID[(a, b)]
            claim(t, "line")
            if oriented and oriented[-1][1] != a:
                raise PositionError(f"line: {tok} does not join {oriented[-1][0]}-{oriented[-1][1]} "
                                    f"({oriented[-1][1]} against {a})")
            oriented.append((a, b))
        line = tuple(oriented)
        left, right = line[0][0], line[-1][1]
        table = 0
        for t in seen:
            if seen[t] == "line":
                table |= 1 << t
        unplaced = FULL_SET & ~held & ~table
        if unplaced:
            raise PositionError(f"tiles in no hand, boneyard or line: {format_tiles(tiles_of(unplaced))}")
    elif "ends" in fields:
        ends = fields["ends"].replace(" ", "").split("|")
        if len(ends) != 2 or not all(e.isdigit() and 0 <= int(e) <= 6 for e in ends):
            raise PositionError(f"ends={fields['ends']!r}: expected two numbers 0-6 like '6|3'")
        left, right = int(ends[0]), int(ends[1])
        line = None
        for e in (left, right):
            if not table & SUIT[e]:
                raise PositionError(f"ends show {e}, but no tile on the table carries {e}")
    else:
        if table:
            raise PositionError(f"the table is empty but these tiles are nowhere: {format_tiles(tiles_of(table))}")
    state = DominoState(variant, hands, boneyard, left=left, right=right, current=turn,
                        passes=passes, table=table, line=line, from_deal=left < 0)
    if left < 0:
        seat, tile = opening_tile(variant, hands)
        if seat >= 0 and seat != turn:
            raise PositionError(f"seat {seat} opens with {tile_name(tile)} under {variant.name}'s rule, "
                                f"but turn={turn}")
        state.opening = tile
        if passes:
            raise PositionError("passes must be 0 on an empty table")
    empty = [seat for seat, h in enumerate(hands) if not h]
    if len(empty) > 1:
        raise PositionError(f"seats {empty} all have empty hands: only one player can go out")
    if empty:
        state._finish(winner=empty[0], blocked=False)
    elif passes == variant.players:
        state._finish(winner=None, blocked=True)
    return state


def format_position(state: DominoState) -> str:
    """The position string of ``state`` (round-trips through :func:`parse_position`)."""
    v = state.variant
    parts = [v.name, f"turn={state.current}", f"passes={state.passes}"]
    if state.left < 0:
        parts.append("line=-")
    elif state.line is not None:
        parts.append("line=" + " ".join(f"{a}-{b}" for a, b in state.line))
    else:
        parts.append(f"ends={state.left}|{state.right}")
    parts.append("hands=" + " / ".join(format_tiles(tiles_of(h)) or "-" for h in state.hands))
    parts.append("boneyard=" + (format_tiles(state.boneyard_tiles()) or "-"))
    return "; ".join(parts)


def render(state: DominoState, viewer: int | None = None) -> str:
    """A text picture of the table; hands other than ``viewer``'s are hidden (None: all shown)."""
    v = state.variant
    lines = []
    if state.left < 0:
        lines.append("table: (empty)")
    elif state.line is not None:
        lines.append("line:  " + " ".join(f"[{a}|{b}]" for a, b in state.line))
    lines.append(f"ends:  {state.left}|{state.right}" if state.left >= 0 else "ends:  -")
    for p in range(v.players):
        hand = state.hands[p]
        if viewer is None or viewer == p:
            shown = format_tiles(tiles_of(hand)) or "(empty)"
        else:
            shown = f"{bin(hand).count('1')} tiles"
        mark = ">" if p == state.current and not state.terminal else " "
        lines.append(f"{mark} seat {p}: {shown}")
    lines.append(f"boneyard: {state.boneyard_size} tiles" + ("" if v.draw else " (out of play)"))
    if state.terminal:
        how = "blocked" if state.blocked else "went out"
        who = "draw" if state.winner == -1 else f"seat {state.winner} wins"
        lines.append(f"game over ({how}): {who}; pips left {state.pips_left()}")
    return "\n".join(lines)


__all__ = ["parse_position", "format_position", "render", "TILES"]
