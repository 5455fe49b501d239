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
from pipslab.envs.dominoes.compiled import (
    S_BLEN, S_BONE, S_CUR, S_HANDS, S_LEFT, S_RIGHT, deal_world, drop_stale_caches, world_scratch,
)

from . import solver_compiled as sc
from .solver import EXACT_DEPTH, check_solvable

# a change to the compiled rules or solver recompiles this module
drop_stale_caches(__file__, rules.__file__, sc.__file__)

_FIRST_TABLE = 1 << 14


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
                              self.values, totals)
            if done < 0:
                from pipslab.envs.errors import PositionError
                raise PositionError("no deal of the unseen tiles is consistent with this view")
            if done < samples:      # the table is full: grow it, then the same world again
                new = sc.new_table(min(self.cap, self.tt.shape[0] * 4))
                st[sc.S_FILLED] = sc.rehash(self.tt, new, self.prm[sc.P_GEN])
                self.tt = new
                resume = True
        return totals


@njit(cache=True, nogil=True)
def sum_worlds(gprm, template, slots, info, r, start, samples, resume, world, scratch, depth, prm, tt, st, frames,
               moves, codes, values, totals):
    """Worlds ``start .. samples-1``: deal each into ``world`` (with ``resume`` the first
    is the one already there), solve it, add its move values to ``totals[action]``.
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
