"""Issue #20: a domino variant added as data only — ``troshin6`` (Troshin for two, six tiles
each), one definition in envs/dominoes/games.py — gets every road: Gymnasium, PettingZoo,
OpenSpiel, ``pipslab tournament`` and ``play``, the agents, and the exact solver."""
import gymnasium as gym
import numpy as np
import pyspiel
from pettingzoo.test import api_test

import pipslab  # noqa: F401  (registers the ids and the agents)
import pipslab.envs.openspiel_games  # noqa: F401  (registers the pipslab_* games)
from harness_helpers import pipslab_here
from pipslab.agents.registry import agent_names
from pipslab.agents.solver import Solver
from pipslab.envs.game import get_game
from pipslab.envs.pettingzoo_env import env as aec_env


def test_the_game_is_the_variant():
    game = get_game("troshin6")
    state = game.new_state(3)
    assert state.variant.name == "troshin-2-h6" and state.variant.hand_size == 6
    assert game.parse(game.format(state)).variant is state.variant      # position strings round-trip
    assert game.solver_support() is None
    assert {"heaviest", "suits", "partner", "random", "human", "pimc", "ismcts", "oracle", "net"} \
        <= set(agent_names("troshin6"))
    assert "greedy" not in agent_names("troshin6")


def test_gymnasium():
    env = gym.make(get_game("troshin6").gym_id())
    obs, info = env.reset(seed=1)
    rng, done, steps = np.random.default_rng(0), False, 0
    while not done:
        legal = np.flatnonzero(info["action_mask"]) if "action_mask" in info else np.flatnonzero(obs["action_mask"])
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(legal)))
        done, steps = terminated or truncated, steps + 1
    assert steps > 0


def test_pettingzoo():
    api_test(aec_env("troshin6"), num_cycles=200)


def test_openspiel():
    pyspiel.random_sim_test(pyspiel.load_game("pipslab_troshin6"), num_sims=2, serialize=True, verbose=False)


def test_tournament_and_play(capfd, tmp_path):
    r = pipslab_here(capfd, "tournament", "troshin6", "--agents", "heaviest,random", "--games", "4",
                     "--out", str(tmp_path / "t"), "--no-plots", "--no-progress")
    assert r.returncode == 0, r.stderr
    r = pipslab_here(capfd, "play", "troshin6", "--agents", "heaviest,random", "--seed", "2")
    assert r.returncode == 0, r.stderr


def test_the_solver_plays_it(capfd):
    game = get_game("troshin6")
    state = game.new_state(5)
    # a hand played on at random until fewer tiles are left, then solved exactly
    rng = np.random.default_rng(0)
    for _ in range(14):
        if state.is_terminal:
            break
        state.apply(int(rng.choice(state.legal_actions())))
    if not state.is_terminal:
        result = Solver().solve(state)
        assert result.best_actions and set(result.best_actions) <= set(state.legal_actions())
        r = pipslab_here(capfd, "solve", game.format(state))
        assert r.returncode == 0, r.stderr
