"""Neural backgammon: a TD(λ)-trained value network, the ``td`` agent and ``eval=td``.

The network (:class:`TDNet`) values a position **with its player on roll, before the
roll** (GNU BG's convention) and outputs five probabilities for that player, as GNU BG
and wildbg do: ``[win, win gammon, win backgammon, lose gammon, lose backgammon]`` (the
gammon columns include backgammons).  Cubeless equity follows (:func:`equity`)::

    equity = 2 win - 1 + (win gammon - lose gammon) + (win backgammon - lose backgammon)

An afterstate (the board just after my play) is the opponent's position on roll, so its
value for me is the network's output for him seen from my side (:func:`flip`); a play
that bears off my last checker is worth its exact points instead.  One batched forward
pass values every play of a roll.

Inputs (:func:`pipslab.envs.backgammon.features.encode`): Tesauro's 198 (``"tesauro"``),
those plus nine hand-made race/blot/prime/back-checker features (``"plus"``), or those
plus shots and escapes (``"contact"``), or those plus pip loss, containment, pips to
break contact and a closed board (``"containment"``); :func:`grow` widens a trained net onto more
inputs or units without changing what it computes.

Nets are files written by ``torch.save`` of a plain dict (``format``, ``config``,
``model`` — a state dict — and free ``meta``); they are read with
``torch.load(..., weights_only=True)`` and checked key by key, so a damaged or foreign
file is refused with one line (:class:`~pipslab.envs.errors.PipslabError`), never
half-loaded.  Shipped nets live in ``agents/nets/NAME.pt`` with a model card
``NAME.md`` beside them.

Made by name through :mod:`pipslab.agents.neural`, which registers them without importing
torch until one is built:

* ``td`` — 0-ply: the play with the best equity (``td:net=NAME`` another shipped net,
  ``td:net=PATH`` a checkpoint of ``pipslab train backgammon``).
* ``eval=td`` (or ``eval=td:NAME``/``eval=td:PATH``) — the same net as the value
  function of ``expectimax`` and ``mcts`` (:class:`TDEvaluator`).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn

from pipslab.envs.backgammon.features import FEATURE_SETS, encode
from pipslab.envs.errors import PipslabError

from .backgammon import AfterstateAgent
from .backgammon_value import finished_points, swap
from .evaluators import BackgammonEvaluator, equity
from .netfiles import load_cached, net_path, read_net_file  # noqa: F401 (net_path: callers read it here)
from .netfiles import shipped_nets as _all_shipped
from .netfiles import DEFAULT_NET

NET_FORMAT = "pipslab-td-backgammon"
OUTPUTS = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")
_FLIP = [0, 3, 4, 1, 2]


class TDNet(nn.Module):
    """``inputs -> hidden (ReLU) ... -> 5 sigmoid outputs``; ``config`` is
    ``{"features": "tesauro"|"plus"|"contact"|"containment", "hidden": [h1, ...]}``."""

    def __init__(self, features: str = "plus", hidden=(128,)):
        super().__init__()
        if features not in FEATURE_SETS:
            raise PipslabError(f"unknown feature set {features!r}; known: {', '.join(FEATURE_SETS)}")
        hidden = [int(h) for h in (hidden if isinstance(hidden, (list, tuple)) else [hidden])]
        if not hidden or min(hidden) < 1:
            raise PipslabError(f"hidden layer sizes must be positive, got {hidden}")
        self.config = {"features": features, "hidden": hidden}
        layers, width = [], FEATURE_SETS[features]
        for h in hidden:
            layers += [nn.Linear(width, h), nn.ReLU()]
            width = h
        layers.append(nn.Linear(width, len(OUTPUTS)))
        self.layers = nn.Sequential(*layers)

    @staticmethod
    def inputs(features: str) -> int:
        return FEATURE_SETS[features]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits; the probabilities are ``sigmoid`` of them."""
        return self.layers(x)

    @torch.no_grad()
    def probabilities(self, rows: np.ndarray) -> np.ndarray:
        """``k x 5`` probabilities for the player on roll of each position (k x 26)."""
        x = torch.from_numpy(encode(rows, self.config["features"]))
        return torch.sigmoid(self.layers(x)).numpy().astype(np.float64)


def net_arrays(net: TDNet):
    """``(w1, b1, rest, dims)``: the weights of ``net`` as the compiled self-play
    (:func:`pipslab.envs.backgammon.fast.net_selfplay`) takes them -- the first layer
    transposed (inputs x hidden, float32), its bias, every further layer's weights (out x
    in) and bias packed in one float32 array, and the widths from the first hidden layer
    to the 5 outputs.  A copy: training the net afterwards does not change them."""
    linears = [m for m in net.layers if isinstance(m, nn.Linear)]
    with torch.no_grad():
        w1 = np.ascontiguousarray(linears[0].weight.detach().numpy().T, dtype=np.float32)
        b1 = linears[0].bias.detach().numpy().astype(np.float32)
        rest = [np.concatenate([m.weight.detach().numpy().ravel(), m.bias.detach().numpy()]) for m in linears[1:]]
    dims = np.array([m.out_features for m in linears], dtype=np.int64)
    return w1, b1, np.concatenate(rest).astype(np.float32), dims


def flip(p: np.ndarray) -> np.ndarray:
    """The same probabilities seen from the other player."""
    q = np.asarray(p)[..., _FLIP].copy()
    q[..., 0] = 1.0 - q[..., 0]
    return q


def outcome_vector(points: float) -> np.ndarray:
    """The exact five outputs for the player who has just won ``points`` (1, 2, 3)."""
    return np.array([1.0, points >= 2, points >= 3, 0.0, 0.0])


def play_scores(net: TDNet, rows: np.ndarray):
    """``(scores, points)`` of afterstates (k x 26, the mover's side), to choose a play
    by: a play that bears off the mover's last checker wins now, which no other play can
    beat, so it scores 10 + the points it wins; any other scores the mover's equity
    (minus the net's equity of the opponent on roll).  ``points``: what each finishing
    play wins, 0 for the others.  The ``td`` agent and self-play training both choose by
    it, in one forward pass."""
    rows = np.asarray(rows).reshape(-1, 26)
    points = finished_points(rows)
    scores = np.where(points != 0, 10.0 + points, -equity(net.probabilities(swap(rows))))
    return scores, points


# ------------------------------------------------------------------------- files
def net_dict(net: TDNet, meta: dict = None, **extra) -> dict:
    """The dict :func:`load_net` reads (``extra`` keys ride along, e.g. optimizer
    state in a training checkpoint); written atomically by the caller."""
    return {"format": NET_FORMAT, "config": dict(net.config), "model": net.state_dict(),
            "meta": dict(meta or {}), **extra}


def shipped_nets() -> list:
    """The shipped backgammon nets (the domino ones are named after their variant)."""
    return [n for n in _all_shipped() if not n.startswith(("happy-", "troshin-", "triple-"))]


def read_checkpoint(path: Path) -> dict:
    """The dict in a net or checkpoint file, checked for shape; one-line errors."""
    return read_net_file(path, NET_FORMAT, "backgammon network", ", ".join(shipped_nets()))


def grow(start: TDNet, features: str, hidden, seed: int = 0) -> TDNet:
    """A net with inputs ``features`` and layers ``hidden`` that computes exactly what
    ``start`` computes (Net2Net's widening): ``start``'s weights in place, the inputs
    it did not have weighted 0, each new hidden unit drawn from ``seed`` with its outgoing
    weights 0.  So a bigger net, or one given more inputs, starts where a trained one
    stopped.  One line unless ``features`` extends ``start``'s (tesauro, plus, contact:
    each set the one before with more inputs after it) and ``hidden`` has as many layers,
    none narrower."""
    from pipslab.envs.backgammon.features import FEATURE_LEVELS
    old_f, old_h = start.config["features"], start.config["hidden"]
    hidden = [int(h) for h in (hidden if isinstance(hidden, (list, tuple)) else [hidden])]
    if FEATURE_LEVELS.get(features, -1) < FEATURE_LEVELS[old_f] or len(hidden) != len(old_h) \
            or any(h < o for h, o in zip(hidden, old_h)):
        raise PipslabError(f"cannot grow a net with {old_f} inputs and layers {old_h} into one with {features} "
                           f"inputs and layers {hidden}: the inputs must extend its own and the layers be as "
                           "many and no narrower")
    torch.manual_seed(seed)
    net = TDNet(features, hidden)
    old = [m for m in start.layers if isinstance(m, nn.Linear)]
    new = [m for m in net.layers if isinstance(m, nn.Linear)]
    with torch.no_grad():
        for k, (a, b) in enumerate(zip(old, new)):
            o, i = a.weight.shape
            b.weight[:o, :i] = a.weight
            b.weight[:o, i:] = 0.0             # old units ignore the new inputs (or new units below)
            b.bias[:o] = a.bias
            if k + 1 < len(new):
                new[k + 1].weight[:, o:] = 0.0    # new units feed nothing yet
    net.eval()
    return net


def net_from(data: dict, path) -> TDNet:
    cfg = data["config"]
    try:
        net = TDNet(cfg.get("features", "plus"), cfg.get("hidden", [128]))
        net.load_state_dict(data["model"], strict=True)
    except PipslabError as exc:
        raise PipslabError(f"{path}: {exc}") from None
    except (RuntimeError, TypeError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise PipslabError(f"{path}: the weights do not fit the network they describe ({first})") from None
    net.eval()
    return net




def load_net(name_or_path: str = DEFAULT_NET) -> TDNet:
    """The net of a shipped name or a file path, loaded once per process (keyed by the
    file and its modification time, so a checkpoint that changes is read again).  The
    net is used read-only: agents never train it, so sharing it keeps games
    independent of each other."""
    # Agents value a few hundred positions at a time: torch's thread pool costs more than
    # it gives there (measured: a 1-ply search 4x slower with two threads on two busy
    # cores) and the harness already runs one process per core.
    torch.set_num_threads(1)
    return load_cached("td", name_or_path, lambda path: net_from(read_checkpoint(path), path))


# ------------------------------------------------------------------------ agents
class TDAgent(AfterstateAgent):
    """0-ply: plays the legal play whose afterstate has the best equity for the mover
    (ties: the first in :func:`~pipslab.envs.backgammon.legal_plays` order).  Holds no
    state between games beyond the read-only net."""

    name = "td"

    def __init__(self, net: str = DEFAULT_NET):
        super().__init__()
        self.net = load_net(str(net))

    def choose_play(self, view, plays, rng):
        if len(plays) == 1:
            return plays[0]
        rows = np.array([p.position for p in plays], dtype=np.int8)
        return plays[int(np.argmax(play_scores(self.net, rows)[0]))]


class TDEvaluator(BackgammonEvaluator):
    """The net on the evaluator seam (:mod:`pipslab.agents.evaluators`, family
    ``"backgammon"``): outcome probabilities, and afterstate values and state values that
    are equities (expected points), so ``in_points`` and no calibration."""

    in_points = True

    def __init__(self, net: str = DEFAULT_NET):
        self.net = load_net(str(net))

    def afterstate_values(self, rows, race):
        return -equity(self.net.probabilities(swap(np.asarray(rows).reshape(-1, 26))))

    def state_values(self, rows):
        return equity(self.net.probabilities(np.asarray(rows).reshape(-1, 26)))

    def probabilities(self, rows) -> np.ndarray:
        """``k x 5`` outcome probabilities for the player on roll (wildbg's ``eval``)."""
        return self.net.probabilities(np.asarray(rows).reshape(-1, 26))
