"""Net-guided ISMCTS (PUCT, ``ismcts:eval=net``) with its tree work compiled, many searches
in lock-step.

:func:`pipslab.agents.search_dominoes.search_many` runs its searches here whenever they
need nothing Python has: the evaluator is a net the compiled encoder can feed
(:meth:`~pipslab.agents.domino_net.NetEvaluator.compiled_player`), no random playout is
mixed in (``mix=0``), every view is of one hand (not a Troshin match), all of one
variant.  Each step is the Python loop's, search for search: a world dealt by the view's
:class:`~pipslab.envs.dominoes.compiled.PackedWorlds` from the search's own compiled
generator (seeded with its seed), a descent by ``_descend_puct``'s rule — ``q + c * prior
* sqrt(avail) / (1 + visits)``, availability counts, ``1 / legal moves`` for an action
the prior never saw, ties to the first legal — to a finished game (its returns backed up
at once) or a node reached for the first time; then Python puts every seat's view of
every such leaf (:func:`~pipslab.envs.dominoes.compiled.encode_into`, written by the
descent) through one :meth:`NetPlayer.forward`; then :func:`backup` stores each new
node's prior — the mover's logits softmaxed over its legal moves by :func:`legal_softmax`,
the very function the Python loop's prior uses, with the root's optional Dirichlet noise
from the search's generator — and backs up every seat's value.  The Python loop stays the
reference (and serves matches, other evaluators and ``mix``); the two draw their worlds
from different generators, so their moves for a seed differ, not their distribution
(tested, and tested step for step on the same worlds).

A module of its own, not :mod:`pipslab.agents.ismcts_compiled`'s tree: PUCT keeps
statistics per (node, action) edge — a node's prior covers actions never tried, and an
untried edge still counts availability — so the tree here is edge arrays of the action
width, one pool for all the searches of a batch (search ``k``'s root is node ``k``), and
the loop is split in two halves around the Python forward pass.
"""
from __future__ import annotations

import math
import time
from typing import List, Optional, Sequence, Tuple

import numpy as np
from numba import njit

from pipslab.envs.dominoes import compiled as rules
from pipslab.envs.dominoes.compiled import (
    MAX_ACTIONS, P_PLAYERS, S_CUR, S_TERMINAL, WIDTH, apply_with, deal_world, drop_stale_caches, encode_into, legal,
    new_rng, returns_into, uniform, world_scratch,
)

drop_stale_caches(__file__, rules.__file__)    # a change to the compiled rules recompiles this module

MAX_PATH = 512          # moves of one descent (a hand has far fewer plies)
FAILED_DEAL, LONG_PATH = -1, -2


@njit(cache=True, nogil=True)
def legal_softmax(z, acts, k, out):
    """The softmax of ``z[acts[:k]]`` (float32 logits) into ``out[:k]``, in float64, the
    sum taken in legal order — the one prior both ISMCTS loops compute, so that a node's
    prior is the same float in either."""
    m = -np.inf
    for i in range(k):
        x = np.float64(z[acts[i]])
        if x > m:
            m = x
    s = 0.0
    for i in range(k):
        e = math.exp(np.float64(z[acts[i]]) - m)
        out[i] = e
        s += e
    for i in range(k):
        out[i] = out[i] / s


@njit(cache=True, nogil=True)
def _gamma(r, alpha):
    """A Gamma(alpha, 1) draw (Marsaglia & Tsang; alpha < 1 boosted by ``U ** (1 / alpha)``)."""
    boost = 1.0
    if alpha < 1.0:
        boost = (1.0 - uniform(r)) ** (1.0 / alpha)
        alpha += 1.0
    d = alpha - 1.0 / 3.0
    cc = 1.0 / math.sqrt(9.0 * d)
    while True:
        u1 = 1.0 - uniform(r)
        x = math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * uniform(r))
        v = 1.0 + cc * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = 1.0 - uniform(r)
        if math.log(u) < 0.5 * x * x + d - d * v + d * math.log(v):
            return d * v * boost


@njit(cache=True, nogil=True)
def _back(k, plen, path_node, path_act, mover, ev, tot, rvisits, rtotal, res):
    rvisits[k] += 1
    rtotal[k] += res[mover[k]]
    for i in range(plen[k]):
        nd = path_node[k, i]
        a = path_act[k, i]
        ev[nd, a] += 1
        tot[nd, a] += res[mover[nd]]


@njit(cache=True, nogil=True)
def descend(prm, kind, templates, slots, infos, rngs, given, step, c, child, ev, av, tot, prior, mover, ready,
            used, rvisits, rtotal, root_legal, nroot, path_node, path_act, plen, leaves, leaf_of, leaf_node, X):
    """One step's descents of every search (the module docstring): a finished game is
    backed up here; a new leaf gets a node, its row in ``leaves`` and every seat's
    observation in ``X`` (rows ``m * players + seat``).  ``given`` (when it has a row per
    search) replaces the deal: search ``k``'s world is ``given[k, step]``.  Returns the
    number of leaves, or :data:`FAILED_DEAL` / :data:`LONG_PATH`."""
    n = prm[P_PLAYERS]
    K = templates.shape[0]
    scratch = world_scratch()
    acts = np.empty(MAX_ACTIONS, dtype=np.int64)
    tmp = np.empty(MAX_ACTIONS, dtype=np.int64)
    res = np.zeros(4)
    use_given = given.shape[0] == K
    m = 0
    for k in range(K):
        w = leaves[m]
        if use_given:
            w[:] = given[k, step]
        elif not deal_world(prm, templates[k], slots[k], infos[k], rngs[k], w, scratch):
            return FAILED_DEAL
        if nroot[k] < 0:                  # the observer's moves: the same in every world
            nroot[k] = legal(prm, w, root_legal[k])
        node = k
        plen[k] = 0
        leaf = -1
        while True:
            if w[S_TERMINAL]:
                break
            if not ready[node]:           # first reached: the net values it
                leaf = node
                break
            kl = legal(prm, w, acts)
            unseen = 1.0 / kl
            best_score = -1e18
            best_a = acts[0]
            for i in range(kl):
                b = acts[i]
                av[node, b] += 1
                v = ev[node, b]
                q = tot[node, b] / v if v else 0.0
                p = prior[node, b]
                if p < 0.0:
                    p = unseen
                score = q + c * p * math.sqrt(av[node, b]) / (1 + v)
                if score > best_score:
                    best_score = score
                    best_a = b
            if plen[k] >= MAX_PATH:
                return LONG_PATH
            path_node[k, plen[k]] = node
            path_act[k, plen[k]] = best_a
            plen[k] += 1
            apply_with(prm, w, best_a, tmp)
            nxt = child[node, best_a]
            if nxt < 0 and not w[S_TERMINAL]:
                nxt = used[0]
                used[0] += 1
                child[node, best_a] = nxt
                mover[nxt] = w[S_CUR]
            node = nxt
        if leaf < 0:
            returns_into(prm, w, res)
            _back(k, plen, path_node, path_act, mover, ev, tot, rvisits, rtotal, res)
            continue
        leaf_of[m] = k
        leaf_node[m] = leaf
        for seat in range(n):
            x = X[m * n + seat]
            for j in range(x.shape[0]):
                x[j] = 0.0
            encode_into(kind, prm, w, seat, x)
        m += 1
    return m


@njit(cache=True, nogil=True)
def backup(prm, count, leaves, leaf_of, leaf_node, logits, values, alpha, fraction, rngs, prior, ready, mover,
           ev, tot, rvisits, rtotal, path_node, path_act, plen):
    """The second half of a step: each of ``count`` leaves gets its prior (the mover's
    logits — row ``m * players + mover`` — over its legal moves; at a root with
    ``fraction > 0``, AlphaZero's noise: ``(1 - fraction) * prior + fraction * Dir(alpha)``,
    one gamma per legal move in order from the search's generator) and its search backs up
    every seat's value (``values``, same rows)."""
    n = prm[P_PLAYERS]
    acts = np.empty(MAX_ACTIONS, dtype=np.int64)
    probs = np.empty(MAX_ACTIONS)
    g = np.empty(MAX_ACTIONS)
    res = np.zeros(4)
    for m in range(count):
        k = leaf_of[m]
        node = leaf_node[m]
        w = leaves[m]
        kl = legal(prm, w, acts)
        legal_softmax(logits[m * n + w[S_CUR]], acts, kl, probs)
        if fraction > 0.0 and node == k:
            total = 0.0
            for i in range(kl):
                g[i] = _gamma(rngs[k], alpha)
                total += g[i]
            if total == 0.0:
                total = 1.0
            for i in range(kl):
                probs[i] = (1.0 - fraction) * probs[i] + fraction * g[i] / total
        for i in range(kl):
            prior[node, acts[i]] = probs[i]
        ready[node] = 1
        for p in range(n):
            res[p] = np.float64(values[m * n + p])
        _back(k, plen, path_node, path_act, mover, ev, tot, rvisits, rtotal, res)


class Batch:
    """The lock-step searches of ``views`` (one variant, hands only) and their tree pool."""

    def __init__(self, views: Sequence, seeds: Sequence[int], player, kind: int, c: float, noise=None):
        from pipslab.envs.dominoes.engine import packed_world_sampler
        variant = views[0].variant
        self.prm = rules.params(variant)
        self.n = variant.players
        self.kind, self.player, self.c = int(kind), player, float(c)
        self.alpha, self.fraction = (float(noise[0]), float(noise[1])) if noise is not None else (1.0, 0.0)
        K = self.K = len(views)
        packed = [packed_world_sampler(v) for v in views]
        ns = max(p.slots.shape[0] for p in packed)
        self.templates = np.stack([p.template for p in packed])
        self.slots = np.zeros((K, ns, 3), dtype=np.int64)
        for k, p in enumerate(packed):
            self.slots[k, :p.slots.shape[0]] = p.slots
        self.infos = np.stack([p.info for p in packed])
        self.rngs = np.stack([new_rng(int(s)) for s in seeds])
        self.actions = variant.num_actions
        self._grow(K * (1 + 64))
        self.used = np.array([K], dtype=np.int64)
        self.mover[:K] = self.templates[:, S_CUR]
        self.rvisits = np.zeros(K, dtype=np.int64)
        self.rtotal = np.zeros(K)
        self.root_legal = np.zeros((K, MAX_ACTIONS), dtype=np.int64)
        self.nroot = np.full(K, -1, dtype=np.int64)
        self.path_node = np.zeros((K, MAX_PATH), dtype=np.int64)
        self.path_act = np.zeros((K, MAX_PATH), dtype=np.int64)
        self.plen = np.zeros(K, dtype=np.int64)
        self.leaves = np.zeros((K, WIDTH), dtype=np.int64)
        self.leaf_of = np.zeros(K, dtype=np.int64)
        self.leaf_node = np.zeros(K, dtype=np.int64)
        self.X = np.zeros((K * self.n, int(player.config["inputs"])), dtype=np.float32)
        self.steps = 0

    def _grow(self, cap: int) -> None:
        old = getattr(self, "child", None)
        have = 0 if old is None else old.shape[0]
        a = self.actions
        grown = {"child": np.full((cap, a), -1, dtype=np.int32), "ev": np.zeros((cap, a), dtype=np.int32),
                 "av": np.zeros((cap, a), dtype=np.int32), "tot": np.zeros((cap, a)),
                 "prior": np.full((cap, a), -1.0), "mover": np.zeros(cap, dtype=np.int64),
                 "ready": np.zeros(cap, dtype=np.int8)}
        for name, new in grown.items():
            if have:
                new[:have] = getattr(self, name)
            setattr(self, name, new)

    def step(self, given: Optional[np.ndarray] = None) -> None:
        """One iteration of every search (``given``: each search's worlds, a test's)."""
        if int(self.used[0]) + self.K > self.child.shape[0]:
            self._grow(2 * self.child.shape[0])
        if given is None:
            given = self.leaves[:0, None]
        count = descend(self.prm, self.kind, self.templates, self.slots, self.infos, self.rngs, given, self.steps,
                        self.c, self.child, self.ev, self.av, self.tot, self.prior, self.mover, self.ready,
                        self.used, self.rvisits, self.rtotal, self.root_legal, self.nroot, self.path_node,
                        self.path_act, self.plen, self.leaves, self.leaf_of, self.leaf_node, self.X)
        if count < 0:
            from pipslab.envs.errors import PositionError
            raise PositionError("no deal of the unseen tiles is consistent with this view" if count == FAILED_DEAL
                                else f"a descent of more than {MAX_PATH} moves")
        self.steps += 1
        if count:
            logits, values = self.player.forward(self.X[:count * self.n])
            backup(self.prm, count, self.leaves, self.leaf_of, self.leaf_node, logits, values, self.alpha,
                   self.fraction, self.rngs, self.prior, self.ready, self.mover, self.ev, self.tot, self.rvisits,
                   self.rtotal, self.path_node, self.path_act, self.plen)

    def results(self) -> List[Tuple[dict, int, float, int]]:
        """Per search ``(visits per legal action in legal order, the most visited — ties:
        the first legal —, the observer's mean return, iterations)``."""
        out = []
        for k in range(self.K):
            legal_k = self.root_legal[k, :self.nroot[k]].tolist()
            counts = self.ev[k, legal_k].tolist()
            visits = dict(zip(legal_k, counts))
            best = legal_k[counts.index(max(counts))]
            out.append((visits, best, float(self.rtotal[k] / self.rvisits[k]), int(self.rvisits[k])))
        return out


def run_searches(views: Sequence, seeds: Sequence[int], player, kind: int, iters: int, c: float, noise=None,
                 seconds: Optional[float] = None, given: Optional[np.ndarray] = None):
    """``iters`` lock-step steps of the searches of ``views`` (or, with ``seconds``, steps
    until the time is up; at least one) guided by ``player`` (a ``NetPlayer`` whose inputs
    are :func:`~pipslab.envs.dominoes.compiled.encode_into`'s ``kind``); :meth:`Batch.results`.
    ``given``: ``(searches, iters, WIDTH)`` worlds instead of dealt ones (a test's)."""
    batch = Batch(views, seeds, player, kind, c, noise)
    deadline = None if seconds is None else time.perf_counter() + seconds
    while True:
        batch.step(given)
        if deadline is None:
            if batch.steps >= iters:
                break
        elif time.perf_counter() >= deadline:
            break
    return batch.results()

