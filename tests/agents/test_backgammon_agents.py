"""Backgammon agents: pubeval, race, gnubg; plans emitted checker by checker."""
import numpy as np
import pytest

from pipslab.agents import Observation, agent_names, make_agent
from pipslab.agents.backgammon import pubeval_scores
from pipslab.envs.backgammon import NUM_ACTIONS, BackgammonState, Position, legal_plays
from pipslab.experiments.eval_backgammon import match, pubeval_agreement


def test_backgammon_agents_are_registered():
    assert {"random", "pubeval", "race", "gnubg"} <= set(agent_names("backgammon"))


@pytest.mark.parametrize("name", ["pubeval", "race", pytest.param("gnubg", marks=pytest.mark.peers)])
def test_afterstate_agents_make_their_chosen_play_checker_by_checker(name):
    agent = make_agent(name, "backgammon")
    chosen = []

    class Spy(type(agent)):
        def choose_play(self, view, plays, rng):
            play = super().choose_play(view, plays, rng)
            chosen.append(play)
            return play

    agent.__class__ = Spy
    rng = np.random.default_rng(0)
    for roll in [(3, 1), (6, 6), (5, 2)]:
        state = BackgammonState(Position.start(), 0, roll, opening=False)
        agent.reset(0)
        while state.current_player == 0:
            obs = Observation(0, state.observe(0), state.legal_actions(), NUM_ACTIONS)
            state.apply(agent.act(obs, rng))
        assert state.position.swap() == chosen[-1].position
        assert len(chosen) == [(3, 1), (6, 6), (5, 2)].index(roll) + 1    # planned once per turn


def test_pubeval_picks_the_classic_openings():
    start = Position.start()
    plays = legal_plays(start, (3, 1))
    best = plays[int(np.argmax(pubeval_scores([p.position for p in plays], False)))]
    assert sorted(best.moves) == [(6, 5), (8, 5)]                  # 8/5 6/5 makes the 5-point


@pytest.mark.peers
def test_pubeval_agrees_with_gnubg_pub_best_move():
    report = pubeval_agreement(200, seed=1)
    assert report["agreement"] >= 0.99, report


def test_pubeval_beats_random():
    report = match("pubeval", "random", games=60, seed=2)
    assert report["win_rate"] >= 0.9, report


def test_race_heuristic_beats_random():
    assert match("race", "random", games=40, seed=3)["win_rate"] >= 0.85


def test_human_backgammon_agent_reads_a_number_or_notation():
    from pipslab.agents.backgammon import HumanBackgammonAgent

    answers = iter(["nonsense", "24/12", "8/5 6/5"])
    out = []
    agent = HumanBackgammonAgent(read=lambda prompt: next(answers), write=out.append)
    state = BackgammonState(Position.start(), 0, (3, 1), opening=False)
    while state.current_player == 0:
        obs = Observation(0, state.observe(0), state.legal_actions(), NUM_ACTIONS)
        state.apply(agent.act(obs, np.random.default_rng(0)))
    made = state.position.swap()
    assert made[5] == 2 and made[8] == 2 and made[6] == 4
    assert any("illegal play" in line for line in out)


def test_game_stats():
    from pipslab.envs.backgammon import game_stats
    from pipslab.envs.game import get_game
    from pipslab.experiments.games import play_game

    state, _, _ = play_game(get_game("backgammon"), {}, [make_agent("pubeval", "backgammon"),
                                                           make_agent("random", "backgammon")], 0, 1)
    stats = game_stats(state)
    assert stats["points"] in (1, 2, 3) and stats["turns"] > 10
