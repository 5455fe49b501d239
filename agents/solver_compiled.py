"""Compiled (numba) negamax of the exact domino solver, for speed.

:class:`pipslab.agents.solver.Solver` calls :func:`negamax` (one position's value) and
:func:`root_values` (the value of every placement of a position) whenever it needs no
evaluator at its leaves (an evaluator needs the real state there, which only the Python
search rebuilds).  The Python search, ``Solver(compiled=False)``, is the reference: the
same rules, values, move ordering and depth limit, written plainly; a test checks that
both give the same value to every legal move of thousands of random positions.

Everything is integers: hands are 28-bit masks in ``int64``, the boneyard an ``int64``
array of tile ids in draw order.  A position is searched from the side to move's seat
with the hands rotated — ``h0`` the mover, ``h1`` the next seat, and with four seats in
pairs ``h2`` the mover's partner and ``h3`` the seat before (two seats: ``h2 = h3 = 0``) —
so the turn passes to ``(h1, h0)`` or ``(h1, h2, h3, h0)`` and the value is negated:
the next seat is always on the other side.

The transposition table is one ``int64`` array of ``(size, 3)`` rows, ``size`` a power
of two, in buckets of two rows (the first keeps the entry with more tiles in hand — the
bigger subtree —, the second takes the rest).  A row holds the full key in two words
(so a hit is never another position's) and one word packing the value, the bound, the
best move, the depth searched, the tiles in hand and a **generation**: a row of an older
generation is an empty row.  Starting a new generation empties the table at no cost —
the solver does so when the rules or the boneyard order change (``pimc``'s draw-mode
worlds change the boneyard at every sample).

The search runs on an explicit stack of frames, not by recursion (numba's on-disk cache
does not keep recursive functions safely: numba issue 6061).  It stops early —
returning 0 at once and storing nothing more, so every row it left is a finished
subtree's — when ``stats[ABORT]`` is set: by the node limit,
by a stop request (``stats[STOP]``, set from another thread: the search runs without
the GIL), or once the table is fuller than ``stats[FILL_LIMIT]`` (the solver then grows
it and searches again, finding its finished work in the table).

Compiled with ``cache=True``; the first call of a fresh install compiles for a few
seconds, later processes load the compiled code from disk.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from pipslab.envs.dominoes.tiles import N_TILES, OTHER_HALF, PIPS, SUIT

BIG = 1000
INF = 10 ** 9
EXACT, LOWER, UPPER = 0, 1, 2

# params (int64 array): the rules and the search's settings
P_PLAYERS, P_DRAW, P_LONE, P_SCALE, P_STEP, P_GEN = range(6)
N_PARAMS = 6
# stats (int64 array): counters, limits and the abort reason
S_NODES, S_FILLED, S_ABORT, S_NODE_LIMIT, S_FILL_LIMIT, S_STOP = range(6)
N_STATS = 6
ABORT_NODES, ABORT_STOP, ABORT_FULL = 1, 2, 3
NO_LIMIT = 1 << 62

MAX_PLY = 256     # deeper than any line: 28 placements, each after at most 3 passes
MAX_MOVES = 32    # more than any position has (13 playable tiles, two ends each)

SUIT_A = np.array(SUIT, dtype=np.int64)
OTHER_A = np.array(OTHER_HALF, dtype=np.int64)
PIPS_A = np.array(PIPS, dtype=np.int64)
# pips and tiles of any 14-bit half of a hand: a hand's count in two look-ups
_HALF_BITS = (np.arange(1 << 14)[:, None] >> np.arange(14)) & 1
PIPS_LO = (_HALF_BITS @ PIPS_A[:14]).astype(np.int64)
PIPS_HI = (_HALF_BITS @ PIPS_A[14:]).astype(np.int64)
NTILES = _HALF_BITS.sum(axis=1).astype(np.int64)
del _HALF_BITS
# the powers of two 2^0..2^35 leave different remainders mod 37: bit index of a lone bit
BIT_OF = np.full(37, -1, dtype=np.int64)
for _t in range(N_TILES):
    BIT_OF[(1 << _t) % 37] = _t

# the packed third word of a table row
_VAL_OFF = 1 << 15                # value + offset in bits 0..15
_FLAG_SHIFT, _MOVE_SHIFT, _DEPTH_SHIFT, _WEIGHT_SHIFT, _GEN_SHIFT = 16, 18, 25, 32, 38
MAX_GEN = (1 << 24) - 1           # a new generation past this one starts from zeroed rows
_H1 = -7046029254386353131        # 0x9E3779B97F4A7C15 as int64 (products wrap)
_H2 = -4658895280553007687        # 0xBF58476D1CE4E5B9


def new_table(size: int) -> np.ndarray:
    """An empty table of ``size`` rows (a power of two, at least 2)."""
    return np.zeros((size, 3), dtype=np.int64)


@njit(cache=True, nogil=True)
def _count(h, lone):
    """A hand's count: its pips, a lone 0-0 counting ``lone``."""
    if h == 1:
        return lone
    return PIPS_LO[h & 0x3FFF] + PIPS_HI[h >> 14]


@njit(cache=True, nogil=True)
def _ntiles(h):
    return NTILES[h & 0x3FFF] + NTILES[h >> 14]


@njit(cache=True, nogil=True)
def _bucket(a, b, size):
    x = a * _H1 + b * _H2
    x ^= x >> 29
    x = x * _H1
    x ^= x >> 32
    return x & (size - 2)


@njit(cache=True, nogil=True)
def _put(tt, i, a, b, meta, gen, st):
    """Write row ``i`` of bucket starting at ``i & ~1``; count it when it was empty."""
    if (tt[i, 2] >> _GEN_SHIFT) != gen:
        st[S_FILLED] += 1
        if st[S_FILLED] >= st[S_FILL_LIMIT] and st[S_ABORT] == 0:
            st[S_ABORT] = ABORT_FULL
    tt[i, 0] = a
    tt[i, 1] = b
    tt[i, 2] = meta


@njit(cache=True, nogil=True)
def _store(tt, i0, a, b, meta, gen, st):
    weight = (meta >> _WEIGHT_SHIFT) & 63
    g0 = tt[i0, 2] >> _GEN_SHIFT
    if g0 == gen and tt[i0, 0] == a and tt[i0, 1] == b:
        _put(tt, i0, a, b, meta, gen, st)
        return
    i1 = i0 + 1
    if (tt[i1, 2] >> _GEN_SHIFT) == gen and tt[i1, 0] == a and tt[i1, 1] == b:
        _put(tt, i1, a, b, meta, gen, st)
        return
    if g0 != gen:
        _put(tt, i0, a, b, meta, gen, st)
    elif ((tt[i0, 2] >> _WEIGHT_SHIFT) & 63) <= weight:
        _put(tt, i1, tt[i0, 0], tt[i0, 1], tt[i0, 2], gen, st)   # the old one moves down
        tt[i0, 0] = a
        tt[i0, 1] = b
        tt[i0, 2] = meta
    else:
        _put(tt, i1, a, b, meta, gen, st)


@njit(cache=True, nogil=True)
def rehash(old, new, gen):
    """Copy generation ``gen``'s rows of ``old`` into the empty, bigger table ``new``;
    return how many rows ``new`` holds."""
    st = np.zeros(N_STATS, dtype=np.int64)
    st[S_FILL_LIMIT] = NO_LIMIT
    size = new.shape[0]
    for i in range(old.shape[0]):
        if (old[i, 2] >> _GEN_SHIFT) == gen:
            a, b = old[i, 0], old[i, 1]
            _store(new, _bucket(a, b, size), a, b, old[i, 2], gen, st)
    return st[S_FILLED]


@njit(cache=True, nogil=True)
def _terminal(h0, h1, h2, h3, lone, scale):
    """Value of a blocked game for the mover's side: lower count (pair totals) wins."""
    diff = _count(h1, lone) + _count(h3, lone) - _count(h0, lone) - _count(h2, lone)
    outcome = 1 if diff > 0 else (-1 if diff < 0 else 0)
    if scale == BIG:
        return outcome * BIG + diff
    return outcome


@njit(cache=True, nogil=True)
def evaluate(h0, h1, h2, h3, lone, scale):
    """The depth limit's heuristic (``Solver._evaluate``): 20 a tile and 1 a pip the
    other side holds more than the mover's side."""
    if scale != BIG:
        return 0
    tiles = _ntiles(h1) + _ntiles(h3) - _ntiles(h0) - _ntiles(h2)
    pips = _count(h1, lone) + _count(h3, lone) - _count(h0, lone) - _count(h2, lone)
    return 20 * tiles + pips


# a search frame: one row of ``frames`` per ply
(F_H0, F_H1, F_H2, F_H3, F_LEFT, F_RIGHT, F_PASSES, F_BPOS, F_ALPHA, F_BETA, F_DEPTH, F_ALPHA0, F_BEST,
 F_BEST_CODE, F_A, F_B, F_I0, F_K, F_I, F_KIND) = range(20)
N_FIELDS = 20
KIND_MOVES, KIND_PASS = 0, 1


def new_frames():
    """Scratch rows of the search: ``(frames, moves)``."""
    return (np.zeros((MAX_PLY, N_FIELDS), dtype=np.int64), np.zeros((MAX_PLY, MAX_MOVES), dtype=np.int64))


@njit(cache=True, nogil=True)
def _better(fr, sp, value, code):
    """A searched move's ``value`` at frame ``sp``: keep the best, raise alpha, and on a
    cut-off skip the remaining moves."""
    if value > fr[sp, F_BEST]:
        fr[sp, F_BEST] = value
        fr[sp, F_BEST_CODE] = code
        if value > fr[sp, F_ALPHA]:
            fr[sp, F_ALPHA] = value
            if value >= fr[sp, F_BETA]:
                fr[sp, F_I] = fr[sp, F_K]


@njit(cache=True, nogil=True)
def _child(fr, sp, n, h0, left, right, passes, bpos, depth):
    """Fill frame ``sp + 1``: the next seat to move after the mover of ``sp``, who now
    holds ``h0``, with the window negated."""
    c = sp + 1
    if n == 2:
        fr[c, F_H0] = fr[sp, F_H1]
        fr[c, F_H1] = h0
        fr[c, F_H2] = 0
        fr[c, F_H3] = 0
    else:
        fr[c, F_H0] = fr[sp, F_H1]
        fr[c, F_H1] = fr[sp, F_H2]
        fr[c, F_H2] = fr[sp, F_H3]
        fr[c, F_H3] = h0
    fr[c, F_LEFT] = left
    fr[c, F_RIGHT] = right
    fr[c, F_PASSES] = passes
    fr[c, F_BPOS] = bpos
    fr[c, F_ALPHA] = -fr[sp, F_BETA]
    fr[c, F_BETA] = -fr[sp, F_ALPHA]
    fr[c, F_DEPTH] = depth


@njit(cache=True, nogil=True)
def negamax(h0, h1, h2, h3, left, right, passes, bpos, alpha, beta, depth, prm, bone, tt, st, frames, moves):
    """Value for the side to move (hands rotated from the mover, see the module
    docstring); ends ``left|right``; ``depth`` placements still searched (never
    decreasing in an exact search: ``prm[P_STEP]`` is 0 there).  0 once aborted.

    The recursion of the Python search, on an explicit stack of frames (numba's cache
    does not keep recursive functions safely): a frame is entered (draws, the table,
    a pass, the end, the depth limit, its moves), then resumed as each child returns."""
    n = prm[P_PLAYERS]
    lone = prm[P_LONE]
    scale = prm[P_SCALE]
    step = prm[P_STEP]
    gen = prm[P_GEN]
    draw = prm[P_DRAW] != 0
    nbone = bone.shape[0]
    size = tt.shape[0]
    fr = frames
    fr[0, F_H0] = h0
    fr[0, F_H1] = h1
    fr[0, F_H2] = h2
    fr[0, F_H3] = h3
    fr[0, F_LEFT] = left
    fr[0, F_RIGHT] = right
    fr[0, F_PASSES] = passes
    fr[0, F_BPOS] = bpos
    fr[0, F_ALPHA] = alpha
    fr[0, F_BETA] = beta
    fr[0, F_DEPTH] = depth
    sp = 0
    enter = True
    v = 0
    while True:
        if enter:
            if st[S_ABORT] != 0:
                return 0
            st[S_NODES] += 1
            if st[S_NODES] > st[S_NODE_LIMIT]:
                st[S_ABORT] = ABORT_NODES
                return 0
            if st[S_STOP] != 0:
                st[S_ABORT] = ABORT_STOP
                return 0
            h0 = fr[sp, F_H0]
            h1 = fr[sp, F_H1]
            h2 = fr[sp, F_H2]
            h3 = fr[sp, F_H3]
            left = fr[sp, F_LEFT]
            right = fr[sp, F_RIGHT]
            passes = fr[sp, F_PASSES]
            bpos = fr[sp, F_BPOS]
            alpha = fr[sp, F_ALPHA]
            beta = fr[sp, F_BETA]
            depth = fr[sp, F_DEPTH]
            ends = SUIT_A[left] | SUIT_A[right]
            # draw mode: draw until a placement exists or the boneyard is empty
            if draw:
                while (h0 & ends) == 0 and bpos < nbone:
                    h0 |= np.int64(1) << bone[bpos]
                    bpos += 1
            lo = left if left <= right else right
            hi = right if left <= right else left
            a = h0 | (h1 << 28) | (lo << 56) | (hi << 59)
            b = passes | (bpos << 2) | (h2 << 7) | (h3 << 35)
            i0 = _bucket(a, b, size)
            slot = -1
            if (tt[i0, 2] >> _GEN_SHIFT) == gen and tt[i0, 0] == a and tt[i0, 1] == b:
                slot = i0
            elif (tt[i0 + 1, 2] >> _GEN_SHIFT) == gen and tt[i0 + 1, 0] == a and tt[i0 + 1, 1] == b:
                slot = i0 + 1
            tt_move = -1
            if slot >= 0:
                meta = tt[slot, 2]
                tt_move = ((meta >> _MOVE_SHIFT) & 127) - 1
                # another depth's value is another function: it only orders the moves
                if ((meta >> _DEPTH_SHIFT) & 127) == depth:
                    value = (meta & 0xFFFF) - _VAL_OFF
                    flag = (meta >> _FLAG_SHIFT) & 3
                    if flag == EXACT:
                        v = value
                        enter = False
                        continue
                    if flag == LOWER:
                        if value >= beta:
                            v = value
                            enter = False
                            continue
                        if value > alpha:
                            alpha = value
                    elif value <= alpha:
                        v = value
                        enter = False
                        continue
                    elif value < beta:
                        beta = value
            playable = h0 & ends
            if playable == 0:
                if passes + 1 >= n:
                    v = _terminal(h0, h1, h2, h3, lone, scale)
                    enter = False
                    continue
                fr[sp, F_KIND] = KIND_PASS
                fr[sp, F_ALPHA] = alpha
                fr[sp, F_BETA] = beta
                _child(fr, sp, n, h0, left, right, passes + 1, bpos, depth)
                sp += 1
                continue
            if depth <= 0:
                v = evaluate(h0, h1, h2, h3, lone, scale)
                enter = False
                continue
            # the moves, packed as order key << 12 | code << 6 | new left << 3 | new right,
            # sorted: the table's move first, then those that leave the next seat nothing
            # to play, then heavier tiles; ties in generation order (tile, left before right)
            mv_row = moves[sp]
            k = 0
            m = playable
            sl = SUIT_A[left]
            sr = SUIT_A[right]
            while m != 0:
                low = m & -m
                t = BIT_OF[low % 37]
                m ^= low
                at_left = (sl & low) != 0
                nl = 0
                if at_left:
                    nl = OTHER_A[t, left]
                    code = t * 2
                    key = (1024 if code != tt_move else 0) \
                        + (512 if (h1 & (SUIT_A[nl] | SUIT_A[right])) != 0 else 0) + 12 - PIPS_A[t]
                    mv_row[k] = (key << 12) | (code << 6) | (nl << 3) | right
                    k += 1
                if (sr & low) != 0:
                    nr = OTHER_A[t, right]
                    # the same tile at either end: one move when the ends come out the same
                    if not (at_left and ((nl == left and right == nr) or (nl == nr and right == left))):
                        code = t * 2 + 1
                        key = (1024 if code != tt_move else 0) \
                            + (512 if (h1 & (SUIT_A[left] | SUIT_A[nr])) != 0 else 0) + 12 - PIPS_A[t]
                        mv_row[k] = (key << 12) | (code << 6) | (left << 3) | nr
                        k += 1
            for i in range(1, k):   # insertion sort: a handful of moves
                x = mv_row[i]
                j = i - 1
                while j >= 0 and mv_row[j] > x:
                    mv_row[j + 1] = mv_row[j]
                    j -= 1
                mv_row[j + 1] = x
            fr[sp, F_KIND] = KIND_MOVES
            fr[sp, F_H0] = h0
            fr[sp, F_BPOS] = bpos
            fr[sp, F_ALPHA] = alpha
            fr[sp, F_BETA] = beta
            fr[sp, F_ALPHA0] = alpha
            fr[sp, F_BEST] = -INF
            fr[sp, F_BEST_CODE] = (mv_row[0] >> 6) & 63
            fr[sp, F_A] = a
            fr[sp, F_B] = b
            fr[sp, F_I0] = i0
            fr[sp, F_K] = k
            fr[sp, F_I] = 0
        else:
            # frame sp is done with value v: hand it to its parent
            if sp == 0:
                return v
            sp -= 1
            if fr[sp, F_KIND] == KIND_PASS:
                v = -v
                continue
            _better(fr, sp, -v, (moves[sp, fr[sp, F_I] - 1] >> 6) & 63)
        # frame sp searches its next move, or is done
        pushed = False
        while fr[sp, F_I] < fr[sp, F_K]:
            mv = moves[sp, fr[sp, F_I]]
            fr[sp, F_I] += 1
            code = (mv >> 6) & 63
            rest = fr[sp, F_H0] & ~(np.int64(1) << (code >> 1))
            if rest == 0:   # went out
                value = scale
                if scale == BIG:
                    value += _count(fr[sp, F_H1], lone) + _count(fr[sp, F_H3], lone)
                _better(fr, sp, value, code)
                continue
            _child(fr, sp, n, rest, (mv >> 3) & 7, mv & 7, 0, fr[sp, F_BPOS], fr[sp, F_DEPTH] - step)
            sp += 1
            enter = True
            pushed = True
            break
        if pushed:
            continue
        best = fr[sp, F_BEST]
        if best <= fr[sp, F_ALPHA0]:
            flag = UPPER
        elif best >= fr[sp, F_BETA]:
            flag = LOWER
        else:
            flag = EXACT
        weight = _ntiles(fr[sp, F_H0]) + _ntiles(fr[sp, F_H1]) + _ntiles(fr[sp, F_H2]) + _ntiles(fr[sp, F_H3])
        meta = (best + _VAL_OFF) | (flag << _FLAG_SHIFT) | ((fr[sp, F_BEST_CODE] + 1) << _MOVE_SHIFT) \
            | (fr[sp, F_DEPTH] << _DEPTH_SHIFT) | (weight << _WEIGHT_SHIFT) | (gen << _GEN_SHIFT)
        _store(tt, fr[sp, F_I0], fr[sp, F_A], fr[sp, F_B], meta, gen, st)
        v = best
        enter = False


@njit(cache=True, nogil=True)
def root_values(h0, h1, h2, h3, left, right, bpos, depth, prm, bone, tt, st, frames, moves, codes, values):
    """The value of every legal placement of an opened position whose mover can place,
    for the mover's side: ``codes[i]`` (ascending action ids ``tile * 2 + end``, both ends
    of a tile even where they come out the same) and ``values[i]``; returns how many.
    Each child is searched with the full window and ``depth`` placements, as the solver's
    Python root searches each child state; 0 once aborted."""
    n = prm[P_PLAYERS]
    lone = prm[P_LONE]
    scale = prm[P_SCALE]
    playable = h0 & (SUIT_A[left] | SUIT_A[right])
    count = 0
    for t in range(N_TILES):
        bit = np.int64(1) << t
        if (playable & bit) == 0:
            continue
        for end in range(2):
            shown = right if end else left
            if (SUIT_A[shown] & bit) == 0:
                continue
            other = OTHER_A[t, shown]
            nl = left if end else other
            nr = other if end else right
            rest = h0 & ~bit
            if rest == 0:
                value = scale
                if scale == BIG:
                    value += _count(h1, lone) + _count(h3, lone)
            else:
                if n == 2:
                    value = -negamax(h1, rest, 0, 0, nl, nr, 0, bpos, -INF, INF, depth,
                                     prm, bone, tt, st, frames, moves)
                else:
                    value = -negamax(h1, h2, h3, rest, nl, nr, 0, bpos, -INF, INF, depth,
                                     prm, bone, tt, st, frames, moves)
                if st[S_ABORT] != 0:
                    return 0
            codes[count] = t * 2 + end
            values[count] = value
            count += 1
    return count
