"""Backgammon positions: an immutable value seen from the player on roll.

A :class:`Position` is a tuple of 26 signed ints, always from the side of the player
**on roll** ("me"; the other player is "the opponent"):

========  ==================================================================
index     meaning
========  ==================================================================
1 … 24    point 1 … 24 numbered from my side: I move from 24 toward 1 and my
          home board is 1–6.  ``> 0``: that many of my checkers; ``< 0``: that
          many of the opponent's checkers (he moves from 1 toward 24; his home
          board is my 19–24).
25        my bar (``>= 0``).  Entering with die ``d`` lands on point ``25 - d``.
0         the opponent's bar, negated (``<= 0``).  He enters on my point ``d``.
========  ==================================================================

Checkers borne off are not stored: each side has 15, so ``off = 15 - on board``.
:meth:`Position.swap` turns the board round to the opponent's side (the explicit side
swap made at the end of every turn): ``swapped[i] == -position[25 - i]``.

This is the layout of Tesauro's ``pubeval`` board.  RULES §5 numbers the points from X's
side (X moves 24 → 1); when X is on roll the numbering here is exactly the source's, and
when O is on roll the source's point ``n`` is our point ``25 - n``.

Positions are written as GNU Backgammon Position IDs (``4HPwATDgc/ABMA`` is the
start): see :func:`position_id` and :meth:`Position.from_id`.
"""
from __future__ import annotations

import base64
import binascii
from typing import Iterable, Sequence

from pipslab.envs.errors import PositionError, excerpt

CHECKERS = 15
BAR = 25          # index of my bar
OPP_BAR = 0       # index of the opponent's bar (stored negated)
OFF = 0           # "to" point of a bear-off in a (from, to) move
NUM_POINTS = 24

_START = (0,
          -2, 0, 0, 0, 0, 5,      # 1-6: my home board, opponent's back checkers on 1
          0, 3, 0, 0, 0, -5,      # 7-12
          5, 0, 0, 0, -3, 0,      # 13-18
          -5, 0, 0, 0, 0, 2,      # 19-24: opponent's home board, my back checkers on 24
          0)


class Position(tuple):
    """An immutable, hashable backgammon position from the side of the player on roll.

    Build one with :meth:`start`, :meth:`from_id` (a GNU BG Position ID),
    :meth:`from_points` (readable dicts) or :meth:`from_gnubg` (gnubg's 2×25 board);
    ``Position(seq)`` checks the 26 values.  ``str(position)`` is its Position ID.
    """

    __slots__ = ()

    def __new__(cls, values: Iterable[int] = _START):
        values = tuple(int(v) for v in values)
        _validate(values)
        return tuple.__new__(cls, values)

    # ------------------------------------------------------------------ builders
    @classmethod
    def _trusted(cls, values) -> "Position":
        """Wrap 26 values already known to be valid (used by move generation)."""
        return tuple.__new__(cls, values)

    @classmethod
    def start(cls) -> "Position":
        return tuple.__new__(cls, _START)

    @classmethod
    def from_id(cls, pid: str) -> "Position":
        """Parse a GNU Backgammon Position ID (14 base64 characters)."""
        mine, theirs = _decode_id(pid)
        return cls.from_gnubg((theirs, mine))

    @classmethod
    def from_gnubg(cls, board: Sequence[Sequence[int]]) -> "Position":
        """From gnubg's board ``[opponent, on roll]``: 25 counts each, from its own side
        (index ``i`` is that side's point ``i + 1``, index 24 its bar)."""
        if len(board) != 2 or any(len(side) != 25 for side in board):
            raise PositionError("a gnubg board is two lists of 25 checker counts")
        theirs, mine = board
        values = [0] * 26
        for i in range(24):
            if mine[i] < 0 or theirs[i] < 0:
                raise PositionError("checker counts cannot be negative")
            if mine[i] and theirs[23 - i]:
                raise PositionError(f"point {i + 1} holds checkers of both players")
            values[i + 1] = mine[i] - theirs[23 - i]
        values[BAR] = mine[24]
        values[OPP_BAR] = -theirs[24]
        return cls(values)

    @classmethod
    def from_points(cls, mine: dict, theirs: dict) -> "Position":
        """Readable construction: ``{point: count}`` for each side, each numbered from the
        side of the player on roll (me); the key ``"bar"`` is a bar.  Example: a checker
        of mine on 24 and an opponent checker on his bar:
        ``Position.from_points({24: 1}, {"bar": 1})``."""
        values = [0] * 26
        for point, n in mine.items():
            values[BAR if point == "bar" else int(point)] += int(n)
        for point, n in theirs.items():
            if not n:
                continue
            if point == "bar":
                values[OPP_BAR] -= int(n)
            else:
                if values[int(point)] > 0:
                    raise PositionError(f"point {point} holds checkers of both players")
                values[int(point)] -= int(n)
        return cls(values)

    # ------------------------------------------------------------------ views
    def to_gnubg(self) -> list:
        """gnubg's board ``[opponent, on roll]`` (see :meth:`from_gnubg`)."""
        mine = [max(self[i + 1], 0) for i in range(24)] + [self[BAR]]
        theirs = [max(-self[24 - i], 0) for i in range(24)] + [-self[OPP_BAR]]
        return [theirs, mine]

    def swap(self) -> "Position":
        """The same board seen from the opponent's side (he is now on roll)."""
        return tuple.__new__(Position, [-v for v in self[::-1]])

    @property
    def bar(self) -> int:
        """My checkers on the bar."""
        return self[BAR]

    @property
    def opp_bar(self) -> int:
        return -self[OPP_BAR]

    @property
    def borne_off(self) -> int:
        """My checkers borne off."""
        return CHECKERS - sum(v for v in self[1:] if v > 0)

    @property
    def opp_borne_off(self) -> int:
        return CHECKERS - sum(-v for v in self[:25] if v < 0)

    def pip_count(self) -> int:
        """My pip count: the sum over my checkers of the distance to bear off."""
        return sum(i * v for i, v in enumerate(self) if v > 0)

    def opp_pip_count(self) -> int:
        return sum((25 - i) * -v for i, v in enumerate(self) if v < 0)

    def all_home(self) -> bool:
        """Whether all my checkers still on the board are in my home board (1-6)."""
        return all(v <= 0 for v in self[7:])

    def is_race(self) -> bool:
        """No contact: every checker of mine is past every checker of the opponent."""
        my_back = max((i for i in range(1, 26) if self[i] > 0), default=0)
        opp_back = min((i for i in range(0, 25) if self[i] < 0), default=25)
        return my_back < opp_back

    @property
    def id(self) -> str:
        return position_id(self)

    def __str__(self) -> str:
        return position_id(self)

    def __repr__(self) -> str:
        return f"Position.from_id({position_id(self)!r})"

    def describe(self) -> str:
        """A one-line readable listing, e.g. ``me: 24x2 13x5 8x3 6x5 | opp: 1x2 …``."""
        mine = [("bar" if i == BAR else str(i)) + f"x{self[i]}" for i in range(25, 0, -1) if self[i] > 0]
        theirs = [("bar" if i == OPP_BAR else str(i)) + f"x{-self[i]}" for i in range(0, 25) if self[i] < 0]
        return (f"me: {' '.join(mine) or '-'} off {self.borne_off} | "
                f"opp: {' '.join(theirs) or '-'} off {self.opp_borne_off}")


def _validate(values: tuple) -> None:
    if len(values) != 26:
        raise PositionError(f"a position has 26 entries, got {len(values)}")
    if values[BAR] < 0:
        raise PositionError("my bar count cannot be negative")
    if values[OPP_BAR] > 0:
        raise PositionError("the opponent's bar is stored negated (<= 0)")
    mine = sum(v for v in values if v > 0)
    theirs = sum(-v for v in values if v < 0)
    if mine > CHECKERS or theirs > CHECKERS:
        raise PositionError(f"a side has at most {CHECKERS} checkers (got {mine} and {theirs})")
    if not mine and not theirs:
        raise PositionError("no checker is on the board: both sides cannot have borne off all 15 (the game ends "
                            "when the first side has)")


# ---------------------------------------------------------------------- Position ID
# GNU Backgammon's Position ID: for each side in turn -- first the player NOT on roll,
# then the player on roll (gnubg's board order [opponent, on roll]) -- and for each of
# its 25 places from its own point 1 up to its bar, that many 1-bits then a 0-bit.  The
# bit string (at most 80 bits) is packed little-endian (bit k = byte k // 8, bit k % 8)
# into 10 bytes, written in base64 without the trailing "==".

def position_id(position: Sequence[int]) -> str:
    """The GNU Backgammon Position ID of ``position`` (player on roll = me)."""
    theirs, mine = Position.to_gnubg(position)
    bits = []
    for side in (theirs, mine):
        for n in side:
            bits.extend([1] * n)
            bits.append(0)
    data = bytearray(10)
    for k, bit in enumerate(bits):
        if bit:
            data[k >> 3] |= 1 << (k & 7)
    return base64.b64encode(bytes(data)).decode("ascii")[:14]


_B64 = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def _decode_id(pid: str):
    if not isinstance(pid, str):
        raise PositionError(f"a Position ID is a string, got {type(pid).__name__}")
    text = pid.strip()
    if len(text) != 14 or not set(text) <= _B64:
        raise PositionError(
            f"malformed Position ID {excerpt(pid)}: expected 14 base64 characters like '4HPwATDgc/ABMA'")
    try:
        data = base64.b64decode(text + "==", validate=True)
    except (binascii.Error, ValueError):
        raise PositionError(f"malformed Position ID {excerpt(pid)}") from None
    bits = [(data[k >> 3] >> (k & 7)) & 1 for k in range(80)]
    sides = [[0] * 25, [0] * 25]
    side = place = 0
    for bit in bits:
        if side == 2:
            if bit:
                raise PositionError(f"bad Position ID {excerpt(pid)}: more than 50 places encoded")
            continue
        if bit:
            sides[side][place] += 1
        else:
            place += 1
            if place == 25:
                side, place = side + 1, 0
    if side < 2:
        raise PositionError(f"bad Position ID {excerpt(pid)}: fewer than 50 places encoded")
    for s, name in ((sides[0], "the opponent"), (sides[1], "the player on roll")):
        if sum(s) > CHECKERS:
            raise PositionError(f"bad Position ID {excerpt(pid)}: {name} has {sum(s)} checkers (> 15)")
    theirs, mine = sides
    return mine, theirs


# ---------------------------------------------------------------------- text board
def render_position(position: Position, top_label: str = "O", bottom_label: str = "X",
                    dice: Sequence[int] = ()) -> str:
    """Draw the board as text from the side of the player on roll (shown at the bottom,
    moving from 24 toward 1, his checkers drawn as ``bottom_label``)."""
    me, opp = bottom_label, top_label
    p = position

    def cell(i):
        v = p[i]
        if v == 0:
            return "   ."
        return f"{abs(v)}{me if v > 0 else opp}".rjust(4)

    lines = [
        "".join(f"{i:>4}" for i in range(13, 25)),
        "".join(cell(i) for i in range(13, 25)),
        "".join(cell(i) for i in range(12, 0, -1)),
        "".join(f"{i:>4}" for i in range(12, 0, -1)),
        f"  bar: {me} {p.bar}  {opp} {p.opp_bar}   off: {me} {p.borne_off}  {opp} {p.opp_borne_off}"
        f"   pips: {me} {p.pip_count()}  {opp} {p.opp_pip_count()}",
        f"  {me} on roll" + (f", dice {'-'.join(map(str, dice))}" if dice else "")
        + f"   Position ID {position_id(p)}",
    ]
    return "\n".join(lines)
