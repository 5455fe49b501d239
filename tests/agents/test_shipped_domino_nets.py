"""The shipped domino nets: one per variant the issue names, each with its model card,
loadable with weights_only, playing whole games legally under their plain name."""
from __future__ import annotations

import re

import pytest

from pipslab.agents.domino_net import domino_nets, load_player
from pipslab.agents.netfiles import net_path
from pipslab.agents.registry import make_agent
from pipslab.envs.game import get_game

from harness_helpers import pipslab, play_checked

SHIPPED = {"happy-block": ("happy", {"mode": "block"}), "happy-draw": ("happy", {"mode": "draw"}),
           "troshin-3": ("troshin", {"players": 3}), "troshin-4-pairs": ("troshin", {"players": 4, "pairs": True}),
           "triple-3": ("triple", {"players": 3})}


def test_every_promised_net_is_shipped():
    assert set(SHIPPED) <= set(domino_nets())


@pytest.mark.parametrize("variant", sorted(SHIPPED))
def test_a_shipped_net_has_its_model_card_and_plays_its_variant(variant):
    game, options = SHIPPED[variant]
    player = load_player(variant)
    assert player.variant == variant and player.config["game"] == game
    meta_card = net_path(variant).with_suffix(".md").read_text()
    assert f"pipslab train {game}" in meta_card            # the command that trained it
    assert re.search(r"[0-9][0-9,]+ hands", meta_card)      # how much
    assert "wall" in meta_card and "Wilson" in meta_card    # its time and its measured table
    spec = get_game(game)
    players = spec.players(options)
    for g in range(2):
        agents = [make_agent("net", game) if s % 2 == g % 2 else make_agent("heaviest", game) for s in range(players)]
        agents[0].check_table(game, options)
        play_checked(spec, options, agents, [4, 0, g], [4, 1, g])


def test_play_the_shipped_net_right_after_set_up():
    r = pipslab("play", "happy", "--agents", "net,heaviest", "--seed", "3")
    assert r.returncode == 0, r.stderr
    assert "seat 0 (net):" in r.stdout
