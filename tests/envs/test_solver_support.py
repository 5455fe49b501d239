"""Issue #20: what the exact solver plays is the Game's to say (``solver_support``),
from data in the game's definition — layout, sides, match play and the scoring rule."""
import dataclasses

import pytest

import pipslab.envs  # noqa: F401  (registers the built-in games)
from pipslab.agents.solver import check_solvable
from pipslab.envs.dominoes.engine import deal
from pipslab.envs.dominoes.games import HAPPY, solver_refusal
from pipslab.envs.dominoes.variants import happy as happy_variant
from pipslab.envs.game import get_game


@pytest.mark.parametrize("game, options, plays", [
    ("happy", {"mode": "block"}, True), ("happy", {"mode": "draw"}, True), ("happy", {"max_pip": 3}, True),
    ("troshin", {}, True), ("troshin", {"players": 4, "pairs": True}, True),
    ("troshin", {"players": 3}, False), ("troshin", {"players": 4}, False), ("troshin", {"match": True}, False),
    ("triple", {}, False), ("triple", {"players": 4}, False), ("backgammon", {}, False),
])
def test_the_built_in_games_say_what_the_solver_plays(game, options, plays):
    refusal = get_game(game).solver_support(options)
    if plays:
        assert refusal is None
    else:
        assert refusal.startswith("no exact solver for ") and "\n" not in refusal


def test_a_new_scoring_rule_on_the_line_is_refused():
    # Happy's line and seats, scored by Triple's rule: the old check (layout, sides) passed it
    variant = happy_variant("block").with_(name="happy-scored", scoring="triple")
    check_solvable(variant)                                   # would have let it through
    game = dataclasses.replace(HAPPY, name="happy-scored", label=lambda o: variant.name,
                               make_state=lambda rng, o: deal(variant, rng),
                               solver=lambda o: solver_refusal(variant))
    refusal = game.solver_support({})
    assert refusal is not None and "scoring" in refusal and "happy-scored" in refusal
    assert solver_refusal(variant.with_(scoring="result")) is None
