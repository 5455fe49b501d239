"""Backgammon search agents: expectimax and mcts play legal whole games; 0-ply expectimax
with pubeval (td) chooses what pubeval (td) chooses; GNU BG's move filters keep the best k
within a margin at each ply and, opened wide, leave exhaustive expectimax; budgets are checked."""
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


@pytest.mark.parametrize("evaluator", ["pubeval", "td"])
def test_zero_ply_expectimax_plays_like_its_evaluator(evaluator):
    rng = np.random.default_rng(0)
    a, b = make_agent(f"expectimax:plies=0,eval={evaluator}", "backgammon"), make_agent(evaluator, "backgammon")
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
    ("expectimax:filter2=0", "filter2 must be at least 1"),
    ("expectimax:margin=-0.1", "margin must be 0 or more"),
    ("expectimax:plies=2,margin2=-1", "margin2 must be 0 or more"),
    ("expectimax:margin2=wide", "margin2='wide' must be a number"),
    ("expectimax:filter2=2.5", "filter2='2.5' must be a whole number"),
    ("expectimax:eval=tdgammon", "unknown backgammon evaluator"),
    ("mcts:iters=0", "iters must be at least 1"),
])
def test_bad_parameters(spec, message):
    with pytest.raises(PipslabError, match=message) as err:
        make_agent(spec, "backgammon")
    assert "\n" not in str(err.value)


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


# ------------------------------------------------------------ the move filters
class Linear:
    """A stub value function whose numbers the test controls: an afterstate's equity for
    the mover is ``tanh(board . w)`` (in points, so the margins apply to it)."""

    in_points = True

    def __init__(self, seed=0):
        self.w = np.random.default_rng(seed).normal(0, 0.3, 26)

    def afterstate_values(self, rows, race):
        return np.tanh(np.asarray(rows, dtype=float).reshape(-1, 26) @ self.w)


def _decision(mine, his, dice):
    from pipslab.envs.backgammon.game import whole_plays
    state = BackgammonState.from_position_id(Position.from_points(mine, his).id, dice=dice)
    view = state.observe(state.current_player)
    plays = whole_plays(view.position, view.dice)
    return view, plays, np.array([p.position for p in plays], dtype=np.int64)


def _agent(stub, **params):
    """An expectimax agent on ``stub`` whose batched expansions are recorded: the boards
    (before his roll) of each call."""
    from pipslab.agents.search_backgammon import ExpectimaxAgent
    agent = ExpectimaxAgent(eval=stub, **params)
    calls, inner = [], agent._replies

    def spy(befores, leaf=True):
        calls.append(np.array(befores))
        return inner(befores, leaf)
    agent._replies = spy
    return agent, calls


def test_keep_best_keeps_at_most_k_within_the_margin():
    from pipslab.agents.search_backgammon import keep_best
    v = [0.1, 0.5, 0.45, 0.5, -1.0, 0.3]
    assert keep_best(v, 8, 0.1).tolist() == [1, 3, 2]        # equal values in their order
    assert keep_best(v, 2, 10).tolist() == [1, 3]
    assert keep_best(v, 8, 0).tolist() == [1, 3]
    assert keep_best(v, 1, 0).tolist() == [1]
    from pipslab.agents.search_backgammon import first_best   # each roll's reply: argmax, first of equals
    assert first_best(np.array([1.0, 3, 3, 0, 2, 2]), np.array([0, 3, 4, 6])).tolist() == [1, 3, 4]


def test_the_filters_keep_the_best_k_within_the_margin_at_each_ply():
    stub = Linear()
    view, plays, rows = _decision(START_MINE, START_HIS, (6, 2))
    assert len(plays) > 10
    ev = _agent(stub)[0].evaluator
    zero = ev.ranked(rows, False)
    order = np.argsort(-zero)
    assert len(set(zero.round(12))) == len(zero)               # no ties: the sets below are unique
    # root: filter=5, a margin that admits exactly the best three
    margin = zero[order[0]] - (zero[order[2]] + zero[order[3]]) / 2
    for k, m, kept in ((5, margin, order[:3]), (5, 99.0, order[:5]), (2, margin, order[:2])):
        agent, calls = _agent(stub, plies=1, filter=k, margin=m)
        chosen = agent.choose_play(view, plays, np.random.default_rng(0))
        assert len(calls) == 1 and np.array_equal(calls[0], _swap(rows[kept]))
        one = agent.values(rows[kept], 1)
        assert chosen.position == plays[int(kept[int(np.argmax(one))])].position
    # 1 ply -> 2 ply: the best filter2 of the six kept at the root, within margin2 of the best 1-ply value
    six = order[:6]
    one = _agent(stub)[0].values(rows[six], 1)
    by_one = six[np.argsort(-one)]
    gaps = -np.diff(np.sort(one)[::-1])
    assert gaps.min() > 1e-9
    margin2 = (np.sort(one)[::-1][0] - np.sort(one)[::-1][2]) - gaps[1] / 2   # admits the best two
    for k2, m2, kept2 in ((3, margin2, by_one[:2]), (3, 99.0, by_one[:3]), (1, 99.0, by_one[:1]),
                          (3, gaps[0] / 2, by_one[:1])):
        agent, calls = _agent(stub, plies=2, filter=6, margin=99.0, filter2=k2, margin2=m2)
        chosen = agent.choose_play(view, plays, np.random.default_rng(0))
        chosen_row = np.array(chosen.position)
        assert any(np.array_equal(chosen_row, rows[i]) for i in kept2)   # never a dropped play
        if len(kept2) == 1:
            assert len(calls) == 1                        # nothing left to search at 2 ply
            continue
        from pipslab.agents.search_backgammon import ExpectimaxAgent
        replies = ExpectimaxAgent(eval=stub)._replies(_swap(rows[kept2]))[0]   # his 21 replies to each
        assert len(calls) == 2 and np.array_equal(calls[1], _swap(replies))
        two = agent.values(rows[kept2], 2)
        assert np.array_equal(chosen_row, rows[kept2[int(np.argmax(two))]])


START_MINE = {24: 2, 13: 5, 8: 3, 6: 5}
START_HIS = {1: 2, 12: 5, 17: 3, 19: 5}


def _reference_value(ev, after, plies):
    """Expectimax by the definition, one roll and one evaluator call at a time: the
    player's reply is the play ``ranked`` puts first; the leaf is the seam's value."""
    from pipslab.agents.backgammon_value import finished_points
    from pipslab.agents.evaluators import OPPONENT
    from pipslab.envs.backgammon import fast
    done = finished_points(after[None, :])[0]
    if done:
        return done
    before = _swap(after)
    if plies == 0:
        return float(ev.values(before[None, :], OPPONENT)[0])
    total = 0.0
    for (a, b), p in zip(ROLLS, ROLL_P):
        rows = fast.afterstates(before, a, b).astype(np.int64)
        rows = rows if len(rows) else before[None, :]
        reply = rows[int(np.argmax(ev.ranked(rows, _is_race(before))))]
        total -= p * _reference_value(ev, reply, plies - 1)
    return total


@pytest.mark.parametrize("eval", ["stub", "pubeval"])
def test_unfiltered_two_ply_is_exhaustive_expectimax(eval):
    """filter and margins that keep everything: 2 ply chooses the play an exhaustive,
    unbatched 2-ply reference values best, and values every play as it does (a ranker,
    pubeval, takes the other path: its values are its calibrated state values, not its scores)."""
    from pipslab.agents.search_backgammon import ExpectimaxAgent
    # a late middle game: contact on one side, a race for some of his replies, bear-offs near
    view, plays, rows = _decision({20: 1, 8: 2, 6: 3, 4: 2, 2: 2}, {22: 2, 19: 3, 3: 1, 12: 1}, (4, 1))
    assert len(plays) > 5
    agent = ExpectimaxAgent(plies=2, eval=Linear(3) if eval == "stub" else eval,
                            filter=1000, margin=1e9, filter2=1000, margin2=1e9)
    ref = np.array([_reference_value(agent.evaluator, r, 2) for r in rows])
    np.testing.assert_allclose(agent.values(rows, 2), ref, atol=1e-9)
    np.testing.assert_allclose(agent.values(rows, 1), [_reference_value(agent.evaluator, r, 1) for r in rows],
                               atol=1e-9)
    chosen = agent.choose_play(view, plays, np.random.default_rng(0))
    assert chosen.position == plays[int(np.argmax(ref))].position
