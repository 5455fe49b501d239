"""The exact solver against plain exhaustive minimax, and on the RULES §2 and §3 endings."""
import json
import random

import pytest

from pipslab.agents.solver import BIG, Solver
from pipslab.envs.dominoes.engine import DominoState, deal
from pipslab.envs.dominoes.notation import parse_position
from pipslab.envs.dominoes.variants import HAPPY_BLOCK, HAPPY_DRAW, TROSHIN_2, TROSHIN_3, TROSHIN_4, TROSHIN_4_PAIRS
from pipslab.envs.errors import PipslabError
from pipslab.experiments.cli import main

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


# ------------------------------------------------------------------ Troshin (RULES §3)
def team_minimax(state: DominoState, seat: int) -> int:
    """Plain exhaustive minimax through the engine (no pruning, no table) for ``seat``'s
    side, scored by Troshin's own results: outcome from ``returns()``, margin the hand's
    ``team_points()`` of the side that won (negated when the other side won), in the
    solver's units ``outcome * 1000 + margin``."""
    if state.is_terminal:
        teams = state.variant.teams
        r = state.returns()[seat]
        outcome = (r > 0) - (r < 0)
        points = state.team_points()
        mine = teams[seat]
        margin = points[mine] if outcome > 0 else -points[1 - mine] if outcome < 0 else 0
        return outcome * BIG + margin
    teams = state.variant.teams
    values = []
    for a in state.legal_actions():
        child = state.clone()
        child.apply(a)
        values.append(team_minimax(child, seat))
    return max(values) if teams[state.current_player] == teams[seat] else min(values)


@pytest.mark.parametrize("variant, n, most, seed", [(TROSHIN_4_PAIRS, 600, 12, 21), (TROSHIN_2, 300, 8, 22)])
def test_troshin_solver_equals_plain_minimax_of_its_scoring(variant, n, most, seed):
    """Every legal move's value, compiled and Python searches alike, is the plain minimax
    of Troshin's scoring; boneyards are cut to 0..3 tiles so plain minimax stays small."""
    positions = small_positions(variant, n, most, seed=seed)
    assert sum(s.boneyard_size > 0 for s in positions) >= n // 5   # some still draw
    compiled, reference = Solver(), Solver(compiled=False)
    checked = 0
    for s in positions:
        me = s.current_player
        ours, theirs = compiled.move_values(s), reference.move_values(s)
        assert ours == theirs, s
        for a, v in ours.items():
            child = s.clone()
            child.apply(a)
            assert v == team_minimax(child, me), (s, a)
            checked += 1
    assert checked >= n


def test_pairs_blocked_compares_pair_totals():
    """RULES §3: seats 0 and 1 both count 3; pair totals 9 against 12: pair 0+2 wins 3."""
    s = parse_position("troshin-4-pairs; turn=0; ends=6|6; hands=1-2 / 0-3 / 2-4 / 4-5")
    r = Solver().solve(s)
    assert (r.outcome, r.margin) == (1, 3) and r.line == [57, 57, 57, 57]
    assert s.variant.teams == (0, 1, 0, 1)


def test_pairs_partner_goes_out_and_scores_the_opponents():
    """Seat 0 must open the 1 its partner needs: seat 1 passes, seat 2 goes out with 0-1;
    pair 0+2 scores the opponents' 6 + 8 (seat 0's 2-2 counts for nobody)."""
    s = parse_position("troshin-4-pairs; turn=0; ends=5|5; hands=1-5 2-2 / 3-3 / 0-1 / 4-4")
    r = Solver().solve(s)
    assert (r.outcome, r.margin) == (1, 14)
    assert set(r.move_values.values()) == {BIG + 14}
    assert r.value == Solver(compiled=False).value(s) == BIG + 14


@pytest.mark.parametrize("variant", [TROSHIN_3, TROSHIN_4])
def test_games_without_two_sides_are_refused(variant):
    s = deal(variant, random.Random(0))
    with pytest.raises(PipslabError, match="not two sides"):
        Solver().move_values(s)


def test_solve_cli_troshin_pairs(capsys):
    rc = main(["solve", "troshin-4-pairs; turn=0; ends=5|5; hands=1-5 2-2 / 3-3 / 0-1 / 4-4", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 0 and data["side"] == "pair 0+2"
    assert (data["result"], data["margin"], data["value"]) == ("win", 14, BIG + 14)
    assert data["best_moves"] == ["1-5@left", "1-5@right"]
    assert data["line"][:3] == ["seat 0: 1-5@left", "seat 1: pass", "seat 2: 0-1@left"]
    assert data["end"]["winners"] == [0, 2] and not data["end"]["blocked"]
    rc = main(["solve", "troshin-4-pairs; turn=1; ends=6|6; hands=1-2 / 0-3 / 2-4 / 4-5"])
    out = capsys.readouterr().out
    assert rc == 0 and "seat 1 to move (for pair 1+3: values are that pair's): loss, final margin -3" in out
    assert "blocked, pair 0+2 wins" in out
