"""Backgammon move generation: single checker moves, whole-turn plays, notation.

Everything here is seen from the player on roll (see :mod:`pipslab.envs.backgammon.board`).

* A **checker move** is ``(from_point, die)``: ``from_point`` is 1-24 or 25 (the bar);
  the checker lands on ``from_point - die``, or is borne off when that is ``<= 0``.
* A **play** is the whole turn: the checker moves made with one roll and the position
  they lead to (the *afterstate*, still from the mover's side, not yet swapped).
  :func:`legal_plays` lists every distinct legal play, one per distinct resulting
  position, under RULES §5: doubles are played four times, as many dice as possible
  must be used, and when only one of two different dice can be used it must be the
  larger one where that is possible.
* :func:`legal_checker_moves` gives the checker moves that may start a legal play from a
  position part-way through a turn (the per-checker action mask).

Rules of a single checker move: with a checker on the bar, only the bar may move (entry on
``25 - die``); a point held by two or more opposing checkers is closed; landing on a single
opposing checker (a blot) hits it to his bar; bearing off needs every checker of mine in
the home board (1-6); a die bears off from its own point, or from the highest occupied
point when it is larger than that point, and otherwise must be played inside the board.
"""
from __future__ import annotations

import re
from typing import Dict, List, NamedTuple, Sequence, Tuple

from pipslab.envs.errors import PipslabError, excerpt

from .board import BAR, Position

# A step of a recorded play: (from_point, die, hit)
Step = Tuple[int, int, bool]


def sources(b: Sequence[int], die: int) -> List[int]:
    """Points (25 = bar) from which one of my checkers may legally move ``die`` pips."""
    if b[BAR] > 0:
        return [BAR] if b[BAR - die] >= -1 else []
    hi = 24
    while hi > 0 and b[hi] <= 0:
        hi -= 1
    out = [s for s in range(hi, die, -1) if b[s] > 0 and b[s - die] >= -1]
    if hi <= 6 and hi > 0:                 # everything home: bearing off is allowed
        if die <= hi:
            if b[die] > 0:
                out.append(die)
        else:
            out.append(hi)                 # larger die than the highest point
    return out


def apply_step(b: list, src: int, die: int) -> bool:
    """Move one of my checkers in the list ``b`` (in place); return True if it hit."""
    b[src] -= 1
    to = src - die
    if to >= 1:
        if b[to] == -1:
            b[to] = 1
            b[0] -= 1
            return True
        b[to] += 1
    return False


def _plays_two(pos: Sequence[int], hi: int, lo: int) -> Dict[tuple, tuple]:
    found: Dict[tuple, tuple] = {}
    for first, second in ((hi, lo), (lo, hi)):
        for s1 in sources(pos, first):
            b1 = list(pos)
            h1 = apply_step(b1, s1, first)
            for s2 in sources(b1, second):
                b2 = b1.copy()
                h2 = apply_step(b2, s2, second)
                key = tuple(b2)
                if key not in found:
                    found[key] = ((s1, first, h1), (s2, second, h2))
    if found:
        return found
    for die in (hi, lo):                   # only one die can be played: the larger if possible
        for s in sources(pos, die):
            b1 = list(pos)
            h = apply_step(b1, s, die)
            found.setdefault(tuple(b1), ((s, die, h),))
        if found:
            return found
    return found


def _plays_double(pos: Sequence[int], die: int, count: int) -> Dict[tuple, tuple]:
    # Checker moves of one double commute when taken from the highest point down, so
    # only non-increasing sequences of from-points are explored.
    found: Dict[tuple, tuple] = {}
    best = [0]

    def rec(b, depth, max_src, seq):
        srcs = [s for s in sources(b, die) if s <= max_src] if depth < count else ()
        if not srcs:
            if depth > best[0]:
                best[0] = depth
                found.clear()
            if depth == best[0]:
                found.setdefault(tuple(b), seq)
            return
        for s in srcs:
            b2 = list(b)
            h = apply_step(b2, s, die)
            rec(b2, depth + 1, s, seq + ((s, die, h),))

    rec(list(pos), 0, BAR, ())
    if best[0] == 0:
        return {}
    return found


def play_table(pos: Sequence[int], dice: Sequence[int]) -> Dict[tuple, tuple]:
    """``{resulting board tuple: steps}`` for every distinct legal play of the dice still
    to play (2 different dice, 1-4 equal dice, or a single die).  Empty: no legal play."""
    n = len(dice)
    if n == 0:
        return {}
    if n == 1:
        d = dice[0]
        found = {}
        for s in sources(pos, d):
            b = list(pos)
            h = apply_step(b, s, d)
            found.setdefault(tuple(b), ((s, d, h),))
        return found
    if n == 2 and dice[0] != dice[1]:
        return _plays_two(pos, max(dice), min(dice))
    if any(d != dice[0] for d in dice):
        raise PipslabError(f"bad dice {tuple(dice)}: two different dice or up to four equal ones")
    return _plays_double(pos, dice[0], n)


class Play(NamedTuple):
    """A legal play: its checker moves and the position it leads to (mover's side)."""

    steps: Tuple[Step, ...]
    position: Position

    @property
    def moves(self) -> Tuple[Tuple[int, int], ...]:
        """``(from, to)`` pairs; 25 is the bar, 0 is off."""
        return tuple((s, max(s - d, 0)) for s, d, _ in self.steps)

    @property
    def notation(self) -> str:
        return format_play(self.steps)

    def __str__(self) -> str:
        return self.notation


def legal_plays(position: Sequence[int], dice: Sequence[int]) -> List[Play]:
    """Every distinct legal play of ``dice`` (a roll like ``(6, 4)`` or the dice still to
    play) from ``position``, one per distinct resulting position, ordered by notation.
    An empty list means the player cannot move (the turn passes)."""
    check_dice(dice, allow_partial=True)
    table = play_table(position, tuple(dice))
    plays = [Play(steps, Position._trusted(key)) for key, steps in table.items()]
    plays.sort(key=lambda p: _sort_key(p.steps))
    return plays


def _sort_key(steps):
    return tuple(sorted(((-s, -d) for s, d, _ in steps)))


def max_dice(b: Sequence[int], dice: Sequence[int], max_src: int = BAR) -> int:
    """How many of ``dice`` can be played from ``b`` (stops early at all of them)."""
    if not dice:
        return 0
    if len(dice) == 1:
        return 1 if sources(b, dice[0]) else 0
    double = dice[0] == dice[-1] and all(d == dice[0] for d in dice)
    return _max_dice(b, tuple(dice), max_src if double else BAR, double)


def _max_dice(b, dice, max_src, double):
    best = 0
    n = len(dice)
    for i, d in enumerate(dice):
        if i and d == dice[i - 1]:
            continue
        rest = dice[:i] + dice[i + 1:]
        for s in sources(b, d):
            if s > max_src:
                continue
            if n == 1:
                return 1
            b2 = list(b)
            apply_step(b2, s, d)
            m = 1 + _max_dice(b2, rest, s if double else BAR, double)
            if m > best:
                best = m
                if best == n:
                    return best
    return best


def legal_checker_moves(position: Sequence[int], dice: Sequence[int],
                        need: int | None = None) -> List[Tuple[int, int]]:
    """The ``(from_point, die)`` checker moves that begin some legal play of ``dice`` (the
    dice still to play) from ``position``: after making one, the rest of the dice can
    still be played to a maximal legal play.  Empty when nothing can move.  ``need``, the
    number of dice the play uses (:func:`max_dice`), is computed when not given."""
    dice = tuple(sorted(dice, reverse=True))
    if need is None:
        need = max_dice(position, dice)
    if need == 0:
        return []
    double = dice[0] == dice[-1]
    out = []
    for i, d in enumerate(dice):
        if i and d == dice[i - 1]:
            continue
        rest = dice[:i] + dice[i + 1:]
        for s in sources(position, d):
            if need > 1:
                b = list(position)
                apply_step(b, s, d)
                if _max_dice(b, rest, BAR, double) < need - 1:
                    continue
            out.append((s, d))
    if need == 1 and len(dice) == 2 and not double:
        larger = [m for m in out if m[1] == dice[0]]
        if larger:                          # only one die playable: the larger if possible
            out = larger
    return out


# ---------------------------------------------------------------------- dice
def check_dice(dice: Sequence[int], allow_partial: bool = False) -> None:
    """Raise :class:`PipslabError` unless ``dice`` is a roll of two dice 1-6 (or, with
    ``allow_partial``, the dice left of a roll)."""
    try:
        values = [int(d) for d in dice]
    except (TypeError, ValueError):
        raise PipslabError(f"bad dice {excerpt(dice)}: expected two numbers 1-6") from None
    if any(v != d for v, d in zip(values, dice)) or any(not 1 <= v <= 6 for v in values):
        raise PipslabError(f"bad dice {tuple(dice)}: each die shows 1-6")
    if allow_partial:
        ok = 1 <= len(values) <= 2 or (len(values) <= 4 and len(set(values)) == 1)
    else:
        ok = len(values) == 2
    if not ok:
        raise PipslabError(f"bad dice {tuple(dice)}: expected two dice")


def dice_to_play(roll: Sequence[int]) -> Tuple[int, ...]:
    """The dice a roll gives to play, larger first: a double four times."""
    a, b = roll
    if a == b:
        return (a, a, a, a)
    return (a, b) if a > b else (b, a)


# ---------------------------------------------------------------------- notation
def _point_name(p: int) -> str:
    if p >= BAR:
        return "bar"
    if p <= 0:
        return "off"
    return str(p)


def format_play(steps: Sequence[Step]) -> str:
    """Standard notation from the mover's side: ``8/5 6/5``, ``bar/22``, ``6/off``,
    ``13/7*`` (``*`` marks a hit).  One ``from/to`` per die, the highest from-point
    first (a checker moving twice reads ``24/21 21/20``); an empty play is ``pass``."""
    if not steps:
        return "pass"
    ordered = sorted(steps, key=lambda step: -step[0])
    return " ".join(f"{_point_name(s)}/{_point_name(s - d)}{'*' if h else ''}" for s, d, h in ordered)


_TOKEN = re.compile(r"^(bar|\d+)((?:/(?:off|\d+)\*?)+)(?:\((\d)\))?$")


def parse_play(text: str) -> List[Tuple[int, int]]:
    """Parse notation into ``(from, to)`` segments (25 = bar, 0 = off).  Accepts
    ``8/5 6/5``, ``bar/22``, ``6/off``, ``13/7*``, chains ``24/18*/13`` and repeats
    ``8/5(2)``; ``pass`` (or an empty string) is the empty play."""
    text = text.strip().lower()
    if text in ("", "pass", "no move", "-"):
        return []
    segments = []
    for token in text.replace(",", " ").split():
        m = _TOKEN.match(token)
        if not m:
            raise PipslabError(f"cannot read move {excerpt(token)}: expected e.g. 8/5, bar/22, 6/off, 13/7*")
        points = [BAR if m.group(1) == "bar" else int(m.group(1))]
        points += [0 if p.rstrip("*") == "off" else int(p.rstrip("*")) for p in m.group(2).split("/")[1:]]
        if any(not 0 <= p <= 25 for p in points):
            raise PipslabError(f"bad point in move {excerpt(token)}: points are 1-24, bar and off")
        times = int(m.group(3) or 1)
        for _ in range(times):
            for a, b in zip(points, points[1:]):
                if b >= a:
                    raise PipslabError(f"bad move {excerpt(token)}: checkers move from higher to lower points")
                segments.append((a, b))
    return segments


def apply_segments(position: Sequence[int], segments) -> tuple | None:
    """The board (a tuple) after moving my checkers along ``(from, to)`` segments (25 =
    bar, 0 = off), hitting blots where they land; ``None`` if a segment starts from a
    point without a checker of mine.  No other rule is checked."""
    b = list(position)
    for a, to in segments:
        if not (0 <= to < a <= 25) or b[a] <= 0:
            return None
        b[a] -= 1
        if to >= 1:
            if b[to] == -1:
                b[to] = 1
                b[0] -= 1
            else:
                b[to] += 1
    return tuple(b)


def find_play(position: Sequence[int], dice: Sequence[int], text: str) -> Play:
    """The legal play that ``text`` (standard notation) describes, matched by the
    position it leads to; raises :class:`PipslabError` if it is not legal."""
    plays = legal_plays(position, dice)
    target = apply_segments(position, parse_play(text))
    if target is not None:
        for play in plays:
            if play.position == target:
                return play
    legal = ", ".join(p.notation for p in plays) or "pass"
    raise PipslabError(f"illegal play {excerpt(text)} with dice {tuple(dice)}; legal: {legal}")
