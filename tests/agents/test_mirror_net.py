"""The mirror net (config ``"mirror": true``, ``pipslab train --mirror``): a position and
the same position with the line turned round get one value and mirrored policies, in
torch and in numpy alike, because the rules treat the two ends alike (checked here with
the exact solver); a plain net grown into one computes the plain net on canonical rows."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from pipslab.agents.domino_net import NetPlayer, PolicyNet, grow, load_player, net_spec
from pipslab.agents.solver import solve
from pipslab.envs.dominoes.notation import parse_position
from pipslab.envs.errors import PipslabError
from pipslab.envs.game import GAMES
from pipslab.experiments.train_dominoes import TrainArgs, train

TABLES = [("happy", {"mode": "draw"}), ("happy", {"mode": "block"}), ("troshin", {"players": 4, "pairs": True})]


def _net(game, options, mirror=True, seed=0, arch="mlp"):
    torch.manual_seed(seed)
    net = PolicyNet(dict(net_spec(game, options), hidden=[32, 16], arch=arch, mirror=mirror))
    with torch.no_grad():                     # far from a fresh net's weights, as a trained net's are
        for p in net.parameters():
            p.add_(torch.randn_like(p) * 0.3)
    return net.eval()


def _rows(game, options, seed=3, count=80):
    """The seat to move's observation along random games, and the line's two ends."""
    g, rng, rows, ends = GAMES[game], np.random.default_rng(seed), [], []
    enc = g.observation_encoder(options)
    while len(rows) < count:
        s = g.new_state(rng, options)
        while not s.is_terminal and len(rows) < count:
            view = s.observe(s.current_player)
            rows.append(enc.encode(view))
            ends.append((view.left, view.right))
            legal = s.legal_actions()
            s.apply(legal[int(rng.integers(len(legal)))])
    return np.stack(rows), ends


def _turned(x, layout):
    """The rows with the line turned round: the two ends' one-hots swapped."""
    return x[:, layout.mirror_inputs(x.shape[1])]


@pytest.mark.parametrize("arch", ["mlp", "placements"])
@pytest.mark.parametrize("game, options", TABLES)
def test_a_position_and_its_mirror_get_one_value_and_mirrored_policies(game, options, arch):
    net = _net(game, options, arch=arch)
    layout = GAMES[game].observation_encoder(options).layout
    x, ends = _rows(game, options)
    y = _turned(x, layout)
    player = NetPlayer(net)
    (a, u), (b, v) = player.forward(x), player.forward(y)
    assert np.allclose(u, v, atol=1e-6)
    perm = layout.mirror_actions(a.shape[1])
    apart = np.array([left != right for left, right in ends])
    assert apart.sum() > 40 and (~apart).sum() > 0
    # a line whose ends show one number is its own mirror (its rows are equal); any other
    # gets the mirrored policy: a placement on one end is scored as the same tile on the other
    assert np.allclose(a[apart], b[apart][:, perm], atol=1e-5)
    assert np.array_equal(x[~apart], y[~apart])
    # numpy plays exactly the torch net
    with torch.no_grad():
        logits, values = net(torch.from_numpy(x))
    assert np.allclose(logits.numpy(), a, atol=1e-5) and np.allclose(values.numpy(), u, atol=1e-5)
    # and a plain net with the same weights is not symmetric: the canonical form does it
    plain = _net(game, options, mirror=False, arch=arch)
    pa, _ = NetPlayer(plain).forward(x)
    pb, _ = NetPlayer(plain).forward(y)
    assert not np.allclose(pa[apart], pb[apart][:, perm], atol=1e-3)


@pytest.mark.parametrize("text", [
    "happy-draw; turn=0; ends=1|4; hands=4-4 0-6 2-3 1-6 0-5 / 3-5 1-2; boneyard=6-6 0-0 2-5",
    "happy-block; turn=1; ends=6|3; hands=4-4 2-3 3-5 / 0-1 1-1 2-2 6-5",
    "troshin-4-pairs; turn=0; ends=6|2; hands=1-2 3-6 / 0-3 / 2-4 5-6 / 4-5",
])
def test_the_rules_treat_the_two_ends_alike(text):
    """What the mirror rests on: the same hands with the ends swapped have the same exact
    value, and each legal move is the other's same tile on the other end, of the same value."""
    a, b = text.split("ends=")[1].split(";")[0].split("|")
    s, t = parse_position(text), parse_position(text.replace(f"ends={a}|{b}", f"ends={b}|{a}"))
    perm = np.arange(s.num_actions)
    perm[:56] = np.arange(56) ^ 1
    assert sorted(perm[s.legal_actions()].tolist()) == sorted(t.legal_actions())
    u, v = solve(s), solve(t)
    assert u.value == v.value and u.move_values == {int(perm[a]): w for a, w in v.move_values.items()}


def test_a_plain_net_grown_into_a_mirror_one_plays_the_plain_net_on_canonical_rows():
    game, options = "happy", {"mode": "draw"}
    plain = _net(game, options, mirror=False, seed=1)
    torch.manual_seed(2)
    mirror = grow(plain, PolicyNet(dict(net_spec(game, options), hidden=[48, 16], mirror=True)))
    assert mirror.config["mirror"] is True and mirror.config["hidden"] == [48, 16]
    layout = GAMES[game].observation_encoder(options).layout
    x, _ = _rows(game, options)
    flip = layout.mirrored(x)
    canonical = np.where(flip[:, None], _turned(x, layout), x)
    (a, u), (b, v) = NetPlayer(mirror).forward(x), NetPlayer(plain).forward(canonical)
    b[flip] = b[flip][:, layout.mirror_actions(b.shape[1])]
    assert flip.any() and np.allclose(a, b, atol=1e-5) and np.allclose(u, v, atol=1e-5)
    # a plain net keeps its config as ever (old files load unchanged)
    assert "mirror" not in plain.config


def test_a_mirror_net_needs_a_line_of_two_ends():
    with pytest.raises(PipslabError, match="a mirror net for triple-3: the mirror turns a line of two ends round"):
        PolicyNet(dict(net_spec("triple", {"players": 3}), hidden=[8], mirror=True))


def test_train_mirror_writes_a_mirror_net_that_loads_and_plays(tmp_path):
    args = TrainArgs(game="happy", options={"mode": "draw"}, hands=64, batch_hands=64, hidden=[16, 8],
                     mirror=True, eval_games=0, out=str(tmp_path / "run"), progress=False)
    train(args)
    player = load_player(str(tmp_path / "run" / "net.pt"))
    assert player.config["mirror"] is True and player.mirror is not None
