"""pipslab's games as OpenSpiel Python games (``pipslab.envs.openspiel_games``): OpenSpiel's
own API checks, its bots, CFR and exploitability on the tiny double-2 game."""
from math import comb

import numpy as np
import pytest

import pyspiel  # a missing open-spiel must fail loudly, not skip

from open_spiel.python import policy
from open_spiel.python.algorithms import cfr, evaluate_bots, exploitability, get_all_states, ismcts, mcts
from open_spiel.python.bots import uniform_random

import pipslab.envs.openspiel_games  # noqa: F401  (registers the pipslab_* games)
from pipslab.envs.dominoes.tiles import tile_name

pytestmark = pytest.mark.peers

TINY = "pipslab_happy(mode=block,max_pip=2)"


@pytest.mark.parametrize("name", [
    TINY, "pipslab_happy(mode=draw,max_pip=3)", "pipslab_happy", "pipslab_happy(mode=draw)",
    "pipslab_troshin(players=2)", "pipslab_troshin(players=3)", "pipslab_troshin(players=4,pairs=True)",
    "pipslab_triple(players=2)", "pipslab_triple(players=4)",
    "pipslab_troshin(players=2,match=True)", "pipslab_troshin(players=4,pairs=True,match=True)",
])
def test_openspiel_random_simulation_checks_dominoes(name):
    # OpenSpiel's API consistency checks (legal actions, chance outcomes summing to 1,
    # clone, history, strings and tensors for every seat at every state, returns, and a
    # serialize/deserialize round trip)
    pyspiel.random_sim_test(pyspiel.load_game(name), num_sims=3, serialize=True, verbose=False)


@pytest.mark.slow
def test_openspiel_random_simulation_checks_backgammon():
    pyspiel.random_sim_test(pyspiel.load_game("pipslab_backgammon"), num_sims=1, serialize=False, verbose=False)


def test_the_deal_is_uniform_over_hands():
    # the chance nodes deal each hand in ascending order, with the probability that a
    # tile is the lowest of a uniform subset: every deal of the double-2 set is equally likely
    game = pyspiel.load_game(TINY)
    states = get_all_states.get_all_states(game, include_terminals=False, include_chance_states=True)
    reach = {}

    def walk(state, p):
        if state.is_chance_node() and len(state.history()) < 4:
            for a, q in state.chance_outcomes():
                walk(state.child(a), p * q)
        else:
            reach[tuple(state.history())] = p

    walk(game.new_initial_state(), 1.0)
    assert len(reach) == comb(6, 2) * comb(4, 2)
    assert np.allclose(list(reach.values()), 1 / 90)
    assert len(states) > 90


def _tiles_named(text: str) -> set:
    return {tok for tok in text.replace(",", " ").split() if len(tok) == 3 and tok[1] == "-"}


def test_seat_views_hide_the_other_hand_and_the_boneyard():
    game = pyspiel.load_game("pipslab_happy(mode=draw,max_pip=3)")
    rng = np.random.default_rng(3)
    state = game.new_initial_state()
    draws = 0
    while not state.is_terminal():
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            assert abs(sum(probs) - 1) < 1e-12
            state.apply_action(int(rng.choice(actions, p=probs)))
            continue
        engine = state.engine
        for seat in (0, 1):
            # every tile a seat's strings name is its own (held, dealt, drawn) or on the table
            mine = {tile_name(t) for t in state.dealt[seat] + state.drawn[seat]}
            table = {tile_name(t) for t in range(28) if engine.table >> t & 1}
            named = _tiles_named(state.information_state_string(seat)) | _tiles_named(state.observation_string(seat))
            assert named <= mine | table
            tensor = np.asarray(state.observation_tensor(seat))
            assert tensor.shape == (111,) and tensor[:28].sum() == bin(engine.hands[seat]).count("1")
        draws += 56 in state.legal_actions()
        state.apply_action(int(rng.choice(state.legal_actions())))
    assert draws and any(state.drawn)
    for seat in (0, 1):   # a seat's own draws are written into its string, by tile
        info = state.information_state_string(seat)
        assert all(f"{seat}:draw {tile_name(t)}" in info for t in state.drawn[seat])
    assert state.returns() == [float(r) for r in state.engine.returns()]


def test_information_states_have_perfect_recall():
    # a seat's information state string never merges two histories that differ in what it saw
    game = pyspiel.load_game("pipslab_happy(mode=draw,max_pip=2)")
    states = get_all_states.get_all_states(game, include_terminals=False, include_chance_states=False)
    seen = {}
    for state in states.values():
        p = state.current_player()
        own = [a.action for a in state.full_history() if a.player == p]
        key = state.information_state_string(p)
        # same info string -> same own actions and same legal actions
        assert seen.setdefault(key, (own, state.legal_actions())) == (own, state.legal_actions())


class _Bot(ismcts.ISMCTSBot):
    """OpenSpiel's Python ISMCTS bot with the two Bot methods ``evaluate_bots`` calls."""

    def restart_at(self, state):
        self.reset()

    def inform_action(self, state, player, action):
        pass


def test_ismcts_bot_plays_happy_block_through_evaluate_bots():
    game = pyspiel.load_game("pipslab_happy")
    rng = np.random.RandomState(0)
    evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(1))
    bots = [_Bot(game, evaluator, 1.0, 20, random_state=np.random.RandomState(2)),
            uniform_random.UniformRandomBot(1, np.random.RandomState(3))]
    returns = evaluate_bots.evaluate_bots(game.new_initial_state(), bots, rng)
    assert sorted(returns) in ([-1.0, 1.0], [0.0, 0.0])


def _random_state(game, rng, moves):
    state = game.new_initial_state()
    while not state.is_terminal() and moves:
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(actions, p=probs)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
            moves -= 1
    while state.is_chance_node():
        actions, probs = zip(*state.chance_outcomes())
        state.apply_action(int(rng.choice(actions, p=probs)))
    return state


@pytest.mark.parametrize("name", ["pipslab_happy", "pipslab_happy(mode=draw)", "pipslab_happy(mode=draw,max_pip=3)",
                                  "pipslab_troshin(players=3)", "pipslab_troshin(players=4,pairs=True)"])
def test_resampling_keeps_the_seat_information_state(name):
    game = pyspiel.load_game(name)
    rng = np.random.default_rng(4)
    differ = other_drew = 0
    for k in range(12):
        state = _random_state(game, rng, int(rng.integers(0, 30)))
        seat = state.current_player() if not state.is_terminal() else int(rng.integers(game.num_players()))
        sampler = iter(np.linspace(0.05, 0.95, 4))
        worlds = [state.resample_from_infostate(seat, lambda: next(sampler)) for _ in range(4)]
        for w in worlds:
            # the seat cannot tell the sampled world from the real one; the rest is a legal game
            assert w.information_state_string(seat) == state.information_state_string(seat)
            assert w.legal_actions() == state.legal_actions() and w.current_player() == state.current_player()
            assert [h.player for h in w.full_history()] == [h.player for h in state.full_history()]
        differ += len({str(w) for w in worlds}) > 1
        other_drew += any(d for q, d in enumerate(state.drawn) if q != seat)
    assert differ   # the hidden tiles differ between samples
    assert other_drew or "draw" not in name and "troshin" not in name   # the draw games' walks were tried


def test_resampling_refuses_triple_in_one_line():
    state = _random_state(pyspiel.load_game("pipslab_triple"), np.random.default_rng(0), 1)
    with pytest.raises(Exception, match="luck draws"):
        state.resample_from_infostate(state.current_player(), lambda: 0.5)


def test_ismcts_bot_plays_a_draw_game_through_evaluate_bots():
    game = pyspiel.load_game("pipslab_happy(mode=draw,max_pip=3)")
    evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(1))
    bots = [uniform_random.UniformRandomBot(0, np.random.RandomState(3)),
            _Bot(game, evaluator, 1.0, 20, random_state=np.random.RandomState(2))]
    returns = evaluate_bots.evaluate_bots(game.new_initial_state(), bots, np.random.RandomState(5))
    assert sorted(returns) in ([-1.0, 1.0], [0.0, 0.0])


class _PipEvaluator(mcts.Evaluator):
    """A cheap leaf value for the test: the pip race, squashed (no rollouts)."""

    def evaluate(self, state):
        if state.is_terminal():
            return np.array(state.returns())
        pips = state.engine.pip_counts()
        v = float(np.tanh((pips[1] - pips[0]) / 30))
        return np.array([v, -v])

    def prior(self, state):
        legal = state.legal_actions()
        return [(a, 1 / len(legal)) for a in legal]


@pytest.mark.slow
def test_mcts_bot_plays_backgammon_through_evaluate_bots():
    game = pyspiel.load_game("pipslab_backgammon")
    rng = np.random.RandomState(0)
    bots = [mcts.MCTSBot(game, 1.4, 4, _PipEvaluator(), random_state=np.random.RandomState(1)),
            uniform_random.UniformRandomBot(1, np.random.RandomState(2))]
    returns = evaluate_bots.evaluate_bots(game.new_initial_state(), bots, rng)
    assert returns[0] == -returns[1] and abs(returns[0]) in (1.0, 2.0, 3.0)


@pytest.mark.slow
def test_cfr_plus_reaches_low_exploitability_on_the_tiny_game():
    game = pyspiel.load_game(TINY)
    uniform = exploitability.exploitability(game, policy.UniformRandomPolicy(game))
    solver = cfr.CFRPlusSolver(game)
    for _ in range(15):
        solver.evaluate_and_update_policy()
    found = exploitability.exploitability(game, solver.average_policy())
    assert 0 <= found < 1e-4 < uniform


def test_a_deterministic_policy_has_an_exploitability():
    # the first legal action everywhere: a pure strategy, exploitable, never below 0
    game = pyspiel.load_game(TINY)
    first = policy.FirstActionPolicy(game)
    value = exploitability.exploitability(game, first)
    assert value > 0


def test_a_match_deals_every_hand_through_the_deal_s_chance_nodes():
    """Between a match's hands the engine's match is a chance node; the adapter deals the
    next hand tile by tile (enumerated outcomes, as the first) and keeps the scores; the
    seats' strings keep the finished hands (perfect recall across hands)."""
    game = pyspiel.load_game("pipslab_troshin(players=2,match=True)")
    rng = np.random.default_rng(5)
    state = game.new_initial_state()
    boundaries, scores = 0, None
    while not state.is_terminal():
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            assert abs(sum(probs) - 1) < 1e-12
            if state.engine is not None and state.engine.is_chance and not any(state.dealt):
                boundaries += 1     # a hand just ended: the next deal starts from nothing dealt
                m = state.engine
                assert state.current_player() == pyspiel.PlayerId.CHANCE and len(actions) == 28 - 6
                assert f"match {m.scores[0]}/{m.scores[1]}" in state.information_state_string(0)
                assert state.information_state_string(1).count("; over") == m.hand_index
                scores = list(m.scores)
            state.apply_action(int(rng.choice(actions, p=probs)))
            if scores is not None and not state.engine.is_chance:   # the next hand is dealt
                assert state.engine.scores == scores and state.engine.hand.table == 0
                scores = None
            continue
        state.apply_action(int(rng.choice(state.legal_actions())))
    m = state.engine
    assert boundaries == m.hand_index - 1 >= 1 and max(m.scores) >= 100
    assert state.returns() == [float(r) for r in m.returns()]
    with pytest.raises(Exception, match="match is not resampled"):
        state.resample_from_infostate(0, lambda: 0.5)
