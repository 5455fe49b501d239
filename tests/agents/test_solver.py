"""The exact solver against plain exhaustive minimax, and on the RULES §2 endings."""
import random

import pytest

from pipslab.agents.solver import BIG, Solver
from pipslab.envs.dominoes.engine import DominoState, deal
from pipslab.envs.dominoes.notation import parse_position
from pipslab.envs.dominoes.variants import HAPPY_BLOCK, HAPPY_DRAW

from dominoes_helpers import place


def minimax(state: DominoState, me: int) -> int:
    """Plain exhaustive minimax through the engine: outcome*1000 + margin for seat ``me``."""
    if state.is_terminal:
        pips = state.pips_left()
        outcome = 0 if state.winner == -1 else (1 if state.winner == me else -1)
        return outcome * BIG + pips[1 - me] - pips[me]
    values = []
    for a in state.legal_actions():
        child = state.clone()
        child.apply(a)
        values.append(minimax(child, me))
    return max(values) if state.current_player == me else min(values)


def small_positions(variant, n, max_in_hands, seed, max_boneyard=3):
    """Random positions reached by random play, with at most ``max_in_hands`` tiles in the
    hands (and, in draw mode, a short boneyard so plain minimax stays small)."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        s = deal(variant, rng)
        if variant.draw:  # shorten the boneyard: its tail goes to the table's side, out of play
            s.boneyard = s.boneyard[:rng.randint(0, max_boneyard)]
        while not s.is_terminal and sum(bin(h).count("1") for h in s.hands) > max_in_hands:
            legal = s.legal_actions()
            s.apply(legal[rng.randrange(len(legal))])
        if not s.is_terminal:
            out.append(s)
    return out


@pytest.mark.parametrize("variant", [HAPPY_BLOCK, HAPPY_DRAW])
def test_solver_equals_exhaustive_minimax_on_small_positions(variant):
    solver = Solver()
    checked = 0
    for s in small_positions(variant, 600, 8, seed=17 if variant.draw else 5):
        me = s.current_player
        values = solver.move_values(s)
        for a, v in values.items():
            child = s.clone()
            child.apply(a)
            assert v == minimax(child, me), (s, a)
            checked += 1
    assert checked >= 600


def test_wdl_objective_agrees_with_margin_outcome():
    margin, wdl = Solver("margin"), Solver("wdl")
    for s in small_positions(HAPPY_BLOCK, 300, 10, seed=3):
        v = margin.value(s)
        assert wdl.value(s) == (v > 0) - (v < 0)


def test_scenario3_white_loses_whatever_it_does():
    s = parse_position("happy-block; turn=0; ends=6|3; hands=4-4 2-3 / 0-1 1-1 2-2")
    r = Solver().solve(s)
    assert r.outcome == -1 and r.margin == 3 - 8
    assert r.best_actions == [place(s, "2-3", "right")]


def test_scenario4_both_pass_draw():
    s = parse_position("happy-block; turn=0; ends=4|5; hands=1-2 0-6 / 3-6")
    r = Solver().solve(s)
    assert r.outcome == 0 and r.margin == 0 and r.line == [57, 57]


def test_scenario5_black_02_loses_where_00_would_not():
    s = parse_position("happy-block; turn=0; ends=1|0; hands=2-2 / 0-0 0-2")
    s.apply(HAPPY_BLOCK.pass_action)  # white passes; black to move
    r = Solver().solve(s)
    v = r.move_values
    assert v[place(s, "0-2", "right")] < 0          # white then plays 2-2 and goes out
    assert v[place(s, "0-0", "right")] > 0          # white must pass, black goes out
    assert r.best_actions == [place(s, "0-0", "right")]
    assert r.outcome == 1 and r.margin == 4         # white is left holding 2-2


def test_scenario2_draw_mode_is_lost_for_black():
    s = parse_position("happy-draw; turn=0; ends=1|1; hands=4-4 0-6 2-3 2-6 0-5 / 3-5; boneyard=6-6 0-0")
    r = Solver().solve(s)
    assert r.outcome == -1 and r.margin == 8 - 44
