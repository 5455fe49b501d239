"""The placements net (``arch = placements``): every placement scored by one shared net of
its features, which must say what the view says, and played in numpy exactly as torch
computes it."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from pipslab.agents.base import Observation
from pipslab.agents.domino_net import NetAgent, NetPlayer, PolicyNet, load_player, net_dict, net_spec
from pipslab.agents.registry import make_agent
from pipslab.envs.dominoes.tiles import OTHER_HALF, TILES, tiles_of
from pipslab.envs.errors import PipslabError
from pipslab.envs.game import GAMES
from pipslab.experiments.train_dominoes import TrainArgs, train

TABLES = [("happy", {"mode": "block"}), ("happy", {"mode": "draw"}), ("troshin", {"players": 4, "pairs": True}),
          ("troshin", {"players": 3}), ("triple", {"players": 3})]


def _placements(game, options, seed=0, hidden=(32, 32)):
    torch.manual_seed(seed)
    return PolicyNet(dict(net_spec(game, options), hidden=list(hidden), arch="placements"))


def _positions(game, options, seed, count=30):
    """States along random games, the seat to move's view of each."""
    g = GAMES[game]
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        s = g.new_state(rng, options)
        while not s.is_terminal and len(out) < count:
            out.append(s.clone())
            legal = s.legal_actions()
            s.apply(legal[int(rng.integers(len(legal)))])
    return out


@pytest.mark.parametrize("game, options", TABLES)
def test_the_numpy_player_computes_what_the_torch_net_does(game, options):
    net = _placements(game, options)
    enc = GAMES[game].observation_encoder(options)
    states = _positions(game, options, seed=7)
    x = np.stack([enc.encode(s.observe(s.current_player)) for s in states])
    with torch.no_grad():
        logits, values = net(torch.from_numpy(x))
    np_logits, np_values = NetPlayer(net).forward(x)
    assert np.allclose(np_logits, logits.numpy(), atol=1e-5) and np.allclose(np_values, values.numpy(), atol=1e-5)
    # a placement of a tile not in hand is illegal: its logit is 0, and every legal one is scored
    n_ends = len(enc.layout.ends)
    for s, row in zip(states, np_logits):
        hand = set(tiles_of(s.observe(s.current_player).hand))
        for a in range(28 * n_ends):
            if a // n_ends not in hand:
                assert row[a] == 0.0
        for a in s.legal_actions():
            assert a >= 28 * n_ends or a // n_ends in hand


@pytest.mark.parametrize("game, options", [("happy", {"mode": "draw"}), ("troshin", {"players": 4, "pairs": True})])
def test_placement_features_say_what_the_view_says(game, options):
    """The number a placement leaves open, how many of it the hand holds, how many are
    unseen and whether the next seat is void in it — counted here from the view itself."""
    enc = GAMES[game].observation_encoder(options)
    layout = enc.layout
    checked = 0
    for s in _positions(game, options, seed=11, count=60):
        view = s.observe(s.current_player)
        x = enc.encode(view)[None]
        rows, tiles = layout.held_tiles(x)
        assert sorted(tiles.tolist()) == sorted(tiles_of(view.hand))
        f = layout.placement_features(x, rows, tiles)
        placed = {h[2] for h in view.history if h[0] == 0}
        hand = set(tiles_of(view.hand))
        nxt = (view.player + 1) % view.variant.players
        for i, t in enumerate(tiles.tolist()):
            for e, end in enumerate((view.left, view.right)):
                if end < 0:
                    assert f[i, e, :7].tolist() == [1.0 if k in TILES[t] else 0.0 for k in range(7)]
                    continue
                left_open = OTHER_HALF[t][end]
                expect = [0.0] * 7
                if left_open >= 0:
                    expect[left_open] = 1.0
                assert f[i, e, :7].tolist() == expect
                if left_open < 0:
                    continue
                with_it = [u for u in range(28) if left_open in TILES[u]]
                held = sum(u in hand for u in with_it) / 7
                unseen = sum(u not in hand and u not in placed for u in with_it) / 7
                void = float(view.voids(nxt) >> left_open & 1)
                assert np.allclose(f[i, e, -5:-1], [held, unseen, void, sum(u in placed for u in with_it) / 7])
                checked += 1
    assert checked > 50


def test_a_placements_net_file_round_trips_and_plays_legal_moves(tmp_path):
    net = _placements("happy", {"mode": "draw"}, seed=3)
    path = tmp_path / "p.pt"
    torch.save(net_dict(net), path)
    player = load_player(str(path))
    assert player.config["arch"] == "placements" and player.layout is not None
    agent = make_agent(f"net:net={path}", "happy")
    assert isinstance(agent, NetAgent)
    rng = np.random.default_rng(0)
    for s in _positions("happy", {"mode": "draw"}, seed=5):
        obs = Observation(s.current_player, s.observe(s.current_player), s.legal_actions(), s.num_actions)
        assert agent.act(obs, rng) in s.legal_actions()


def test_an_mlp_is_made_as_it_always_was_and_an_unknown_arch_is_one_line():
    torch.manual_seed(1)
    mlp = PolicyNet(dict(net_spec("happy", {"mode": "draw"}), hidden=[16]))
    # no arch key in an mlp's config (old files load unchanged), modules made in the old order
    assert "arch" not in mlp.config
    assert list(mlp.state_dict()) == ["body.0.weight", "body.0.bias", "policy.weight", "policy.bias",
                                      "value.weight", "value.bias"]
    with pytest.raises(PipslabError, match="unknown net arch 'wide'"):
        PolicyNet(dict(net_spec("happy", {"mode": "draw"}), hidden=[16], arch="wide"))


def test_init_refuses_a_net_of_the_other_arch(tmp_path):
    net = _placements("happy", {"mode": "draw"}, hidden=(16,))
    path = tmp_path / "p.pt"
    torch.save(net_dict(net), path)
    args = TrainArgs(game="happy", options={"mode": "draw"}, hands=64, batch_hands=64, hidden=[16], init=str(path),
                     eval_games=0, out=str(tmp_path / "run"), progress=False)
    with pytest.raises(PipslabError, match=r"\(placements\) into one for happy-draw with \[16\] \(mlp\)"):
        train(args)
    args.arch = "placements"
    train(args)
    trained = load_player(str(tmp_path / "run" / "net.pt"))
    assert trained.config["arch"] == "placements"
