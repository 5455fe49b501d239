"""``pipslab train backgammon``: TD(λ) self-play training of the ``td`` network.

    pipslab train backgammon --games 200000 --seed 0 --out results/train-backgammon
    pipslab train backgammon --out results/train-backgammon --resume      # after Ctrl-C/kill

One readable loop (CleanRL's shape: an args dataclass, a seeding block, then the loop):

1. **Play a generation**: ``batch_games`` games of the current net against itself, in
   one compiled call (:func:`~pipslab.envs.backgammon.fast.net_selfplay`): at every turn
   the game rolls, the compiled generator lists the afterstates of the roll, the net
   (its weights handed to the compiled code) values each of them, and the game takes the
   play with the best equity for its mover (greedy, as TD-Gammon: the dice explore).
   The positions each player faced on roll are kept, from his side.
2. **λ-returns, then batches** (the forward view of TD(λ), Sutton & Barto §12.1): after
   the generation, the current net values every kept position and each game's targets
   are computed backwards from its exact result::

       G[T-1] = outcome of the winner's last play (exact: win, gammon, backgammon)
       G[t]   = flip((1 - λ) V(s[t+1]) + λ G[t+1])

   ``flip`` turns the next position's probabilities (the opponent is on roll there)
   round to the player of ``s[t]``.  The net is then fitted to ``(s[t], G[t])`` by
   minibatch Adam on the binary cross-entropy of its five sigmoid outputs.  Why this and
   not online eligibility traces: the targets and the update are whole-batch tensor
   operations (one forward, a few minibatch steps per generation instead of one tiny
   backward per move), which is what lets play run compiled on fixed weights, and λ-returns computed
   after the game are exact for the values of that moment — online traces would mix
   values of nets that changed during the game.

3. Every ``checkpoint_every`` games: a checkpoint (``DIR/checkpoint.pt``: net, Adam
   state, games, wall seconds, curve so far, the arguments), written atomically; every
   ``eval_every`` games: ``eval_games`` duplicate games of the net against each
   ``eval_against`` agent through the tournament harness (``DIR/evals/…``), appended to
   ``DIR/curve.csv`` (games trained, wall seconds, win rate with its Wilson 95%
   interval, points per game) and ``DIR/curve.png`` redrawn.

Randomness: the net's initial weights come from ``seed``; the dice of game ``g`` from
``numpy.random.default_rng([seed, g])`` (a stream of its own, so a game never depends on
which others share its generation); the minibatch order of generation ``k`` from
``default_rng([seed, 1, k])``.  Generations are whole (``--games`` is rounded up to a
multiple of ``batch_games``) and checkpoints fall between them, so a run stopped and
resumed gives the same weights as one run straight through (a test checks it).  Torch
runs with ``threads`` intra-op threads (default 1): more threads may change the float
summation order and with it the last bits.  ``workers`` processes share each
generation's games (game ``g``'s dice and the net are the same wherever it is played, so
the weights do not depend on the number of workers; a test checks it).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional

import numpy as np
import torch
from tqdm import tqdm

from pipslab.agents.td import TDNet, flip, net_arrays, net_dict, net_from, outcome_vector, read_checkpoint
from pipslab.envs.backgammon import Position, fast
from pipslab.envs.backgammon.fast import njit
from pipslab.envs.backgammon.features import FEATURE_SETS, encode
from pipslab.envs.errors import PipslabError

from . import training
from .ratings import wilson_interval
from .training import TrainingInterrupted

START = np.array(Position.start(), dtype=np.int8)
# A game still running after this many turns is dropped (points 0, no targets): a barely
# trained net can keep two sides hitting each other for ever; a trained one never does.
MAX_TURNS = 3000
CURVE_FIELDS = ["games", "wall_s", "opponent", "eval_games", "win_rate", "win_low", "win_high",
                "points_per_game"]


@dataclass
class TrainArgs:
    games: int = 200_000          # training games (rounded up to whole generations)
    seed: int = 0
    out: str = "results/train-backgammon"
    resume: bool = False
    features: str = "plus"        # "tesauro" (198 inputs) or "plus" (207)
    hidden: List[int] = field(default_factory=lambda: [128])
    lam: float = 0.7              # λ of the λ-returns
    lr: float = 1e-3              # Adam's step size at the start
    lr_halflife: int = 0          # games over which the step size halves (0: constant; floor lr/20)
    batch_games: int = 128        # games played per generation (with the same weights)
    minibatch: int = 512          # positions per gradient step
    epochs: int = 1               # passes over a generation's positions
    checkpoint_every: int = 5_000
    eval_every: int = 10_000
    eval_games: int = 200         # duplicate games per opponent at every evaluation (0: none)
    eval_against: List[str] = field(default_factory=lambda: ["pubeval"])
    threads: int = 1              # torch intra-op threads of the learner
    workers: int = 1              # processes that play each generation's games
    progress: bool = True
    tensorboard: bool = False
    config: Optional[str] = None

    def validate(self) -> None:
        def positive(name, low=1):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < low or v > 10**9:
                raise PipslabError(f"--{name.replace('_', '-')} must be an integer from {low} to 10^9, got {v!r}")
        for name in ("games", "batch_games", "minibatch", "epochs", "checkpoint_every", "eval_every", "threads",
                     "workers"):
            positive(name)
        positive("eval_games", 0)
        positive("lr_halflife", 0)
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or not 0 <= self.seed < 2**63:
            raise PipslabError(f"--seed must be a non-negative integer, got {self.seed!r}")
        if not (isinstance(self.lam, (int, float)) and 0.0 <= self.lam <= 1.0):
            raise PipslabError(f"--lam must lie in [0, 1], got {self.lam!r}")
        if not (isinstance(self.lr, (int, float)) and math.isfinite(self.lr) and 0 < self.lr < 1):
            raise PipslabError(f"--lr must lie in (0, 1), got {self.lr!r}")
        if self.features not in FEATURE_SETS:
            raise PipslabError(f"--features must be one of {', '.join(FEATURE_SETS)}, got {self.features!r}")
        if not self.hidden or any(isinstance(h, bool) or not isinstance(h, int) or not 1 <= h <= 4096
                                  for h in self.hidden):
            raise PipslabError(f"--hidden must list layer sizes from 1 to 4096, got {self.hidden!r}")
        if not str(self.out).strip():
            raise PipslabError("--out must name a folder")

    def hyper(self) -> dict:
        """What must match for ``--resume`` to continue the same run."""
        return {k: getattr(self, k) for k in ("seed", "features", "hidden", "lam", "lr", "lr_halflife",
                                              "batch_games", "minibatch", "epochs")}

    def step_size(self, games: int) -> float:
        """Adam's step size after ``games`` training games."""
        if not self.lr_halflife:
            return self.lr
        return max(self.lr * 0.5 ** (games / self.lr_halflife), self.lr / 20)

    def command(self, resume: bool = False) -> str:
        parts = ["pipslab", "train", "backgammon", "--games", str(self.games), "--seed", str(self.seed),
                 "--out", str(self.out), "--features", self.features,
                 "--hidden", ",".join(map(str, self.hidden)), "--lam", str(self.lam), "--lr", str(self.lr),
                 "--lr-halflife", str(self.lr_halflife),
                 "--batch-games", str(self.batch_games), "--minibatch", str(self.minibatch),
                 "--epochs", str(self.epochs), "--checkpoint-every", str(self.checkpoint_every),
                 "--eval-every", str(self.eval_every), "--eval-games", str(self.eval_games),
                 "--eval-against", ",".join(self.eval_against)]
        return shlex.join(parts + (["--resume"] if resume else []))


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


def play_generation(net: TDNet, seed: int, first_game: int, count: int, start: np.ndarray = START):
    """``count`` greedy self-play games of ``net``, games ``first_game .. first_game +
    count - 1``, from ``start`` (the player on roll's side).  Returns ``(states,
    points)``: per game the positions faced on roll (``T x 26`` int8, each from its
    mover's side; the last one is the winner's before his final play) and the points he
    won (0 for a game dropped at ``MAX_TURNS``).

    The games are independent (a game's dice come from its own stream, the net does not
    change during a generation), so they are played one after the other, each turn's
    afterstates valued by the net compiled (:func:`~pipslab.envs.backgammon.fast.net_selfplay`,
    one call for the whole generation): the same choices as valuing them with
    ``play_scores`` in torch, up to the last bits of float32 sums."""
    w1, b1, rest, dims = net_arrays(net)
    plus = net.config["features"] == "plus"
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
        fast.net_selfplay(boards, rolls, rpos, turns, kept, status, points, plus, w1, b1, rest, dims)
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
        V = torch.sigmoid(net(X)).numpy().astype(np.float64)
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


def train_generation(net: TDNet, opt: torch.optim.Optimizer, states, points, args: TrainArgs,
                     generation: int) -> float:
    """λ-returns with the current net, then ``epochs`` passes of minibatch Adam over the
    generation's positions.  Returns the mean loss."""
    X, G = targets(net, states, points, args.lam)
    Y = torch.from_numpy(G.astype(np.float32))
    rng = np.random.default_rng([args.seed, 1, generation])
    for group in opt.param_groups:
        group["lr"] = args.step_size(generation * args.batch_games)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    total, steps = 0.0, 0
    for _ in range(args.epochs):
        order = torch.from_numpy(rng.permutation(len(X)))
        for lo in range(0, len(X), args.minibatch):
            idx = order[lo:lo + args.minibatch]
            loss = loss_fn(net(X[idx]), Y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
            steps += 1
    return total / max(steps, 1)


# ------------------------------------------------------------ worker processes
_WORKER_NET: Optional[TDNet] = None


def _play_shard(config: dict, weights: dict, seed: int, first_game: int, count: int):
    """In a worker process: games ``first_game ..`` of a generation with the learner's
    current weights."""
    global _WORKER_NET
    if _WORKER_NET is None or _WORKER_NET.config != config:
        torch.set_num_threads(1)
        _WORKER_NET = TDNet(config["features"], config["hidden"])
    _WORKER_NET.load_state_dict(weights)
    return play_generation(_WORKER_NET, seed, first_game, count)


class _Players:
    """Plays a generation in this process or shared out to ``workers`` processes."""

    def __init__(self, workers: int):
        self.pool = None
        if workers > 1:
            import multiprocessing as mp
            from .executors import worker_init   # Ctrl-C is the learner's; workers die with it
            self.pool = mp.get_context("spawn").Pool(workers, initializer=worker_init, initargs=(os.getpid(),))
            self.workers = workers

    def play(self, net: TDNet, seed: int, first_game: int, count: int):
        if self.pool is None:
            return play_generation(net, seed, first_game, count)
        weights = {k: v.detach().clone() for k, v in net.state_dict().items()}
        bounds = np.linspace(0, count, self.workers + 1).astype(int)
        jobs = [self.pool.apply_async(_play_shard, (net.config, weights, seed, first_game + lo, hi - lo))
                for lo, hi in zip(bounds[:-1], bounds[1:]) if hi > lo]
        states, points = [], []
        for job in jobs:
            s, p = job.get()
            states += s
            points.append(p)
        return states, np.concatenate(points)

    def close(self):
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()
            self.pool = None


# ------------------------------------------------------------------ run state
def _checkpoint(net, opt, args: TrainArgs, games: int, generation: int, wall: float, curve: list) -> dict:
    return net_dict(net, meta={"games": games, "wall_s": wall, "command": args.command()},
                    optimizer=opt.state_dict(), games=games, generation=generation, wall_s=wall,
                    hyper=json.dumps(args.hyper()), curve=json.dumps(curve))


def load_run(path: Path, args: TrainArgs):
    """``(net, optimizer, games, generation, wall, curve)`` from a checkpoint of the
    same run; a checkpoint of other hyper-parameters or a damaged one is refused."""
    data = read_checkpoint(path)
    training.check_checkpoint(data, path, ("optimizer", "games", "generation", "wall_s", "hyper", "curve"),
                              args.hyper())
    try:
        curve = json.loads(data["curve"])
        games, generation, wall = int(data["games"]), int(data["generation"]), float(data["wall_s"])
    except (TypeError, ValueError) as exc:
        raise PipslabError(f"{path}: damaged training checkpoint ({type(exc).__name__})") from None
    net = net_from(data, path)
    net.train()
    opt = training.resumed_optimizer(net, args.lr, data, path)
    return net, opt, games, generation, wall, curve


def write_curve(out: Path, curve: list) -> None:
    training.write_curve(out, curve, CURVE_FIELDS, "games", "training games",
                         "td: 0-ply net against fixed opponents, duplicate dice")


def evaluate(net_file: Path, out: Path, games_trained: int, wall: float, args: TrainArgs) -> List[dict]:
    """``eval_games`` duplicate games of ``td:net=net_file`` against each opponent,
    through the tournament harness (one process)."""
    from .tournament import TournamentArgs, run_tournament
    rows = []
    for opp in args.eval_against:
        targs = TournamentArgs(game="backgammon", agents=[f"td:net={net_file}", opp], games=args.eval_games,
                               seed=args.seed, out=str(out / "evals" / f"{games_trained:09d}-{opp.replace(':', '_')}"),
                               progress=False, workers=1, plots=False, bootstrap=0)
        result = run_tournament(targs)
        s = result.summary
        me = s[s["agent"].str.startswith("td")].iloc[0]
        n = int(me["games"])
        wins = int(me["wins"])
        lo, hi = wilson_interval(wins, n)
        rows.append({"games": games_trained, "wall_s": round(wall, 1), "opponent": opp, "eval_games": n,
                     "win_rate": round(wins / n, 4), "win_low": round(lo, 4), "win_high": round(hi, 4),
                     "points_per_game": round(float(me["avg_points"]), 4)})
    return rows


class _TB:
    def __init__(self, out: Path, on: bool):
        self.w = None
        if on:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except ImportError:
                raise PipslabError("--tensorboard needs the tensorboard package (pip install tensorboard)") from None
            self.w = SummaryWriter(str(out / "tensorboard"))

    def scalar(self, tag, value, step):
        if self.w is not None:
            self.w.add_scalar(tag, value, step)


def train(args: TrainArgs) -> dict:
    """Run (or resume) a training; returns ``{"games", "wall_s", "curve", "out"}``.  The
    run folder is locked while it runs (the tournament's lock: a second trainer on the
    same ``--out`` is refused with one line naming the first; a killed run's lock is
    taken over)."""
    args.validate()
    out, ckpt, lock = training.open_run(args.out, args.resume, args.command())
    try:
        return _train(args, out, ckpt)
    finally:
        lock.release()


def _train(args: TrainArgs, out: Path, ckpt: Path) -> dict:
    # seeding block
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    if args.resume:
        net, opt, games, generation, wall, curve = load_run(ckpt, args)
    else:
        net = TDNet(args.features, args.hidden)
        opt = torch.optim.Adam(net.parameters(), lr=args.lr)
        games, generation, wall, curve = 0, 0, 0.0, []
    net.train()
    target = -(-args.games // args.batch_games) * args.batch_games
    tb = _TB(out, args.tensorboard)
    fast.warm_up()

    def save():
        training.atomic_torch_save(_checkpoint(net, opt, args, games, generation, wall, curve), ckpt)

    bar = tqdm(total=target, initial=min(games, target), unit="game", disable=not args.progress,
               dynamic_ncols=True, smoothing=0.05)
    t0 = time.perf_counter() - wall
    players = _Players(args.workers)
    try:
        while games < target:
            states, points = players.play(net, args.seed, games, args.batch_games)
            loss = train_generation(net, opt, states, points, args, generation)
            games += args.batch_games
            generation += 1
            wall = time.perf_counter() - t0
            bar.update(args.batch_games)
            bar.set_postfix(loss=f"{loss:.4f}", plies=f"{sum(map(len, states)) / len(states):.0f}")
            tb.scalar("loss", loss, games)
            due_eval = args.eval_games > 0 and (games // args.eval_every > (games - args.batch_games) // args.eval_every
                                               or games >= target)
            if due_eval or games // args.checkpoint_every > (games - args.batch_games) // args.checkpoint_every:
                save()
            if due_eval:
                net.eval()
                rows = evaluate(ckpt, out, games, wall, args)
                net.train()
                curve.extend(rows)
                write_curve(out, curve)
                for r in rows:
                    tb.scalar(f"win_rate/{r['opponent']}", r["win_rate"], games)
                    bar.write(f"{games} games, {wall:.0f} s: {r['win_rate']:.1%} "
                              f"[{r['win_low']:.1%}, {r['win_high']:.1%}] against {r['opponent']}, "
                              f"{r['points_per_game']:+.3f} points/game")
                t0 += time.perf_counter() - t0 - wall     # evaluation time is not training time
                save()
    except KeyboardInterrupt:
        bar.close()
        save()
        raise TrainingInterrupted(games, "games", dataclasses.replace(args, resume=True).command(resume=True)) from None
    finally:
        players.close()
    bar.close()
    save()
    net_file = out / "net.pt"
    training.atomic_torch_save(net_dict(net, meta={"games": games, "wall_s": round(wall, 1),
                                                 "command": args.command()}), net_file)
    return {"games": games, "wall_s": wall, "curve": curve, "out": str(out)}


# ----------------------------------------------------------------------- CLI
def _int_list(text: str) -> List[int]:
    try:
        return [int(x) for x in str(text).split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def add_arguments(p) -> None:
    d = TrainArgs()
    p.add_argument("--games", type=int, default=None, help=f"training games (default {d.games:,})")
    p.add_argument("--seed", type=int, default=None, help="seed of the whole run (default 0)")
    p.add_argument("--out", default=None, help=f"run folder (default {d.out})")
    p.add_argument("--resume", action="store_true", help="continue the run in --out from its checkpoint")
    p.add_argument("--config", default=None, help="TOML file with any of these flags as keys")
    p.add_argument("--features", choices=sorted(FEATURE_SETS), default=None)
    p.add_argument("--hidden", type=_int_list, default=None, help="hidden layer sizes, e.g. 128 or 128,64")
    p.add_argument("--lam", type=float, default=None, help=f"λ (default {d.lam})")
    p.add_argument("--lr", type=float, default=None, help=f"Adam learning rate (default {d.lr})")
    p.add_argument("--lr-halflife", type=int, default=None,
                   help="games over which the learning rate halves (default 0: constant)")
    p.add_argument("--batch-games", type=int, default=None, help=f"games per generation (default {d.batch_games})")
    p.add_argument("--minibatch", type=int, default=None)
    p.add_argument("--epochs", type=int, default=None)
    p.add_argument("--checkpoint-every", type=int, default=None)
    p.add_argument("--eval-every", type=int, default=None)
    p.add_argument("--eval-games", type=int, default=None, help="0: no evaluations")
    p.add_argument("--eval-against", default=None, help="comma-separated agents (default pubeval)")
    p.add_argument("--workers", type=int, default=None,
                   help="processes that play each generation's games (default 1; the weights do not depend on it)")
    p.add_argument("--threads", type=int, default=None, help="torch threads of the learner (default 1)")
    p.add_argument("--tensorboard", action="store_true", default=None)
    p.add_argument("--no-progress", dest="progress", action="store_false", default=None)


def args_from_namespace(ns) -> TrainArgs:
    args = TrainArgs()
    values = training.settings(ns)
    known = {f.name for f in dataclasses.fields(TrainArgs)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise PipslabError(f"unknown setting(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    for key, value in values.items():
        if key == "eval_against" and isinstance(value, str):
            value = [a for a in value.split(",") if a.strip()]
        if key == "hidden" and isinstance(value, int) and not isinstance(value, bool):
            value = [value]
        setattr(args, key, value)
    args.config = ns.config
    return args


def run(ns) -> int:
    args = args_from_namespace(ns)
    try:
        result = train(args)
    except TrainingInterrupted as exc:
        sys.stderr.write(f"pipslab: {exc}\n")
        return 130
    print(f"trained {result['games']:,} games in {result['wall_s']:.0f} s -> {result['out']}/net.pt")
    for r in result["curve"][-len(args.eval_against):] if result["curve"] else []:
        print(f"  {r['win_rate']:.1%} [{r['win_low']:.1%}, {r['win_high']:.1%}] against {r['opponent']} "
              f"({r['eval_games']} games)")
    return 0
