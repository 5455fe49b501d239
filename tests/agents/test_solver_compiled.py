"""The compiled search (agents/solver_compiled.py) against the Python reference search.

Both must give the same value to every legal move: exact solves of Happy block, Happy
draw (the boneyard order known), Troshin for two and Troshin's four in pairs, depth-limited
searches (pimc's draw mode) and the win/draw/loss objective.  One solver of each kind is
reused across the positions of a test, as pimc reuses its solver across worlds, so the
tables' reuse and their emptying (a new boneyard, a new variant) are checked too.
"""
import random

import pytest

from pipslab.agents.solver import SearchStopped, Solver
from pipslab.envs.dominoes.engine import deal
from pipslab.envs.dominoes.variants import HAPPY_BLOCK, HAPPY_DRAW, TROSHIN_2, TROSHIN_4_PAIRS


def tiles_in_hands(state) -> int:
    return sum(bin(h).count("1") for h in state.hands)


def positions(variant, n, seed, most, fewest=0, boneyard=None):
    """``n`` positions of random play with at most ``most`` tiles in the hands (a random
    count down to ``fewest``); ``boneyard``: keep at most that many boneyard tiles (the rest
    is set aside, out of play), so the reference search stays quick."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        s = deal(variant, rng)
        if boneyard is not None:
            s.boneyard = s.boneyard[:rng.randint(0, boneyard)]
        stop = rng.randint(fewest, most)
        while not s.is_terminal and tiles_in_hands(s) > stop:
            legal = s.legal_actions()
            s.apply(legal[rng.randrange(len(legal))])
        if not s.is_terminal:
            out.append(s)
    return out


def assert_agree(states, **kwargs):
    compiled, reference = Solver(**kwargs), Solver(compiled=False, **kwargs)
    assert compiled.compiled and not reference.compiled
    moves = 0
    for s in states:
        ours, theirs = compiled.move_values(s), reference.move_values(s)
        assert ours == theirs, s
        moves += len(ours)
    return moves


CASES = {
    # name: (variant, positions, seed, most tiles in hands, fewest, boneyard cap, solver kwargs)
    "happy-block": (HAPPY_BLOCK, 400, 1, 14, 4, None, {}),
    "happy-block-2": (HAPPY_BLOCK, 300, 10, 14, 4, None, {}),
    "happy-draw": (HAPPY_DRAW, 200, 2, 8, 2, None, {}),
    "happy-draw-2": (HAPPY_DRAW, 200, 20, 8, 2, None, {}),
    "happy-draw-short-boneyard": (HAPPY_DRAW, 500, 3, 12, 4, 4, {}),
    "troshin-2": (TROSHIN_2, 200, 4, 8, 2, None, {}),
    "troshin-2-2": (TROSHIN_2, 200, 40, 8, 2, None, {}),
    "troshin-4-pairs": (TROSHIN_4_PAIRS, 300, 5, 16, 2, None, {}),
    "troshin-4-pairs-2": (TROSHIN_4_PAIRS, 300, 50, 16, 2, None, {}),
    "happy-draw-depth": (HAPPY_DRAW, 600, 6, 14, 6, None, {"max_depth": 3}),
    "happy-draw-depth-8": (HAPPY_DRAW, 400, 7, 14, 8, None, {"max_depth": 8}),   # pimc's draw mode
    "happy-block-depth": (HAPPY_BLOCK, 500, 8, 14, 6, None, {"max_depth": 2}),
    "troshin-4-pairs-depth": (TROSHIN_4_PAIRS, 500, 9, 20, 6, None, {"max_depth": 3}),
    "happy-block-wdl": (HAPPY_BLOCK, 500, 10, 14, 4, None, {"objective": "wdl"}),
    "troshin-2-wdl": (TROSHIN_2, 300, 11, 8, 2, None, {"objective": "wdl"}),
}


@pytest.mark.parametrize("name", list(CASES))
def test_compiled_and_reference_agree_on_every_move(name):
    variant, n, seed, most, fewest, boneyard, kwargs = CASES[name]
    moves = assert_agree(positions(variant, n, seed, most, fewest, boneyard), **kwargs)
    assert moves >= n


def test_one_solver_across_variants_and_a_tiny_table_stay_exact():
    """A table far too small (it replaces entries) and a solver moved between variants
    (the table emptied by a new generation) change the work, never a value."""
    mixed = positions(HAPPY_BLOCK, 30, 12, 14, 8) + positions(TROSHIN_4_PAIRS, 30, 13, 16, 8) \
        + positions(HAPPY_DRAW, 30, 14, 10, 4)
    random.Random(0).shuffle(mixed)
    tiny, roomy, reference = Solver(max_table=64), Solver(), Solver(compiled=False)
    for s in mixed:
        assert tiny.move_values(s) == roomy.move_values(s) == reference.move_values(s), s
    assert tiny._kernel.tt.shape[0] == 64


def test_the_table_grows_and_keeps_its_work():
    s = positions(HAPPY_DRAW, 1, 15, 14, 14)[0]
    solver = Solver()
    first = solver._kernel.tt.shape[0]
    values = solver.move_values(s)
    assert solver._kernel.tt.shape[0] > first            # grown while searching
    assert values == Solver(compiled=False).move_values(s)
    nodes = solver.nodes
    assert solver.move_values(s) == values and solver.nodes - nodes < nodes   # the table answers


def test_node_limit_and_stop_request_stop_the_search_and_leave_it_exact():
    s = positions(HAPPY_DRAW, 1, 16, 14, 14)[0]
    exact = Solver().move_values(s)
    solver = Solver()
    solver.node_limit = 200
    with pytest.raises(SearchStopped) as info:
        solver.move_values(s)
    assert info.value.reason == "nodes" and solver.nodes == 200
    solver.node_limit = None
    solver.request_stop()
    with pytest.raises(SearchStopped) as info:
        solver.move_values(s)
    assert info.value.reason == "stop"
    assert solver.move_values(s) == exact   # what the stopped searches left is sound


def test_an_evaluator_keeps_the_python_search():
    from pipslab.agents.dominoes_value import HandEvaluator
    assert not Solver(max_depth=2, evaluator=HandEvaluator()).compiled
    assert Solver(max_depth=2).compiled


def test_bench_pairs_positions_have_12_tiles_in_hand():
    from pipslab.experiments.bench_search import pairs_positions
    states = pairs_positions(30, seed=3)
    assert len(states) == 30 and all(tiles_in_hands(s) == 12 and not s.is_terminal for s in states)
    assert all(s.variant is TROSHIN_4_PAIRS for s in states)
