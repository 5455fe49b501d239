"""Compiled (numba) iterations of ``ismcts`` with random playouts, for speed.

:class:`pipslab.agents.search_dominoes.ISMCTSAgent` runs its iterations here whenever
they need nothing Python has: the evaluator is the built-in ``rollout`` (``rollout:N``),
the net does not guide the search, and the view is of one hand (not a Troshin match).
Each iteration is the Python loop's, step for step: a world dealt by the view's
:class:`~pipslab.envs.dominoes.compiled.PackedWorlds` (``engine.packed_world_sampler``:
the same constraints as ``sample_world``, worked out from the view alone), a descent by
UCB1 with availability counts over the observer's tree, one node expanded, its value
from ``N`` random playouts (exact at the end of the game), and the values backed up.
The Python loop stays the reference (and serves every other evaluator); the two draw
their random numbers from different generators — both seeded from the decision's
``rng`` — so their moves for a seed differ, not their distribution (tested).

The tree is arrays: per node its visits, availability, total return (for the seat that
chose the move leading there) and that seat, and ``children[node, action]`` (-1: none).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from pipslab.envs.dominoes.compiled import (
    MAX_ACTIONS, S_CUR, S_TERMINAL, WIDTH, apply_with, below, deal_world, drop_stale_caches, legal, playout,
    returns_into, rollouts_into, world_scratch,
)

drop_stale_caches(__file__)    # a change to the compiled rules recompiles this module


class Tree:
    """An ISMCTS tree in arrays, grown as iterations need room (the root is node 0)."""

    def __init__(self, actions: int, capacity: int = 1024):
        self.actions = actions
        self.children = np.full((capacity, actions), -1, dtype=np.int32)
        self.visits = np.zeros(capacity, dtype=np.int64)
        self.avail = np.zeros(capacity, dtype=np.int64)
        self.total = np.zeros(capacity)
        self.player = np.full(capacity, -1, dtype=np.int64)
        self.used = np.ones(1, dtype=np.int64)       # nodes in use: the root

    def reserve(self, more: int) -> None:
        """Room for ``more`` new nodes."""
        need = int(self.used[0]) + more
        cap = self.children.shape[0]
        if need <= cap:
            return
        while cap < need:
            cap *= 2
        children = np.full((cap, self.actions), -1, dtype=np.int32)
        children[:self.children.shape[0]] = self.children
        self.children = children
        for name in ("visits", "avail", "total", "player"):
            old = getattr(self, name)
            new = np.full(cap, -1, dtype=old.dtype) if name == "player" else np.zeros(cap, dtype=old.dtype)
            new[:len(old)] = old
            setattr(self, name, new)

    def root_visits(self, action: int) -> int:
        """Visits of the root's child by ``action`` (-1: never expanded)."""
        ch = int(self.children[0, action])
        return -1 if ch < 0 else int(self.visits[ch])


def run(prm, worlds, tree: Tree, r, iters: int, c: float, rollouts: int) -> None:
    """``iters`` iterations on ``tree`` (room is made first); ``worlds`` a
    :class:`~pipslab.envs.dominoes.compiled.PackedWorlds`, ``r`` the compiled generator."""
    tree.reserve(iters)
    ok = iterate(prm, worlds.template, worlds.slots, worlds.info, r, int(iters), float(c), int(rollouts), tree.children,
                 tree.visits, tree.avail, tree.total, tree.player, tree.used)
    if not ok:
        from pipslab.envs.errors import PositionError
        raise PositionError("no deal of the unseen tiles is consistent with this view")


@njit(cache=True, nogil=True)
def iterate(prm, template, slots, info, r, iters, c, rollouts, children, visits, avail, total, player, used):
    """The iterations (module docstring); False if a world could not be dealt."""
    n = prm[0]
    w = np.empty(WIDTH, dtype=np.int64)
    scratch = world_scratch()
    acts = np.empty(MAX_ACTIONS, dtype=np.int64)
    untried = np.empty(MAX_ACTIONS, dtype=np.int64)
    tmp = np.empty(MAX_ACTIONS, dtype=np.int64)
    roll = np.empty(WIDTH, dtype=np.int64)
    res = np.zeros(4)
    mean = np.zeros(4)
    path = np.empty(512, dtype=np.int64)
    nodes = used[0]
    for _ in range(iters):
        if not deal_world(prm, template, slots, info, r, w, scratch):
            used[0] = nodes
            return False
        node = 0
        plen = 0
        while not w[S_TERMINAL]:
            k = legal(prm, w, acts)
            nu = 0
            for i in range(k):
                if children[node, acts[i]] < 0:
                    untried[nu] = acts[i]
                    nu += 1
            if nu > 0:
                a = untried[below(r, nu)] if nu > 1 else untried[0]
                for i in range(k):
                    ch = children[node, acts[i]]
                    if ch >= 0:
                        avail[ch] += 1
                new = nodes
                nodes += 1
                children[node, a] = new
                visits[new] = 0
                avail[new] = 1
                total[new] = 0.0
                player[new] = w[S_CUR]
                apply_with(prm, w, a, tmp)
                path[plen] = new
                plen += 1
                break
            for i in range(k):
                avail[children[node, acts[i]]] += 1
            best_score = -1e18
            best_a = acts[0]
            for i in range(k):
                ch = children[node, acts[i]]
                v = visits[ch]
                score = total[ch] / v + c * math.sqrt(math.log(avail[ch]) / v)
                if score > best_score:
                    best_score = score
                    best_a = acts[i]
            node = children[node, best_a]
            apply_with(prm, w, best_a, tmp)
            path[plen] = node
            plen += 1
        if w[S_TERMINAL]:
            returns_into(prm, w, res)
        elif rollouts == 1:
            playout(prm, w, r, acts, tmp)
            returns_into(prm, w, res)
        else:
            rollouts_into(prm, w, r, rollouts, mean, roll, res, acts, tmp)
            for p in range(n):
                res[p] = mean[p]
        for i in range(plen):
            nd = path[i]
            visits[nd] += 1
            total[nd] += res[player[nd]]
    used[0] = nodes
    return True


def warm_up() -> None:
    """Load (or compile, once per install) the compiled iterations."""
    import random

    from pipslab.envs.dominoes.compiled import new_rng, params
    from pipslab.envs.dominoes.engine import deal, packed_world_sampler
    from pipslab.envs.dominoes.variants import HAPPY_BLOCK
    s = deal(HAPPY_BLOCK, random.Random(0))
    view = s.observe(s.current_player)
    tree = Tree(HAPPY_BLOCK.num_actions, 8)
    run(params(HAPPY_BLOCK), packed_world_sampler(view), tree, new_rng(0), 2, 0.7, 1)
    run(params(HAPPY_BLOCK), packed_world_sampler(view), tree, new_rng(0), 1, 0.7, 2)
