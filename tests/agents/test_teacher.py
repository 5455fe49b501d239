"""The guided trainer's teacher (``agents/teacher.py``): its batched labels
(:meth:`Teacher.label_many`, every decision's worlds dealt and solved in one compiled
call) are the labels :meth:`Teacher.best_moves` gives one at a time for the same
generators; the compiled view of a state row is ``engine.packed_world_sampler``'s; and
``pimc`` and the teacher score moves through one function."""
import random

import numpy as np
import pytest

from pipslab.agents import search_dominoes
from pipslab.agents.base import Observation
from pipslab.agents.evaluators import DominoEvaluator
from pipslab.agents.pimc_compiled import block_view_worlds
from pipslab.agents.search_dominoes import PIMCAgent
from pipslab.agents.teacher import Teacher
from pipslab.envs.dominoes import compiled as C
from pipslab.envs.dominoes.engine import packed_world_sampler
from pipslab.envs.dominoes.tiles import PIPS
from pipslab.envs.dominoes.variants import HAPPY_BLOCK

from dominoes_helpers import played_at_random


def _decisions(variant, count, seed):
    """Opened positions with a choice, from random play: ``(state, opening tile)``."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        s = played_at_random(variant, rng, 1, 14)
        if not s.is_terminal and s.left >= 0 and len(s.legal_actions()) > 1:
            first = [ev for ev in s.observe(0).history if ev[0] == 0][0][2]
            out.append((s, first))
    return out


def test_the_compiled_view_of_a_state_row_is_packed_world_samplers():
    prm = C.params(HAPPY_BLOCK)
    template = np.empty(C.WIDTH, dtype=np.int64)
    slots = np.zeros((C.MAX_SLOTS, 3), dtype=np.int64)
    keys = np.zeros(C.MAX_SLOTS, dtype=np.int64)
    info = np.zeros(C.N_X, dtype=np.int64)
    for s, first in _decisions(HAPPY_BLOCK, 200, 3):
        want = packed_world_sampler(s.observe(s.current_player))
        ns = block_view_worlds(prm, C.pack(s), s.current_player, first, HAPPY_BLOCK.tile_set, template, slots, keys,
                               info)
        np.testing.assert_array_equal(template, want.template)
        np.testing.assert_array_equal(info, want.info)
        np.testing.assert_array_equal(slots[:max(ns, 1)], want.slots)


@pytest.mark.parametrize("samples", [1, 6])
def test_batched_labels_are_the_one_at_a_time_labels(samples):
    decisions = _decisions(HAPPY_BLOCK, 120, 5)
    batched = Teacher("happy", {"mode": "block"}, "pimc", samples)
    single = Teacher("happy", {"mode": "block"}, "pimc", samples)
    assert batched.batched()
    S = np.stack([C.pack(s) for s, _ in decisions])
    rng_a = [np.random.default_rng([7, i]) for i in range(len(decisions))]
    rng_b = [np.random.default_rng([7, i]) for i in range(len(decisions))]
    rows = np.arange(len(decisions))[::-1].copy()        # any order, any subset
    got = batched.label_many(S, rows, [rng_a[h] for h in rows], [decisions[h][1] for h in rows])
    for i, h in enumerate(rows.tolist()):
        s = decisions[h][0]
        want = np.zeros(batched.num_actions, dtype=np.int8)
        want[single.best_moves(s, s.current_player, rng_b[h])] = 1
        np.testing.assert_array_equal(got[i], want)
        assert rng_a[h].integers(1 << 30) == rng_b[h].integers(1 << 30)      # the same draws
    # a decision's label does not depend on the others in the call
    h = int(rows[3])
    alone = batched.label_many(S, [h], [np.random.default_rng([7, h])], [decisions[h][1]])
    np.testing.assert_array_equal(alone[0], got[3])


def test_batched_oracle_labels_are_the_solvers():
    decisions = _decisions(HAPPY_BLOCK, 150, 9)
    t = Teacher("happy", {"mode": "block"}, "oracle")
    assert t.batched()
    S = np.stack([C.pack(s) for s, _ in decisions])
    rngs = [np.random.default_rng(i) for i in range(len(decisions))]
    got = t.label_many(S, np.arange(len(decisions)), rngs, None)
    for i, (s, _) in enumerate(decisions):
        want = np.zeros(t.num_actions, dtype=np.int8)
        want[Teacher("happy", {"mode": "block"}, "oracle").best_moves(s, s.current_player, rngs[i])] = 1
        np.testing.assert_array_equal(got[i], want)
        p = s.current_player
        bone = ()
        found = t.oracle_moves(HAPPY_BLOCK, bone, list(s.hands), p, s.left, s.right, 0)
        assert found is None or sorted(found) == np.flatnonzero(want).tolist()
    assert all(r.integers(1 << 30) == np.random.default_rng(i).integers(1 << 30) for i, r in enumerate(rngs))


def test_label_many_labels_one_at_a_time_where_it_cannot_batch():
    decisions = _decisions(HAPPY_BLOCK, 10, 8)
    for guide in ("oracle", "pimc"):
        t = Teacher("happy", {"mode": "draw"} if guide == "oracle" else {"mode": "block"}, guide, 2, compiled=False)
        if guide == "oracle":
            t = Teacher("happy", {"mode": "block"}, guide, 2)
            t.pimc = None
        assert not t.batched()
        S = np.stack([C.pack(s) for s, _ in decisions])
        rows = np.arange(len(decisions))
        got = t.label_many(S, rows, [np.random.default_rng(i) for i in rows], [f for _, f in decisions],
                           state_of=lambda h: decisions[h][0])
        for i, (s, _) in enumerate(decisions):
            want = np.zeros(t.num_actions, dtype=np.int8)
            want[t.best_moves(s, s.current_player, np.random.default_rng(i))] = 1
            np.testing.assert_array_equal(got[i], want)


def test_pimc_and_the_teacher_score_moves_through_one_function(monkeypatch):
    s, _ = _decisions(HAPPY_BLOCK, 1, 11)[0]
    legal = s.legal_actions()
    calls = []

    def rigged(view, legal, rng, solver, budget, compiled=None):
        calls.append(compiled)
        return {b: (1 if b == legal[-1] else 0) for b in legal}

    monkeypatch.setattr(search_dominoes, "pimc_move_totals", rigged)
    obs = Observation(s.current_player, s.observe(s.current_player), legal, HAPPY_BLOCK.num_actions)
    assert PIMCAgent(samples=3).act(obs, np.random.default_rng(0)) == legal[-1]
    teacher = Teacher("happy", {"mode": "block"}, "pimc", 3)
    assert teacher.best_moves(s, s.current_player, np.random.default_rng(0)) == [legal[-1]]
    assert Teacher("happy", {"mode": "block"}, "pimc", 3, compiled=False).best_moves(
        s, s.current_player, np.random.default_rng(0)) == [legal[-1]]
    assert calls == [None, teacher.pimc, None]


def test_the_python_pimc_scores_are_pimcs():
    """Without a compiled sum the shared scoring is pimc's own loop: ``pimc``'s move is
    its best score's lowest action, and the teacher's labels include it."""
    for s, _ in _decisions(HAPPY_BLOCK, 8, 13):
        legal = s.legal_actions()
        obs = Observation(s.current_player, s.observe(s.current_player), legal, HAPPY_BLOCK.num_actions)
        move = PIMCAgent(samples=4).act(obs, np.random.default_rng(1))
        labels = Teacher("happy", {"mode": "block"}, "pimc", 4, compiled=False).best_moves(
            s, s.current_player, np.random.default_rng(1))
        assert move == min(labels)


class _Heaviest(DominoEvaluator):
    """An opponent model that always places its heaviest playable tile."""

    def estimate(self, state):
        return [0.0] * state.variant.players

    def prior(self, states):
        out = []
        for s in states:
            legal = s.legal_actions()
            top = max(legal, key=lambda a: PIPS[a // 2])
            out.append({a: 1.0 if a == top else 0.0 for a in legal})
        return out


def test_a_teacher_with_inference_labels_by_the_weighted_sums_even_in_a_batch():
    """``--guide pimc --guide-infer``: the label is the best of pimc's sums weighed by the
    belief, one decision at a time or many in one call (never the unweighted batch)."""
    from pipslab.agents.belief import Belief, past_moves
    from pipslab.agents.pimc_compiled import CompiledPIMC
    from pipslab.agents.solver import Solver
    teacher = Teacher("happy", {"mode": "block"}, "pimc", 16, infer=_Heaviest(), floor=0.01)
    plain = Teacher("happy", {"mode": "block"}, "pimc", 16)
    assert not teacher.batched() and plain.batched()
    reference = CompiledPIMC(HAPPY_BLOCK, None)
    differ = 0
    decisions = [(s, op) for s, op in _decisions(HAPPY_BLOCK, 40, 17) if past_moves(s.observe(s.current_player))]
    for i, (s, _op) in enumerate(decisions):
        totals = search_dominoes.weighted_move_totals(s.observe(s.current_player), s.legal_actions(),
                                                      np.random.default_rng(i), Solver("margin"), 16,
                                                      Belief(_Heaviest(), 0.01), reference)
        top = max(totals.values())
        want = sorted(a for a, v in totals.items() if v == top)
        assert teacher.best_moves(s, s.current_player, np.random.default_rng(i)) == want
        differ += want != plain.best_moves(s, s.current_player, np.random.default_rng(i))
    assert len(decisions) >= 10 and differ >= 2          # the weights change labels
    S = np.stack([C.pack(s) for s, _ in decisions])
    rows = np.arange(len(decisions))
    got = teacher.label_many(S, rows, [np.random.default_rng(i) for i in rows], [op for _, op in decisions],
                             state_of=lambda h: decisions[h][0])
    for i, (s, _) in enumerate(decisions):
        assert np.flatnonzero(got[i]).tolist() == teacher.best_moves(s, s.current_player, np.random.default_rng(i))
