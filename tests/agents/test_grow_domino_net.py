"""Widening a domino net (``grow``, ``pipslab train --init`` of a narrower net): the wider
net computes exactly what the trained one did, its new units are there to learn, and
anything but wider layers is one line."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from pipslab.agents.domino_net import PolicyNet, grow, load_player, net_dict, net_spec
from pipslab.envs.errors import PipslabError
from pipslab.envs.game import GAMES
from pipslab.experiments.train_dominoes import TrainArgs, train

from harness_helpers import pipslab_here


def _net(hidden, seed, arch="mlp", game="happy", options=None):
    torch.manual_seed(seed)
    return PolicyNet(dict(net_spec(game, options or {"mode": "draw"}), hidden=list(hidden), arch=arch))


def _rows(game="happy", options=None, count=60):
    """The seat to move's observation along random games."""
    options = options or {"mode": "draw"}
    g, rng, out = GAMES[game], np.random.default_rng(3), []
    enc = g.observation_encoder(options)
    while len(out) < count:
        s = g.new_state(rng, options)
        while not s.is_terminal and len(out) < count:
            out.append(enc.encode(s.observe(s.current_player)))
            legal = s.legal_actions()
            s.apply(legal[int(rng.integers(len(legal)))])
    return torch.from_numpy(np.stack(out))


@pytest.mark.parametrize("arch", ["mlp", "placements"])
def test_a_grown_net_computes_what_the_narrow_one_did(arch):
    small = _net([16, 8], seed=1, arch=arch)
    with torch.no_grad():                    # weights far from any fresh net's, as a trained net's are
        for p in small.parameters():
            p.add_(torch.randn_like(p))
    big = grow(small, _net([40, 24], seed=2, arch=arch))
    assert big.config["hidden"] == [40, 24] and big.config.get("arch", "mlp") == arch
    x = _rows()
    with torch.no_grad():
        (a, u), (b, v) = small(x), big(x)
    assert torch.allclose(a, b, rtol=1e-5, atol=1e-4) and torch.allclose(u, v, rtol=1e-5, atol=1e-4)
    # the new units compute something (their incoming weights are the fresh net's) ...
    assert big.body[0].weight[16:].abs().sum() > 0 and big.body[2].weight[8:].abs().sum() > 0
    # ... and nothing of it reaches the old units or the heads yet
    assert big.body[2].weight[:8, 16:].abs().sum() == 0 and big.policy.weight[:, 8:].abs().sum() == 0
    assert big.value.weight[:, 8:].abs().sum() == 0


@pytest.mark.parametrize("hidden, arch, options", [([8, 8], "mlp", None), ([16], "mlp", None),
                                                    ([16, 8, 8], "mlp", None), ([16, 8], "placements", None),
                                                    ([32, 16], "mlp", {"mode": "block"})])
def test_only_wider_layers_grow(hidden, arch, options):
    with pytest.raises(PipslabError, match="cannot grow a net for happy-draw with hidden \\[16, 8\\] \\(mlp\\)"):
        grow(_net([16, 8], seed=1), _net(hidden, seed=2, arch=arch, options=options))


def test_train_init_of_a_narrower_net_widens_it(tmp_path, capfd):
    small = tmp_path / "small.pt"
    torch.save(net_dict(_net([16, 8], seed=1)), small)
    args = TrainArgs(game="happy", options={"mode": "draw"}, hands=64, batch_hands=64, hidden=[24, 16],
                     init=str(small), eval_games=0, out=str(tmp_path / "run"), progress=False)
    train(args)
    assert load_player(str(tmp_path / "run" / "net.pt")).config["hidden"] == [24, 16]
    # a narrower net, or one of another shape, cannot be started from it: one line, nothing trained
    r = pipslab_here(capfd, "train", "happy", "--mode", "draw", "--hands", "64", "--batch-hands", "64",
                     "--hidden", "8,8", "--init", str(small), "--eval-games", "0", "--out", str(tmp_path / "narrow"),
                     "--no-progress")
    assert r.returncode == 2 and "cannot grow" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "narrow" / "net.pt").exists()
