"""PIMC's sum over sampled worlds in one compiled call: deal a world, solve every move of
it exactly, add up — for each of ``samples`` worlds — without coming back to Python.

:class:`CompiledPIMC` is what ``pimc`` computes (:class:`pipslab.agents.search_dominoes.PIMCAgent`
with the solver's own heuristic at the depth limit): the exact solver's value of every
legal move summed over worlds of the seat's view.  The worlds come from the view's
:class:`~pipslab.envs.dominoes.compiled.PackedWorlds` (``engine.packed_world_sampler``:
``sample_world``'s constraints, worked out from the view alone) and the compiled
generator; each is solved by :func:`pipslab.agents.solver_compiled.root_values`, the
compiled solver ``Solver.move_values`` calls, with the same settings (exact in block
mode; ``depth`` placements in draw mode, where each world's boneyard order starts a new
table generation, as ``Solver`` does).  The table is kept across calls and grown 4x when
3/4 full, as ``Solver``'s; a search stopped by a full table is resumed on the same world
after the growth.  The domino trainer's ``--guide pimc`` labels with it.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from pipslab.envs.dominoes import compiled as rules
from pipslab.envs.dominoes.common import OUTRANKING
from pipslab.envs.dominoes.compiled import (
    MAX_ACTIONS, MAX_SLOTS, N_X, PLAYING, S_BLEN, S_BONE, S_CUR, S_ENDS, S_HANDS, S_LEFT, S_LUCKY, S_NDRAW,
    S_NPASS, S_OPENING, S_PASSES, S_PLACED, S_PLIES, S_RIGHT, S_SPINNER, S_TABLE, S_TERMINAL, S_VOID, S_WINNER,
    SUIT_A, WIDTH, X_ATTEMPTS, X_BONEYARD, X_SLOTS, X_UNSEEN, X_VIEWER, deal_world, drop_stale_caches, legal,
    popcount, world_scratch,
)

from . import solver_compiled as sc
from .solver import EXACT_DEPTH, check_solvable

# a change to the compiled rules or solver recompiles this module
drop_stale_caches(__file__, rules.__file__, sc.__file__)

_FIRST_TABLE = 1 << 14
OUTRANKING_A = np.array(OUTRANKING, dtype=np.int64)
ATTEMPTS = 20       # engine.packed_world_sampler's


class CompiledPIMC:
    """Sums of exact move values over sampled worlds for one variant (module docstring).
    ``depth``: None for exact solves, else placements searched (draw mode's 8); the table
    starts with ``first_table`` rows and grows up to ``max_table``."""

    def __init__(self, variant, depth=None, max_table: int = 4_000_000, first_table: int = _FIRST_TABLE):
        check_solvable(variant)
        self.variant = variant
        self.depth = EXACT_DEPTH if depth is None else int(depth)
        self.cap = max(2, 1 << (max_table.bit_length() - 1))
        self.tt = sc.new_table(min(self.cap, max(2, first_table)))
        self.prm = np.zeros(sc.N_PARAMS, dtype=np.int64)
        self.prm[sc.P_PLAYERS], self.prm[sc.P_DRAW] = variant.players, int(variant.draw)
        self.prm[sc.P_LONE], self.prm[sc.P_SCALE] = variant.lone_blank_double, sc.BIG
        self.prm[sc.P_STEP] = 0 if depth is None else 1
        self.prm[sc.P_GEN] = 1
        self.st = np.zeros(sc.N_STATS, dtype=np.int64)
        self.frames, self.moves = sc.new_frames()
        self.codes = np.empty(sc.MAX_MOVES, dtype=np.int64)
        self.values = np.empty(sc.MAX_MOVES, dtype=np.int64)
        self.world = np.empty(0, dtype=np.int64)
        self.scratch = world_scratch()

    def totals(self, worlds, r, samples: int) -> np.ndarray:
        """Per action id, the solver's values summed over ``samples`` worlds of
        ``worlds`` (a :class:`~pipslab.envs.dominoes.compiled.PackedWorlds`) dealt by the
        compiled generator ``r``; 0 for actions that are not legal."""
        return self._sum(worlds, r, samples, np.zeros((0, 0), dtype=np.int64), np.zeros((0, 4), dtype=np.int64))

    def world_values(self, worlds, r, samples: int):
        """``(values, hands)`` of the very worlds :meth:`totals` sums for the same
        generator: ``values[i, action]`` world ``i``'s solver value of each legal move (0
        for the others), ``hands[i, seat]`` its hands — what an inference needs to weigh
        each world before the sum (``pimc:infer``'s teacher)."""
        values = np.zeros((samples, self.variant.num_actions), dtype=np.int64)
        hands = np.zeros((samples, 4), dtype=np.int64)
        self._sum(worlds, r, samples, values, hands)
        return values, hands[:, :self.variant.players]

    def _sum(self, worlds, r, samples, per_world, hands) -> np.ndarray:
        if worlds.variant is not self.variant and worlds.variant != self.variant:
            raise ValueError(f"a {worlds.variant.name} view for a {self.variant.name} search")
        totals = np.zeros(self.variant.num_actions, dtype=np.int64)
        world = worlds.template.copy()
        done, resume = 0, False
        st = self.st
        while done < samples:
            st[sc.S_NODES] = 0
            st[sc.S_ABORT] = 0
            st[sc.S_NODE_LIMIT] = sc.NO_LIMIT
            st[sc.S_FILL_LIMIT] = self.tt.shape[0] * 3 // 4 if self.tt.shape[0] < self.cap else sc.NO_LIMIT
            done = sum_worlds(worlds.prm, worlds.template, worlds.slots, worlds.info, r, done, samples, resume, world,
                              self.scratch, self.depth, self.prm, self.tt, st, self.frames, self.moves, self.codes,
                              self.values, totals, per_world, hands)
            if done < 0:
                from pipslab.envs.errors import PositionError
                raise PositionError("no deal of the unseen tiles is consistent with this view")
            if done < samples:      # the table is full: grow it, then the same world again
                new = sc.new_table(min(self.cap, self.tt.shape[0] * 4))
                st[sc.S_FILLED] = sc.rehash(self.tt, new, self.prm[sc.P_GEN])
                self.tt = new
                resume = True
        return totals

    def label_rows(self, S, rows, openings, seeds, samples: int) -> np.ndarray:
        """The ``pimc`` labels of many decisions at once, read from compiled state rows
        (``S[rows]``, each the seat to move's decision in an opened block-mode line
        hand; :func:`block_view_worlds`): per decision, a 0/1 row over the actions, 1 on
        the legal moves whose values summed over ``samples`` worlds are the highest.
        Decision ``i``'s worlds are ``packed_world_sampler(view)``'s dealt by
        ``new_rng(seeds[i])`` — the very worlds :meth:`totals` sums for that view and
        seed, so the labels do not depend on the other decisions of the call.
        ``openings[i]``: the tile that opened the hand (the deal's ``S_OPENING``).
        ``samples`` 0: the oracle's labels — the legal moves of the true position the
        exact solver values highest (no seeds, no openings needed)."""
        v = self.variant
        if v.draw or v.layout != "line" or v.opening != "highest_double":
            raise ValueError(f"{v.name}: label_rows takes block-mode line hands opened by the highest double")
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        n = len(rows)
        out = np.zeros((n, v.num_actions), dtype=np.int8)
        if n == 0:
            return out
        rs = np.zeros((n, 1), dtype=np.uint64) if seeds is None else np.asarray(seeds, dtype=np.uint64).reshape(n, 1).copy()
        openings = np.zeros(n, dtype=np.int64) if openings is None else np.ascontiguousarray(openings, dtype=np.int64)
        gprm = rules.params(v)
        done, st = 0, self.st
        while done < n:
            st[sc.S_NODES] = 0
            st[sc.S_ABORT] = 0
            st[sc.S_NODE_LIMIT] = sc.NO_LIMIT
            st[sc.S_FILL_LIMIT] = self.tt.shape[0] * 3 // 4 if self.tt.shape[0] < self.cap else sc.NO_LIMIT
            done = label_block_rows(gprm, S, rows, openings, v.tile_set, rs, done, samples, self.scratch, self.depth,
                                    self.prm, self.tt, st, self.frames, self.moves, self.codes, self.values, out)
            if done < 0:
                from pipslab.envs.errors import PositionError
                raise PositionError("no deal of the unseen tiles is consistent with this view")
            if done < n:        # the table is full: grow it, then that decision again from its seed
                new = sc.new_table(min(self.cap, self.tt.shape[0] * 4))
                st[sc.S_FILLED] = sc.rehash(self.tt, new, self.prm[sc.P_GEN])
                self.tt = new
        return out


@njit(cache=True, nogil=True)
def block_view_worlds(gprm, s, me, opening, tile_set, template, slots, keys, info):
    """``engine.packed_world_sampler(view)`` of seat ``me``'s view of the block-mode line
    hand ``s`` (opened, by ``opening``, from a deal under the highest-double rule),
    worked out from the state row alone: the view's public part into ``template``, the
    unseen deal's slots — each other seat's hand, forbidden the tiles outranking the
    opening one and every number it passed on, most constrained first as
    ``common.UnseenDeal`` orders them — into ``slots``, and ``info``; returns how many
    slots.  (What ``line.constraint_groups`` proves in block mode, where no one draws.)"""
    n = gprm[rules.P_PLAYERS]
    template[:] = 0
    hand = s[S_HANDS + me]
    template[S_HANDS + me] = hand
    template[S_BLEN] = s[S_BLEN] - s[rules.S_BPOS]
    template[S_CUR] = s[S_CUR]
    template[S_PASSES] = s[S_PASSES]
    template[S_TABLE] = s[S_TABLE]
    template[S_WINNER] = PLAYING
    template[S_TERMINAL] = s[S_TERMINAL]
    template[S_OPENING] = -1
    template[S_LUCKY] = -1
    template[S_SPINNER] = -1
    template[S_ENDS] = s[S_LEFT]
    template[S_ENDS + 1] = s[S_RIGHT]
    template[S_ENDS + 2] = -1
    template[S_ENDS + 3] = -1
    for p in range(n):
        template[S_PLACED + p] = s[S_PLACED + p]
        template[S_VOID + p] = s[S_VOID + p]
    template[S_NPASS] = s[S_NPASS]
    template[S_NDRAW] = s[S_NDRAW]
    template[S_PLIES] = s[S_PLIES]
    unseen = tile_set & ~hand & ~s[S_TABLE]
    ns = 0
    for p in range(n):
        if p == me:
            continue
        c = popcount(s[S_HANDS + p])
        if c == 0:
            continue
        forbid = OUTRANKING_A[opening]
        void = s[S_VOID + p]
        for num in range(7):
            if (void >> num) & 1:
                forbid |= SUIT_A[num]
        key = popcount(unseen & ~forbid) - c
        j = ns      # a stable insertion by key (Python's sorted)
        while j > 0 and keys[j - 1] > key:
            slots[j, 0] = slots[j - 1, 0]
            slots[j, 1] = slots[j - 1, 1]
            slots[j, 2] = slots[j - 1, 2]
            keys[j] = keys[j - 1]
            j -= 1
        slots[j, 0] = p
        slots[j, 1] = c
        slots[j, 2] = forbid
        keys[j] = key
        ns += 1
    if ns == 0:
        slots[0, 0] = 0
        slots[0, 1] = 0
        slots[0, 2] = 0
    info[:] = 0
    info[X_VIEWER] = me
    info[X_UNSEEN] = unseen
    info[X_BONEYARD] = s[S_BLEN] - s[rules.S_BPOS]
    info[X_ATTEMPTS] = ATTEMPTS
    info[X_SLOTS] = ns
    return ns


@njit(cache=True, nogil=True)
def label_block_rows(gprm, S, rows, openings, tile_set, rs, start, samples, scratch, depth, prm, tt, st, frames,
                     moves, codes, values, out):
    """:meth:`CompiledPIMC.label_rows` from decision ``start`` on: returns ``len(rows)``,
    or the decision whose search the full table stopped (its row of ``out`` left for a
    fresh start from its seed), or -1 when a view has no consistent deal.  ``samples``
    0: the oracle's labels instead — the solver's values of the true position."""
    template = np.empty(WIDTH, dtype=np.int64)
    slots = np.zeros((MAX_SLOTS, 3), dtype=np.int64)
    keys = np.zeros(MAX_SLOTS, dtype=np.int64)
    info = np.zeros(N_X, dtype=np.int64)
    world = np.empty(WIDTH, dtype=np.int64)
    totals = np.zeros(out.shape[1], dtype=np.int64)
    acts = np.empty(MAX_ACTIONS, dtype=np.int64)
    r = np.empty(1, dtype=np.uint64)
    no_rows = np.zeros((0, 0), dtype=np.int64)
    no_hands = np.zeros((0, 4), dtype=np.int64)
    for i in range(start, rows.shape[0]):
        s = S[rows[i]]
        totals[:] = 0
        if samples == 0:
            world[:] = s
            done = sum_worlds(gprm, template, slots, info, r, 0, 1, True, world, scratch, depth, prm, tt,
                              st, frames, moves, codes, values, totals, no_rows, no_hands)
            if done < 1:
                return i
        else:
            block_view_worlds(gprm, s, s[S_CUR], openings[i], tile_set, template, slots, keys, info)
            r[0] = rs[i, 0]
            done = sum_worlds(gprm, template, slots, info, r, 0, samples, False, world, scratch, depth, prm, tt,
                              st, frames, moves, codes, values, totals, no_rows, no_hands)
            if done < 0:
                return -1
            if done < samples:
                return i
        k = legal(gprm, s, acts)
        top = -(1 << 62)
        for j in range(k):
            if totals[acts[j]] > top:
                top = totals[acts[j]]
        for j in range(k):
            if totals[acts[j]] == top:
                out[i, acts[j]] = 1
    return rows.shape[0]


@njit(cache=True, nogil=True)
def sum_worlds(gprm, template, slots, info, r, start, samples, resume, world, scratch, depth, prm, tt, st, frames,
               moves, codes, values, totals, per_world, hands):
    """Worlds ``start .. samples-1``: deal each into ``world`` (with ``resume`` the first
    is the one already there), solve it, add its move values to ``totals[action]`` — and,
    when ``per_world`` has rows, keep them in ``per_world[i, action]`` and its hands in
    ``hands[i, seat]``.
    Returns ``samples``, or the world whose search the full table stopped (its values not
    added), or -1 when no world can be dealt."""
    draw = prm[sc.P_DRAW] != 0
    no_bone = np.zeros(0, dtype=np.int64)
    for i in range(start, samples):
        if not (resume and i == start):
            if not deal_world(gprm, template, slots, info, r, world, scratch):
                return -1
            if draw:            # another boneyard order: a new generation of the table
                gen = prm[sc.P_GEN] + 1
                if gen > sc.MAX_GEN:
                    tt[:] = 0
                    gen = 1
                prm[sc.P_GEN] = gen
                st[sc.S_FILLED] = 0
        bone = world[S_BONE:S_BONE + world[S_BLEN]] if draw else no_bone
        p = world[S_CUR]
        n = prm[sc.P_PLAYERS]
        if n == 2:
            h0, h1, h2, h3 = world[S_HANDS + p], world[S_HANDS + 1 - p], 0, 0
        else:
            h0 = world[S_HANDS + p]
            h1 = world[S_HANDS + (p + 1) % 4]
            h2 = world[S_HANDS + (p + 2) % 4]
            h3 = world[S_HANDS + (p + 3) % 4]
        k = sc.root_values(h0, h1, h2, h3, world[S_LEFT], world[S_RIGHT], 0, depth, prm, bone, tt, st, frames, moves,
                           codes, values)
        if st[sc.S_ABORT] != 0:
            return i
        for j in range(k):
            totals[codes[j]] += values[j]
        if per_world.shape[0]:
            for j in range(k):
                per_world[i, codes[j]] = values[j]
            for q in range(n):
                hands[i, q] = world[S_HANDS + q]
    return samples


def warm_up() -> None:
    """Load (or compile, once per install) the compiled sum."""
    import random

    from pipslab.envs.dominoes.compiled import new_rng
    from pipslab.envs.dominoes.engine import deal, packed_world_sampler
    from pipslab.envs.dominoes.variants import HAPPY_DRAW
    s = deal(HAPPY_DRAW, random.Random(0))
    s.apply(s.legal_actions()[0])
    view = s.observe(s.current_player)
    CompiledPIMC(HAPPY_DRAW, 8).totals(packed_world_sampler(view), new_rng(0), 2)
