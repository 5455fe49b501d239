"""The evaluator seam (agents/evaluators.py): evaluators registered from this file plug into
backgammon expectimax/mcts and domino ismcts/pimc by name; values are for the named seat,
on the game's scale, exact for finished positions; the solver's inline heuristic and the
``hand`` evaluator through the seam agree; one table of the 21 rolls."""
import random

import numpy as np
import pytest

from pipslab.agents import evaluators as seam
from pipslab.agents.backgammon_value import finished_points, swap
from pipslab.agents.base import Observation
from pipslab.agents.dominoes_value import HandEvaluator, PipsEvaluator, DominoRollout
from pipslab.agents.evaluators import (
    OPPONENT, ON_ROLL, BackgammonEvaluator, DominoEvaluator, equity, make_evaluator, register_evaluator,
)
from pipslab.agents.registry import make_agent
from pipslab.agents.solver import Solver
from pipslab.envs.backgammon import Position, fast, new_game
from pipslab.envs.dominoes.engine import deal
from pipslab.envs.dominoes.variants import HAPPY_BLOCK, HAPPY_DRAW, troshin, triple
from pipslab.envs.errors import PipslabError


# --------------------------------------------------------------- test evaluators
WEIGHTS = np.random.default_rng(0).normal(0, 0.05, 26)


class RacingNet(BackgammonEvaluator):
    """A stand-in for a trained network: only ``probabilities`` (from the pip lead and
    fixed random weights, so no two plays tie), and a count of the boards it was asked about."""

    def __init__(self, arg: str = "1"):
        self.scale = float(arg)
        self.boards = 0

    def probabilities(self, rows):
        rows = seam.boards(rows)
        self.boards += len(rows)
        mine, theirs = np.clip(rows, 0, None), np.clip(-rows, 0, None)
        lead = ((theirs @ (25 - np.arange(26)) - mine @ np.arange(26)) / 100.0 + rows @ WEIGHTS) * self.scale
        win = 1 / (1 + np.exp(-lead))
        return np.stack([win, 0.2 * win, 0.01 * win, 0.2 * (1 - win), 0.01 * (1 - win)], axis=1)


class CountingPips(PipsEvaluator):
    """``pips`` that counts its calls (a domino evaluator defined outside the agents)."""

    calls = 0

    def values(self, states, seat):
        CountingPips.calls += 1
        return super().values(states, seat)


class HandCopy(HandEvaluator):
    """``hand`` under another name: the solver then goes through the seam, not its inline copy."""


class OnlyValues:
    """The bare protocol, no base class: ``values(batch, seat)`` and nothing else."""

    def values(self, states, seat):
        return np.array([0.5 if s.current_player == seat else -0.5 for s in states])


register_evaluator("backgammon", "test-racing-net", RacingNet)
register_evaluator("dominoes", "test-pips", CountingPips)
register_evaluator("dominoes", "test-hand", HandCopy)
register_evaluator("happy", "test-only-values", OnlyValues)   # a game's name stands for its family


def observation(state):
    p = state.current_player
    return Observation(p, state.observe(p), state.legal_actions(), state.num_actions)


# --------------------------------------------------------------------- registry
def test_registry_by_family_and_errors():
    assert {"pubeval", "race", "rollout", "gnubg", "td", "test-racing-net"} <= set(seam.evaluator_names("backgammon"))
    assert {"rollout", "hand", "pips", "test-pips", "test-only-values"} <= set(seam.evaluator_names("dominoes"))
    assert seam.evaluator_names("triple") == seam.evaluator_names("dominoes")
    ev = make_evaluator("backgammon", "test-racing-net:2")
    assert isinstance(ev, RacingNet) and ev.scale == 2.0
    assert isinstance(make_evaluator("dominoes", "pips:4"), PipsEvaluator)
    with pytest.raises(PipslabError, match="unknown dominoes evaluator 'nope'.*hand"):
        make_evaluator("dominoes", "nope")
    with pytest.raises(PipslabError, match="unknown game family"):
        make_evaluator("chess", "x")
    with pytest.raises(PipslabError, match="plain word"):
        register_evaluator("dominoes", "a:b", PipsEvaluator)
    with pytest.raises(PipslabError, match="pips:T"):
        make_evaluator("dominoes", "pips:hot")
    with pytest.raises(PipslabError, match="unknown dominoes evaluator"):
        make_agent("ismcts:iters=5,eval=nope", "happy")
    with pytest.raises(PipslabError, match="needs a depth limit"):
        make_agent("pimc:samples=2,depth=0,eval=pips", "happy")


# ------------------------------------------------------------------- backgammon
def test_backgammon_values_are_equity_for_the_named_seat_and_exact_when_finished():
    net = RacingNet()
    board = np.array(Position.start(), dtype=np.int64)
    rows = fast.afterstates(board, 6, 1).astype(np.int64)
    p = net.probabilities(rows)
    assert net.has_probabilities and not BackgammonEvaluator().has_probabilities
    np.testing.assert_array_equal(net.values(rows, ON_ROLL), equity(p))
    np.testing.assert_array_equal(net.values(rows, OPPONENT), -equity(p))
    # afterstate scores follow: minus the opponent's equity on roll
    np.testing.assert_array_equal(net.afterstate_values(rows, False), -equity(net.probabilities(swap(rows))))
    # finished: the player who just moved has borne off all 15 -> -1/-2/-3 for the one on roll
    done = np.zeros(26, dtype=np.int64)
    done[20] = -15                      # the mover (his side) bore off all; mine all still out
    on_roll = swap(done)                # the board from my side, on roll
    assert finished_points(done)[0] == 2
    for ev in (net, make_evaluator("backgammon", "pubeval"), make_evaluator("backgammon", "race")):
        assert ev.values(on_roll[None, :], ON_ROLL)[0] == -2.0
        assert ev.values(on_roll[None, :], OPPONENT)[0] == 2.0
    # rankers: their value is the calibrated state value, in -1..1 (no gammons)
    pub = make_evaluator("backgammon", "pubeval")
    v = pub.values(rows, ON_ROLL)
    assert np.all(np.abs(v) < 1) and not pub.in_points
    np.testing.assert_array_equal(v, pub.state_values(rows))
    with pytest.raises(PipslabError, match="ON_ROLL"):
        net.values(rows, 2)


def test_td_is_on_the_seam_with_probabilities():
    td = make_evaluator("backgammon", "td")
    rows = fast.afterstates(np.array(Position.start(), dtype=np.int64), 3, 1).astype(np.int64)
    assert td.has_probabilities and td.probabilities(rows).shape == (len(rows), 5)
    np.testing.assert_array_equal(td.values(rows, ON_ROLL), td.state_values(rows))
    np.testing.assert_array_equal(seam.equity(td.probabilities(rows)), td.state_values(rows))


@pytest.mark.peers
def test_gnubg_gives_probabilities_and_their_equity():
    pytest.importorskip("gnubg_nn")
    gnubg = make_evaluator("backgammon", "gnubg")
    rows = fast.afterstates(np.array(Position.start(), dtype=np.int64), 6, 5).astype(np.int64)
    p = gnubg.probabilities(rows)
    assert gnubg.has_probabilities and p.shape == (len(rows), 5) and np.all((p >= 0) & (p <= 1))
    np.testing.assert_allclose(gnubg.values(rows, ON_ROLL), equity(p), atol=1e-12)


@pytest.mark.parametrize("spec", ["expectimax:plies=1,eval=test-racing-net,filter=3",
                                  "mcts:iters=12,eval=test-racing-net:3"])
def test_a_registered_backgammon_evaluator_plugs_into_search_by_name(spec):
    agent = make_agent(spec, "backgammon")
    assert isinstance(agent.evaluator, RacingNet)
    rng = np.random.default_rng(2)
    state = new_game(rng)
    moves = 0
    while not state.is_terminal and moves < 12:
        if state.is_chance:
            state.apply_chance(rng)
            continue
        action = agent.act(observation(state), rng)
        assert action in state.legal_actions()
        state.apply(action)
        moves += 1
    assert agent.evaluator.boards > 0


def test_zero_ply_with_a_probability_evaluator_plays_its_best_equity():
    from pipslab.envs.backgammon import legal_plays
    agent = make_agent("expectimax:plies=0,eval=test-racing-net,filter=1000", "backgammon")
    net = RacingNet()
    rng = np.random.default_rng(5)
    state = new_game(rng)
    checked = 0
    while not state.is_terminal and checked < 15:
        if state.is_chance:
            state.apply_chance(rng)
            continue
        view = state.observe(state.current_player)
        plays = legal_plays(view.position, view.dice)
        if len(plays) > 1:
            rows = np.array([p.position for p in plays], dtype=np.int64)
            best = plays[int(np.argmax(-equity(net.probabilities(swap(rows)))))]
            assert agent.choose_play(view, plays, rng).position == best.position
            checked += 1
        state.apply(agent.act(observation(state), rng))
    assert checked == 15


def test_one_table_of_rolls():
    from pipslab.agents import search_backgammon
    from pipslab.envs.backgammon import game
    assert search_backgammon.ROLLS is game.ROLLS and search_backgammon.ROLL_P is game.ROLL_PROBABILITIES
    assert game.ROLLS == tuple(r for r, _ in game.CHANCE_OUTCOMES) and len(set(game.ROLLS)) == 21
    assert all(a >= b for a, b in game.ROLLS) and abs(game.ROLL_PROBABILITIES.sum() - 1) < 1e-12


# --------------------------------------------------------------------- dominoes
def played(variant, seed, moves):
    rng = random.Random(seed)
    s = deal(variant, rng)
    for _ in range(moves):
        if s.is_terminal:
            break
        legal = s.legal_actions()
        s.apply(legal[rng.randrange(len(legal))])
    return s


def finished(variant, seed):
    return played(variant, seed, 500)


@pytest.mark.parametrize("variant", [HAPPY_BLOCK, HAPPY_DRAW, troshin(3), troshin(4, pairs=True), triple(3)])
def test_domino_values_are_for_the_seat_zero_sum_and_exact_when_finished(variant):
    evaluators = [DominoRollout(), HandEvaluator(), PipsEvaluator(), make_evaluator("dominoes", "rollout:3")]
    for ev in evaluators:
        ev.reseed(random.Random(0))
    end = finished(variant, 1)
    for ev in evaluators:
        for seat in range(variant.players):
            assert ev.values([end], seat)[0] == end.returns()[seat]
    states = [played(variant, seed, 6) for seed in range(4)]
    states = [s for s in states if not s.is_terminal]
    for ev in (HandEvaluator(), PipsEvaluator()):
        r = ev.evaluate(states)
        assert r.shape == (len(states), variant.players)
        assert np.allclose(r.sum(axis=1), 0) and np.all(np.abs(r) < 1)
        for seat in range(variant.players):
            np.testing.assert_array_equal(ev.values(states, seat), r[:, seat])


def test_pips_favours_the_lighter_hand_and_rollout_leaves_its_input_alone():
    s = played(HAPPY_BLOCK, 3, 4)
    pips = s.pips_left()
    v = PipsEvaluator(5).values([s], 0)[0]
    assert np.sign(v) == np.sign(pips[1] - pips[0])
    assert v == pytest.approx(np.tanh((pips[1] - pips[0]) / 10))
    before = (s.hands[:], s.current_player, s.bpos, s.is_terminal)
    a, b = DominoRollout(4), DominoRollout(4)
    a.reseed(np.random.default_rng(7))
    b.reseed(np.random.default_rng(7))
    assert np.array_equal(a.evaluate([s]), b.evaluate([s]))     # the numbers come from reseed's rng
    assert (s.hands, s.current_player, s.bpos, s.is_terminal) == before


@pytest.mark.parametrize("spec, game, variant", [
    ("ismcts:iters=25,eval=test-pips", "happy", HAPPY_BLOCK),
    ("ismcts:iters=25,eval=test-pips:3", "triple", triple(3)),
    ("ismcts:iters=25,eval=test-only-values", "happy", HAPPY_DRAW),
    ("pimc:samples=2,depth=2,eval=test-pips", "happy", HAPPY_DRAW),
])
def test_a_registered_domino_evaluator_plugs_into_search_by_name(spec, game, variant):
    before = CountingPips.calls
    agent = make_agent(spec, game)
    checked = 0
    for seed in range(6):
        s = played(variant, seed, 3)
        if s.is_terminal or len(s.legal_actions()) < 2:
            continue
        assert agent.act(observation(s), np.random.default_rng(seed)) in s.legal_actions()
        checked += 1
    assert checked
    if "test-pips" in spec:
        assert CountingPips.calls > before


def test_hand_through_the_seam_is_the_solvers_inline_heuristic():
    """The solver's depth limit: ``hand`` computed inline on bitmasks, and the same
    evaluator reached through the seam (the search's line replayed on the real state)
    give the same move values, and so pimc the same moves."""
    rng = random.Random(9)
    checked = 0
    for g in range(12):
        s = played(HAPPY_DRAW, 100 + g, rng.randrange(1, 6))
        if s.is_terminal:
            continue
        for depth in (1, 3):
            inline = Solver("margin", max_depth=depth).move_values(s)
            assert Solver("margin", max_depth=depth, evaluator=HandCopy()).move_values(s) == inline
            checked += 1
        # the heuristic's scale: the solver's units / 1000, for the side to move
        me = s.current_player
        solver = Solver("margin", max_depth=1)
        solver._prepare(s)
        assert round(HandEvaluator().values([s], me)[0] * 1000) == solver._evaluate(s.hands[me], s.hands[1 - me])
    assert checked >= 10
    s = played(HAPPY_DRAW, 4, 2)
    for seed in range(3):
        a = make_agent("pimc:samples=3,depth=2", "happy").act(observation(s), np.random.default_rng(seed))
        b = make_agent("pimc:samples=3,depth=2,eval=test-hand", "happy").act(observation(s),
                                                                          np.random.default_rng(seed))
        assert a == b


def test_default_domino_evaluators_are_todays():
    assert isinstance(make_agent("ismcts:iters=5", "happy").evaluator, DominoRollout)
    assert type(make_agent("pimc:samples=2", "happy").evaluator) is HandEvaluator
    assert isinstance(make_evaluator("dominoes", "hand"), DominoEvaluator)
