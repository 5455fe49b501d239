"""``pipslab train backgammon``: TD(λ) self-play training of the ``td`` network.

    pipslab train backgammon --games 200000 --seed 0 --out results/train-backgammon
    pipslab train backgammon --out results/train-backgammon --resume      # after Ctrl-C/kill
    pipslab train --recipe backgammon --out DIR                            # the shipped net's plan

What is this trainer's own (the run folder, checkpoints, evaluations, workers and the
device are the skeleton's, :mod:`pipslab.experiments.trainer`):

1. **Play a generation**: ``batch_games`` games of the current net against itself, in
   one compiled call per shard (:func:`~pipslab.envs.backgammon.fast.net_selfplay`): at
   every turn the game rolls, the compiled generator lists the afterstates of the roll,
   the net (its weights handed to the compiled code) values each of them, and the game
   takes the play with the best equity for its mover (greedy, as TD-Gammon: the dice
   explore).  The positions each player faced on roll are kept, from his side.
2. **λ-returns, then minibatches** (the forward view of TD(λ)): the current net values
   every kept position and each game's targets run backwards from its exact result,
   ``G[t] = flip((1 - λ) V(s[t+1]) + λ G[t+1])``; the net is fitted to them by minibatch
   Adam on the binary cross-entropy of its five sigmoid outputs.  Whole-batch targets
   (not online traces) let play run compiled on fixed weights; docs/training.md says why.
   With ``--target one-ply`` the targets are instead the net's own value one roll ahead
   (:func:`~pipslab.envs.backgammon.fast.one_ply_targets`, computed in the workers): the
   play the net would make for each of the 21 rolls, averaged — what GNU BG's nets were
   refined on (deeper evaluations) in place of the dice's noise.

Randomness: the initial weights come from ``seed``; the dice of game ``g`` from
``numpy.random.default_rng([seed, g])``; the minibatch order of generation ``k`` from
``default_rng([seed, 1, k])`` — so the weights do not depend on ``--workers`` or the
backend, and a resumed run ends where one straight run does (tests check both).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import List

import numpy as np
import torch

from pipslab.agents.td import TDNet, flip, grow, net_arrays, net_dict, net_from, outcome_vector, read_checkpoint
from pipslab.envs.backgammon import Position, fast
from pipslab.envs.backgammon.fast import njit
from pipslab.envs.backgammon.features import FEATURE_LEVELS, FEATURE_SETS, encode
from pipslab.envs.errors import PipslabError

from . import trainer as skeleton
from .trainer import number, whole

START = np.array(Position.start(), dtype=np.int8)
TARGETS = ("lambda", "one-ply")
# A game still running after this many turns is dropped (points 0, no targets): a barely
# trained net can keep two sides hitting each other for ever; a trained one never does.
MAX_TURNS = 3000


@dataclass
class TrainArgs(skeleton.TrainArgs):
    """TD(λ)'s settings (its own fields, then the skeleton's)."""

    games: int = 200_000
    """training games (rounded up to whole generations)"""
    features: str = "plus"
    """the net's inputs: tesauro (198), plus (207), contact (211) or containment (219)"""
    hidden: List[int] = field(default_factory=lambda: [128])
    """hidden layer sizes, e.g. 128 or 128,64"""
    target: str = "lambda"
    """what the net is fitted to: lambda (each game's λ-returns) or one-ply (the net's own
    value one roll ahead, averaged over the 21 rolls: computed in the workers, 10x the
    work of a game but without the dice's noise)"""
    lam: float = 0.7
    """λ of the λ-returns"""
    lr: float = 1e-3
    """Adam's step size at the start"""
    lr_halflife: int = 0
    """games over which the step size halves (0: constant; floor lr/20)"""
    batch_games: int = 128
    """games played per generation, with the same weights"""
    minibatch: int = 512
    """positions per gradient step"""
    epochs: int = 1
    """passes over a generation's positions"""
    checkpoint_every: int = 40
    """generations between checkpoints"""
    eval_every: int = 10_000
    """games between evaluations"""
    game: str = field(default="backgammon", metadata={"cli": False})

    def validate(self) -> None:
        super().validate()
        for name in ("games", "batch_games", "minibatch", "epochs"):
            whole(self, name)
        whole(self, "lr_halflife", 0)
        number(self, "lam", 0, 1)
        number(self, "lr", 0, 1, open_low=True)
        if self.target not in TARGETS:
            raise PipslabError(f"--target must be one of {', '.join(TARGETS)}, got {self.target!r}")
        if self.features not in FEATURE_SETS:
            raise PipslabError(f"--features must be one of {', '.join(FEATURE_SETS)}, got {self.features!r}")
        if not self.hidden or any(isinstance(h, bool) or not isinstance(h, int) or not 1 <= h <= 4096
                                  for h in self.hidden):
            raise PipslabError(f"--hidden must list layer sizes from 1 to 4096, got {self.hidden!r}")

    def step_size(self, games: int) -> float:
        """Adam's step size after ``games`` training games."""
        if not self.lr_halflife:
            return self.lr
        return max(self.lr * 0.5 ** (games / self.lr_halflife), self.lr / 20)


# ------------------------------------------------------------------- self-play
ROLL_BLOCK = 256              # a game's dice are drawn from its stream in blocks of this many rolls


def _first_rolls(seed: int, game: int):
    """``(rng, block, first)``: game ``game``'s dice stream, its first block of rolls and
    the index of its opening roll (the first that is not a double)."""
    rng = np.random.default_rng([seed, game])
    block = rng.integers(1, 7, size=(ROLL_BLOCK, 2))
    i = 0
    while block[i, 0] == block[i, 1]:   # the opening roll is not a double
        i += 1
    return rng, block, i


def play_generation(net, seed: int, first_game: int, count: int, start: np.ndarray = START):
    """``count`` greedy self-play games of ``net``, games ``first_game .. first_game +
    count - 1``, from ``start`` (the player on roll's side).  Returns ``(states,
    points)``: per game the positions faced on roll (``T x 26`` int8, each from its
    mover's side; the last one is the winner's before his final play) and the points he
    won (0 for a game dropped at ``MAX_TURNS``).

    The games are independent (a game's dice come from its own stream, the net does not
    change during a generation), so they are played one after the other, each turn's
    afterstates valued by the net compiled (:func:`~pipslab.envs.backgammon.fast.net_selfplay`,
    one call for the whole generation): the same choices as valuing them with
    ``play_scores`` in torch, up to the last bits of float32 sums.  ``net``: a
    :class:`TDNet`, or ``(features, net_arrays(net))`` as a worker gets it."""
    w1, b1, rest, dims = net_arrays(net) if isinstance(net, TDNet) else net[1]
    level = FEATURE_LEVELS[net.config["features"] if isinstance(net, TDNet) else net[0]]
    streams, rolls = [], np.empty((count, ROLL_BLOCK, 2), dtype=np.int64)
    rpos = np.empty(count, dtype=np.int64)
    for g in range(count):
        rng, rolls[g], rpos[g] = _first_rolls(seed, first_game + g)
        streams.append(rng)
    boards = np.tile(np.asarray(start, dtype=np.int8), (count, 1))
    turns = np.zeros(count, dtype=np.int64)
    status = np.full(count, 2, dtype=np.int64)       # 2: to play on
    points = np.zeros(count)
    kept = np.empty((count, MAX_TURNS, 26), dtype=np.int8)
    while True:
        fast.net_selfplay(boards, rolls, rpos, turns, kept, status, points, level, w1, b1, rest, dims)
        short = np.flatnonzero(status == 2)
        if not len(short):
            break
        grown = np.empty((count, rolls.shape[1] + ROLL_BLOCK, 2), dtype=np.int64)   # the next block
        grown[:, :rolls.shape[1]] = rolls
        for g in short:
            grown[g, rolls.shape[1]:] = streams[g].integers(1, 7, size=(ROLL_BLOCK, 2))
        rolls = grown
    return [kept[g, :turns[g]].copy() for g in range(count)], points


def lambda_returns(v_next: np.ndarray, last: np.ndarray, lam: float) -> np.ndarray:
    """Targets ``G`` for one game's ``T`` positions: ``v_next[t]`` is the net's output
    for position ``t + 1`` (from ITS mover's side; row ``T - 1`` unused) and ``last`` the
    exact outcome of the final play for the player who made it."""
    T = len(v_next)
    G = np.empty((T, 5))
    G[T - 1] = last
    for t in range(T - 2, -1, -1):
        G[t] = flip((1.0 - lam) * v_next[t] + lam * G[t + 1])
    return G


def targets(net: TDNet, states, points, lam: float):
    """``(X, G)``: the inputs of every kept position of the games (``states`` and
    ``points`` as :func:`play_generation` returns them) and their λ-return targets, with
    the values of ``net`` as it is now."""
    kept = [i for i, pts in enumerate(points) if pts > 0]
    states, points = [states[i] for i in kept], [points[i] for i in kept]
    if not kept:
        return torch.zeros((0, TDNet.inputs(net.config["features"]))), np.zeros((0, 5))
    X = torch.from_numpy(encode(np.concatenate(states), net.config["features"]))
    with torch.no_grad():
        V = torch.sigmoid(net(X.to(next(net.parameters()).device))).cpu().numpy().astype(np.float64)
    lengths = np.array([len(s) for s in states], dtype=np.int64)
    finals = np.array([outcome_vector(pts) for pts in points])
    G = np.empty((len(V), 5))
    _lambda_targets(V, lengths, finals, float(lam), G)
    return X, G


@njit(cache=True)
def _lambda_targets(V, lengths, finals, lam, G):
    """:func:`lambda_returns` of every game at once: game ``g`` holds ``lengths[g]`` rows
    of ``V`` (the net's outputs) and ``G``, one after the other; ``finals[g]`` its last
    play's exact outcome.  The same float operations in the same order."""
    start = 0
    for g in range(lengths.shape[0]):
        T = lengths[g]
        end = start + T - 1
        for o in range(5):
            G[end, o] = finals[g, o]
        for t in range(end - 1, start - 1, -1):
            a0 = (1.0 - lam) * V[t + 1, 0] + lam * G[t + 1, 0]
            a1 = (1.0 - lam) * V[t + 1, 1] + lam * G[t + 1, 1]
            a2 = (1.0 - lam) * V[t + 1, 2] + lam * G[t + 1, 2]
            a3 = (1.0 - lam) * V[t + 1, 3] + lam * G[t + 1, 3]
            a4 = (1.0 - lam) * V[t + 1, 4] + lam * G[t + 1, 4]
            G[t, 0] = 1.0 - a0           # flip: the same probabilities seen from the other player
            G[t, 1] = a3
            G[t, 2] = a4
            G[t, 3] = a1
            G[t, 4] = a2
        start += T


def one_ply(net, states, points):
    """``(X, G)`` as :func:`targets`, the targets the net's 1-ply values of the positions
    (:func:`~pipslab.envs.backgammon.fast.one_ply_targets`); ``net`` as for
    :func:`play_generation`."""
    features, arrays = (net.config["features"], net_arrays(net)) if isinstance(net, TDNet) else net
    kept = [s for s, pts in zip(states, points) if pts > 0]
    if not kept:
        return np.zeros((0, FEATURE_SETS[features]), dtype=np.float32), np.zeros((0, 5))
    rows = np.concatenate(kept)
    return encode(rows, features), fast.one_ply_targets(rows, FEATURE_LEVELS[features], *arrays)


def train_generation(net: TDNet, opt: torch.optim.Optimizer, states, points, args: TrainArgs,
                     generation: int, fitted=None) -> float:
    """λ-returns with the current net (or the targets ``fitted``: ``(X, G)``), then
    ``epochs`` passes of minibatch Adam over the generation's positions.  Returns the
    mean loss."""
    X, G = targets(net, states, points, args.lam) if fitted is None else fitted
    X = torch.as_tensor(X)
    device = next(net.parameters()).device
    X, Y = X.to(device), torch.from_numpy(G.astype(np.float32)).to(device)
    rng = np.random.default_rng([args.seed, 1, generation])
    for group in opt.param_groups:
        group["lr"] = args.step_size(generation * args.batch_games)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    total, steps = 0.0, 0
    for _ in range(args.epochs):
        order = torch.from_numpy(rng.permutation(len(X))).to(device)
        for lo in range(0, len(X), args.minibatch):
            idx = order[lo:lo + args.minibatch]
            loss = loss_fn(net(X[idx]), Y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
            steps += 1
    return total / max(steps, 1)


def play_shard(shared, first_game: int, count: int):
    """A worker's part of a generation: ``(features, arrays, seed, target)`` -> games
    ``first_game ..`` as ``(states, points, fitted)``: with ``target`` one-ply the shard's
    inputs and targets (:func:`one_ply`), else None."""
    features, arrays, seed, target = shared
    states, points = play_generation((features, arrays), seed, first_game, count)
    return states, points, one_ply((features, arrays), states, points) if target == "one-ply" else None


class TDTrainer(skeleton.Trainer):
    """TD(λ) on :class:`~pipslab.agents.td.TDNet` (module docstring)."""

    name = "backgammon"
    Args = TrainArgs
    unit = "game"
    batch_field = "batch_games"

    @classmethod
    def default_against(cls, args) -> List[str]:
        return ["pubeval"]

    def __init__(self, args: TrainArgs, device):
        super().__init__(args, device)
        self.net = TDNet(args.features, args.hidden).to(device)
        self.net.train()
        self.opt = torch.optim.Adam(self.net.parameters(), lr=args.lr)
        fast.warm_up()

    def step(self, done: int, update: int, selfplay: skeleton.SelfPlay) -> dict:
        args = self.args
        cpu = TDNet(args.features, args.hidden)
        cpu.load_state_dict({k: v.detach().cpu() for k, v in self.net.state_dict().items()})
        parts = selfplay.map(play_shard, (args.features, net_arrays(cpu), args.seed, args.target), done,
                             args.batch_games)
        states = [s for st, _, _ in parts for s in st]
        points = np.concatenate([p for _, p, _ in parts])
        fitted = None
        if args.target == "one-ply":
            fitted = (np.concatenate([f[0] for _, _, f in parts]), np.concatenate([f[1] for _, _, f in parts]))
        loss = train_generation(self.net, self.opt, states, points, args, update, fitted)
        return {"loss": loss, "plies": sum(map(len, states)) / max(len(states), 1)}

    def shown(self, stats):
        return {"loss": f"{stats['loss']:.4f}", "plies": f"{stats['plies']:.0f}"}

    def checkpoint(self, meta: dict, **extra) -> dict:
        return skeleton.on_cpu(net_dict(self.net, meta=meta, optimizer=self.opt.state_dict(), **extra))

    def read(self, path: Path) -> dict:
        return read_checkpoint(path)

    def load(self, data: dict, path: Path) -> None:
        if "optimizer" not in data:
            raise PipslabError(f"{path}: not a training checkpoint (no 'optimizer'); a shipped net cannot be resumed")
        self.net.load_state_dict(net_from(data, path).state_dict())
        self.net.train()
        self.opt = skeleton.resumed_optimizer(self.net, self.args.lr, data, path)

    def init_from(self, path: str) -> None:
        from pipslab.agents.netfiles import net_path
        start = net_from(read_checkpoint(net_path(path)), path)
        if start.config != self.net.config:      # a smaller net: widened, computing what it did
            try:
                start = grow(start, self.net.config["features"], self.net.config["hidden"], self.args.seed)
            except PipslabError as exc:
                raise PipslabError(f"--init {path}: {exc}") from None
        self.net.load_state_dict(start.state_dict())

    def net_file(self, meta: dict) -> dict:
        return skeleton.on_cpu(net_dict(self.net, meta=meta))

    @classmethod
    def agent_spec(cls, path) -> str:
        return f"td:net={path}"

    @classmethod
    def error_rate(cls, net_file) -> dict:
        from .benchmark_backgammon import error_rate
        return error_rate(net_from(read_checkpoint(Path(net_file)), net_file))

    @classmethod
    def default_out(cls, args) -> str:
        return "results/train-backgammon"


def train(args: TrainArgs) -> dict:
    """Run (or resume) a training (:func:`pipslab.experiments.trainer.train`)."""
    return skeleton.train(TDTrainer, args)


TRAINER = TDTrainer
