"""Compiled (numba) backgammon move generation, for throughput.

Same rules and same results as :func:`pipslab.envs.backgammon.moves.play_table` (a test checks
it on thousands of positions); boards are numpy ``int8`` arrays of the 26 values of a
:class:`~envs.backgammon.board.Position`.

* :func:`afterstates` -- the distinct positions after every legal play of a roll.
* :func:`checker_actions` -- the per-checker mask of
  :func:`pipslab.envs.backgammon.moves.legal_checker_moves` (used by the game state).
* :func:`batch_afterstates` -- the same for a batch of boards and rolls in one call.
* :func:`random_game` -- a whole game of uniformly random whole plays, compiled.

Compiled with ``cache=True``; the first call of a fresh install compiles for a few
seconds (call :func:`warm_up` before timing anything).  Without numba the functions run
as plain Python, slowly but with the same results.
"""
from __future__ import annotations

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

MAX_PLAYS = 4096          # more than any position has (the record is a few hundred)
_TABLE = 8192             # open-addressing hash table of the distinct afterstates


@njit(cache=True)
def _legal(b, s, d):
    if b[25] > 0:
        return s == 25 and b[25 - d] >= -1
    if s == 25 or b[s] <= 0:
        return False
    t = s - d
    if t >= 1:
        return b[t] >= -1
    for i in range(7, 25):
        if b[i] > 0:
            return False
    if t == 0:
        return True
    for i in range(s + 1, 7):
        if b[i] > 0:
            return False
    return True


@njit(cache=True)
def _move(b, s, d):
    b[s] -= 1
    t = s - d
    if t >= 1:
        if b[t] == -1:
            b[t] = 1
            b[0] -= 1
        else:
            b[t] += 1


@njit(cache=True)
def _record(b, out, count, table, used, nused):
    """Insert board ``b`` into ``out`` unless already there; returns (count, nused)."""
    h = np.uint64(1469598103934665603)
    for i in range(26):
        h = (h ^ np.uint64(b[i] + 16)) * np.uint64(1099511628211)
    slot = np.int64(h % np.uint64(_TABLE))
    while True:
        k = table[slot]
        if k < 0:
            table[slot] = count
            used[nused] = slot
            for i in range(26):
                out[count, i] = b[i]
            return count + 1, nused + 1
        same = True
        for i in range(26):
            if out[k, i] != b[i]:
                same = False
                break
        if same:
            return count, nused
        slot = (slot + 1) % _TABLE


@njit(cache=True)
def _clear(table, used, nused):
    for i in range(nused):
        table[used[i]] = -1
    return 0


@njit(cache=True)
def _afterstates(board, d1, d2, out, table, used):
    """Fill ``out`` with the distinct afterstates of roll d1-d2; return their count."""
    lv = np.empty((5, 26), dtype=np.int8)
    for i in range(26):
        lv[0, i] = board[i]
    count = 0
    nused = 0
    if d1 != d2:
        for order in range(2):
            a = d1 if order == 0 else d2
            c = d2 if order == 0 else d1
            for s1 in range(25, 0, -1):
                if not _legal(lv[0], s1, a):
                    continue
                for i in range(26):
                    lv[1, i] = lv[0, i]
                _move(lv[1], s1, a)
                for s2 in range(25, 0, -1):
                    if not _legal(lv[1], s2, c):
                        continue
                    for i in range(26):
                        lv[2, i] = lv[1, i]
                    _move(lv[2], s2, c)
                    count, nused = _record(lv[2], out, count, table, used, nused)
        if count == 0:
            hi = d1 if d1 > d2 else d2
            lo = d2 if d1 > d2 else d1
            for k in range(2):
                d = hi if k == 0 else lo
                for s1 in range(25, 0, -1):
                    if _legal(lv[0], s1, d):
                        for i in range(26):
                            lv[1, i] = lv[0, i]
                        _move(lv[1], s1, d)
                        count, nused = _record(lv[1], out, count, table, used, nused)
                if count > 0:
                    break
        _clear(table, used, nused)
        return count
    # doubles: up to four moves, from-points non-increasing (they commute that way)
    d = d1
    best = 0
    srcs = np.empty(5, dtype=np.int64)
    srcs[0] = 25
    depth = 0
    nxt = np.empty(5, dtype=np.int64)     # next from-point to try at each depth
    nxt[0] = 25
    moved = np.zeros(5, dtype=np.bool_)   # whether any move was found at each depth
    while depth >= 0:
        found = False
        if depth < 4:
            s = nxt[depth]
            while s >= 1:
                if _legal(lv[depth], s, d):
                    found = True
                    break
                s -= 1
            if found:
                nxt[depth] = s - 1
                moved[depth] = True
                for i in range(26):
                    lv[depth + 1, i] = lv[depth, i]
                _move(lv[depth + 1], s, d)
                depth += 1
                nxt[depth] = s
                moved[depth] = False
                continue
        # no (more) move at this depth: a leaf if nothing was ever possible here
        if not moved[depth] or depth == 4:
            if depth > best:
                best = depth
                nused = _clear(table, used, nused)
                count = 0
            if depth == best and depth > 0:
                count, nused = _record(lv[depth], out, count, table, used, nused)
        depth -= 1
    _clear(table, used, nused)
    return count


@njit(cache=True)
def _any_source(b, d):
    for s in range(25, 0, -1):
        if _legal(b, s, d):
            return True
    return False


@njit(cache=True)
def _max_double(board, d, n):
    """How many (<= n) moves of the die ``d`` can be played from ``board``."""
    if n == 0:
        return 0
    lv = np.empty((5, 26), dtype=np.int8)
    for i in range(26):
        lv[0, i] = board[i]
    nxt = np.empty(5, dtype=np.int64)
    nxt[0] = 25
    depth = 0
    best = 0
    while depth >= 0:
        s = nxt[depth]
        found = False
        while s >= 1:
            if _legal(lv[depth], s, d):
                found = True
                break
            s -= 1
        if not found:
            depth -= 1
            continue
        nxt[depth] = s - 1
        for i in range(26):
            lv[depth + 1, i] = lv[depth, i]
        _move(lv[depth + 1], s, d)
        depth += 1
        if depth > best:
            best = depth
            if best == n:
                return n
        nxt[depth] = s
    return best


@njit(cache=True)
def _max_two(board, hi, lo):
    b = np.empty(26, dtype=np.int8)
    one = False
    for order in range(2):
        a = hi if order == 0 else lo
        c = lo if order == 0 else hi
        for s in range(25, 0, -1):
            if _legal(board, s, a):
                one = True
                for i in range(26):
                    b[i] = board[i]
                _move(b, s, a)
                if _any_source(b, c):
                    return 2
    return 1 if one else 0


@njit(cache=True)
def _checker_moves(board, dice, n, out):
    """Fill ``out`` with (from, die) rows; return (count, dice the play uses)."""
    if n == 0:
        return 0, 0
    double = n == 1 or dice[0] == dice[n - 1]
    if n == 1:
        need = 1 if _any_source(board, dice[0]) else 0
    elif double:
        need = _max_double(board, dice[0], n)
    else:
        need = _max_two(board, dice[0], dice[1])
    if need == 0:
        return 0, 0
    b = np.empty(26, dtype=np.int8)
    count = 0
    kinds = 1 if double else 2
    count_hi = 0
    for k in range(kinds):
        d = dice[k]
        other = dice[1 - k] if not double else d
        for s in range(25, 0, -1):
            if not _legal(board, s, d):
                continue
            if need > 1:
                for i in range(26):
                    b[i] = board[i]
                _move(b, s, d)
                if double:
                    if _max_double(b, d, n - 1) < need - 1:
                        continue
                elif not _any_source(b, other):
                    continue
            out[count] = (s - 1) * 6 + d - 1
            count += 1
        if k == 0:
            count_hi = count
    if need == 1 and not double and count_hi > 0:
        count = count_hi                  # only one die playable: the larger if possible
    out[:count].sort()
    return count, need


@njit(cache=True)
def _checker_moves_hl(board, hi, lo, n, out):
    """:func:`_checker_moves` with the dice as scalars: ``hi`` first, then ``n - 1``
    dice ``lo`` (the dice left of a roll are (hi, lo), (hi,) or a double's k x hi)."""
    dice = np.zeros(4, dtype=np.int64)
    if n > 0:
        dice[0] = hi
    for i in range(1, n):
        dice[i] = lo
    return _checker_moves(board, dice, n, out)


@njit(cache=True)
def _checker_moves_packed(packed, hi, lo, n, out):
    """:func:`_checker_moves_hl` of a board packed as 26 signed bytes (:data:`pack_board`;
    numba sees the bytes as unsigned).  Cheaper to call than with an array made from a
    tuple: packing and passing bytes costs less than ``np.asarray``."""
    board = np.empty(26, dtype=np.int8)
    for i in range(26):
        v = packed[i]
        board[i] = v - 256 if v > 127 else v
    return _checker_moves_hl(board, hi, lo, n, out)


pack_board = struct.Struct("26b").pack      # pack_board(*position) -> 26 bytes

_MOVES = np.empty(150, dtype=np.int64)


def checker_actions(position, dice):
    """``(sorted action ids, dice used by a maximal play)`` for the dice still to play
    (larger first): the ids ``(from - 1) * 6 + die - 1`` of the moves
    :func:`pipslab.envs.backgammon.moves.legal_checker_moves` gives, and
    :func:`pipslab.envs.backgammon.moves.max_dice`."""
    n = len(dice)
    if n == 0:
        return [], 0
    count, need = _checker_moves_packed(pack_board(*position), dice[0], dice[-1], n, _MOVES)
    return _MOVES[:count].tolist(), need


_OUT = np.empty((MAX_PLAYS, 26), dtype=np.int8)
_TAB = np.full(_TABLE, -1, dtype=np.int64)
_USED = np.empty(MAX_PLAYS, dtype=np.int64)


def afterstates(position, d1: int, d2: int) -> np.ndarray:
    """The distinct positions (k x 26 int8, mover's side, not swapped) after every legal
    play of the roll ``d1``-``d2``; zero rows when nothing can move.  The returned array
    is a view of a buffer reused by the next call: copy it to keep it."""
    board = np.asarray(position, dtype=np.int8)
    n = _afterstates(board, int(d1), int(d2), _OUT, _TAB, _USED)
    return _OUT[:n]


@njit(cache=True)
def _batch_afterstates(boards, dice, out, offsets, table, used):
    """:func:`_afterstates` of many boards in one call: the plays of board ``g`` with
    roll ``dice[g]`` land in ``out[offsets[g]:offsets[g + 1]]``; a board that cannot move
    gets one row, itself (the turn passes).  Returns the total row count, or -1 when
    ``out`` is too small (the caller grows it and asks again)."""
    n = 0
    one = np.empty((MAX_PLAYS, 26), dtype=np.int8)
    for g in range(boards.shape[0]):
        offsets[g] = n
        k = _afterstates(boards[g], dice[g, 0], dice[g, 1], one, table, used)
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
    a whole batch of games played in lock-step (self-play training)."""
    boards = np.ascontiguousarray(boards, dtype=np.int8)
    dice = np.ascontiguousarray(dice, dtype=np.int64)
    offsets = np.empty(len(boards) + 1, dtype=np.int64)
    size = max(64, 32 * len(boards))
    while True:
        out = np.empty((size, 26), dtype=np.int8)
        n = _batch_afterstates(boards, dice, out, offsets, _TAB, _USED)
        if n >= 0:
            return out[:n], offsets
        size *= 4


@njit(cache=True)
def _random_game(seed, out, table, used):
    np.random.seed(seed)
    b = np.zeros(26, dtype=np.int8)
    start = (0, -2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0)
    for i in range(26):
        b[i] = start[i]
    player = 0
    turns = 0
    while True:
        d1 = np.random.randint(1, 7)
        d2 = np.random.randint(1, 7)
        if turns == 0:
            while d1 == d2:
                d1 = np.random.randint(1, 7)
                d2 = np.random.randint(1, 7)
        n = _afterstates(b, d1, d2, out, table, used)
        turns += 1
        if n > 0:
            k = np.random.randint(0, n)
            for i in range(26):
                b[i] = out[k, i]
            left = 0
            for i in range(1, 26):
                if b[i] > 0:
                    left += b[i]
            if left == 0:
                return player, turns
        nb = b.copy()
        for i in range(26):
            b[i] = -nb[25 - i]
        player = 1 - player


def random_game(seed: int):
    """One compiled game of uniformly random whole plays: ``(winner seat, turns)``."""
    return _random_game(int(seed), _OUT, _TAB, _USED)


def warm_up() -> None:
    """Compile (or load from the cache) every function once."""
    afterstates(np.array([0] * 26), 3, 1)
    from .board import Position
    afterstates(Position.start(), 3, 1)
    afterstates(Position.start(), 4, 4)
    checker_actions(Position.start(), (3, 1))
    checker_actions(Position.start(), (4, 4, 4))
    random_game(0)
    batch_afterstates(np.array([Position.start()] * 2), np.array([[3, 1], [4, 4]]))
