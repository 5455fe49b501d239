"""Records replay even when agents keep state: a game's every random choice comes from
that game's seeds, whatever the worker played before it.

The harness builds fresh agents for every game, so an agent's state (a counter, a cache,
a search tree) lives within one game only; serial, process and Ray runs then give the same
records, and ``pipslab play --replay ID`` replays any game alone.  The rollout evaluator
takes its dice from the game's rng, not from a count of its calls."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipslab.agents.base import Agent
from pipslab.agents.registry import register
from pipslab.envs.backgammon import Position
from pipslab.envs.backgammon import fast
from pipslab.experiments.cli import main
from pipslab.experiments.tournament import TournamentArgs, read_games, run_tournament

from harness_fakes import fakes_installed  # noqa: F401  (autouse: the fake games, this module only)

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
MODULE = Path(__file__).stem   # workers import this module (--import) to know the counting agent


class CountingAgent(Agent):
    """Deliberately stateful: counts its moves over its whole life (``reset`` keeps the
    count) and mixes the count into its choice, so an object reused from game to game plays
    each game differently from a fresh one."""

    def __init__(self):
        self.calls = 0

    def act(self, observation, rng):
        self.calls += 1
        legal = observation.legal_actions
        return legal[(int(rng.integers(2)) + self.calls) % len(legal)]


def _install():
    register("t_counting", games=["fakegammon"])(lambda game: CountingAgent())


_install()   # on import: the workers that import this module (--import) find the agent


@pytest.fixture(autouse=True, scope="module")
def counting_registered():
    _install()   # again: another module's teardown may have taken it out
    yield
    from pipslab.agents import registry
    registry._REGISTRY.pop("t_counting", None)


AGENTS = ["t_counting", "t_random", "t_stand"]
GAMES = 36


def records(df):
    return df.drop(columns="duration_s").sort_values("game_id").reset_index(drop=True)


def _run(out, workers):
    return run_tournament(TournamentArgs(game="fakegammon", agents=AGENTS, games=GAMES, seed=21, out=str(out),
                                         workers=workers, progress=False, plots=False, imports=(MODULE,)))


def _replays(folder, ids, capsys):
    for game_id in ids:
        code = main(["play", "--replay", str(game_id), "--from", str(folder)])
        captured = capsys.readouterr()
        assert code == 0, f"game {game_id}: {captured.err}"
        assert "replay matches the record" in captured.out


@pytest.fixture(scope="module")
def serial(tmp_path_factory):
    out = tmp_path_factory.mktemp("serial")
    return out, records(_run(out, workers=1).games)


def test_a_stateful_agent_replays_game_by_game(serial, capsys):
    folder, recs = serial
    assert len(recs) == GAMES and (recs[["seat0", "seat1"]] == "t_counting").any(axis=None)
    _replays(folder, range(GAMES), capsys)


def test_two_worker_processes_give_the_serial_records(serial, tmp_path, capsys):
    res = _run(tmp_path / "process", workers=2)
    pd.testing.assert_frame_equal(records(res.games), serial[1])
    _replays(tmp_path / "process", range(GAMES), capsys)


@pytest.mark.slow
@pytest.mark.xdist_group("ray")   # one local Ray instance at a time under xdist (test.sh)
def test_ray_gives_the_serial_records(serial, tmp_path, capsys):
    import ray  # noqa: F401  (in the dev extra: a missing ray fails this test, it does not skip)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(ROOT), env.get("PYTHONPATH", "")])
    # in a process of its own: a local Ray instance starts and stops there, not in the test runner
    r = subprocess.run([sys.executable, "-m", "pipslab.experiments.cli", "tournament", "fakegammon", "--agents",
                        ",".join(AGENTS), "--games", str(GAMES), "--seed", "21", "--out", str(tmp_path / "ray"),
                        "--backend", "ray", "--workers", "2", "--import", MODULE, "--no-plots", "--no-progress"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    pd.testing.assert_frame_equal(records(read_games(tmp_path / "ray" / "games.csv")), serial[1])
    # Ray may well hand every chunk to one worker in order, which alone would hide the bug
    _replays(tmp_path / "ray", range(GAMES), capsys)


@pytest.mark.slow
# mcts needs more iterations than a position has plays before the rollouts choose anything
@pytest.mark.parametrize("agent", ["expectimax:plies=0,eval=rollout:1,filter=2", "mcts:iters=16,eval=rollout"])
def test_rollout_search_tournament_games_replay(agent, tmp_path, capsys):
    """Game 2 is the first a worker plays with an agent it already used (duplicate deals:
    games 0 and 1 share a deal, seats swapped); it replays too."""
    out = tmp_path / "bg"
    code = main(["tournament", "backgammon", "--agents", f"{agent},pubeval", "--games", "3", "--seed", "3",
                 "--workers", "1", "--out", str(out), "--no-plots", "--no-progress"])
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    _replays(out, range(3), capsys)


def test_rollout_values_come_from_the_rng_not_from_earlier_calls():
    from pipslab.agents.search_backgammon import make_evaluator
    rows = np.array(fast.afterstates(np.array(Position.start(), dtype=np.int64), 3, 1), dtype=np.int64)[:6]
    ev = make_evaluator("rollout:3")
    ev.reseed(np.random.default_rng(7))
    first = ev.afterstate_values(rows, False)
    ev.afterstate_values(rows, False)   # history that must not matter
    make_evaluator("rollout:3").afterstate_values(rows, False)
    ev.reseed(np.random.default_rng(7))
    assert np.array_equal(ev.afterstate_values(rows, False), first)
    fresh = make_evaluator("rollout:3")
    fresh.reseed(np.random.default_rng(7))
    assert np.array_equal(fresh.afterstate_values(rows, False), first)


@pytest.mark.parametrize("name", ["expectimax:plies=0,eval=rollout:1,filter=2", "mcts:iters=8,eval=rollout"])
def test_a_reused_rollout_agent_plays_a_game_as_a_fresh_one(name):
    """Beyond fresh agents per game: the rollout evaluator itself keeps no dice history."""
    from pipslab.agents.registry import make_agent
    from pipslab.envs.game import get_game
    from pipslab.experiments.games import play_game
    spec = get_game("backgammon")

    def actions(agent, game_id):
        seen = []
        play_game(spec, {}, [agent, make_agent("pubeval", "backgammon")], [5, 0, game_id], [5, 1, game_id],
                  on_move=lambda state, player, action: seen.append((player, action)))
        return seen

    reused = make_agent(name, "backgammon")
    actions(reused, 0)
    assert actions(reused, 1) == actions(make_agent(name, "backgammon"), 1)


def test_agent_lists_keep_parameter_values_with_colons():
    from pipslab.experiments.cliargs import split_agent_list
    assert split_agent_list("expectimax:plies=0,eval=rollout:2,filter=2,pubeval") == [
        "expectimax:plies=0,eval=rollout:2,filter=2", "pubeval"]
    assert split_agent_list("mcts:eval=td:a.pt,iters=3,expectimax:eval=td:b.pt") == [
        "mcts:eval=td:a.pt,iters=3", "expectimax:eval=td:b.pt"]
