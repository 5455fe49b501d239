"""Every game's golden playthrough (``tests/playthroughs/``) plays again move for move:
the same moves and names, the same observation of every seat before each move, the same
outcome.  A difference names the game and the first move that differs."""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "playthroughs"))
from record import CASES, HERE, play  # noqa: E402


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_golden_playthrough_plays_again(name):
    with open(os.path.join(HERE, f"{name}.json")) as f:
        golden = json.load(f)
    game, options, seed = CASES[name]
    now = json.loads(json.dumps(play(game, options, seed)))
    for i, (a, b) in enumerate(zip(golden["moves"], now["moves"])):
        assert a == b, f"{name}: move {i} differs: recorded {a}, now {b}"
    assert len(golden["moves"]) == len(now["moves"]) and len(golden["moves"]) > 5
    assert (golden["returns"], golden["winners"], golden["extra"]) == (now["returns"], now["winners"], now["extra"])
