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
"""
from __future__ import annotations

import time

import numpy as np
import torch

from pipslab.agents.td import DEFAULT_NET, load_net, net_from, read_checkpoint, net_path
from pipslab.envs.backgammon import fast

from .bench_backgammon import ours_compiled, ours_whole_plays
from .bench_report import rate
from . import train_backgammon as tb


def measure_training(seconds: float, seed: int) -> dict:
    path = net_path(DEFAULT_NET)
    net = net_from(read_checkpoint(path), path)      # a private copy: it is trained here
    net.train()
    args = tb.TrainArgs(seed=seed, features=net.config["features"], hidden=net.config["hidden"])
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        states, points = tb.play_generation(net, seed, 0, 8)          # warm-up, off the clock
        tb.train_generation(net, opt, states, points, args, 0)
        games = plies = generations = 0
        t0 = time.perf_counter()
        while True:
            states, points = tb.play_generation(net, seed, games, args.batch_games)
            tb.train_generation(net, opt, states, points, args, generations)
            games += args.batch_games
            plies += sum(map(len, states))
            generations += 1
            elapsed = time.perf_counter() - t0
            if elapsed >= seconds:
                break
    finally:
        torch.set_num_threads(threads)
    return {"train_games_per_s": games / elapsed, "train_plies_per_s": plies / elapsed,
            "train_games": games, "plies_per_game": plies / games, "net": DEFAULT_NET,
            "architecture": net.config, "batch_games": args.batch_games}


def measure_domino_training(seconds: float, seed: int, guide: str = "") -> dict:
    """Hands per second of Happy block training updates (module docstring)."""
    from threadpoolctl import threadpool_limits
    from pipslab.agents.domino_net import NetPlayer, PolicyNet, net_spec
    from . import train_dominoes as td
    args = td.TrainArgs(game="happy", options={"mode": "block"}, seed=seed, guide=guide)
    args.validate()
    torch.manual_seed(seed)
    net = PolicyNet(dict(net_spec("happy", {"mode": "block"}), hidden=args.hidden))
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    league = td.League(args)
    from pipslab.agents.teacher import Teacher
    teacher = Teacher("happy", {"mode": "block"}, guide, args.guide_samples) if guide else None
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpool_limits(1):
            hands = decisions = updates = 0
            t0 = time.perf_counter()
            while True:
                w = args.guide_weight(hands)
                batch = td.play_hands(NetPlayer(net), league, args, hands, args.batch_hands, label=w > 0,
                                      teacher=teacher)
                td.ppo_update(net, opt, batch, args, updates, w)
                league.record(batch.results)
                hands += batch.hands
                decisions += batch.decisions
                updates += 1
                elapsed = time.perf_counter() - t0
                if elapsed >= seconds:
                    break
    finally:
        torch.set_num_threads(threads)
    return {"hands_per_s": hands / elapsed, "decisions_per_s": decisions / elapsed, "hands": hands,
            "architecture": net.config["hidden"], "batch_hands": args.batch_hands}


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
    r["dominoes"] = {"train_hands_per_s": dom["hands_per_s"], "train_decisions_per_s": dom["decisions_per_s"],
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
    lines.append(f"(training: {r['train_games']} games, {r['plies_per_game']:.1f} plies a game, "
                 f"{r['train_plies_per_s']:.0f} positions/s)")
    d = r["dominoes"]
    lines += ["", "Happy block dominoes: hands per second, one process", f"{'':74s} {'hands/s':>9s}"]
    rows = [(f"net self-play training (masked PPO, hidden {d['hidden']}, {d['batch_hands']} hands lock-step)",
             d["train_hands_per_s"]),
            ("  the same with --guide oracle (the solver labels every decision)", d["guided_train_hands_per_s"]),
            ("  the same with --guide pimc (the solver on 6 worlds of the view labels it)",
             d["pimc_guided_train_hands_per_s"]),
            ("random hands, the Python engine (engine API)", d["random_hands_per_s"])]
    lines += [f"{name:74s} {rate:9.1f}" for name, rate in rows]
    lines.append(f"(training: {d['train_decisions_per_s']:.0f} learner decisions/s)")
    return "\n".join(lines)


def run(args) -> int:
    from .bench_report import report
    r = measure(args.seconds, args.seed)
    return report(args, r, format_table(r), "bench_train.json")
