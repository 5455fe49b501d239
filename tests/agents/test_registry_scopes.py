"""Issue #20: agents say which games they play by family or by a predicate on the Game,
resolved when they are looked up, so a game registered later (``--import``) gets every
agent that can play it."""
import dataclasses

import pytest

import pipslab
import pipslab.agents  # noqa: F401  (the built-in agents)
from pipslab.agents.registry import agent_names, make_agent, register
from pipslab.envs.dominoes.games import HAPPY
from pipslab.envs.game import GAMES, register_game


@pytest.fixture()
def late_game():
    # Happy's definition with other options (draw by default, the double-five set),
    # registered after every agent module was imported
    spec = tuple(dataclasses.replace(o, default="draw") if o.name == "mode"
                 else dataclasses.replace(o, default=5) if o.name == "max_pip" else o
                 for o in HAPPY.options_spec)
    game = dataclasses.replace(HAPPY, name="happy-late", options_spec=spec, env_id=None,
                               description="Happy draw with the double-five set, registered late")
    register_game(game)
    yield game
    GAMES.pop("happy-late", None)


def test_a_game_registered_later_gets_the_agents_that_can_play_it(late_game):
    names = agent_names("happy-late")
    assert {"heaviest", "suits", "random", "partner", "human"} <= set(names)
    assert "greedy" not in names and "pubeval" not in names
    assert late_game.solver_support() is None
    t = pipslab.tournament("happy-late", ["heaviest", "random"], games=6, seed=1)
    assert int(t.summary["games"].sum()) == 12


def test_a_game_registered_later_gets_pimc_when_the_solver_plays_it(late_game):
    assert "pimc" in agent_names("happy-late")
    t = pipslab.tournament("happy-late", ["pimc:samples=2", "heaviest"], games=2, seed=1)
    assert int(t.summary["games"].sum()) == 4


def test_a_family_or_a_predicate_is_resolved_at_lookup():
    from pipslab.agents.random_agent import RandomAgent
    register("t_lined", when=lambda g: g.solver_support() is None)(lambda game: RandomAgent())
    register("t_fam", family="backgammon")(lambda game: RandomAgent())
    try:
        assert "t_lined" in agent_names("happy") and "t_lined" not in agent_names("triple")
        assert "t_fam" in agent_names("backgammon") and "t_fam" not in agent_names("happy")
        make_agent("t_lined", "troshin")
    finally:
        from pipslab.agents import registry
        for name in ("t_lined", "t_fam"):
            registry._REGISTRY.pop(name, None)
