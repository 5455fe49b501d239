"""Happy dominoes on a smaller set (``--option max_pip=2|3``): only the set's tiles are
dealt, sampled and written; the rules and the 28-tile action encoding stay those of the
double-six game (RULES §2)."""
import random

import numpy as np
import pytest

from pipslab.agents.base import Observation
from pipslab.agents.registry import make_agent
from pipslab.envs.dominoes.common import deal_hands
from pipslab.envs.dominoes.engine import sample_world
from pipslab.envs.dominoes.notation import format_position, parse_position
from pipslab.envs.dominoes.tiles import TILES
from pipslab.envs.dominoes.variants import HAPPY_BLOCK, happy, variant_by_name
from pipslab.envs.errors import PipslabError, PositionError
from pipslab.envs.game import GAMES

D2 = sum(1 << t for t, (a, b) in enumerate(TILES) if b <= 2)
D3 = sum(1 << t for t, (a, b) in enumerate(TILES) if b <= 3)


def test_the_sets_and_their_names():
    v = happy("block", 2)
    assert v.name == "happy-block-d2" and v.tile_set == D2 and v.set_size == 6 and v.hand_size == 2
    assert happy("draw", 3).name == "happy-draw-d3" and happy("draw", 3).hand_size == 3
    assert happy("block", 3, 2).name == "happy-block-d3-h2"
    assert happy("block", 6) is HAPPY_BLOCK and happy("block", 6, 7) is HAPPY_BLOCK
    assert v.num_actions == 58 and v.pass_action == 57       # the 28-tile encoding is kept
    for name in ("happy-block-d2", "happy-draw-d3", "happy-block-d3-h2", "happy-block-d6-h5"):
        assert variant_by_name(name).name == name
    for bad in ("happy-block-d6", "happy-block-d2-h2", "happy-block-d1", "happy-block-d2-h4"):
        with pytest.raises(PipslabError):
            variant_by_name(bad)


def test_bad_sizes_are_refused_in_one_line():
    game = GAMES["happy"]
    for options in ({"max_pip": 7}, {"max_pip": 1}, {"max_pip": 2, "hand_size": 4}, {"hand_size": 0}):
        with pytest.raises(PipslabError) as err:
            game.resolve(options)
        assert "\n" not in str(err.value)


def test_the_full_set_deals_as_before():
    # the double-six deal shuffles the 28 ids in order, as it always did: same seed, same deal
    tiles = list(range(28))
    np.random.default_rng(5).shuffle(tiles)
    hands, boneyard = deal_hands(HAPPY_BLOCK, np.random.default_rng(5))
    assert hands[0] == sum(1 << t for t in tiles[:7]) and boneyard == tiles[14:]


@pytest.mark.parametrize("mode,max_pip,mask", [("block", 2, D2), ("draw", 2, D2), ("block", 3, D3), ("draw", 3, D3)])
def test_games_deal_sample_and_write_only_the_set(mode, max_pip, mask):
    game = GAMES["happy"]
    options = {"mode": mode, "max_pip": max_pip}
    rng = np.random.default_rng(0)
    agents = [make_agent("random", "happy"), make_agent("suits", "happy")]
    for g in range(60):
        state = game.new_state(rng, options)
        dealt = sum(state.hands) | sum(1 << t for t in state.boneyard_tiles())
        assert dealt == mask and state.table == 0
        while not state.is_terminal:
            text = format_position(state)
            assert format_position(parse_position(text)) == text
            seat = state.current_player
            view = state.observe(seat)
            world = sample_world(view, random.Random(g))
            held = sum(world.hands) | sum(1 << t for t in world.boneyard_tiles())
            assert held | world.table == mask and not held & world.table
            assert world.hands[seat] == view.hand
            action = agents[seat].act(Observation(seat, view, state.legal_actions(), 58), rng)
            state.apply(action)
        assert state.table | sum(state.hands) | sum(1 << t for t in state.boneyard_tiles()) == mask


def test_positions_outside_the_set_are_refused():
    ok = "happy-block-d2; turn=0; passes=0; line=-; hands=0-1 2-2 / 0-2 1-1; boneyard=0-0 1-2"
    assert format_position(parse_position(ok)) == ok
    with pytest.raises(PositionError, match="double-2 set, which has no 3-3"):
        parse_position("happy-block-d2; turn=0; line=-; hands=2-2 0-1 / 1-1 3-3; boneyard=0-0 1-2 0-2")
    with pytest.raises(PositionError, match="in no hand"):
        parse_position("happy-block-d2; turn=0; line=2-2; hands=0-1 / 1-1 0-2; boneyard=0-0")
    # the opening rule holds on the small set: 2-2 is its highest double
    with pytest.raises(PositionError, match="seat 0 opens with 2-2"):
        parse_position("happy-block-d2; turn=1; line=-; hands=2-2 0-1 / 1-1 0-2; boneyard=0-0 1-2")


@pytest.mark.parametrize("spec", ["heaviest", "suits", "pimc:samples=4", "ismcts:iters=50"])
def test_agents_play_the_small_set(spec):
    game = GAMES["happy"]
    agent = make_agent(spec, "happy")
    rng = np.random.default_rng(1)
    for _ in range(10):
        state = game.new_state(rng, {"max_pip": 3})
        while not state.is_terminal:
            seat = state.current_player
            legal = state.legal_actions()
            action = agent.act(Observation(seat, state.observe(seat), legal, 58), rng)
            assert action in legal
            state.apply(action)
