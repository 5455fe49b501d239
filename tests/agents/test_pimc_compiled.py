"""PIMC's compiled sum over worlds (``agents/pimc_compiled.py``) against the Python
solver on the very same worlds: each world the compiled generator deals, solved by
``Solver.move_values``, adds up to the compiled totals — in block and draw mode, two
seats and pairs, and with a table small enough to be grown mid-search."""
import random

import numpy as np
import pytest

from pipslab.agents.pimc_compiled import CompiledPIMC
from pipslab.agents.solver import Solver
from pipslab.envs.dominoes import compiled as C
from pipslab.envs.dominoes.engine import DominoState, packed_world_sampler
from pipslab.envs.dominoes.variants import VARIANTS

from dominoes_helpers import played_at_random


def _views(variant, count, seed):
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        s = played_at_random(variant, rng, 1, 12)
        if not s.is_terminal and s.left >= 0 and len(s.legal_actions()) > 1 and s.legal_actions()[-1] < 56:
            out.append(s.observe(s.current_player))
    return out


def _python_world(view, w):
    v = view.variant
    hands = [int(w[C.S_HANDS + p]) for p in range(v.players)]
    return DominoState.from_view(view, hands, w[C.S_BONE:C.S_BONE + w[C.S_BLEN]].tolist(), None)


@pytest.mark.parametrize("name,depth,table,first", [
    ("happy-block", None, 4_000_000, 1 << 14), ("happy-block", None, 4_000_000, 16), ("happy-block", None, 64, 64),
    ("happy-draw", 8, 4_000_000, 1 << 14), ("happy-draw", 8, 1 << 12, 8), ("troshin-4-pairs", 8, 4_000_000, 32),
    ("troshin-2", 8, 256, 256)])
def test_compiled_sums_are_the_solvers_values_on_the_same_worlds(name, depth, table, first):
    """(A small first table is grown mid-search, each search then resumed on its world.)"""
    v = VARIANTS[name]
    pimc = CompiledPIMC(v, depth, max_table=table, first_table=first)
    solver = Solver("margin", max_depth=depth)
    for i, view in enumerate(_views(v, 6, 1)):
        worlds = packed_world_sampler(view)
        r = C.new_rng(i)
        got = pimc.totals(worlds, r, 4)
        again = C.new_rng(i)
        want = np.zeros(v.num_actions, dtype=np.int64)
        for _ in range(4):
            for a, value in solver.move_values(_python_world(view, worlds(again))).items():
                want[a] += value
        np.testing.assert_array_equal(got, want)
        assert r[0] == again[0]          # the same draws
    assert first <= pimc.tt.shape[0] <= max(2, 1 << (table.bit_length() - 1))
    if first < 64 and table > 64:
        assert pimc.tt.shape[0] > first        # it grew


def test_a_view_of_another_variant_is_refused():
    pimc = CompiledPIMC(VARIANTS["happy-block"])
    view = _views(VARIANTS["happy-draw"], 1, 0)[0]
    with pytest.raises(ValueError):
        pimc.totals(packed_world_sampler(view), C.new_rng(0), 1)
