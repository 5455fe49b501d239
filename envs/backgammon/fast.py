"""Compiled (numba) backgammon: the move generator, and whole games in one call.

Same rules and same results as the pure-Python reference in
:mod:`pipslab.envs.backgammon.moves` (tests compare them on tens of thousands of
positions); boards are the 26 values of a :class:`~envs.backgammon.board.Position`
(numpy ``int8``/``int64`` rows, or a ``Position``).

* :func:`afterstates` -- the distinct positions after every legal play of a roll
  (:func:`afterstates_won`: and which of them win the game, with how many points;
  :func:`replies_won`: the same for the opponent after a play).
* :func:`legal_plays` -- :func:`pipslab.envs.backgammon.moves.legal_plays` exactly (the same
  :class:`~pipslab.envs.backgammon.moves.Play` list: steps, positions, order), compiled.
* :func:`checker_actions` -- the per-checker mask of
  :func:`pipslab.envs.backgammon.moves.legal_checker_moves` (used by the game state).
* :func:`batch_afterstates` -- the afterstates of a batch of boards and rolls in one call.
* :func:`random_game`, :func:`random_games` -- whole games of uniformly random whole
  plays, in one call.
* :func:`pubeval_rollouts` -- games played to the end by a linear ranker (pubeval's
  inputs; the weights are the caller's) with the caller's dice: the rollout evaluator.
* :func:`net_selfplay` -- greedy self-play games of a ReLU network valuing afterstates by
  their equity (the TD trainer's games; the weights are the caller's).
* :func:`encode_rows` -- the network inputs of :mod:`pipslab.envs.backgammon.features`.

How the generator is fast: it works on one board in place (a checker move and its
undo touch two or three points), keeps the highest occupied point as it goes (bearing off
needs it), and finds duplicate positions by an exact key of the board -- three 60-bit
words, five bits per point -- updated with each move and looked up in a hash table that a
generation stamp empties in O(1).  Every compiled kernel of the backgammon engine lives in
this one file: numba's cache (``cache=True``) checks only the file of the function it
caches, so a kernel calling a compiled function of another file could run stale code.

Compiled with ``cache=True``; the first call of a fresh install compiles for a while
(call :func:`warm_up` before timing anything).  Without numba the functions run as plain
Python, slowly but with the same results.
"""
from __future__ import annotations

import math
import struct

import numpy as np

try:  # numba is a dependency; the fallback keeps the rules importable without it
    from numba import njit
    HAVE_NUMBA = True
except ImportError:  # pragma: no cover
    HAVE_NUMBA = False

    def njit(*args, **kwargs):
        if args and callable(args[0]):
            return args[0]
        return lambda f: f

from .board import Position
from .moves import Play, check_dice

MAX_PLAYS = 4096          # more than any position has (GNU BG's bound is 3,060)
_TABLE = 8192             # open-addressing hash table of the distinct afterstates (a power of 2)
_TMASK = _TABLE - 1

# The workspace: one int64 array holding the working board, its key, the search stacks,
# the hash table and the steps of every play found (see new_workspace).
_STAMP = 0                # generation stamp of the hash table
_KEY = 4                  # 3 key words of the working board
_B = 8                    # the working board, 26 entries
_PATH = 40                # step codes of the play being built (4)
_NXT, _MOVED, _HIS, _SRC, _HIT = 48, 56, 64, 72, 80        # the plays' search stack (5 each)
_NXT2, _HIS2, _SRC2, _HIT2 = 88, 96, 104, 112               # max_double's stack (5 each)
_SLOT = 128               # _TABLE stamps
_IDX = _SLOT + _TABLE     # _TABLE play indices
_KEYS = _IDX + _TABLE     # 3 key words per play
_STEPS = _KEYS + 3 * MAX_PLAYS    # 4 step codes per play
_ORDER = _STEPS + 4 * MAX_PLAYS   # legal_plays: the plays' step numbers, in order
_WINS = _ORDER + MAX_PLAYS        # afterstates_won: what each play wins
_WS_SIZE = _WINS + MAX_PLAYS


def new_workspace() -> np.ndarray:
    """A fresh workspace for the kernels (each thread of work needs its own)."""
    return np.zeros(_WS_SIZE, dtype=np.int64)


# ---------------------------------------------------------------------- the working board
@njit(cache=True)
def _bump(ws, i, delta):
    """Add ``delta`` to point ``i`` of the working board and to its key."""
    ws[_B + i] += delta
    ws[_KEY + i // 12] += delta << (5 * (i % 12))


@njit(cache=True)
def _set_key(ws):
    ws[_KEY] = 0
    ws[_KEY + 1] = 0
    ws[_KEY + 2] = 0
    for i in range(26):
        ws[_KEY + i // 12] += (ws[_B + i] + 15) << (5 * (i % 12))


@njit(cache=True)
def _top(ws):
    """The highest point holding a checker of mine (25: the bar), 0 when none."""
    h = 25
    while h > 0 and ws[_B + h] <= 0:
        h -= 1
    return h


@njit(cache=True)
def _ok(ws, s, d, hi):
    """Whether my checker on ``s`` (there is one; ``hi`` is :func:`_top`) may move ``d``."""
    t = s - d
    if t >= 1:
        return ws[_B + t] >= -1
    if hi > 6:                          # bearing off needs every checker home
        return False
    return t == 0 or s == hi            # exactly, or the highest with a larger die


@njit(cache=True)
def _apply(ws, s, d):
    """Move my checker from ``s`` by ``d``; returns 1 if it hit a blot."""
    _bump(ws, s, -1)
    t = s - d
    if t >= 1:
        if ws[_B + t] == -1:
            _bump(ws, t, 2)
            _bump(ws, 0, -1)
            return 1
        _bump(ws, t, 1)
    return 0


@njit(cache=True)
def _undo(ws, s, d, hit):
    _bump(ws, s, 1)
    t = s - d
    if t >= 1:
        if hit:
            _bump(ws, t, -2)
            _bump(ws, 0, 1)
        else:
            _bump(ws, t, -1)


@njit(cache=True)
def _after(ws, s, hi):
    """The highest point after a checker left ``s`` (``hi`` before)."""
    if s == hi and ws[_B + s] == 0:
        h = s - 1
        while h > 0 and ws[_B + h] <= 0:
            h -= 1
        return h
    return hi


@njit(cache=True)
def _record(ws, out, count, m):
    """Add the working board (reached by the ``m`` steps at ``_PATH``) to the plays unless
    it is there already; returns the new count."""
    w0 = ws[_KEY]
    w1 = ws[_KEY + 1]
    w2 = ws[_KEY + 2]
    h = w0 ^ (w1 * 7) ^ (w2 * 131)      # words < 2^60: nothing overflows (nor in plain Python)
    h ^= h >> 13
    h ^= h >> 26
    h ^= h >> 39
    slot = h & _TMASK
    stamp = ws[_STAMP]
    while True:
        if ws[_SLOT + slot] != stamp:
            ws[_SLOT + slot] = stamp
            ws[_IDX + slot] = count
            k = _KEYS + 3 * count
            ws[k] = w0
            ws[k + 1] = w1
            ws[k + 2] = w2
            for i in range(26):
                out[count, i] = ws[_B + i]
            for j in range(m):
                ws[_STEPS + 4 * count + j] = ws[_PATH + j]
            return count + 1
        k = _KEYS + 3 * ws[_IDX + slot]
        if ws[k] == w0 and ws[k + 1] == w1 and ws[k + 2] == w2:
            return count
        slot = (slot + 1) & _TMASK


@njit(cache=True)
def _generate(ws, d1, d2, n, out):
    """The distinct plays of the working board (left as it was) into ``out`` (and their
    steps into the workspace): two different dice ``d1``, ``d2`` (``n == 2``; ``d1`` is
    tried first), or ``n`` (1-4) moves of the die ``d1 == d2``.  Returns ``(count, steps
    per play)``.  The order is the reference's search order for ``d1 > d2``: first die
    then second, from the highest point down, then the other order."""
    ws[_STAMP] += 1
    _set_key(ws)
    hi = _top(ws)
    count = 0
    if n == 0 or hi == 0:
        return 0, 0
    if d1 != d2:
        for order in range(2):
            a = d1 if order == 0 else d2
            c = d2 if order == 0 else d1
            low1 = 25 if ws[_B + 25] > 0 else 1
            for s1 in range(hi, low1 - 1, -1):
                if ws[_B + s1] <= 0 or not _ok(ws, s1, a, hi):
                    continue
                h1 = _apply(ws, s1, a)
                ws[_PATH] = (s1 * 8 + a) * 2 + h1
                hi1 = _after(ws, s1, hi)
                low2 = 25 if ws[_B + 25] > 0 else 1
                for s2 in range(hi1, low2 - 1, -1):
                    if ws[_B + s2] <= 0 or not _ok(ws, s2, c, hi1):
                        continue
                    h2 = _apply(ws, s2, c)
                    ws[_PATH + 1] = (s2 * 8 + c) * 2 + h2
                    count = _record(ws, out, count, 2)
                    _undo(ws, s2, c, h2)
                _undo(ws, s1, a, h1)
        if count > 0:
            return count, 2
        for k in range(2):              # only one die can be played: the larger if possible
            d = max(d1, d2) if k == 0 else min(d1, d2)
            low = 25 if ws[_B + 25] > 0 else 1
            for s in range(hi, low - 1, -1):
                if ws[_B + s] <= 0 or not _ok(ws, s, d, hi):
                    continue
                h = _apply(ws, s, d)
                ws[_PATH] = (s * 8 + d) * 2 + h
                count = _record(ws, out, count, 1)
                _undo(ws, s, d, h)
            if count > 0:
                return count, 1
        return 0, 0
    # one die, n times: moves of one die commute when taken from the highest point down,
    # so only non-increasing sequences of from-points are searched (depth first)
    d = d1
    best = 0
    depth = 0
    cur = hi
    ws[_NXT] = 25
    ws[_MOVED] = 0
    while True:
        found = False
        s = 0
        if depth < n:
            s = min(ws[_NXT + depth], cur)
            low = 25 if ws[_B + 25] > 0 else 1
            while s >= low:
                if ws[_B + s] > 0 and _ok(ws, s, d, cur):
                    found = True
                    break
                s -= 1
        if found:
            ws[_NXT + depth] = s - 1
            ws[_MOVED + depth] = 1
            ws[_HIS + depth] = cur
            h = _apply(ws, s, d)
            ws[_SRC + depth] = s
            ws[_HIT + depth] = h
            ws[_PATH + depth] = (s * 8 + d) * 2 + h
            cur = _after(ws, s, cur)
            depth += 1
            ws[_NXT + depth] = s
            ws[_MOVED + depth] = 0
            continue
        if ws[_MOVED + depth] == 0 or depth == n:      # a leaf: no move (or no die) left
            if depth > best:
                best = depth
                ws[_STAMP] += 1
                count = 0
            if depth == best and depth > 0:
                count = _record(ws, out, count, depth)
        if depth == 0:
            break
        depth -= 1
        _undo(ws, ws[_SRC + depth], d, ws[_HIT + depth])
        cur = ws[_HIS + depth]
    return count, best


@njit(cache=True)
def _load(board, ws):
    for i in range(26):
        ws[_B + i] = board[i]


@njit(cache=True)
def _load_packed(packed, ws):
    """A board packed as 26 signed bytes (:data:`pack_board`; numba sees them unsigned)."""
    for i in range(26):
        v = packed[i]
        ws[_B + i] = v - 256 if v > 127 else v


@njit(cache=True)
def _afterstates_of(board, d1, d2, out, ws):
    _load(board, ws)
    return _generate(ws, d1, d2, 4 if d1 == d2 else 2, out)[0]


@njit(cache=True)
def _afterstates_packed(packed, d1, d2, out, ws):
    _load_packed(packed, ws)
    return _generate(ws, d1, d2, 4 if d1 == d2 else 2, out)[0]


@njit(cache=True)
def _wins(ws, out, n):
    """What each of the ``n`` plays in ``out`` wins (:func:`_won`), into the workspace."""
    pips = 0
    for i in range(1, 26):
        if ws[_B + i] > 0:
            pips += i * ws[_B + i]
    for k in range(n):                  # no roll moves more than 24 pips
        ws[_WINS + k] = _won(out[k]) if pips <= 24 else 0


@njit(cache=True)
def _afterstates_won(board, d1, d2, out, ws):
    """:func:`_afterstates_of`, and what each play wins (:func:`_wins`)."""
    _load(board, ws)
    n = _generate(ws, d1, d2, 4 if d1 == d2 else 2, out)[0]
    _wins(ws, out, n)
    return n


@njit(cache=True)
def _replies_won(afterstate, d1, d2, out, ws):
    """:func:`_afterstates_won` of ``afterstate`` turned round (the opponent's plays)."""
    for i in range(26):
        ws[_B + i] = -afterstate[25 - i]
    n = _generate(ws, d1, d2, 4 if d1 == d2 else 2, out)[0]
    _wins(ws, out, n)
    return n


@njit(cache=True)
def _plays_packed(packed, hi, lo, n, out, ws):
    """The plays of :func:`legal_plays` with their steps, and their order in the
    workspace: by the reference's sort key (the steps, highest from-point first)."""
    _load_packed(packed, ws)
    count, m = _generate(ws, hi, lo, n, out)
    keys = np.empty(count, dtype=np.int64)
    v = np.empty(4, dtype=np.int64)
    for k in range(count):
        # each step as (25 - from) * 8 + (7 - die): ascending = the reference's (-from, -die)
        for j in range(m):
            code = ws[_STEPS + 4 * k + j] >> 1
            x = (25 - code // 8) * 8 + 7 - code % 8
            i = j
            while i > 0 and v[i - 1] > x:         # insertion sort of at most four
                v[i] = v[i - 1]
                i -= 1
            v[i] = x
        key = 0
        for j in range(m):
            key = key * 256 + v[j]
        keys[k] = key
    order = np.argsort(keys)
    tmp = out[:count].copy()
    for k in range(count):
        i = order[k]
        for j in range(26):
            out[k, j] = tmp[i, j]
        # the play's steps as one number: 9 bits a step, and their count above
        pid = m << 36
        for j in range(m):
            pid |= ws[_STEPS + 4 * i + j] << (9 * j)
        ws[_ORDER + k] = pid
    return count, m


pack_board = struct.Struct("26b").pack      # pack_board(*position) -> 26 bytes

_WS = new_workspace()
_OUT = np.empty((MAX_PLAYS, 26), dtype=np.int8)
_ARRAY = np.ndarray
_KERNEL_DTYPES = (np.dtype(np.int8), np.dtype(np.int64))     # boards the kernels take as they are


def afterstates(position, d1: int, d2: int) -> np.ndarray:
    """The distinct positions (k x 26 int8, mover's side, not swapped) after every legal
    play of the roll ``d1``-``d2``; zero rows when nothing can move.  The order is fixed
    (search and seeded records depend on it).  The returned array is a view of a buffer
    reused by the next call: copy it to keep it."""
    if type(position) is _ARRAY:
        if position.dtype not in _KERNEL_DTYPES:
            position = position.astype(np.int64)
        n = _afterstates_of(position, int(d1), int(d2), _OUT, _WS)
    else:
        n = _afterstates_packed(pack_board(*position), int(d1), int(d2), _OUT, _WS)
    return _OUT[:n]


_WON = _WS[_WINS:_WINS + MAX_PLAYS]


def afterstates_won(position, d1: int, d2: int):
    """``(rows, won)``: :func:`afterstates`, and what each play wins for the mover -- 1, 2
    (a gammon) or 3 (a backgammon) when it bears off his last checker, else 0
    (``agents.backgammon_value.finished_points``).  Both are views of buffers reused by
    the next call."""
    if type(position) is not _ARRAY or position.dtype not in _KERNEL_DTYPES:
        position = np.asarray(position, dtype=np.int64)
    n = _afterstates_won(position, int(d1), int(d2), _OUT, _WS)
    return _OUT[:n], _WON[:n]


def replies_won(afterstate, d1: int, d2: int):
    """:func:`afterstates_won` of the opponent after ``afterstate`` (a board just after a
    play, from the side of the player who made it): his plays of the roll ``d1``-``d2``,
    from his side, and what each wins -- the board turned round and the plays listed in
    one call, as search (and a game loop) steps from play to play."""
    if type(afterstate) is not _ARRAY or afterstate.dtype not in _KERNEL_DTYPES:
        afterstate = np.asarray(afterstate, dtype=np.int64)
    n = _replies_won(afterstate, int(d1), int(d2), _OUT, _WS)
    return _OUT[:n], _WON[:n]


_DICE = frozenset([(a, b) for a in range(1, 7) for b in range(1, 7)] + [(a,) for a in range(1, 7)]
                  + [(a,) * k for a in range(1, 7) for k in (3, 4)])
_new = tuple.__new__
_PLAY_STEPS: dict = {}      # a play's steps (a tuple of (from, die, hit)) by their number


def _steps_of(pid: int) -> tuple:
    """The steps of a play numbered by :func:`_plays_packed` (cached: plays recur)."""
    if len(_PLAY_STEPS) > 200_000:
        _PLAY_STEPS.clear()
    codes = [(pid >> (9 * j)) & 511 for j in range(pid >> 36)]
    steps = _PLAY_STEPS[pid] = tuple((c >> 4, (c >> 1) & 7, bool(c & 1)) for c in codes)
    return steps


def legal_plays(position, dice) -> list:
    """:func:`pipslab.envs.backgammon.moves.legal_plays`, compiled: every distinct legal
    play of ``dice`` (a roll, or the dice left of one) from ``position``, one per distinct
    resulting position, with the same steps and in the same order as the reference."""
    dice = tuple(dice)
    if dice not in _DICE:
        check_dice(dice, allow_partial=True)
        dice = tuple(int(d) for d in dice)
    a = int(dice[0])
    b = int(dice[-1])
    if a < b:
        a, b = b, a
    if type(position) is _ARRAY:
        position = position.tolist()
    count, m = _plays_packed(pack_board(*position), a, b, len(dice), _OUT, _WS)
    if count == 0:
        return []
    cache = _PLAY_STEPS
    return [_new(Play, (cache.get(pid) or _steps_of(pid), _new(Position, row)))
            for pid, row in zip(_WS[_ORDER:_ORDER + count].tolist(), _OUT[:count].tolist())]


# ---------------------------------------------------------------------- checker moves
@njit(cache=True)
def _any_move(ws, d, hi):
    low = 25 if ws[_B + 25] > 0 else 1
    for s in range(hi, low - 1, -1):
        if ws[_B + s] > 0 and _ok(ws, s, d, hi):
            return True
    return False


@njit(cache=True)
def _max_double(ws, d, n, hi):
    """How many (<= n) moves of the die ``d`` can be played (the board is left as it was)."""
    if n == 0:
        return 0
    depth = 0
    best = 0
    cur = hi
    ws[_NXT2] = 25
    while True:
        found = False
        s = 0
        if depth < n:
            s = min(ws[_NXT2 + depth], cur)
            low = 25 if ws[_B + 25] > 0 else 1
            while s >= low:
                if ws[_B + s] > 0 and _ok(ws, s, d, cur):
                    found = True
                    break
                s -= 1
        if found:
            ws[_NXT2 + depth] = s - 1
            ws[_HIS2 + depth] = cur
            ws[_SRC2 + depth] = s
            ws[_HIT2 + depth] = _apply(ws, s, d)
            cur = _after(ws, s, cur)
            depth += 1
            if depth > best:
                best = depth
                if best == n:
                    break
            ws[_NXT2 + depth] = s
            continue
        if depth == 0:
            break
        depth -= 1
        _undo(ws, ws[_SRC2 + depth], d, ws[_HIT2 + depth])
        cur = ws[_HIS2 + depth]
    while depth > 0:                    # unwind (an early finish leaves moves made)
        depth -= 1
        _undo(ws, ws[_SRC2 + depth], d, ws[_HIT2 + depth])
    return best


@njit(cache=True)
def _max_two(ws, a, c, hi):
    one = False
    for order in range(2):
        x = a if order == 0 else c
        y = c if order == 0 else a
        low = 25 if ws[_B + 25] > 0 else 1
        for s in range(hi, low - 1, -1):
            if ws[_B + s] <= 0 or not _ok(ws, s, x, hi):
                continue
            one = True
            h = _apply(ws, s, x)
            two = _any_move(ws, y, _after(ws, s, hi))
            _undo(ws, s, x, h)
            if two:
                return 2
    return 1 if one else 0


@njit(cache=True)
def _checker_moves(ws, hi_die, lo_die, n, out):
    """The working board's first checker moves of maximal plays, as sorted action ids in
    ``out``: the dice left are ``hi_die`` then ``n - 1`` dice ``lo_die``.  Returns
    ``(count, dice the play uses)``."""
    if n == 0:
        return 0, 0
    double = n == 1 or hi_die == lo_die
    top = _top(ws)
    if top == 0:
        return 0, 0
    if n == 1:
        need = 1 if _any_move(ws, hi_die, top) else 0
    elif double:
        need = _max_double(ws, hi_die, n, top)
    else:
        need = _max_two(ws, hi_die, lo_die, top)
    if need == 0:
        return 0, 0
    count = 0
    count_hi = 0
    kinds = 1 if double else 2
    for k in range(kinds):
        d = hi_die if k == 0 else lo_die
        other = lo_die if k == 0 else hi_die
        low = 25 if ws[_B + 25] > 0 else 1
        for s in range(top, low - 1, -1):
            if ws[_B + s] <= 0 or not _ok(ws, s, d, top):
                continue
            keep = True
            if need > 1:
                h = _apply(ws, s, d)
                hi2 = _after(ws, s, top)
                if double:
                    keep = _max_double(ws, d, n - 1, hi2) >= need - 1
                else:
                    keep = _any_move(ws, other, hi2)
                _undo(ws, s, d, h)
            if keep:
                out[count] = (s - 1) * 6 + d - 1
                count += 1
        if k == 0:
            count_hi = count
    if need == 1 and not double and count_hi > 0:
        count = count_hi                  # only one die playable: the larger if possible
    out[:count].sort()
    return count, need


@njit(cache=True)
def _checker_moves_packed(packed, hi_die, lo_die, n, out, ws):
    _load_packed(packed, ws)
    return _checker_moves(ws, hi_die, lo_die, n, out)


_MOVES = np.empty(150, dtype=np.int64)


def checker_actions(position, dice):
    """``(sorted action ids, dice used by a maximal play)`` for the dice still to play
    (larger first): the ids ``(from - 1) * 6 + die - 1`` of the moves
    :func:`pipslab.envs.backgammon.moves.legal_checker_moves` gives, and
    :func:`pipslab.envs.backgammon.moves.max_dice`."""
    n = len(dice)
    if n == 0:
        return [], 0
    count, need = _checker_moves_packed(pack_board(*position), int(dice[0]), int(dice[-1]), n, _MOVES, _WS)
    return _MOVES[:count].tolist(), need


# ---------------------------------------------------------------------- batches
@njit(cache=True)
def _batch_afterstates(boards, dice, out, offsets, one, ws):
    """The afterstates of many boards in one call: the plays of board ``g`` with roll
    ``dice[g]`` land in ``out[offsets[g]:offsets[g + 1]]``; a board that cannot move gets
    one row, itself (the turn passes).  Returns the total row count, or -1 when ``out``
    is too small (the caller grows it and asks again)."""
    n = 0
    for g in range(boards.shape[0]):
        offsets[g] = n
        _load(boards[g], ws)
        d1 = dice[g, 0]
        d2 = dice[g, 1]
        k = _generate(ws, d1, d2, 4 if d1 == d2 else 2, one)[0]
        if n + max(k, 1) > out.shape[0]:
            return -1
        if k == 0:
            for i in range(26):
                out[n, i] = boards[g, i]
            n += 1
        else:
            for r in range(k):
                for i in range(26):
                    out[n + r, i] = one[r, i]
            n += k
    offsets[boards.shape[0]] = n
    return n


def batch_afterstates(boards: np.ndarray, dice: np.ndarray):
    """``(rows, offsets)``: every board's afterstates for its roll, stacked (int8, the
    mover's side, not swapped), board ``g``'s at ``rows[offsets[g]:offsets[g + 1]]``; a
    board with no legal play contributes itself as its only row.  One compiled call for
    a whole batch of games played in lock-step."""
    boards = np.ascontiguousarray(boards, dtype=np.int8)
    dice = np.ascontiguousarray(dice, dtype=np.int64)
    offsets = np.empty(len(boards) + 1, dtype=np.int64)
    size = max(64, 32 * len(boards))
    while True:
        out = np.empty((size, 26), dtype=np.int8)
        n = _batch_afterstates(boards, dice, out, offsets, _OUT, _WS)
        if n >= 0:
            return out[:n], offsets
        size *= 4


# ---------------------------------------------------------------------- whole games
@njit(cache=True)
def _take_swapped(ws, out, k):
    """The working board becomes play ``k`` of ``out`` turned round (the opponent on roll)."""
    for i in range(26):
        ws[_B + i] = -out[k, 25 - i]


@njit(cache=True)
def _swap_board(ws):
    for i in range(13):
        a = ws[_B + i]
        ws[_B + i] = -ws[_B + 25 - i]
        ws[_B + 25 - i] = -a


@njit(cache=True)
def _won(row):
    """For an afterstate (the mover's side): the points the mover has won by bearing off
    his last checker (1; 2 a gammon; 3 a backgammon), 0 when he has checkers left."""
    for i in range(1, 26):
        if row[i] > 0:
            return 0
    theirs = 0
    home = False
    for i in range(0, 25):
        if row[i] < 0:
            theirs -= row[i]
            if i <= 6:
                home = True
    if theirs < 15:
        return 1
    return 3 if home else 2


@njit(cache=True)
def _random_game(out, ws):
    """One game of uniformly random whole plays from the start, with numba's
    ``np.random`` (seeded by the caller): ``(winner seat, points, turns)``."""
    start = (0, -2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0)
    for i in range(26):
        ws[_B + i] = start[i]
    player = 0
    turns = 0
    while True:
        d1 = np.random.randint(1, 7)
        d2 = np.random.randint(1, 7)
        if turns == 0:
            while d1 == d2:
                d1 = np.random.randint(1, 7)
                d2 = np.random.randint(1, 7)
        n = _generate(ws, d1, d2, 4 if d1 == d2 else 2, out)[0]
        turns += 1
        if n > 0:
            k = np.random.randint(0, n)
            points = _won(out[k])
            if points:
                return player, points, turns
            _take_swapped(ws, out, k)
        else:
            _swap_board(ws)
        player = 1 - player


@njit(cache=True)
def _random_game_seeded(seed, out, ws):
    np.random.seed(seed)
    winner, points, turns = _random_game(out, ws)
    return winner, turns


@njit(cache=True)
def _random_games(seed, results, out, ws):
    np.random.seed(seed)
    for g in range(results.shape[0]):
        winner, points, turns = _random_game(out, ws)
        results[g, 0] = winner
        results[g, 1] = points
        results[g, 2] = turns


def random_game(seed: int):
    """One compiled game of uniformly random whole plays: ``(winner seat, turns)``."""
    return _random_game_seeded(int(seed), _OUT, _WS)


def random_games(seed: int, games: int) -> np.ndarray:
    """``games`` compiled games of uniformly random whole plays in one call (the opening
    roll is no double; every later roll two dice; each turn one of the distinct legal
    plays, uniformly), all drawn from ``seed``: a ``games x 3`` int64 array of
    ``(winner seat, points won 1-3, turns)``."""
    results = np.empty((int(games), 3), dtype=np.int64)
    _random_games(int(seed), results, _OUT, _WS)
    return results


# ---------------------------------------------------------------------- rollouts
@njit(cache=True)
def _is_race(ws):
    """No contact left on the working board (as ``race_mask``)."""
    mine = 0
    for i in range(25, 0, -1):
        if ws[_B + i] > 0:
            mine = i
            break
    theirs = 25
    for i in range(0, 25):
        if ws[_B + i] < 0:
            theirs = i
            break
    return mine < theirs


@njit(cache=True)
def _linear_score(row, w):
    """pubeval's score of an afterstate (``agents.backgammon.pubeval_inputs`` times the
    122 weights ``w``); +inf when the mover has borne off everything."""
    s = 0.0
    mine = 0
    for j in range(24):
        n = row[24 - j]
        k = 5 * j
        if n == -1:
            s += w[k]
        elif n == 1:
            s += w[k + 1]
            mine += 1
        elif n >= 2:
            s += w[k + 2]
            mine += n
            if n == 3:
                s += w[k + 3]
            elif n >= 4:
                s += w[k + 4] * ((n - 3) / 2.0)
    if row[25] > 0:
        mine += row[25]
    if mine == 0:
        return math.inf
    s += w[120] * (-row[0] / 2.0)
    s += w[121] * ((15 - mine) / 15.0)
    return s


@njit(cache=True)
def _rollout(ws, rolls, w_contact, w_race, out, limit):
    """The working board (a player on roll, before his roll) played to the end by the
    linear ranker, both sides, with ``rolls`` in turn.  Returns ``(points for the player
    on roll at the start, rolls used)``; points 0 when the rolls ran out first (or after
    ``limit`` turns)."""
    sign = 1.0
    for t in range(min(rolls.shape[0], limit)):
        d1 = rolls[t, 0]
        d2 = rolls[t, 1]
        race = _is_race(ws)
        n = _generate(ws, d1, d2, 4 if d1 == d2 else 2, out)[0]
        if n > 0:
            w = w_race if race else w_contact
            best = 0
            best_s = _linear_score(out[0], w)
            for k in range(1, n):
                sc = _linear_score(out[k], w)
                if sc > best_s:
                    best = k
                    best_s = sc
            points = _won(out[best])
            if points:
                return sign * points, t + 1
            _take_swapped(ws, out, best)
        else:
            _swap_board(ws)
        sign = -sign
    return 0.0, rolls.shape[0]


@njit(cache=True)
def _rollouts(boards, rolls, w_contact, w_race, limit, results, out, ws):
    """:func:`_rollout` of every board with the same rolls; returns False if some game
    did not end within the rolls given."""
    done = True
    for g in range(boards.shape[0]):
        _load(boards[g], ws)
        points, used = _rollout(ws, rolls, w_contact, w_race, out, limit)
        results[g] = points
        if points == 0.0:
            done = False
    return done


def pubeval_rollouts(boards, rolls, w_contact, w_race, limit: int = 10_000):
    """Each of ``boards`` (k x 26, each from the side of the player on roll, before his
    roll) played to the end in one compiled call: both sides take the afterstate that the
    linear ranker with pubeval's 122 inputs scores highest (weights ``w_race`` when the
    position before the play has no contact, else ``w_contact``; the first of equal
    scores), every board with the same ``rolls`` (n x 2, one roll per turn).  Returns the
    points (+-1, 2, 3) for the player on roll at the start of each board, or ``None`` when
    some game needs more than the rolls given (the caller draws more and asks again); a
    game longer than ``limit`` turns scores 0."""
    boards = np.ascontiguousarray(np.asarray(boards).reshape(-1, 26), dtype=np.int64)
    rolls = np.ascontiguousarray(rolls, dtype=np.int64).reshape(-1, 2)
    results = np.empty(len(boards))
    ok = _rollouts(boards, rolls, np.ascontiguousarray(w_contact, dtype=np.float64),
                   np.ascontiguousarray(w_race, dtype=np.float64), int(limit), results, _OUT, _WS)
    if not ok and len(rolls) < limit:
        return None
    return results


# ---------------------------------------------------------------------- network inputs
@njit(cache=True)
def _unit(n, u):
    """Tesauro's unit ``u`` (0-3) of ``n`` checkers on a point."""
    if u < 3:
        return np.float32(1.0) if n > u else np.float32(0.0)
    return np.float32((n - 3) / 2.0) if n > 3 else np.float32(0.0)


@njit(cache=True)
def _point_units(x, k, n):
    """Tesauro's four units of ``n`` checkers on one point, at ``x[k:k + 4]`` (zeroed)."""
    if n >= 1:
        x[k] = 1.0
    if n >= 2:
        x[k + 1] = 1.0
    if n >= 3:
        x[k + 2] = 1.0
    if n > 3:
        x[k + 3] = (n - 3) / 2.0


@njit(cache=True)
def _at(b, i, mirror):
    """Point ``i`` of board ``b`` from its player on roll's side, or (``mirror``) from his
    opponent's (the board swapped)."""
    return np.int64(-b[25 - i]) if mirror else np.int64(b[i])


# the 21 rolls as bits: roll (a, b), a <= b, is bit _ROLL_BIT[a, b] (and [b, a]), of weight
# _ROLL_WEIGHT (1 for a double, 2 otherwise) out of 36
_ROLL_BIT = np.zeros((7, 7), dtype=np.int64)
_ROLL_WEIGHT = np.zeros(21, dtype=np.int64)
_k = 0
for _a in range(1, 7):
    for _b in range(_a, 7):
        _ROLL_BIT[_a, _b] = _ROLL_BIT[_b, _a] = _k
        _ROLL_WEIGHT[_k] = 1 if _a == _b else 2
        _k += 1
# the rolls with a die showing d
_WITH_DIE = np.zeros(7, dtype=np.int64)
for _d in range(1, 7):
    for _a in range(1, 7):
        _WITH_DIE[_d] |= np.int64(1) << _ROLL_BIT[_d, _a]


@njit(cache=True)
def _hit_rolls(b, mirror, i, p, bar):
    """The rolls (bits) with which an opposing checker on point ``i`` (0: his bar, then
    ``bar`` checkers are there) reaches point ``p`` of ``b``'s player, stopping only on
    points that player does not hold."""
    d = p - i
    mask = np.int64(0)
    if d <= 6:
        mask |= _WITH_DIE[d]
    if bar <= 1:
        for a in range(max(1, d - 6), (d + 1) // 2):        # a < b = d - a: two dice, either order
            c = d - a
            if _at(b, i + a, mirror) < 2 or _at(b, i + c, mirror) < 2:
                mask |= np.int64(1) << _ROLL_BIT[a, c]
    steps = 4 if bar == 0 else 5 - bar
    for a in range(1, 7):                                    # doubles: k steps of a
        if d % a == 0 and 2 <= d // a <= steps:
            ok = True
            for j in range(1, d // a):
                if _at(b, i + j * a, mirror) >= 2:
                    ok = False
                    break
            if ok:
                mask |= np.int64(1) << _ROLL_BIT[a, a]
    return mask


@njit(cache=True)
def _shots_and_loss(b, mirror):
    """``(shots, pip loss)`` against ``b``'s player on roll (``mirror``: against his
    opponent): of the 36 rolls, how many let the other side hit one of his blots, and the
    sum over those rolls of the most pips one hit would cost him (a blot on point ``p``
    goes back ``25 - p``).  Checkers on the hitter's bar must enter first: then only the
    entering checkers hit (an approximation: the other die's moves with the rest are not
    tried)."""
    bar = -_at(b, 0, mirror)
    mask = np.int64(0)
    loss = np.zeros(21, dtype=np.int64)
    for p in range(1, 25):
        if _at(b, p, mirror) != 1:
            continue
        m = np.int64(0)
        if bar > 0:
            m = _hit_rolls(b, mirror, 0, p, bar)
        else:
            for i in range(max(1, p - 24), p):
                if _at(b, i, mirror) < 0:
                    m |= _hit_rolls(b, mirror, i, p, 0)
        mask |= m
        for k in range(21):
            if (m >> k) & 1 and 25 - p > loss[k]:
                loss[k] = 25 - p
    shots = 0
    pips = 0
    for k in range(21):
        if (mask >> k) & 1:
            shots += _ROLL_WEIGHT[k]
            pips += _ROLL_WEIGHT[k] * loss[k]
    return shots, pips


@njit(cache=True)
def _escapes(b, mirror):
    """Of the 36 rolls, how many carry the rearmost checker of ``b``'s player on roll
    (``mirror``: of his opponent) past every point the opponent holds in the 12 in front
    of it (36 when none is held there, or nothing is left behind)."""
    r = 25 if _at(b, 25, mirror) > 0 else 0
    if r == 0:
        for p in range(24, 0, -1):
            if _at(b, p, mirror) > 0:
                r = p
                break
    return _escapes_from(b, mirror, r, 1)


@njit(cache=True)
def _escapes_from(b, mirror, r, floor):
    """Of the 36 rolls, how many would carry a checker of ``b``'s player on roll
    (``mirror``: of his opponent) on point ``r`` past every point from ``floor`` up that
    the opponent holds in the 12 in front of it (36 when none is held there)."""
    lo = 0                                  # the lowest held point in front (0: none)
    for q in range(r - 1, max(floor - 1, r - 13), -1):
        if _at(b, q, mirror) <= -2:
            lo = q
    if lo == 0:
        return 36
    total = 0
    for d1 in range(1, 7):
        for d2 in range(d1, 7):
            out = False
            if d1 != d2:
                for a, c in ((d1, d2), (d2, d1)):
                    mid = r - a
                    if mid >= 1 and _at(b, mid, mirror) > -2:
                        if mid < lo:
                            out = True
                        end = mid - c
                        if end >= 1 and end < lo and _at(b, end, mirror) > -2:
                            out = True
            else:
                at = r
                for k in range(4):
                    at -= d1
                    if at < 1 or _at(b, at, mirror) <= -2:
                        break
                    if at < lo:
                        out = True
                        break
            if out:
                total += 1 if d1 == d2 else 2
    return total


@njit(cache=True)
def _containment(b, mirror):
    """The fewest escapes (:func:`_escapes_from`) a checker of ``b``'s player on roll
    (``mirror``: of his opponent) would have from his points 15 to 24, counting only the
    points the other side holds outside his home board (7 up; an anchor deep in front of
    the checker blocks nothing): how well the other side's points hold him in."""
    least = 36
    for r in range(15, 25):
        e = _escapes_from(b, mirror, r, 7)
        if e < least:
            least = e
    return least


@njit(cache=True)
def _contact_pips(b, mirror):
    """The pips ``b``'s player on roll (``mirror``: his opponent) must move to bring every
    checker past the other side's rearmost one (0 in a race): the moves left before the
    contact breaks."""
    rear = 25                               # the other side's rearmost checker, my numbering
    if _at(b, 0, mirror) < 0:
        rear = 0
    else:
        for p in range(1, 25):
            if _at(b, p, mirror) < 0:
                rear = p
                break
    total = 0
    for p in range(rear + 1, 26):
        v = _at(b, p, mirror)
        if v > 0:
            total += v * (p - rear)
    return total


@njit(cache=True)
def _closed_board(b, mirror):
    """The points the other side holds in his home board, where ``b``'s player on roll
    (``mirror``: his opponent) enters from the bar."""
    n = 0
    for p in range(19, 25):
        if _at(b, p, mirror) <= -2:
            n += 1
    return n


@njit(cache=True)
def _global_inputs(b, level, x, at):
    """Inputs 192 onwards of board ``b`` (192-197; ``level`` 1, "plus": 198-206; 2,
    "contact": 198-210; 3, "containment": 198-218) into ``x[at:]``: the bars, the
    checkers off, who is on roll and the hand-made ones."""
    mine_on = 0
    theirs_on = 0
    my_pips = 0
    his_pips = 0
    my_blots = 0
    his_blots = 0
    my_run = 0
    his_run = 0
    best_mine = 0
    best_his = 0
    my_back = 0
    his_back = 0
    my_rear = 0        # my rearmost checker's point (0: none on the board)
    his_rear = 25      # his rearmost checker, from my side (25: none)
    for p in range(1, 25):
        v = np.int64(b[p])              # int8 boards: sums must not wrap (plain Python too)
        m = v if v > 0 else 0
        # his point j is my 25 - j: his checkers on his point p are b[25 - p]
        w = -np.int64(b[25 - p]) if b[25 - p] < 0 else 0
        mine_on += m
        theirs_on += w
        my_pips += m * p
        his_pips += w * p          # w sits on his point p
        if m == 1:
            my_blots += 1
        if w == 1:
            his_blots += 1
        if m >= 2:
            my_run += 1
            if my_run > best_mine:
                best_mine = my_run
        else:
            my_run = 0
        if w >= 2:
            his_run += 1
            if his_run > best_his:
                best_his = his_run
        else:
            his_run = 0
        if m > 0:
            my_rear = p
            if p >= 19:
                my_back += m
        if v < 0 and p < his_rear:
            his_rear = p
        if w > 0 and p >= 19:
            his_back += w
    my_bar = np.int64(b[25])
    his_bar = -np.int64(b[0])
    x[at] = my_bar / 2.0
    x[at + 1] = his_bar / 2.0
    x[at + 2] = (15 - mine_on - my_bar) / 15.0
    x[at + 3] = (15 - theirs_on - his_bar) / 15.0
    x[at + 4] = 1.0
    x[at + 5] = 0.0
    if level >= 1:
        if my_bar > 0:
            my_rear = 25
        if his_bar > 0:
            his_rear = 0
        x[at + 6] = (my_pips + 25 * my_bar) / 100.0
        x[at + 7] = (his_pips + 25 * his_bar) / 100.0
        x[at + 8] = 1.0 if my_rear < his_rear else 0.0
        x[at + 9] = my_blots / 5.0
        x[at + 10] = his_blots / 5.0
        x[at + 11] = best_mine / 6.0
        x[at + 12] = best_his / 6.0
        x[at + 13] = (my_back + my_bar) / 5.0
        x[at + 14] = (his_back + his_bar) / 5.0
    if level >= 2:
        his_shots, my_loss = _shots_and_loss(b, False)      # one pass gives the shots and the pip loss
        my_shots, his_loss = _shots_and_loss(b, True)
        x[at + 15] = his_shots / 36.0
        x[at + 16] = my_shots / 36.0
        x[at + 17] = _escapes(b, False) / 36.0
        x[at + 18] = _escapes(b, True) / 36.0
    if level >= 3:
        x[at + 19] = my_loss / 900.0
        x[at + 20] = his_loss / 900.0
        x[at + 21] = _containment(b, False) / 36.0
        x[at + 22] = _containment(b, True) / 36.0
        x[at + 23] = _contact_pips(b, False) / 100.0
        x[at + 24] = _contact_pips(b, True) / 100.0
        n = _closed_board(b, False)
        x[at + 25] = n * n / 36.0
        n = _closed_board(b, True)
        x[at + 26] = n * n / 36.0


@njit(cache=True)
def _encode_one(b, level, x):
    """The inputs of board ``b`` (from its player on roll's side) into ``x`` (float32,
    :mod:`pipslab.envs.backgammon.features` defines them)."""
    for i in range(192):
        x[i] = 0.0
    for p in range(1, 25):
        v = b[p]
        w = -b[25 - p]
        _point_units(x, 4 * (p - 1), v if v > 0 else 0)
        _point_units(x, 96 + 4 * (p - 1), w if w > 0 else 0)
    _global_inputs(b, level, x, 192)


@njit(cache=True)
def _encode_rows(rows, level, out):
    for r in range(rows.shape[0]):
        _encode_one(rows[r], level, out[r])


def encode_rows(rows: np.ndarray, level: int, out: np.ndarray) -> None:
    """Fill ``out`` (k x 198, 207, 211 or 219 float32) with the inputs of ``rows`` (k x 26
    int8) at feature ``level`` (0 tesauro, 1 plus, 2 contact, 3 containment);
    :func:`pipslab.envs.backgammon.features.encode` is the front door."""
    _encode_rows(rows, int(level), out)


# ---------------------------------------------------------------------- network self-play
# The network values the opponent on roll after each play.  The afterstates of one roll
# differ from the board before it in a few points, so the first layer's sums start from
# that board's (one sparse pass a turn) and add only the inputs a play changes: the four
# units of each side on every point it changed, and the global inputs (bars, checkers off,
# the "plus" ones) that differ.
@njit(cache=True, fastmath=True)
def _dot(a, b, n):
    s = np.float32(0.0)
    for i in range(n):
        s += a[i] * b[i]
    return s


@njit(cache=True)
def _add_row(h, w1, k, v):
    for j in range(h.shape[0]):
        h[j] += v * w1[k, j]


@njit(cache=True)
def _units_change(h, w1, k, old, new):
    """Add to ``h`` the change of the four units at ``k`` from ``old`` to ``new`` checkers."""
    for u in range(4):
        dv = _unit(new, u) - _unit(old, u)
        if dv != 0.0:
            _add_row(h, w1, k + u, dv)


@njit(cache=True)
def _first_layer(q, level, x, w1, b1, h):
    """``h`` = the first layer's sums of board ``q`` (before the ReLU); ``x`` its inputs."""
    _encode_one(q, level, x)
    for j in range(h.shape[0]):
        h[j] = b1[j]
    for k in range(x.shape[0]):
        if x[k] != 0.0:
            _add_row(h, w1, k, x[k])


@njit(cache=True)
def _after_layer(row, base, level, x0, h0, w1, q, gl, h):
    """``h`` = the first layer's sums of the opponent on roll after ``row``, from those
    (``h0``, inputs ``x0``) of the opponent on roll before it (``base``, mover's side)."""
    for j in range(h.shape[0]):
        h[j] = h0[j]
    for c in range(1, 25):
        if row[c] != base[c]:
            i = 25 - c                      # the point in the opponent's numbering
            old = -base[c]
            new = -row[c]
            _units_change(h, w1, 4 * (i - 1), max(old, 0), max(new, 0))
            _units_change(h, w1, 96 + 4 * (24 - i), max(-old, 0), max(-new, 0))
    for i in range(26):
        q[i] = -row[25 - i]
    _global_inputs(q, level, gl, 0)
    for k in range(x0.shape[0] - 192):
        dv = gl[k] - x0[192 + k]
        if dv != 0.0:
            _add_row(h, w1, 192 + k, dv)


@njit(cache=True)
def _equity_out(h, width, rest, dims, g, p):
    """The cubeless equity of the sigmoid outputs ``[win, win gammon, win backgammon,
    lose gammon, lose backgammon]``, from the first layer's sums ``h`` (ReLU applied
    here) through the layers packed in ``rest`` (each out x in, then its bias); ``h``
    has room for the widest layer, ``width`` is the first's."""
    for j in range(width):
        if h[j] < 0.0:
            h[j] = np.float32(0.0)
    at = 0
    for layer in range(1, dims.shape[0]):
        nout = dims[layer]
        for o in range(nout):
            g[o] = _dot(h, rest[at + o * width:], width) + rest[at + nout * width + o]
        at += nout * width + nout
        width = nout
        if layer < dims.shape[0] - 1:
            for j in range(width):
                h[j] = g[j] if g[j] > 0.0 else np.float32(0.0)
    for o in range(5):
        p[o] = np.float32(1.0) / (np.float32(1.0) + math.exp(-g[o]))      # float32, as torch
    return 2.0 * p[0] - 1.0 + p[1] - p[3] + p[2] - p[4]


@njit(cache=True)
def _net_scratch(w1, b1, dims):
    """The work arrays of valuing afterstates with a network: two boards, the first
    layer's inputs, the global inputs, its sums before a play and after, the next layer's
    sums and the five outputs."""
    wide = max(b1.shape[0], dims.max())
    return (np.empty(26, dtype=np.int64), np.empty(26, dtype=np.int64), np.empty(w1.shape[0], dtype=np.float32),
            np.empty(27, dtype=np.float32), np.empty(b1.shape[0], dtype=np.float32),
            np.empty(wide, dtype=np.float32), np.empty(wide, dtype=np.float32), np.empty(5))


@njit(cache=True)
def _net_game(board, rolls, r, t, states, level, w1, b1, rest, dims, out, ws):
    """Play one greedy self-play game on from ``board`` (turn ``t``, next roll
    ``rolls[r]``), keeping the position faced on roll at each turn in ``states``.
    Returns ``(status, t, r, points)``: status 0 the game ended (``points`` won by the
    last mover), 1 it reached ``states``' length (dropped), 2 the rolls ran out (``board``
    holds the position to go on from)."""
    width = b1.shape[0]
    base, q, x0, gl, h0, h, g, p = _net_scratch(w1, b1, dims)
    _load(board, ws)
    while t < states.shape[0]:
        if r >= rolls.shape[0]:
            for i in range(26):
                board[i] = ws[_B + i]
            return 2, t, r, 0
        for i in range(26):
            states[t, i] = ws[_B + i]
        t += 1
        d1 = rolls[r, 0]
        d2 = rolls[r, 1]
        r += 1
        n = _generate(ws, d1, d2, 4 if d1 == d2 else 2, out)[0]
        if n == 0:
            _swap_board(ws)             # no legal play: the turn passes
            continue
        if n == 1:                      # a forced play: nothing to value
            won = _won(out[0])
            if won:
                return 0, t, r, won
            _take_swapped(ws, out, 0)
            continue
        for i in range(26):
            base[i] = ws[_B + i]
            q[i] = -ws[_B + 25 - i]
        _first_layer(q, level, x0, w1, b1, h0)
        best = 0
        best_s = -math.inf
        best_won = 0
        for k in range(n):
            won = _won(out[k])
            if won:
                sc = 10.0 + won         # a play that wins now beats every other
            else:
                _after_layer(out[k], base, level, x0, h0, w1, q, gl, h[:width])
                sc = -_equity_out(h, width, rest, dims, g, p)
            if sc > best_s:
                best = k
                best_s = sc
                best_won = won
        if best_won:
            return 0, t, r, best_won
        _take_swapped(ws, out, best)
    return 1, t, r, 0


@njit(cache=True)
def _net_games(boards, rolls, rpos, turns, states, status, points, level, w1, b1, rest, dims, out, ws):
    for g in range(boards.shape[0]):
        if status[g] != 2:
            continue
        st, t, r, pts = _net_game(boards[g], rolls[g], rpos[g], turns[g], states[g], level, w1, b1, rest, dims,
                                  out, ws)
        status[g] = st
        turns[g] = t
        rpos[g] = r
        points[g] = pts


@njit(cache=True)
def _one_ply_rows(boards, level, w1, b1, rest, dims, targets, out, ws):
    width = b1.shape[0]
    base, q, x0, gl, h0, h, g, p = _net_scratch(w1, b1, dims)
    best = np.empty(5)
    for r in range(boards.shape[0]):
        for o in range(5):
            targets[r, o] = 0.0
        for d1 in range(1, 7):
            for d2 in range(d1, 7):
                weight = (1.0 if d1 == d2 else 2.0) / 36.0
                _load(boards[r], ws)
                n = _generate(ws, d1, d2, 4 if d1 == d2 else 2, out)[0]
                for i in range(26):
                    base[i] = ws[_B + i]
                    q[i] = -ws[_B + 25 - i]
                _first_layer(q, level, x0, w1, b1, h0)
                if n == 0:                      # no play: the opponent rolls on the same board
                    for j in range(width):
                        h[j] = h0[j]
                    _equity_out(h, width, rest, dims, g, p)
                    best[0], best[1], best[2], best[3], best[4] = 1.0 - p[0], p[3], p[4], p[1], p[2]
                else:
                    best_s = -math.inf
                    for k in range(n):
                        won = _won(out[k])
                        if won:
                            sc = 10.0 + won
                        else:
                            _after_layer(out[k], base, level, x0, h0, w1, q, gl, h[:width])
                            sc = -_equity_out(h, width, rest, dims, g, p)
                        if sc > best_s:
                            best_s = sc
                            if won:
                                best[0], best[1], best[2], best[3], best[4] = 1.0, won >= 2, won >= 3, 0.0, 0.0
                            else:
                                best[0], best[1], best[2], best[3], best[4] = 1.0 - p[0], p[3], p[4], p[1], p[2]
                for o in range(5):
                    targets[r, o] += weight * best[o]


def one_ply_targets(boards, level: int, w1, b1, rest, dims) -> np.ndarray:
    """The network's 1-ply value of each board (``k x 26``, its player on roll): the
    average over the 21 rolls of the five outcome probabilities, for that player, of the
    play the network itself would make (the best afterstate equity, a play that bears off
    the last checker its exact outcome; no play: the board passed on).  ``k x 5`` float64;
    the network as :func:`net_selfplay` takes it."""
    boards = np.ascontiguousarray(np.asarray(boards).reshape(-1, 26), dtype=np.int8)
    targets = np.empty((len(boards), 5))
    _one_ply_rows(boards, int(level), w1, b1, rest, dims, targets, _OUT, _WS)
    return targets


def net_selfplay(boards, rolls, rpos, turns, states, status, points, level: int, w1, b1, rest, dims) -> None:
    """Greedy self-play games of a network, in one compiled call, in place: game ``g``
    (those with ``status[g] == 2``) goes on from ``boards[g]`` (the player on roll's side)
    at turn ``turns[g]`` with the rolls ``rolls[g, rpos[g]:]``, keeps the position faced
    on roll at each turn in ``states[g]`` and, at each turn, takes the play whose
    afterstate has the best equity for the mover (the network values the opponent on
    roll; a play that bears off the last checker scores 10 + its points; the first of
    equal scores).  Afterwards ``status[g]`` is 0 when the game ended (``points[g]``: what
    the last mover won, ``turns[g]`` positions kept), 1 when it reached ``states``'
    length, 2 when its rolls ran out (add rolls and call again).  The network:
    ``w1`` (inputs x hidden float32), ``b1``, then ``rest`` (each further layer's weights,
    out x in, then its bias) with ``dims`` the widths from the first hidden layer to the
    5 outputs; the inputs of feature ``level`` (0 tesauro, 1 plus, 2 contact, 3 containment)."""
    _net_games(boards, rolls, rpos, turns, states, status, points, int(level), w1, b1, rest, dims, _OUT, _WS)


def warm_up() -> None:
    """Compile (or load from the cache) every function once, for every board type the
    front doors pass on (int8 and int64 rows, strided views, packed positions)."""
    start = Position.start()
    row8 = np.array(start, dtype=np.int8)
    for board in (row8, row8.astype(np.int64), row8[::-1], row8.astype(np.int64)[::-1], start):
        afterstates(board, 3, 1)
        afterstates(board, 4, 4)
        if type(board) is _ARRAY:
            afterstates_won(board, 3, 1)
            replies_won(board, 3, 1)
    legal_plays(start, (3, 1))
    checker_actions(start, (3, 1))
    checker_actions(start, (4, 4, 4))
    random_game(0)
    random_games(0, 1)
    batch_afterstates(np.array([start] * 2), np.array([[3, 1], [4, 4]]))
    w = np.zeros(122)
    pubeval_rollouts(np.array([start]), np.ones((400, 2), dtype=np.int64) * [[6, 5]], w, w)
    for level, inputs in ((3, 219), (2, 211), (1, 207), (0, 198)):
        encode_rows(row8[None, :], level, np.empty((1, inputs), dtype=np.float32))
        net_selfplay(row8[None, :].copy(), np.array([[[6, 5]] * 4], dtype=np.int64), np.zeros(1, np.int64),
                     np.zeros(1, np.int64), np.empty((1, 3, 26), np.int8), np.full(1, 2, np.int64),
                     np.zeros(1), level, np.zeros((inputs, 4), np.float32), np.zeros(4, np.float32),
                     np.zeros(4 * 5 + 5, np.float32), np.array([4, 5], np.int64))
        one_ply_targets(row8[None, :], level, np.zeros((inputs, 4), np.float32), np.zeros(4, np.float32),
                        np.zeros(4 * 5 + 5, np.float32), np.array([4, 5], np.int64))
