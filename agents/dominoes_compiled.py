"""Compiled (numba) twins of the heuristic domino agents, and the game loop that plays
them — what the domino trainer's self-play runs between two forward passes.

:func:`choose` is the move of ``heaviest``, ``suits``, ``partner`` or ``greedy``
(:mod:`pipslab.agents.dominoes`, the reference: the same scores, the same ties to the
lowest action id, the same draw-or-pass rule) on a state array of
:mod:`pipslab.envs.dominoes.compiled`, from what the seat's view holds: its hand, the
table, the open ends and the public voids (kept in the array).  A test checks every
move against the Python agents on thousands of random states.

:func:`advance` plays many games on, each until a seat must be asked — the learner, a
``random`` seat (its draw is the hand's numpy generator's, made in Python) or a net —
playing forced moves and the heuristic seats' moves itself, and logs every move played.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from pipslab.envs.dominoes.compiled import (
    FULL, HEAVY_A, HIGH_A, LOW_A, MAX_ACTIONS, OTHER_A, P_LUCK_PENALTY, P_LUCKY_DRAW, P_N_ENDS, P_PAIRS, P_PLAYERS,
    P_SPINNER, S_CUR, S_HANDS, S_LEFT, S_RIGHT, S_TABLE, S_TERMINAL, S_VOID, SUIT_A, apply_with, drop_stale_caches,
    legal, placement_score, popcount, scoring_mask, shown,
)

drop_stale_caches(__file__)    # a change to the compiled rules recompiles this module

# the seats' players (``kinds``): asked in Python, or played here
LEARNER, RANDOM, NET, HEAVIEST, SUITS, PARTNER, GREEDY = range(7)
DONE = -1
KINDS = {"random": RANDOM, "heaviest": HEAVIEST, "suits": SUITS, "partner": PARTNER, "greedy": GREEDY}


@njit(cache=True, nogil=True)
def _showing(s, tile, end):
    """The numbers a placement leaves showing where it lies, as a bit mask (both halves
    on an empty table: ``dominoes.left_showing``)."""
    if s[S_LEFT] < 0:
        return (np.int64(1) << LOW_A[tile]) | (np.int64(1) << HIGH_A[tile])
    return np.int64(1) << OTHER_A[tile, shown(s, end)]


@njit(cache=True, nogil=True)
def _follow(hand, tile, numbers):
    others = hand & ~(np.int64(1) << tile)
    f = 0
    for num in range(7):
        if (numbers >> num) & 1:
            f += popcount(others & SUIT_A[num])
    return f


@njit(cache=True, nogil=True)
def _score(kind, prm, s, tile, end):
    """The agent's key of a placement, as one number ordered as its Python tuple."""
    me = s[S_CUR]
    hand = s[S_HANDS + me]
    if kind == HEAVIEST:
        return HEAVY_A[tile]
    numbers = _showing(s, tile, end)
    follow = _follow(hand, tile, numbers)
    if kind == SUITS:
        return follow * 1000 + HEAVY_A[tile]
    # PARTNER
    n = prm[P_PLAYERS]
    after = numbers
    if s[S_LEFT] >= 0 and prm[P_N_ENDS] == 2:
        after |= np.int64(1) << (s[S_LEFT] if end else s[S_RIGHT])
    block_next = (s[S_VOID + (me + 1) % n] & after) == after
    hurt = False
    if prm[P_PAIRS]:
        hurt = (s[S_VOID + (me + 2) % n] & after) == after
    return (1 << 30) * block_next + (1 << 29) * (not hurt) + follow * 1000 + HEAVY_A[tile]


@njit(cache=True, nogil=True)
def choose(kind, prm, s, acts, k):
    """The move of the heuristic ``kind`` among the legal ``acts[:k]`` of ``s``."""
    if k == 1:
        return acts[0]
    ne = prm[P_N_ENDS]
    draw = 28 * ne
    if kind == GREEDY:
        return _greedy(prm, s, acts, k)
    best = acts[0]
    for i in range(k):
        if acts[i] == draw + 1:
            best = draw + 1       # with no placement, stop rather than draw for luck
    best_key = -1
    for i in range(k):
        a = acts[i]
        if a >= draw:
            continue
        key = _score(kind, prm, s, a // ne, a % ne)
        if key > best_key:
            best = a
            best_key = key
    return best


@njit(cache=True, nogil=True)
def _greedy(prm, s, acts, k):
    ne = prm[P_N_ENDS]
    draw = 28 * ne
    spinner = prm[P_SPINNER] != 0
    best_action = -1
    best_key = -1
    best_points = 0
    can_draw = False
    can_pass = False
    for i in range(k):
        a = acts[i]
        if a == draw:
            can_draw = True
        if a == draw + 1:
            can_pass = True
        if a >= draw:
            continue
        tile = a // ne
        points = placement_score(prm, s, tile, a % ne) if spinner else 0
        key = points * 1000 + HEAVY_A[tile]
        if key > best_key:
            best_action = a
            best_key = key
            best_points = points
    if can_draw and spinner:
        unseen = FULL & ~s[S_HANDS + s[S_CUR]] & ~s[S_TABLE]
        n_unseen = popcount(unseen)
        if n_unseen:
            p = popcount(scoring_mask(prm, s, unseen)) / n_unseen
            risk = prm[P_LUCK_PENALTY]
            if p * (prm[P_LUCKY_DRAW] - best_points) > (1 - p) * risk:
                return draw
    if best_action >= 0:
        return best_action
    return draw + 1 if can_pass else acts[0]


@njit(cache=True, nogil=True)
def advance(prm, states, hands, kinds, moves, nmoves, legal_out, nlegal, status):
    """Play each game ``states[h]`` of ``hands`` on until a seat of kind LEARNER, RANDOM
    or NET (``kinds[h, seat]``) must choose among two or more moves — ``status[h]`` is
    then that kind, its moves in ``legal_out[h, :nlegal[h]]`` — or the game is over
    (``status[h]`` DONE).  Forced moves and the heuristic seats' moves are played here
    and appended to ``moves[h]`` (``nmoves[h]`` of them)."""
    scratch = np.empty(MAX_ACTIONS, dtype=np.int64)
    for i in range(hands.shape[0]):
        h = hands[i]
        s = states[h]
        acts = legal_out[h]
        while True:
            if s[S_TERMINAL]:
                status[h] = DONE
                break
            k = legal(prm, s, acts)
            nlegal[h] = k
            kind = kinds[h, s[S_CUR]]
            if k == 1:
                a = acts[0]
            elif kind <= NET:
                status[h] = kind
                break
            else:
                a = choose(kind, prm, s, acts, k)
            apply_with(prm, s, a, scratch)
            moves[h, nmoves[h]] = a
            nmoves[h] += 1


@njit(cache=True, nogil=True)
def play(prm, states, h, a, moves, nmoves):
    """Play ``a`` in game ``h`` (asked in Python) and log it; -1 if it is illegal."""
    scratch = np.empty(MAX_ACTIONS, dtype=np.int64)
    if apply_with(prm, states[h], a, scratch) != 0:
        return -1
    moves[h, nmoves[h]] = a
    nmoves[h] += 1
    return 0


@njit(cache=True, nogil=True)
def play_many(prm, states, hands, actions, moves, nmoves):
    """:func:`play` of ``actions[i]`` in game ``hands[i]`` for every ``i``; the number of
    illegal ones (not played)."""
    scratch = np.empty(MAX_ACTIONS, dtype=np.int64)
    bad = 0
    for i in range(hands.shape[0]):
        h = hands[i]
        if apply_with(prm, states[h], actions[i], scratch) != 0:
            bad += 1
            continue
        moves[h, nmoves[h]] = actions[i]
        nmoves[h] += 1
    return bad


@njit(cache=True, nogil=True)
def legal_masks(hands, legal_out, nlegal, masks):
    """Row ``i`` of ``masks`` (zeroed here): 1 on each legal move of game ``hands[i]``."""
    for i in range(hands.shape[0]):
        h = hands[i]
        row = masks[i]
        for j in range(row.shape[0]):
            row[j] = 0
        for j in range(nlegal[h]):
            row[legal_out[h, j]] = 1


def warm_up() -> None:
    """Load (or compile, once per install) the compiled agents and loop."""
    import random

    from pipslab.envs.dominoes.compiled import pack, params
    from pipslab.envs.dominoes.engine import deal
    from pipslab.envs.dominoes.variants import HAPPY_BLOCK
    prm = params(HAPPY_BLOCK)
    states = pack(deal(HAPPY_BLOCK, random.Random(0)))[None].copy()
    kinds = np.full((1, 4), HEAVIEST, dtype=np.int64)
    moves = np.zeros((1, 512), dtype=np.int64)
    nmoves = np.zeros(1, dtype=np.int64)
    legal_out = np.zeros((1, MAX_ACTIONS), dtype=np.int64)
    nlegal, status = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    advance(prm, states, np.zeros(1, dtype=np.int64), kinds, moves, nmoves, legal_out, nlegal, status)
    play(prm, states, 0, 57, moves, nmoves)
    play_many(prm, states, np.zeros(1, dtype=np.int64), np.full(1, 57, dtype=np.int64), moves, nmoves)
    legal_masks(np.zeros(1, dtype=np.int64), legal_out, nlegal, np.zeros((1, 58), dtype=np.int8))
    for kind in (SUITS, PARTNER, GREEDY):
        choose(kind, prm, states[0], legal_out[0], 2)


MAX_MOVES = 512     # more moves than any game has (``moves`` rows)
