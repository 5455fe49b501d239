"""Backgammon search agents: expectimax and mcts play legal whole games; 0-ply expectimax
with pubeval chooses what pubeval chooses; budgets are checked."""
import numpy as np
import pytest

from pipslab.agents.base import Observation
from pipslab.agents.registry import make_agent
from pipslab.agents.backgammon_value import swap as _swap
from pipslab.agents.search_backgammon import ROLL_P, ROLLS, _finished_value, _is_race
from pipslab.envs.backgammon import BackgammonState, Position, new_game
from pipslab.envs.errors import PipslabError
from pipslab.envs.game import get_game

from harness_helpers import play_checked


def test_the_21_rolls_carry_probability_one():
    assert len(ROLLS) == 21 and abs(ROLL_P.sum() - 1) < 1e-12
    assert sum(1 for a, b in ROLLS if a == b) == 6


def test_race_and_finished_helpers():
    start = np.array(Position.start())
    assert not _is_race(start)
    assert np.array_equal(_swap(_swap(start)), start)
    race = Position.from_points({1: 5, 2: 5}, {20: 5, 24: 5})
    assert _is_race(np.array(race))
    done = np.zeros(26, dtype=np.int64)  # I have borne off all 15
    done[20] = -15                       # all his checkers on my 20 (his home board)
    assert _finished_value(done[None, :])[0] == 200.0  # a gammon: he bore off none
    done[20], done[3] = -14, -1         # one of his in my home board: a backgammon
    assert _finished_value(done[None, :])[0] == 300.0


def test_zero_ply_pubeval_expectimax_plays_like_pubeval():
    rng = np.random.default_rng(0)
    a, b = make_agent("expectimax:plies=0,eval=pubeval", "backgammon"), make_agent("pubeval", "backgammon")
    state = new_game(rng)
    checked = 0
    while not state.is_terminal and checked < 60:
        if state.is_chance:
            state.apply_chance(rng)
            continue
        p = state.current_player
        obs = Observation(p, state.observe(p), state.legal_actions(), state.num_actions)
        x, y = a.act(obs, rng), b.act(obs, rng)
        assert x == y
        state.apply(x)
        checked += 1


@pytest.mark.parametrize("spec", ["expectimax:plies=1,eval=pubeval,filter=3", "mcts:iters=30",
                                  "mcts:iters=10,eval=rollout", "mcts:iters=20,eval=race",
                                  pytest.param("expectimax:plies=0,eval=rollout,filter=2", marks=pytest.mark.slow)])
def test_search_agents_finish_games_legally(spec):
    spec_obj = get_game("backgammon")
    agents = [make_agent(spec, "backgammon"), make_agent("race", "backgammon")]
    state, moves = play_checked(spec_obj, {}, agents, [3, 0, 0], [3, 1, 0])
    assert moves > 10
    assert sorted(state.returns()) in ([-1.0, 1.0], [-2.0, 2.0], [-3.0, 3.0])


def test_expectimax_takes_a_winning_bear_off():
    # me: two checkers on my 1-point, dice 2-1: both come off and the game is won
    pos = Position.from_points({1: 2}, {24: 15})
    state = BackgammonState.from_position_id(pos.id, dice=(2, 1))
    agent = make_agent("expectimax:plies=1", "backgammon")
    rng = np.random.default_rng(0)
    while not state.is_terminal:
        p = state.current_player
        state.apply(agent.act(Observation(p, state.observe(p), state.legal_actions(), state.num_actions), rng))
    assert state.result()["winner"] == 0


@pytest.mark.parametrize("spec, message", [
    ("expectimax:plies=3", "plies must be 0, 1 or 2"),
    ("expectimax:filter=0", "filter must be at least 1"),
    ("expectimax:eval=tdgammon", "unknown backgammon evaluator"),
    ("mcts:iters=0", "iters must be at least 1"),
])
def test_bad_parameters(spec, message):
    with pytest.raises(PipslabError, match=message):
        make_agent(spec, "backgammon")


@pytest.mark.slow
def test_one_ply_value_is_the_average_over_his_rolls_of_my_state_value():
    """A plain roll-by-roll reference for the batched 1-ply: for each of the 21 rolls his
    reply is the play pubeval ranks first, and the leaf is my state value on roll."""
    from pipslab.agents.backgammon_value import finished_points, swap
    from pipslab.agents.search_backgammon import make_evaluator
    from pipslab.envs.backgammon import fast
    agent = make_agent("expectimax:plies=1,eval=pubeval", "backgammon")
    ev = make_evaluator("pubeval")
    rng = np.random.default_rng(4)
    checked = 0
    for _ in range(40):
        board = np.array(Position.start(), dtype=np.int64)
        for _ in range(int(rng.integers(0, 30))):   # somewhere in a pubeval self-play game
            a, b = (int(v) for v in rng.integers(1, 7, size=2))
            rows = fast.afterstates(board, a, b).astype(np.int64)
            if len(rows):
                board = rows[int(np.argmax(ev.ranked(rows, _is_race(board))))]
                if finished_points(board)[0]:
                    break
            board = swap(board)
        else:
            a, b = (int(v) for v in rng.integers(1, 7, size=2))
            mine = fast.afterstates(board, a, b).astype(np.int64)
            for after in mine[:3]:
                expected = 0.0
                for (x, y), p in zip(ROLLS, ROLL_P):
                    before = swap(after)
                    rows = fast.afterstates(before, x, y).astype(np.int64)
                    rows = rows if len(rows) else before[None, :]
                    reply = rows[int(np.argmax(ev.ranked(rows, _is_race(before))))]
                    done = finished_points(reply)[0]
                    expected += p * (-done if done else ev.state_values(swap(reply)[None, :])[0])
                assert agent.value(after, 1) == pytest.approx(expected, abs=1e-12)
                checked += 1
    assert checked > 50
