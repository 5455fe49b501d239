"""Self-play training speed of the ``td`` learner beside random backgammon play, and of the
domino ``net`` learner beside random Happy block play, in one run.

``pipslab bench train [--seconds S] [--seed N] [--json] [--out DIR]``

* **training** (the headline, ``train_games_per_s``): whole generations of
  :mod:`pipslab.experiments.train_backgammon` — lock-step greedy self-play of 128 games
  (one forward pass per step values every game's plays) plus the λ-return targets and
  the Adam steps on their positions — with the shipped net's architecture, starting from
  the shipped net's weights so that the games are as long as a trained net plays them.
  Torch runs with one thread, as the trainer's default.
* beside it, the random-play rows of ``pipslab bench backgammon``: uniformly random whole
  plays with the compiled generator and a Python loop, and the whole game compiled.
* **domino training** (``train_hands_per_s``): whole updates of
  :mod:`pipslab.experiments.train_dominoes` on Happy block with its defaults — 512 hands
  in lock-step against the league (half self-play) on the compiled engine, then the PPO
  epochs — from a fresh net; the same with ``--guide oracle`` (the exact solver labels
  every learner decision on the true state) and with ``--guide pimc`` (the solver's
  values summed over 6 worlds of the seat's view label it), one teacher kept across the
  updates as the trainer keeps it.  Beside them: uniformly random Happy block hands
  through the Python engine.  The compiled code is loaded before the clock starts.
* every training row is whole steps of the trainer itself (``Trainer.step``: self-play
  through :class:`~pipslab.experiments.trainer.SelfPlay`, then the update), so the bench
  measures what ``pipslab train`` runs;
* ``--workers 1,2,4 --backends process,ray``: the same steps with N self-play workers on
  each backend (a scaling table; the pool or Ray is started before the clock).
"""
from __future__ import annotations

import time

import numpy as np
import torch

from pipslab.agents.td import DEFAULT_NET, load_net, net_from, read_checkpoint, net_path
from pipslab.envs.backgammon import fast

from .bench_backgammon import ours_compiled, ours_whole_plays
from .bench_report import rate


def _steps_per_s(trainer, selfplay, seconds: float, warm: int = 1):
    """``(units done, elapsed)`` of whole trainer steps (self-play through ``selfplay`` and
    the update: what ``pipslab train`` runs) for about ``seconds``, after ``warm`` steps."""
    batch = getattr(trainer.args, type(trainer).batch_field)
    done = update = 0
    for _ in range(warm):
        trainer.step(done, update, selfplay)
        done += batch
        update += 1
    start, t0 = done, time.perf_counter()
    while True:
        trainer.step(done, update, selfplay)
        done += batch
        update += 1
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds:
            return done - start, elapsed


def _trainer(game: str, seed: int, **settings):
    """A trainer of ``game`` on the CPU with its defaults (one torch thread), seeded; the
    backgammon one from the shipped net's weights, so its games are as long as a trained
    net plays them."""
    from . import train_backgammon as tb
    from . import train_dominoes as td
    torch.manual_seed(seed)
    if game == "backgammon":
        path = net_path(DEFAULT_NET)
        cfg = net_from(read_checkpoint(path), path).config
        args = tb.TrainArgs(seed=seed, features=cfg["features"], hidden=cfg["hidden"], **settings)
        trainer = tb.TDTrainer(args, torch.device("cpu"))
        trainer.init_from(str(path))
        return trainer
    args = td.TrainArgs(game="happy", options={"mode": "block"}, seed=seed, **settings)
    args.eval_against = ["heaviest"]
    args.validate()
    return td.PPOTrainer(args, torch.device("cpu"))


def measure_training(seconds: float, seed: int) -> dict:
    from .trainer import SelfPlay
    trainer = _trainer("backgammon", seed)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        games, elapsed = _steps_per_s(trainer, SelfPlay(), seconds)
    finally:
        torch.set_num_threads(threads)
    return {"train_games_per_s": games / elapsed, "train_games": games, "net": DEFAULT_NET,
            "architecture": trainer.net.config, "batch_games": trainer.args.batch_games}


def measure_domino_training(seconds: float, seed: int, guide: str = "") -> dict:
    """Hands per second of Happy block training updates (module docstring)."""
    from threadpoolctl import threadpool_limits

    from .trainer import SelfPlay
    trainer = _trainer("happy", seed, **({"guide": guide} if guide else {}))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpool_limits(1):
            hands, elapsed = _steps_per_s(trainer, SelfPlay(), seconds)
    finally:
        torch.set_num_threads(threads)
    return {"hands_per_s": hands / elapsed, "hands": hands, "architecture": trainer.args.hidden,
            "batch_hands": trainer.args.batch_hands}


def measure_scaling(seconds: float, seed: int, workers, backends) -> list:
    """Training throughput of both trainers with ``workers`` self-play workers on each
    backend (the learner in this process; a pool or Ray started before the clock)."""
    from .trainer import SelfPlay
    rows = []
    for backend in backends:
        for w in workers:
            for game, unit in (("backgammon", "games"), ("happy", "hands")):
                trainer = _trainer(game, seed, workers=w, backend=backend)
                selfplay = SelfPlay(backend, w)
                try:
                    done, elapsed = _steps_per_s(trainer, selfplay, seconds, warm=2)
                finally:
                    selfplay.close()
                rows.append({"backend": backend, "workers": w, "trainer": game, "unit": unit,
                             "per_s": done / elapsed})
    return rows


def random_happy_hands(seconds: float, seed: int) -> float:
    """Uniformly random Happy block hands per second (deal, legal moves, apply)."""
    from pipslab.envs.game import get_game
    game = get_game("happy")
    opts = game.resolve({"mode": "block"})
    rng = np.random.default_rng(seed)
    hands, t0 = 0, time.perf_counter()
    while True:
        s = game.new_state(rng, opts)
        while not s.is_terminal:
            legal = s.legal_actions()
            s.apply(legal[int(rng.integers(len(legal)))])
        hands += 1
        if hands % 64 == 0 and time.perf_counter() - t0 >= seconds:
            return hands / (time.perf_counter() - t0)


def warm_up_dominoes() -> None:
    """Load (or compile) the compiled domino engine, league, encoders and PIMC sums."""
    from pipslab.agents import dominoes_compiled, pimc_compiled
    from pipslab.envs.dominoes import compiled
    compiled.warm_up()
    dominoes_compiled.warm_up()
    pimc_compiled.warm_up()


def measure(seconds: float, seed: int) -> dict:
    fast.warm_up()
    warm_up_dominoes()
    load_net(DEFAULT_NET)
    rng = np.random.default_rng(seed)
    r = measure_training(max(seconds, 1.0) * 2, seed)
    r["random_whole_plays_games_per_s"] = rate(ours_whole_plays(rng), seconds)
    r["random_compiled_games_per_s"] = rate(ours_compiled(rng), seconds)
    dom = measure_domino_training(max(seconds, 1.0) * 2, seed)
    guided = measure_domino_training(max(seconds, 1.0) * 2, seed, guide="oracle")
    pimc = measure_domino_training(max(seconds, 1.0) * 2, seed, guide="pimc")
    r["dominoes"] = {"train_hands_per_s": dom["hands_per_s"],
                     "guided_train_hands_per_s": guided["hands_per_s"],
                     "pimc_guided_train_hands_per_s": pimc["hands_per_s"], "hidden": dom["architecture"],
                     "batch_hands": dom["batch_hands"], "random_hands_per_s": random_happy_hands(seconds, seed)}
    r["seconds"], r["seed"] = seconds, seed
    return r


def format_table(r: dict) -> str:
    a = r["architecture"]
    rows = [
        (f"td self-play training ({a['features']}, hidden {a['hidden']}, {r['batch_games']} games lock-step)",
         r["train_games_per_s"]),
        ("random whole plays, compiled generation, Python loop", r["random_whole_plays_games_per_s"]),
        ("random, whole game compiled (numba)", r["random_compiled_games_per_s"]),
    ]
    lines = ["backgammon: games per second, one process",
             f"{'':74s} {'games/s':>9s}"]
    lines += [f"{name:74s} {rate:9.1f}" for name, rate in rows]
    lines.append(f"(training: {r['train_games']} games through the trainer's step, from the shipped net's weights)")
    d = r["dominoes"]
    lines += ["", "Happy block dominoes: hands per second, one process", f"{'':74s} {'hands/s':>9s}"]
    rows = [(f"net self-play training (masked PPO, hidden {d['hidden']}, {d['batch_hands']} hands lock-step)",
             d["train_hands_per_s"]),
            ("  the same with --guide oracle (the solver labels every decision)", d["guided_train_hands_per_s"]),
            ("  the same with --guide pimc (the solver on 6 worlds of the view labels it)",
             d["pimc_guided_train_hands_per_s"]),
            ("random hands, the Python engine (engine API)", d["random_hands_per_s"])]
    lines += [f"{name:74s} {rate:9.1f}" for name, rate in rows]
    if r.get("scaling"):
        lines += ["", "training with N self-play workers (whole trainer steps; the learner in this process)",
                  f"{'backend':10s} {'workers':>7s} {'td games/s':>12s} {'PPO hands/s':>12s}"]
        by = {}
        for row in r["scaling"]:
            by.setdefault((row["backend"], row["workers"]), {})[row["trainer"]] = row["per_s"]
        for (backend, w), v in by.items():
            lines.append(f"{backend:10s} {w:7d} {v.get('backgammon', 0):12.1f} {v.get('happy', 0):12.1f}")
    return "\n".join(lines)


def run(args) -> int:
    from .bench_report import report
    r = measure(args.seconds, args.seed)
    if getattr(args, "workers", None):
        r["scaling"] = measure_scaling(args.seconds, args.seed, args.workers, args.backends or ["process"])
    return report(args, r, format_table(r), "bench_train.json")
