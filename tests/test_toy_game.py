"""A game defined in one file (tests/toy_dice_race.py) runs through every layer — the
Gymnasium env and its checker, ``pipslab tournament --import`` and ``pipslab play``'s
replay — with no edit anywhere else."""
import os
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
from gymnasium.utils.env_checker import check_env

import toy_dice_race  # noqa: F401  (registers toy-race, its env id and the toy-hold agent)
from pipslab.agents.registry import agent_names, make_agent
from pipslab.envs import GAMES
from pipslab.envs.errors import PipslabError
from pipslab.envs.generic_env import GameEnv
from pipslab.experiments.cli import main
from pipslab.experiments.games import play_game

TESTS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TESTS)


def test_the_game_is_registered_from_its_own_file():
    game = GAMES["toy-race"]
    assert game.players({"players": 3}) == 3 and game.variant_label({"target": 30}) == "toy-race-30"
    assert {"random", "toy-hold"} <= set(agent_names("toy-race"))
    with pytest.raises(PipslabError, match="option target=1"):
        game.resolve({"target": 1})
    with pytest.raises(PipslabError, match="no option 'colour'"):
        game.resolve({"colour": "red"})
    state, moves, _ = play_game(game, {"target": 15}, [make_agent("toy-hold", "toy-race"),
                                                       make_agent("random", "toy-race")], [1, 0], [1, 1])
    out = game.outcome(state)
    assert state.is_terminal and moves > 0 and out.draw == (out.winner is None)
    assert sum(out.returns) == pytest.approx(0.0) and out.extra["turns"] == state.turns
    position = game.format(state)
    assert game.format(game.parse(position, {"target": 15})) == position


@pytest.mark.parametrize("make", [
    lambda: gym.make("pipslab/ToyDiceRace-v0", illegal_action="lose").unwrapped,
    lambda: GameEnv("toy-race", players=3, learner_seat=1, opponents="toy-hold:k=5", illegal_action="lose",
                    render_mode="ansi"),
])
def test_generic_env_passes_check_env(make):
    env = make()
    check_env(env, skip_render_check=True)
    obs, info = env.reset(seed=3)
    total, done, steps = 0.0, False, 0
    while not done:
        legal = np.flatnonzero(obs["action_mask"])
        assert list(legal) == info["legal_actions"] and len(legal) > 0
        obs, reward, done, _, info = env.step(int(legal[-1] if steps % 3 == 2 else legal[0]))
        total += reward
        steps += 1
    assert total == env.outcome().returns[env.learner_seat]
    assert info["winner"] == (-1 if env.outcome().winner is None else env.outcome().winner)
    obs, _ = env.reset(options={"position": "toy-race; scores=" + "/".join(["3"] * env.players) + "; turn=0"})
    assert obs["observation"].shape == env.observation_space["observation"].shape


def test_tournament_with_import_and_the_replay(tmp_path, capsys):
    out = tmp_path / "toy"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([TESTS, ROOT, os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-m", "pipslab.experiments.cli", "tournament", "toy-race",
                        "--import", "toy_dice_race", "--agents", "random,toy-hold:k=6", "--option", "target=15",
                        "--games", "24", "--seed", "2", "--out", str(out), "--workers", "2", "--no-plots",
                        "--no-progress"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    games = pd.read_csv(out / "games.csv")
    assert len(games) == 24 and (games["variant"] == "toy-race-15").all()
    for col in ("return_0", "pips_left_1", "points_0", "turns", "capped"):
        assert col in games.columns
    summary = pd.read_csv(out / "summary.csv").set_index("agent")
    assert summary["games"].sum() == 48 and (summary["wins"] + summary["draws"] + summary["losses"] == 24).all()
    # the replay reads run.json's imports, plays the game again and checks it against its record
    assert main(["play", "--replay", "7", "--from", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "replay matches the record" in printed and "toy-race-15" in printed
    # and an unknown option is refused with one line
    r = subprocess.run([sys.executable, "-m", "pipslab.experiments.cli", "play", "toy-race", "--import",
                        "toy_dice_race", "--agents", "random,random", "--option", "colour=red"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "no option 'colour'" in r.stderr and len(r.stderr.strip().splitlines()) == 1
