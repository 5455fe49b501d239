"""The domino rules compiled with numba: one game state is one ``int64`` array, and a
numba function can deal, list the legal moves, apply them and play a random game to the
end without coming back to Python — what rollouts, search and the benchmarks run.

The pure-Python engine (``line``, ``triple``, ``common``) is the reference: every rule
here is a transcription of it (same legal moves in the same order, same state after each
move, same results), and ``tests/envs/test_dominoes_compiled.py`` checks them move by move
on tens of thousands of random states of every variant.  A change to one is a change to
both.

* **Rules** (:func:`params`): a variant as an ``int64`` array (``P_*`` fields).
* **State** (:func:`pack`): the fields ``S_*`` of one array of :data:`WIDTH` words — the
  hands as 28-bit masks, the boneyard in draw order, whose turn, the open ends (a line's
  left/right are ``ends[0..1]``; a spinner's side lines ``ends[2..3]``), Triple's scores,
  and per seat the tiles it placed and the numbers it is known to lack (what the
  observation encoders read from the history, kept up to date here since the array
  keeps no history).  ``clone`` is ``array.copy()``.
* **Moves**: :func:`legal` writes the legal actions (ascending, the engine's order) and
  returns their number; :func:`apply` plays one and returns 0, or -1 for an illegal
  action (the state unchanged).  The action encoding is the engine's.
* **Chance**: compiled code draws from its own generator (:func:`new_rng`: splitmix64 on
  one ``uint64``), seeded from the caller's generator, so every draw flows from the
  caller's seed; its numbers are not those of ``random``/numpy, so a compiled deal or
  playout is a different sample of the same distribution as the reference's (tested).
  :func:`deal_like_engine` is the one exception: ``engine.deal``'s very deal from the
  same numpy generator (the trainer's hands, as the Python engine would deal them).
* **Worlds** (:class:`PackedWorlds`): ``engine.packed_world_sampler(view)`` — the compiled
  twin of ``world_sampler(view)``, the same deal of the unseen tiles (the constraint
  groups worked out from the view alone) as arrays compiled search deals from.
* **Observations** (:func:`encode_into`): a seat's observation vector — the games'
  encoders (``encoding``) of ``state.observe(seat)`` — from the array (tested equal).

Compiled with ``cache=True``; :func:`warm_up` loads (or, on a fresh install, compiles)
everything, so that benchmarks never time a compilation.  A module whose compiled code
calls these functions calls :func:`drop_stale_caches` at import (numba keys a cache by the
caller's file alone).
"""
from __future__ import annotations

import os

import numpy as np
from numba import njit

from .tiles import DOUBLES_MASK, HEAVINESS, IS_DOUBLE, N_TILES, OTHER_HALF, PIPS, SUIT, TILES
from .variants import SpinnerRules


# ----------------------------------------------------------------------- rules (params)
(P_PLAYERS, P_HAND, P_DRAW, P_OPENING, P_LONE, P_PAIRS, P_REDEAL_DOUBLES, P_REDEAL_SUIT, P_SPINNER, P_TILE_SET,
 P_N_ENDS, P_SPIN_SCORE, P_TRIPLE_SCORE, P_DOUBLE_SCORE, P_MULTIPLE, P_MIN_ENDS, P_LUCK_DRAWS, P_LUCK_PENALTY,
 P_LUCKY_DRAW, P_CANCEL, P_SCORING, P_ACTIONS) = range(22)
N_PARAMS = 22
OPEN_HIGHEST, OPEN_ANY = -2, -1           # P_OPENING besides a tile id
SCORE_RESULT, SCORE_TROSHIN, SCORE_TRIPLE = 0, 1, 2

# ----------------------------------------------------------------------- state fields
S_HANDS = 0           # 4 words
S_BONE = 4            # 28 words: the boneyard in draw order
S_BLEN, S_BPOS, S_CUR, S_PASSES, S_TABLE, S_WINNER, S_BLOCKED, S_TERMINAL = range(32, 40)
S_OPENING, S_SPINNER, S_TURN_DRAWS = 40, 41, 42
S_ENDS = 43           # 4 words; a line's left and right are ends[0] and ends[1]
S_LEFT, S_RIGHT = 43, 44
S_LUCKY = 47
S_WINNINGS = 48       # 4 words
S_PENALTIES = 52      # 4 words
S_PLACED = 56         # 4 words: the tiles each seat placed (mask)
S_VOID = 60           # 4 words: numbers each seat is known to lack (``DominoView.voids``)
S_NPASS, S_NDRAW, S_PLIES = 64, 65, 66
WIDTH = 68
PLAYING = -2          # S_WINNER while the game is on (the engine's None)

MAX_ACTIONS = 128     # room for any legal-move list
ILLEGAL = -1

SUIT_A = np.array(SUIT, dtype=np.int64)
OTHER_A = np.array(OTHER_HALF, dtype=np.int64)
PIPS_A = np.array(PIPS, dtype=np.int64)
HEAVY_A = np.array(HEAVINESS, dtype=np.int64)
DOUBLE_A = np.array(IS_DOUBLE, dtype=np.int64)
LOW_A = np.array([a for a, _ in TILES], dtype=np.int64)
HIGH_A = np.array([b for _, b in TILES], dtype=np.int64)
DOUBLES = DOUBLES_MASK
FULL = (1 << N_TILES) - 1
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def params(variant) -> np.ndarray:
    """The variant's rules as the compiled code reads them (cached per variant object:
    hashing a variant costs more than the look-up)."""
    held = _PARAMS.get(id(variant))
    if held is not None and held[0] is variant:
        return held[1]
    got = _PARAMS_BY_VALUE.get(variant)
    if got is None:
        v = variant
        p = np.zeros(N_PARAMS, dtype=np.int64)
        p[P_PLAYERS], p[P_HAND], p[P_DRAW] = v.players, v.hand_size, int(v.draw)
        p[P_OPENING] = OPEN_HIGHEST if v.opening == "highest_double" else OPEN_ANY if v.opening == "any" \
            else int(v.opening)
        p[P_LONE], p[P_PAIRS] = v.lone_blank_double, int(v.pairs)
        p[P_REDEAL_DOUBLES], p[P_REDEAL_SUIT] = v.redeal_doubles, v.redeal_suit
        p[P_SPINNER], p[P_TILE_SET], p[P_N_ENDS] = int(v.layout == "spinner"), v.tile_set, v.n_ends
        sr = v.spinner or SpinnerRules()   # a line reads none of these; packed as before
        p[P_SPIN_SCORE], p[P_TRIPLE_SCORE], p[P_DOUBLE_SCORE] = sr.spinner_score, sr.triple_score, sr.double_score
        p[P_MULTIPLE], p[P_MIN_ENDS], p[P_LUCK_DRAWS] = sr.count_multiple, sr.min_scoring_ends, sr.luck_draws
        p[P_LUCK_PENALTY], p[P_LUCKY_DRAW], p[P_CANCEL] = sr.luck_penalty, sr.lucky_draw, int(sr.cancel_penalties)
        p[P_SCORING] = {"result": SCORE_RESULT, "troshin": SCORE_TROSHIN, "triple": SCORE_TRIPLE}[v.scoring]
        p[P_ACTIONS] = v.num_actions
        p.setflags(write=False)
        _PARAMS_BY_VALUE[variant] = got = p
    _PARAMS[id(variant)] = (variant, got)
    return got


_PARAMS: dict = {}            # id(variant) -> (variant, params): the variant kept, so its id is not reused
_PARAMS_BY_VALUE: dict = {}


def pack(state, history: bool = True) -> np.ndarray:
    """The array of a reference state (``line.DominoState`` or ``triple.TripleState``; not
    a match).  Its per-seat placed tiles and voids and its counts of moves, passes and
    draws are read from the public history; ``history=False`` leaves them 0 (what a
    playout needs no more of, and the history walk is most of the cost)."""
    s = np.zeros(WIDTH, dtype=np.int64)
    fill(state, s, history)
    return s


def fill(state, s: np.ndarray, history: bool = True) -> None:
    """:func:`pack` into an existing array."""
    v = state.variant
    n = v.players
    vals = [0] * WIDTH
    for p, h in enumerate(state.hands):
        vals[S_HANDS + p] = h
    bone = state.boneyard
    for i, t in enumerate(bone):
        vals[S_BONE + i] = t
    vals[S_BLEN], vals[S_BPOS], vals[S_CUR], vals[S_PASSES] = len(bone), state.bpos, state.current_player, \
        state.passes
    vals[S_TABLE] = state.table
    vals[S_WINNER] = PLAYING if state.winner is None else state.winner
    vals[S_BLOCKED], vals[S_TERMINAL] = int(bool(state.blocked)), int(bool(state.is_terminal))
    if v.layout == "spinner":
        vals[S_OPENING] = -1
        vals[S_SPINNER], vals[S_TURN_DRAWS], vals[S_LUCKY] = state.spinner, state.turn_draws, state.lucky
        for i in range(4):
            vals[S_ENDS + i] = state.ends[i]
        for p in range(n):
            vals[S_WINNINGS + p], vals[S_PENALTIES + p] = state.winnings[p], state.penalties[p]
    else:
        vals[S_OPENING], vals[S_SPINNER], vals[S_LUCKY] = state.opening, -1, -1
        vals[S_LEFT], vals[S_RIGHT], vals[S_ENDS + 2], vals[S_ENDS + 3] = state.left, state.right, -1, -1
    if not history:
        s[:] = vals
        return
    plies = npass = ndraw = 0
    node = state.history
    events = []
    while node is not None:
        events.append(node[0])
        node = node[1]
    void = [0] * 4
    placed = [0] * 4
    for kind, p, tile, end, _l, _r in reversed(events):
        plies += 1
        if kind == 0:
            placed[p] |= 1 << tile
        elif kind == 1:
            ndraw += 1
            void[p] = 0
        else:
            npass += 1
            void[p] |= end
    for p in range(4):
        vals[S_PLACED + p], vals[S_VOID + p] = placed[p], void[p]
    vals[S_NPASS], vals[S_NDRAW], vals[S_PLIES] = npass, ndraw, plies
    s[:] = vals


# ----------------------------------------------------------------------- the generator
def new_rng(seed: int) -> np.ndarray:
    """A compiled generator's state, seeded with a whole number (0 .. 2**64 - 1)."""
    return np.array([seed & ((1 << 64) - 1)], dtype=np.uint64)


def rng_from(rng) -> np.ndarray:
    """A compiled generator seeded by one draw from ``rng`` (``random.Random`` or a numpy
    ``Generator``): the caller's seed decides every compiled draw."""
    seed = rng.getrandbits(64) if hasattr(rng, "getrandbits") else int(rng.integers(1 << 62))
    return new_rng(seed)


@njit(cache=True, nogil=True)
def next_u64(r):
    """splitmix64: the next 64 random bits."""
    x = r[0] + _GOLDEN
    r[0] = x
    x = (x ^ (x >> np.uint64(30))) * _MIX1
    x = (x ^ (x >> np.uint64(27))) * _MIX2
    return x ^ (x >> np.uint64(31))


@njit(cache=True, nogil=True)
def below(r, n):
    """A uniform integer in ``0 .. n-1`` (``n`` < 2**32; bias under n / 2**32)."""
    return np.int64(((next_u64(r) >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))


@njit(cache=True, nogil=True)
def uniform(r):
    """A uniform float in [0, 1)."""
    return np.float64(next_u64(r) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


# ----------------------------------------------------------------------- small helpers
@njit(cache=True, nogil=True)
def popcount(m):
    """The number of set bits of a tile mask (tiles in a hand, unseen tiles …)."""
    c = 0
    while m:
        m &= m - 1
        c += 1
    return c


@njit(cache=True, nogil=True)
def _bits(m):
    m = m - ((m >> 1) & 0x5555555555555555)
    m = (m & 0x3333333333333333) + ((m >> 2) & 0x3333333333333333)
    m = (m + (m >> 4)) & 0x0F0F0F0F0F0F0F0F
    return (m * 0x0101010101010101) >> 56


@njit(cache=True, nogil=True)
def _low_bit(m):
    """Index of the lowest set bit of ``m`` (> 0)."""
    return _bits((m & -m) - 1)


@njit(cache=True, nogil=True)
def hand_count(prm, h):
    """Pips in a hand; a lone 0-0 counts the variant's ``lone_blank_double``."""
    if h == 1:
        return prm[P_LONE]
    c = 0
    while h:
        t = _low_bit(h)
        c += PIPS_A[t]
        h &= h - 1
    return c


@njit(cache=True, nogil=True)
def shown(s, end):
    """The number a tile must match at ``end`` (-1: nothing can go there)."""
    e = s[S_ENDS + end]
    if e >= 0 or end < 2:
        return e
    return s[S_SPINNER]


# ----------------------------------------------------------------------- line layout
@njit(cache=True, nogil=True)
def _line_placements(s, out, k):
    hand = s[S_HANDS + s[S_CUR]]
    left = s[S_LEFT]
    if left < 0:
        op = s[S_OPENING]
        if op >= 0:
            if (hand >> op) & 1:
                out[k] = op * 2
                k += 1
            return k
        while hand:
            t = _low_bit(hand)
            out[k] = t * 2
            k += 1
            hand &= hand - 1
        return k
    ml = hand & SUIT_A[left]
    mr = hand & SUIT_A[s[S_RIGHT]]
    m = ml | mr
    while m:
        low = m & -m
        t = _low_bit(m)
        m ^= low
        if ml & low:
            out[k] = t + t
            k += 1
        if mr & low:
            out[k] = t + t + 1
            k += 1
    return k


@njit(cache=True, nogil=True)
def _line_can_place(s):
    hand = s[S_HANDS + s[S_CUR]]
    left = s[S_LEFT]
    if left < 0:
        op = s[S_OPENING]
        if op >= 0:
            return (hand >> op) & 1 != 0
        return hand != 0
    return (hand & (SUIT_A[left] | SUIT_A[s[S_RIGHT]])) != 0


@njit(cache=True, nogil=True)
def _line_finish(prm, s, winner, blocked):
    s[S_TERMINAL] = 1
    s[S_BLOCKED] = blocked
    if winner < 0:
        n = prm[P_PLAYERS]
        if prm[P_PAIRS]:
            c0 = hand_count(prm, s[S_HANDS]) + hand_count(prm, s[S_HANDS + 2])
            c1 = hand_count(prm, s[S_HANDS + 1]) + hand_count(prm, s[S_HANDS + 3])
            winner = 0 if c0 < c1 else (1 if c1 < c0 else -1)
        else:
            low = 1 << 40
            holders = 0
            for p in range(n):
                c = hand_count(prm, s[S_HANDS + p])
                if c < low:
                    low = c
                    holders = 1
                    winner = p
                elif c == low:
                    holders += 1
            if holders != 1:
                winner = -1
    s[S_WINNER] = winner


@njit(cache=True, nogil=True)
def _line_apply(prm, s, a):
    n = prm[P_PLAYERS]
    player = s[S_CUR]
    hi = S_HANDS + player
    if 0 <= a < 56:
        tile = a >> 1
        end = a & 1
        hand = s[hi]
        if not (hand >> tile) & 1:
            return ILLEGAL
        left = s[S_LEFT]
        if left < 0:
            if end != 0 or (s[S_OPENING] >= 0 and tile != s[S_OPENING]):
                return ILLEGAL
            s[S_LEFT] = LOW_A[tile]
            s[S_RIGHT] = HIGH_A[tile]
            s[S_OPENING] = -1
        else:
            sh = s[S_RIGHT] if end else left
            other = OTHER_A[tile, sh]
            if other < 0:
                return ILLEGAL
            s[S_LEFT + end] = other
        bit = np.int64(1) << tile
        hand ^= bit
        s[hi] = hand
        s[S_TABLE] |= bit
        s[S_PLACED + player] |= bit
        s[S_PASSES] = 0
        s[S_PLIES] += 1
        if hand == 0:
            _line_finish(prm, s, player, 0)
            return 0
    elif a == 56:
        if not prm[P_DRAW] or s[S_BPOS] >= s[S_BLEN] or _line_can_place(s):
            return ILLEGAL
        tile = s[S_BONE + s[S_BPOS]]
        s[S_BPOS] += 1
        s[hi] |= np.int64(1) << tile
        s[S_VOID + player] = 0
        s[S_NDRAW] += 1
        s[S_PLIES] += 1
        return 0
    elif a == 57:
        if _line_can_place(s) or (prm[P_DRAW] and s[S_BPOS] < s[S_BLEN]):
            return ILLEGAL
        left = s[S_LEFT]
        if left >= 0:
            s[S_VOID + player] |= (np.int64(1) << left) | (np.int64(1) << s[S_RIGHT])
        s[S_PASSES] += 1
        s[S_NPASS] += 1
        s[S_PLIES] += 1
        if s[S_PASSES] >= n:
            _line_finish(prm, s, -1, 1)
            return 0
    else:
        return ILLEGAL
    s[S_CUR] = (player + 1) % n
    return 0


# ----------------------------------------------------------------------- spinner layout
@njit(cache=True, nogil=True)
def placement_score(prm, s, tile, end):
    """What placing ``tile`` at ``end`` scores (``triple.placement_score``)."""
    e0 = s[S_ENDS]
    if e0 < 0:
        n_open = 2
        total = LOW_A[tile] + HIGH_A[tile]
    else:
        if s[S_SPINNER] < 0 and DOUBLE_A[tile]:
            return prm[P_SPIN_SCORE]
        n_open = 0
        total = 0
        for k in range(4):
            e = s[S_ENDS + k]
            if k == end:
                e = OTHER_A[tile, shown(s, end)]
            if e >= 0:
                n_open += 1
                total += e
    if n_open < prm[P_MIN_ENDS] or total <= 0 or total % prm[P_MULTIPLE] != 0:
        return 0
    return prm[P_DOUBLE_SCORE] if DOUBLE_A[tile] else prm[P_TRIPLE_SCORE]


@njit(cache=True, nogil=True)
def _triple_placements_of(s, hand, out, k):
    if s[S_ENDS] < 0:
        while hand:
            t = _low_bit(hand)
            out[k] = t * 4
            k += 1
            hand &= hand - 1
        return k
    m0 = np.int64(0)
    m1 = np.int64(0)
    m2 = np.int64(0)
    m3 = np.int64(0)
    n = shown(s, 0)
    if n >= 0:
        m0 = hand & SUIT_A[n]
    n = shown(s, 1)
    if n >= 0:
        m1 = hand & SUIT_A[n]
    n = shown(s, 2)
    if n >= 0:
        m2 = hand & SUIT_A[n]
    n = shown(s, 3)
    if n >= 0:
        m3 = hand & SUIT_A[n]
    m = m0 | m1 | m2 | m3
    while m:
        low = m & -m
        t = _low_bit(m)
        m ^= low
        if m0 & low:
            out[k] = t * 4
            k += 1
        if m1 & low:
            out[k] = t * 4 + 1
            k += 1
        if m2 & low:
            out[k] = t * 4 + 2
            k += 1
        if m3 & low:
            out[k] = t * 4 + 3
            k += 1
    return k


@njit(cache=True, nogil=True)
def _triple_placements(prm, s, out, k):
    lucky = s[S_LUCKY]
    if lucky >= 0:
        k0 = k
        k = _triple_placements_of(s, np.int64(1) << lucky, out, k)
        j = k0
        for i in range(k0, k):
            a = out[i]
            if placement_score(prm, s, lucky, a & 3) > 0:
                out[j] = a
                j += 1
        return j
    return _triple_placements_of(s, s[S_HANDS + s[S_CUR]], out, k)


@njit(cache=True, nogil=True)
def scoring_mask(prm, s, candidates):
    """The tiles among ``candidates`` with a scoring placement (``triple.scoring_mask``)."""
    if s[S_ENDS] < 0:
        mask = np.int64(0)
        m = candidates
        while m:
            t = _low_bit(m)
            m &= m - 1
            if placement_score(prm, s, t, 0) > 0:
                mask |= np.int64(1) << t
        return mask
    mask = np.int64(0)
    spinner = s[S_SPINNER]
    if spinner < 0:
        doubles = np.int64(0)
        for end in range(4):
            n = shown(s, end)
            if n >= 0:
                doubles |= candidates & SUIT_A[n] & DOUBLES
        if prm[P_SPIN_SCORE] > 0:
            mask |= doubles
        candidates &= ~DOUBLES
    n_open = 0
    total = 0
    for end in range(4):
        e = s[S_ENDS + end]
        if e >= 0:
            n_open += 1
            total += e
    mult = prm[P_MULTIPLE]
    for end in range(4):
        n = shown(s, end)
        if n < 0:
            continue
        e = s[S_ENDS + end]
        opened = e >= 0
        if n_open + (0 if opened else 1) < prm[P_MIN_ENDS]:
            continue
        base = total - (e if opened else 0)
        m = candidates & SUIT_A[n] & ~mask
        while m:
            low = m & -m
            t = _low_bit(m)
            m ^= low
            tot = base + OTHER_A[t, n]
            if tot > 0 and tot % mult == 0:
                score = prm[P_DOUBLE_SCORE] if DOUBLE_A[t] else prm[P_TRIPLE_SCORE]
                if score > 0:
                    mask |= low
    return mask


@njit(cache=True, nogil=True)
def _open_numbers(s):
    m = np.int64(0)
    for end in range(4):
        n = shown(s, end)
        if n >= 0:
            m |= np.int64(1) << n
    return m


@njit(cache=True, nogil=True)
def _triple_legal(prm, s, out):
    k = _triple_placements(prm, s, out, 0)
    if s[S_LUCKY] >= 0:
        return k
    draw = N_TILES * 4
    if s[S_BPOS] < s[S_BLEN] and s[S_TURN_DRAWS] < prm[P_LUCK_DRAWS]:
        out[k] = draw
        k += 1
    if k == 0 or (k == 1 and out[0] == draw and s[S_TURN_DRAWS] >= 1):
        out[k] = draw + 1
        k += 1
    return k


@njit(cache=True, nogil=True)
def _triple_rank_key(s, p):
    """``(no penalties, winnings - penalties)`` as one comparable number."""
    pen = s[S_PENALTIES + p]
    return (np.int64(1) << 40 if pen == 0 else 0) + s[S_WINNINGS + p] - pen


@njit(cache=True, nogil=True)
def _triple_winners(prm, s):
    """Bit p set for each seat ranked first; 0 when every seat ties (or while playing)."""
    if not s[S_TERMINAL]:
        return 0
    n = prm[P_PLAYERS]
    best = -(np.int64(1) << 60)
    for p in range(n):
        k = _triple_rank_key(s, p)
        if k > best:
            best = k
    won = 0
    top = 0
    for p in range(n):
        if _triple_rank_key(s, p) == best:
            won |= 1 << p
            top += 1
    return 0 if top == n else won


@njit(cache=True, nogil=True)
def _triple_finish(prm, s, blocked):
    s[S_TERMINAL] = 1
    s[S_BLOCKED] = blocked
    won = _triple_winners(prm, s)
    if won != 0 and (won & (won - 1)) == 0:
        s[S_WINNER] = _low_bit(won)
    else:
        s[S_WINNER] = -1


@njit(cache=True, nogil=True)
def _credit(prm, s, player, points):
    if points <= 0:
        return
    pen = s[S_PENALTIES + player]
    if prm[P_CANCEL] and pen:
        c = points if points < pen else pen
        s[S_PENALTIES + player] = pen - c
        points -= c
    s[S_WINNINGS + player] += points


@njit(cache=True, nogil=True)
def _triple_apply(prm, s, a, scratch):
    n = prm[P_PLAYERS]
    player = s[S_CUR]
    hi = S_HANDS + player
    draw = N_TILES * 4
    if 0 <= a < draw:
        tile = a >> 2
        end = a & 3
        if s[S_LUCKY] >= 0 or s[S_ENDS] < 0:
            k = _triple_placements(prm, s, scratch, 0)
            ok = False
            for i in range(k):
                if scratch[i] == a:
                    ok = True
            if not ok:
                return ILLEGAL
        else:
            num = shown(s, end)
            if num < 0 or not (s[hi] >> tile) & 1 or OTHER_A[tile, num] < 0:
                return ILLEGAL
        if s[S_LUCKY] >= 0:
            points = prm[P_LUCKY_DRAW]
            s[S_LUCKY] = -1
        else:
            points = placement_score(prm, s, tile, end)
        # lay the tile
        lo = LOW_A[tile]
        hi_half = HIGH_A[tile]
        if s[S_ENDS] < 0:
            s[S_ENDS] = lo
            s[S_ENDS + 1] = hi_half
            if lo == hi_half:
                s[S_SPINNER] = lo
        else:
            s[S_ENDS + end] = OTHER_A[tile, shown(s, end)]
            if s[S_SPINNER] < 0 and lo == hi_half:
                s[S_SPINNER] = lo
        bit = np.int64(1) << tile
        s[hi] ^= bit
        s[S_TABLE] |= bit
        s[S_PLACED + player] |= bit
        s[S_PASSES] = 0
        s[S_TURN_DRAWS] = 0
        s[S_PLIES] += 1
        _credit(prm, s, player, points)
        if s[S_BPOS] >= s[S_BLEN]:
            empty = True
            for p in range(n):
                if s[S_HANDS + p] != 0:
                    empty = False
            if empty:
                _triple_finish(prm, s, 0)
                return 0
    elif a == draw:
        if s[S_LUCKY] >= 0 or s[S_BPOS] >= s[S_BLEN] or s[S_TURN_DRAWS] >= prm[P_LUCK_DRAWS]:
            return ILLEGAL
        scoring = scoring_mask(prm, s, FULL & ~s[S_TABLE])
        tile = s[S_BONE + s[S_BPOS]]
        s[S_BPOS] += 1
        s[hi] |= np.int64(1) << tile
        s[S_TURN_DRAWS] += 1
        if (scoring >> tile) & 1:
            s[S_LUCKY] = tile
        else:
            s[S_PENALTIES + player] += prm[P_LUCK_PENALTY]
        s[S_VOID + player] = 0
        s[S_NDRAW] += 1
        s[S_PLIES] += 1
        return 0
    elif a == draw + 1:
        if s[S_LUCKY] >= 0:
            return ILLEGAL
        if _triple_placements(prm, s, scratch, 0) > 0:
            return ILLEGAL
        if s[S_BPOS] < s[S_BLEN] and s[S_TURN_DRAWS] == 0:
            return ILLEGAL
        s[S_VOID + player] |= _open_numbers(s)
        s[S_PASSES] += 1
        s[S_TURN_DRAWS] = 0
        s[S_NPASS] += 1
        s[S_PLIES] += 1
        if s[S_PASSES] >= n and s[S_BPOS] >= s[S_BLEN]:
            _triple_finish(prm, s, 1)
            return 0
    else:
        return ILLEGAL
    s[S_CUR] = (player + 1) % n
    return 0


# ----------------------------------------------------------------------- the front door
@njit(cache=True, nogil=True)
def legal(prm, s, out):
    """Write the legal actions of ``s`` into ``out`` (ascending, as the engine lists
    them); return how many (0 once the game is over)."""
    if s[S_TERMINAL]:
        return 0
    if prm[P_SPINNER]:
        return _triple_legal(prm, s, out)
    k = _line_placements(s, out, 0)
    if k:
        return k
    if prm[P_DRAW] and s[S_BPOS] < s[S_BLEN]:
        out[0] = 56
    else:
        out[0] = 57
    return 1


@njit(cache=True, nogil=True)
def apply_with(prm, s, a, scratch):
    """:func:`apply` with a scratch array of :data:`MAX_ACTIONS` (no allocation)."""
    if s[S_TERMINAL]:
        return ILLEGAL
    if prm[P_SPINNER]:
        return _triple_apply(prm, s, a, scratch)
    return _line_apply(prm, s, a)


@njit(cache=True, nogil=True)
def apply(prm, s, a):
    """Play action ``a`` for the seat to move: 0, or -1 (and ``s`` unchanged) when ``a``
    is not legal."""
    scratch = np.empty(MAX_ACTIONS, dtype=np.int64)
    return apply_with(prm, s, a, scratch)


@njit(cache=True, nogil=True)
def winners(prm, s):
    """Bit p set for every seat that won (both partners in pairs); 0 while playing or in
    a draw."""
    if not s[S_TERMINAL]:
        return 0
    if prm[P_SPINNER]:
        return _triple_winners(prm, s)
    w = s[S_WINNER]
    if w < 0:
        return 0
    if prm[P_PAIRS]:
        return 5 if w % 2 == 0 else 10
    return 1 << w


@njit(cache=True, nogil=True)
def returns_into(prm, s, out):
    """The zero-sum returns of a finished state into ``out[:players]`` (``returns()``)."""
    n = prm[P_PLAYERS]
    won = winners(prm, s)
    k = _bits(won)
    if k == 0 or k == n:
        for p in range(n):
            out[p] = 0.0
        return
    split = prm[P_SPINNER] != 0
    gain = 1.0 / k if split else 1.0
    loss = -1.0 / (n - k) if split else -k / (n - k)
    for p in range(n):
        out[p] = gain if (won >> p) & 1 else loss


@njit(cache=True, nogil=True)
def pips_into(prm, s, out):
    """Each hand's count (``pips_left()``)."""
    for p in range(prm[P_PLAYERS]):
        out[p] = hand_count(prm, s[S_HANDS + p])


@njit(cache=True, nogil=True)
def points_into(prm, s, out):
    """``points()``: Troshin's points of each seat's side, Triple's winnings minus
    penalties, else the returns."""
    n = prm[P_PLAYERS]
    if prm[P_SCORING] == SCORE_TRIPLE:
        for p in range(n):
            out[p] = s[S_WINNINGS + p] - s[S_PENALTIES + p]
        return
    if prm[P_SCORING] != SCORE_TROSHIN:
        returns_into(prm, s, out)
        return
    totals = np.zeros(4, dtype=np.int64)
    if prm[P_PAIRS]:
        totals[0] = hand_count(prm, s[S_HANDS]) + hand_count(prm, s[S_HANDS + 2])
        totals[1] = hand_count(prm, s[S_HANDS + 1]) + hand_count(prm, s[S_HANDS + 3])
        nt = 2
    else:
        for p in range(n):
            totals[p] = hand_count(prm, s[S_HANDS + p])
        nt = n
    for p in range(n):
        out[p] = 0.0
    w = s[S_WINNER]
    if not s[S_TERMINAL] or w < 0:
        return
    win = w % 2 if prm[P_PAIRS] else w
    losers = 0
    for t in range(nt):
        if t != win:
            losers += totals[t]
    pts = losers - totals[win] if s[S_BLOCKED] else losers
    for p in range(n):
        team = p % 2 if prm[P_PAIRS] else p
        if team == win:
            out[p] = pts


# ----------------------------------------------------------------------- the deal
@njit(cache=True, nogil=True)
def _needs_redeal(prm, s):
    nd = prm[P_REDEAL_DOUBLES]
    ns = prm[P_REDEAL_SUIT]
    for p in range(prm[P_PLAYERS]):
        h = s[S_HANDS + p]
        if nd and _bits(h & DOUBLES) >= nd:
            return True
        if ns:
            for num in range(7):
                if _bits(h & SUIT_A[num]) >= ns:
                    return True
    return False


@njit(cache=True, nogil=True)
def opening_of(prm, s):
    """``(seat, tile)`` the opening rule names for the hands of ``s`` (-1, -1: any)."""
    rule = prm[P_OPENING]
    n = prm[P_PLAYERS]
    if rule == OPEN_ANY:
        return -1, -1
    if rule >= 0:
        for p in range(n):
            if (s[S_HANDS + p] >> rule) & 1:
                return p, rule
        return -1, -1
    best_seat, best_tile, best_key = -1, -1, -1
    for p in range(n):
        hand = s[S_HANDS + p]
        doubles = hand & DOUBLES
        m = doubles if doubles else hand
        while m:
            t = _low_bit(m)
            m &= m - 1
            key = (1000 if doubles else 0) + HEAVY_A[t]
            if key > best_key:
                best_seat, best_tile, best_key = p, t, key
    return best_seat, best_tile


@njit(cache=True, nogil=True)
def deal_into(prm, s, r, tiles):
    """A fresh deal into ``s`` (``engine.deal``'s rules, the compiled generator's
    shuffle; ``tiles``: scratch of 28)."""
    for i in range(WIDTH):
        s[i] = 0
    nt = 0
    ts = prm[P_TILE_SET]
    for t in range(N_TILES):
        if (ts >> t) & 1:
            tiles[nt] = t
            nt += 1
    n = prm[P_PLAYERS]
    k = prm[P_HAND]
    redeal = prm[P_REDEAL_DOUBLES] or prm[P_REDEAL_SUIT]
    while True:
        for i in range(nt - 1, 0, -1):
            j = below(r, i + 1)
            x = tiles[i]
            tiles[i] = tiles[j]
            tiles[j] = x
        for p in range(4):
            s[S_HANDS + p] = 0
        for p in range(n):
            h = np.int64(0)
            for i in range(p * k, (p + 1) * k):
                h |= np.int64(1) << tiles[i]
            s[S_HANDS + p] = h
        if not redeal or not _needs_redeal(prm, s):
            break
    nb = 0
    for i in range(n * k, nt):
        s[S_BONE + nb] = tiles[i]
        nb += 1
    s[S_BLEN] = nb
    s[S_WINNER] = PLAYING
    for i in range(4):
        s[S_ENDS + i] = -1
    s[S_SPINNER] = -1
    s[S_LUCKY] = -1
    seat, tile = opening_of(prm, s)
    if seat < 0:
        seat = below(r, n)
    s[S_CUR] = seat
    s[S_OPENING] = -1 if prm[P_SPINNER] else tile


@njit(cache=True, nogil=True)
def playout(prm, s, r, acts, scratch):
    """Uniformly random legal moves from ``s`` (changed in place) to the end."""
    while not s[S_TERMINAL]:
        k = legal(prm, s, acts)
        a = acts[below(r, k)] if k > 1 else acts[0]
        apply_with(prm, s, a, scratch)


@njit(cache=True, nogil=True)
def rollouts(prm, s, r, count, out):
    """Every seat's mean return over ``count`` random playouts from a copy of ``s``
    (``rollout:N``); a finished ``s`` gets its returns."""
    rollouts_into(prm, s, r, count, out, np.empty(WIDTH, dtype=np.int64), np.zeros(4),
                  np.empty(MAX_ACTIONS, dtype=np.int64), np.empty(MAX_ACTIONS, dtype=np.int64))


@njit(cache=True, nogil=True)
def rollouts_into(prm, s, r, count, out, w, res, acts, scratch):
    """:func:`rollouts` in the caller's work arrays (``w`` a state row, ``res`` one
    playout's returns, ``acts``/``scratch`` move lists): search calls it at every leaf."""
    n = prm[P_PLAYERS]
    for p in range(n):
        out[p] = 0.0
    for _ in range(count):
        w[:] = s
        playout(prm, w, r, acts, scratch)
        returns_into(prm, w, res)
        for p in range(n):
            out[p] += res[p]
    for p in range(n):
        out[p] /= count


@njit(cache=True, nogil=True)
def random_games(prm, games, r, tally):
    """Play ``games`` fresh deals with uniformly random moves; per game add one to
    ``tally[category]`` — the winner's seat (pairs: its pair, 0 or 1), ``players`` for a
    draw — and to ``tally[players + 1]`` when it was blocked; returns the moves played."""
    n = prm[P_PLAYERS]
    s = np.empty(WIDTH, dtype=np.int64)
    tiles = np.empty(N_TILES, dtype=np.int64)
    acts = np.empty(MAX_ACTIONS, dtype=np.int64)
    scratch = np.empty(MAX_ACTIONS, dtype=np.int64)
    moves = 0
    for _ in range(games):
        deal_into(prm, s, r, tiles)
        playout(prm, s, r, acts, scratch)
        w = s[S_WINNER]
        if w >= 0 and prm[P_PAIRS]:
            w = w % 2
        tally[n if w < 0 else w] += 1
        tally[n + 1] += s[S_BLOCKED]
        moves += s[S_PLIES]
    return moves


@njit(cache=True, nogil=True)
def deal_order(prm, s, tiles):
    """Deal the shuffled ``tiles`` (the variant's set) into the empty table ``s``: the
    hands in turn, the rest the boneyard.  True when a hand calls for a redeal."""
    for i in range(WIDTH):
        s[i] = 0
    n = prm[P_PLAYERS]
    k = prm[P_HAND]
    for p in range(n):
        h = np.int64(0)
        for i in range(p * k, (p + 1) * k):
            h |= np.int64(1) << tiles[i]
        s[S_HANDS + p] = h
    nb = 0
    for i in range(n * k, tiles.shape[0]):
        s[S_BONE + nb] = tiles[i]
        nb += 1
    s[S_BLEN] = nb
    s[S_WINNER] = PLAYING
    for i in range(4):
        s[S_ENDS + i] = -1
    s[S_SPINNER] = -1
    s[S_LUCKY] = -1
    s[S_OPENING] = -1
    seat, tile = opening_of(prm, s)
    s[S_CUR] = seat
    if not prm[P_SPINNER]:
        s[S_OPENING] = tile
    return (prm[P_REDEAL_DOUBLES] != 0 or prm[P_REDEAL_SUIT] != 0) and _needs_redeal(prm, s)


def deal_like_engine(variant, rng) -> np.ndarray:
    """``engine.deal(variant, rng)`` as an array: the same deal from the same numpy
    ``Generator`` (its shuffle of the set as an array, redealt while a hand calls for
    it; with ``opening="any"`` the first seat by ``rng.integers``) — the same draws, so
    ``rng`` goes on as after ``engine.deal``."""
    prm = params(variant)
    tiles = _SET_TILES.get(variant.tile_set)
    if tiles is None:
        tiles = _SET_TILES[variant.tile_set] = np.array([t for t in range(N_TILES) if variant.tile_set >> t & 1],
                                                        dtype=np.int64)
    tiles = tiles.copy()
    s = np.empty(WIDTH, dtype=np.int64)
    while True:
        rng.shuffle(tiles)
        if not deal_order(prm, s, tiles):
            break
    if s[S_CUR] < 0:
        s[S_CUR] = int(rng.integers(variant.players))
    return s


_SET_TILES: dict = {}


def reference_state(variant, s: np.ndarray):
    """The reference state of a fresh deal's array (``line.DominoState`` or
    ``triple.TripleState``, as ``engine.deal`` makes it)."""
    from .line import DominoState
    from .triple import TripleState
    hands = [int(h) for h in s[S_HANDS:S_HANDS + variant.players]]
    boneyard = s[S_BONE:S_BONE + s[S_BLEN]].tolist()
    if variant.layout == "spinner":
        return TripleState(variant, hands, boneyard, current_player=int(s[S_CUR]), table=0)
    return DominoState(variant, hands, boneyard, current_player=int(s[S_CUR]), opening=int(s[S_OPENING]), table=0)


def deal(variant, rng) -> np.ndarray:
    """A fresh compiled deal of ``variant`` (its generator seeded from ``rng``)."""
    s = np.zeros(WIDTH, dtype=np.int64)
    deal_into(params(variant), s, rng_from(rng), np.empty(N_TILES, dtype=np.int64))
    return s


def legal_actions(variant, s) -> list:
    """The legal actions of ``s`` as a list (for tests and tools; compiled code calls
    :func:`legal`)."""
    out = np.empty(MAX_ACTIONS, dtype=np.int64)
    return out[:legal(params(variant), s, out)].tolist()


def result(variant, s) -> dict:
    """``winner``, ``winners``, ``draw``, ``blocked``, ``pips_left``, ``points`` and
    ``returns`` of a finished array, as the engine's ``result()`` gives them."""
    prm = params(variant)
    n = variant.players
    ret, pips, pts = np.zeros(4), np.zeros(4, dtype=np.int64), np.zeros(4)
    returns_into(prm, s, ret)
    pips_into(prm, s, pips)
    points_into(prm, s, pts)
    won = winners(prm, s)
    w = int(s[S_WINNER])
    return {"winner": None if w < 0 else w, "winners": [p for p in range(n) if won >> p & 1],
            "draw": w == -1, "blocked": bool(s[S_BLOCKED]), "pips_left": pips[:n].tolist(),
            "points": pts[:n].tolist(), "returns": ret[:n].tolist()}


# ----------------------------------------------------------------------- observations
ENCODE_HAPPY, ENCODE_TROSHIN, ENCODE_TRIPLE = 0, 1, 2
ENCODERS = {"happy": (ENCODE_HAPPY, 111), "troshin": (ENCODE_TROSHIN, 191), "triple": (ENCODE_TRIPLE, 220)}


@njit(cache=True, nogil=True)
def _end_one_hot(x, at, number):
    x[at + (number if number >= 0 else 7)] = 1.0


@njit(cache=True, nogil=True)
def encode_into(kind, prm, s, me, x):
    """The observation of seat ``me`` — ``encoding.encode_view`` (``kind`` 0: Happy, 111
    floats), ``encode_troshin_view`` (1: a Troshin hand, 191) or ``encode_triple_view``
    (2: 220) of ``state.observe(me)`` — into the zeroed float32 row ``x``, from the array
    alone (its per-seat placed tiles and voids stand for the history)."""
    n = prm[P_PLAYERS]
    h = s[S_HANDS + me]
    while h:
        x[_low_bit(h)] = 1.0
        h &= h - 1
    for p in range(n):
        r = (p - me) % n
        m = s[S_PLACED + p]
        while m:
            x[28 + 28 * r + _low_bit(m)] = 1.0
            m &= m - 1
    if kind == ENCODE_HAPPY:
        ends, sizes, voids = 84, 100, 103
    elif kind == ENCODE_TROSHIN:
        ends, sizes, voids = 140, 156, 161
    else:
        ends, sizes, voids = 140, 180, 198
    for r in range(1, n):
        p = (me + r) % n
        x[sizes + r - 1] = _bits(s[S_HANDS + p]) / N_TILES
        void = s[S_VOID + p]
        for num in range(7):
            if (void >> num) & 1:
                x[voids + 7 * (r - 1) + num] = 1.0
    bone = (s[S_BLEN] - s[S_BPOS]) / N_TILES
    if kind == ENCODE_HAPPY:
        _end_one_hot(x, 84, s[S_LEFT])
        _end_one_hot(x, 92, s[S_RIGHT])
        x[101] = bone
        x[102] = s[S_PASSES] / 2.0
        x[110] = 1.0 if prm[P_DRAW] else 0.0
    elif kind == ENCODE_TROSHIN:
        _end_one_hot(x, 140, s[S_LEFT])
        _end_one_hot(x, 148, s[S_RIGHT])
        x[159] = bone
        x[160] = min(1.0, s[S_PASSES] / n)
        x[182 + n - 2] = 1.0
        x[185] = 1.0 if prm[P_PAIRS] else 0.0
    else:
        total = 0
        for k in range(4):
            e = s[S_ENDS + k]
            _end_one_hot(x, 140 + 8 * k, e)
            total += max(e, 0)
        _end_one_hot(x, 172, s[S_SPINNER])
        x[183] = bone
        x[184] = min(1.0, s[S_PASSES] / n)
        x[185] = s[S_TURN_DRAWS] / prm[P_LUCK_DRAWS]
        x[186] = 1.0 if s[S_LUCKY] >= 0 and s[S_CUR] == me else 0.0
        for r in range(n):
            p = (me + r) % n
            x[187 + r] = min(1.0, s[S_WINNINGS + p] / 300)
            x[191 + r] = min(1.0, s[S_PENALTIES + p] / 300)
        x[195 + n - 2] = 1.0
        x[219] = total / 24


@njit(cache=True, nogil=True)
def encode_rows(kind, prm, states, rows, seats, out):
    """:func:`encode_into` for many states at once: row ``i`` of ``out`` (zeroed here) is
    seat ``seats[i]``'s observation of ``states[rows[i]]``."""
    for i in range(rows.shape[0]):
        x = out[i]
        for j in range(x.shape[0]):
            x[j] = 0.0
        encode_into(kind, prm, states[rows[i]], seats[i], x)


# ----------------------------------------------------------------------- worlds
# slot rows of a packed world sampler: (seat, count, forbidden tiles)
W_SEAT, W_COUNT, W_FORBID = 0, 1, 2
# its scalars
(X_VIEWER, X_UNSEEN, X_BONEYARD, X_ATTEMPTS, X_SLOTS, X_OPENING_FIX, X_LUCKY_CODE, X_LUCKY_FIX) = range(8)
N_X = 8
MAX_SLOTS = 64


@njit(cache=True, nogil=True)
def world_scratch():
    """Scratch rows :func:`deal_world` works in."""
    return np.empty((MAX_SLOTS + 2, N_TILES + 2), dtype=np.int64)


class PackedWorlds:
    """The compiled twin of ``engine.world_sampler(view)`` (built by
    ``engine.packed_world_sampler``): the view's public state as an array
    (``template``, the other hands empty), the unseen deal's slots in the order the
    Python sampler fills them (``slots``: seat, count, forbidden tiles), and a few
    scalars (``info``: the viewer, the unseen tiles, the boneyard's size, the attempts,
    whether the opening tile or another seat's pending lucky tile must be worked out
    from the dealt hands).  :func:`deal_world` deals one world from them."""

    __slots__ = ("variant", "prm", "template", "slots", "info")

    def __init__(self, variant, template: np.ndarray, slots: np.ndarray, info: np.ndarray):
        self.variant, self.prm = variant, params(variant)
        self.template, self.slots, self.info = template, slots, info

    def __call__(self, rng) -> np.ndarray:
        """One world as a state array, dealt by the compiled generator ``rng``
        (:func:`new_rng`)."""
        w = self.template.copy()
        scratch = world_scratch()
        if not deal_world(self.prm, self.template, self.slots, self.info, rng, w, scratch):
            from pipslab.envs.errors import PositionError
            raise PositionError("no deal of the unseen tiles is consistent with this view")
        return w


def packed_worlds(view, unseen) -> PackedWorlds:
    """:class:`PackedWorlds` of ``view`` from its prepared ``common.UnseenDeal``."""
    v = view.variant
    n = v.players
    t = [0] * WIDTH
    t[S_HANDS + view.player] = view.hand
    t[S_BLEN] = view.boneyard_size
    t[S_CUR], t[S_PASSES], t[S_TABLE] = view.current_player, view.passes, view.table
    t[S_WINNER] = PLAYING
    t[S_TERMINAL] = int(view.is_terminal)
    t[S_OPENING] = t[S_LUCKY] = t[S_SPINNER] = -1
    opening_fix = lucky_fix = lucky_code = 0
    if v.layout == "spinner":
        t[S_ENDS:S_ENDS + 4] = view.ends
        t[S_SPINNER], t[S_TURN_DRAWS] = view.spinner, view.turn_draws
        t[S_WINNINGS:S_WINNINGS + n] = view.winnings
        t[S_PENALTIES:S_PENALTIES + n] = view.penalties
        if view.lucky >= 0:
            t[S_LUCKY] = view.lucky
        elif view.lucky == -2:        # triple.PENDING: another seat's lucky tile
            lucky_fix, lucky_code = 1, view.history[-1][3]
    else:
        t[S_ENDS:S_ENDS + 4] = view.left, view.right, -1, -1
        opening_fix = int(view.left < 0 and not view.is_terminal)
    npass = ndraw = 0
    for kind, p, tile, end, _l, _r in view.history:
        if kind == 0:
            t[S_PLACED + p] |= 1 << tile
        elif kind == 1:
            ndraw += 1
            t[S_VOID + p] = 0
        else:
            npass += 1
            t[S_VOID + p] |= end
    t[S_NPASS], t[S_NDRAW], t[S_PLIES] = npass, ndraw, len(view.history)
    order = unseen.order
    if len(order) > MAX_SLOTS:
        raise ValueError(f"{len(order)} constraint groups: more than the compiled sampler's {MAX_SLOTS}")
    slots = np.array(order if order else [(0, 0, 0)], dtype=np.int64).reshape(-1, 3)
    info = np.array([view.player, unseen.unseen_all, view.boneyard_size, unseen.attempts, len(order), opening_fix,
                     lucky_code, lucky_fix], dtype=np.int64)
    return PackedWorlds(v, np.array(t, dtype=np.int64), slots, info)


@njit(cache=True, nogil=True)
def _shuffle_list(r, xs, k):
    for i in range(k - 1, 0, -1):
        j = below(r, i + 1)
        x = xs[i]
        xs[i] = xs[j]
        xs[j] = x


@njit(cache=True, nogil=True)
def _match_unseen(slots, ns, unseen_all, r, w, scratch):
    """``common._match_unseen``: an exact assignment of the unseen tiles to the slots (and
    the boneyard) by augmenting paths in random order; the hands go into ``w``.  The
    recursion of the Python version on an explicit stack.  False when none exists."""
    tiles = np.empty(N_TILES, dtype=np.int64)
    nt = 0
    m = unseen_all
    while m:
        tiles[nt] = _low_bit(m)
        nt += 1
        m &= m - 1
    need = 0
    for g in range(ns):
        need += slots[g, W_COUNT]
    ng = ns + 1
    cap = np.empty(ng, dtype=np.int64)
    forbid = np.empty(ng, dtype=np.int64)
    for g in range(ns):
        cap[g] = slots[g, W_COUNT]
        forbid[g] = slots[g, W_FORBID]
    cap[ns] = nt - need
    forbid[ns] = 0
    if cap[ns] < 0:
        return False
    # eligible groups of each tile (by tile id), shuffled, in the tiles' ascending order
    elig = np.empty((N_TILES, ng), dtype=np.int64)
    nelig = np.zeros(N_TILES, dtype=np.int64)
    for i in range(nt):
        t = tiles[i]
        c = 0
        for g in range(ng):
            if not (forbid[g] >> t) & 1:
                elig[t, c] = g
                c += 1
        nelig[t] = c
        row = elig[t]
        _shuffle_list(r, row, c)
    holders = scratch[:ng, :N_TILES]
    held = np.zeros(ng, dtype=np.int64)
    _shuffle_list(r, tiles, nt)
    seen = np.zeros(ng, dtype=np.bool_)
    # frames: tile, index into its eligible groups, index into the group's holders (-1: none)
    ft = np.empty(ng + 1, dtype=np.int64)
    fe = np.empty(ng + 1, dtype=np.int64)
    fh = np.empty(ng + 1, dtype=np.int64)
    for i in range(nt):
        for g in range(ng):
            seen[g] = False
        sp = 0
        ft[0] = tiles[i]
        fe[0] = 0
        fh[0] = -1
        result = False
        while sp >= 0:
            t = ft[sp]
            if fh[sp] >= 0:                       # a child (the holder fh of group g) returned
                g = elig[t, fe[sp]]
                if result:
                    holders[g, fh[sp]] = t
                    sp -= 1
                    continue
                fh[sp] += 1
                if fh[sp] < held[g]:
                    sp += 1
                    ft[sp] = holders[g, fh[sp - 1]]
                    fe[sp] = 0
                    fh[sp] = -1
                    continue
                fh[sp] = -1
                fe[sp] += 1
            pushed = False
            while fe[sp] < nelig[t]:
                g = elig[t, fe[sp]]
                if seen[g]:
                    fe[sp] += 1
                    continue
                seen[g] = True
                if held[g] < cap[g]:
                    holders[g, held[g]] = t
                    held[g] += 1
                    result = True
                    sp -= 1
                    pushed = True
                    break
                if held[g] > 0:
                    fh[sp] = 0
                    sp += 1
                    ft[sp] = holders[g, 0]
                    fe[sp] = 0
                    fh[sp] = -1
                    pushed = True
                    break
                fe[sp] += 1
            if not pushed:
                result = False
                sp -= 1
        if not result:
            return False
    for g in range(ns):
        p = slots[g, W_SEAT]
        for j in range(held[g]):
            w[S_HANDS + p] |= np.int64(1) << holders[g, j]
    return True


@njit(cache=True, nogil=True)
def deal_world(prm, template, slots, info, r, w, scratch):
    """One world of a :class:`PackedWorlds` into ``w``: ``common.UnseenDeal``'s deal (a
    few greedy tries filling the most constrained slots first, then the exact
    assignment), the rest shuffled into the boneyard, then ``from_view``'s fix-ups (the
    opening tile of an empty table; another seat's pending lucky tile).  False when no
    consistent deal exists."""
    w[:] = template
    n = prm[P_PLAYERS]
    me = info[X_VIEWER]
    unseen_all = info[X_UNSEEN]
    ns = info[X_SLOTS]
    pool = scratch[MAX_SLOTS + 1]
    ok = False
    for _ in range(info[X_ATTEMPTS]):
        unseen = unseen_all
        for p in range(n):
            if p != me:
                w[S_HANDS + p] = 0
        good = True
        for i in range(ns):
            p = slots[i, W_SEAT]
            c = slots[i, W_COUNT]
            m = unseen & ~slots[i, W_FORBID]
            k = 0
            while m:
                pool[k] = _low_bit(m)
                k += 1
                m &= m - 1
            if k < c:
                good = False
                break
            _shuffle_list(r, pool, k)
            for j in range(c):
                b = np.int64(1) << pool[j]
                w[S_HANDS + p] |= b
                unseen ^= b
        if good:
            ok = True
            break
    if not ok:
        for p in range(n):
            if p != me:
                w[S_HANDS + p] = 0
        if not _match_unseen(slots, ns, unseen_all, r, w, scratch):
            return False
    rest = unseen_all
    for p in range(n):
        if p != me:
            rest &= ~w[S_HANDS + p]
    k = 0
    while rest:
        pool[k] = _low_bit(rest)
        k += 1
        rest &= rest - 1
    if k != info[X_BONEYARD]:
        return False
    _shuffle_list(r, pool, k)
    for i in range(k):
        w[S_BONE + i] = pool[i]
    w[S_BLEN] = k
    w[S_BPOS] = 0
    if info[X_OPENING_FIX]:
        w[S_OPENING] = opening_of(prm, w)[1]
    if info[X_LUCKY_FIX]:
        h = w[S_HANDS + w[S_CUR]]
        allowed = ~info[X_LUCKY_CODE] & h
        w[S_LUCKY] = _low_bit(allowed) if allowed else _low_bit(h)
    return True


# ----------------------------------------------------------------------- warm-up
def warm_up() -> None:
    """Load (or compile, once per install) every compiled function, with the argument
    types the engine's callers give them."""
    import random

    from .line import DominoState
    from .triple import TripleState
    from .variants import HAPPY_DRAW, TRIPLE_4
    r = new_rng(1)
    for v in (HAPPY_DRAW, TRIPLE_4):
        prm = params(v)
        random_games(prm, 2, r, np.zeros(8, dtype=np.int64))
        s = np.zeros(WIDTH, dtype=np.int64)
        deal_into(prm, s, r, np.empty(N_TILES, dtype=np.int64))
        deal_like_engine(v, np.random.default_rng(0))
        out = np.empty(MAX_ACTIONS, dtype=np.int64)
        k = legal(prm, s, out)
        apply(prm, s, out[0] if k else 0)
        rollouts(prm, s, r, 1, np.zeros(4))
        returns_into(prm, s, np.zeros(4))
        pips_into(prm, s, np.zeros(4, dtype=np.int64))
        points_into(prm, s, np.zeros(4))
        states = s[None].copy()
        idx = np.zeros(1, dtype=np.int64)
        encode_rows(ENCODE_TRIPLE, prm, states, idx, states[idx, S_CUR], np.zeros((1, 220), dtype=np.float32))
        slots = np.zeros((1, 3), dtype=np.int64)
        info = np.zeros(N_X, dtype=np.int64)
        deal_world(prm, s, slots, info, r, s.copy(), world_scratch())
        fill((TripleState if v.layout == "spinner" else DominoState).deal(v, random.Random(0)), s)


# ----------------------------------------------------------------------- caches
def drop_stale_caches(module_file: str, *dependencies: str) -> None:
    """Forget a module's on-disk numba cache when a module its compiled functions call
    has changed since: numba keys a function's cache by its own file alone (numba issue
    6845), so a caller of this module's functions would go on running the old machine
    code.  Each compiled module that calls another's functions calls this at import, with
    the files it calls into (this one by default); the stamp of those files is kept beside
    its cache in ``__pycache__``.  (A cache elsewhere — ``NUMBA_CACHE_DIR`` — is left alone.)"""
    from pathlib import Path
    deps = dependencies or (__file__,)
    stamp_key = ";".join(f"{Path(d).name}:{os.stat(d).st_mtime_ns}:{os.stat(d).st_size}" for d in deps)
    pycache = Path(module_file).parent / "__pycache__"
    stem = Path(module_file).stem
    stamp = pycache / f"{stem}.numba-deps"
    try:
        if stamp.read_text() == stamp_key:
            return
    except OSError:
        pass
    try:
        for cached in list(pycache.glob(f"{stem}.*.nbi")) + list(pycache.glob(f"{stem}.*.nbc")):
            cached.unlink()
        pycache.mkdir(exist_ok=True)
        stamp.write_text(stamp_key)
    except OSError:
        pass
