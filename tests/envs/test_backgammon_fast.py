"""The compiled move generator gives exactly the pure-Python results; the bench's JSON."""
import json

import numpy as np
import pytest

from pipslab.envs.backgammon import Position, fast, new_game
from pipslab.envs.backgammon.game import play_uniformly
from pipslab.envs.backgammon.moves import dice_to_play, play_table

from backgammon_helpers import fixture_cases


@pytest.mark.slow
def test_compiled_afterstates_match_the_reference_on_the_fixture():
    for case in fixture_cases():
        pos = Position.from_id(case["position_id"])
        got = sorted(Position(row).id for row in fast.afterstates(pos, *case["dice"]).tolist())
        assert got == case["results"], (case["position_id"], case["dice"])


def test_compiled_afterstates_match_on_random_games():
    rng = np.random.default_rng(9)
    for _ in range(10):
        state = new_game()
        while not state.is_terminal:
            if state.is_chance:
                state.apply_chance(rng)
                ref = set(play_table(state.position, dice_to_play(state.roll)))
                assert set(map(tuple, fast.afterstates(state.position, *state.roll).tolist())) == ref
            else:
                legal = state.legal_actions()
                state.apply(legal[int(rng.integers(len(legal)))])


def test_compiled_random_games_end():
    for seed in range(20):
        winner, turns = fast.random_game(seed)
        assert winner in (0, 1) and 10 < turns < 2000
    assert fast.random_game(3) == fast.random_game(3)


@pytest.mark.peers
def test_bench_json_contract(capsys):
    import argparse

    from pipslab.experiments import bench
    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    assert bench.run(parser.parse_args(["backgammon", "--seconds", "0.05", "--json"])) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    r = json.loads(last)
    assert r["ours_games_per_s"] > 0 and r["peers"]["openspiel_backgammon"] > 0
    assert set(r["legal_plays_us"]) >= {"ours_compiled", "ours_python", "openspiel_legal_actions"}


def test_state_gives_the_same_games_with_and_without_the_compiled_path(monkeypatch):
    from pipslab.envs.backgammon import game

    def history(seed):
        rng = np.random.default_rng(seed)
        state = play_uniformly(new_game(), rng)
        return state.history, state.returns()

    compiled = [history(s) for s in range(5)]
    monkeypatch.setattr(game, "USE_COMPILED", False)
    assert [history(s) for s in range(5)] == compiled
