"""Backgammon throughput against OpenSpiel, measured side by side in one run.

``pipslab bench backgammon [--seconds S] [--seed N] [--json] [--out DIR]``

Games per second of uniformly random games, each engine driven from a Python loop:

* **ours** (the headline, ``ours_games_per_s``): each turn rolls the dice with numpy,
  lists every distinct legal *whole play* with the compiled generator
  (:func:`pipslab.envs.backgammon.fast.afterstates`) and picks one uniformly; sides swap.
* ours, **per checker move** through the full game-state protocol
  (:class:`pipslab.envs.backgammon.BackgammonState`; its mask comes from the compiled
  generator): uniform over the legal checker moves (``legal_actions()``), the turn built
  move by move -- what an agent or the env sees.
* ours, **whole game compiled** (:func:`pipslab.envs.backgammon.fast.random_game`), for reference.
* **OpenSpiel** ``pyspiel.load_game("backgammon")``: uniform over ``legal_actions()``
  (its actions are whole plays too), chance outcomes sampled with their probabilities.

Then the time to list the legal plays of one position (positions met in random games):
ours compiled, ours pure Python (``legal_plays``), OpenSpiel's ``legal_actions()``.
Compilation (numba) happens before any clock starts.
"""
from __future__ import annotations

import time

import numpy as np

from pipslab.envs.backgammon import Position, fast, legal_plays, new_game
from pipslab.envs.backgammon.game import play_uniformly
from pipslab.envs.backgammon.moves import dice_to_play
from pipslab.envs.errors import PipslabError


def _rate(play_one, seconds: float) -> float:
    play_one()                                   # warm caches outside the clock
    n = 0
    t0 = time.perf_counter()
    while True:
        play_one()
        n += 1
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds:
            return n / elapsed


class _Uniform:
    """Uniform floats in [0, 1) from ``rng``, drawn in batches (both engines' loops use
    it, for the dice and for the choices, so neither pays numpy's per-call overhead)."""

    def __init__(self, rng: np.random.Generator, batch: int = 4096):
        self.rng, self.batch = rng, batch
        self.buf, self.i = [], 0

    def __call__(self) -> float:
        if self.i >= len(self.buf):
            self.buf, self.i = self.rng.random(self.batch).tolist(), 0
        self.i += 1
        return self.buf[self.i - 1]


def ours_whole_plays(rng: np.random.Generator):
    start = np.array(Position.start(), dtype=np.int8)
    u = _Uniform(rng)

    def play_one():
        b = start
        opening = True
        while True:
            d1, d2 = int(u() * 6) + 1, int(u() * 6) + 1
            while opening and d1 == d2:          # opening: ties roll again
                d1, d2 = int(u() * 6) + 1, int(u() * 6) + 1
            opening = False
            plays = fast.afterstates(b, d1, d2)
            n = len(plays)
            if n:
                b = plays[int(u() * n)]
                if b[1:].max() <= 0:             # all 15 borne off
                    return
            b = -b[::-1]                         # the side swap (a new array)
    return play_one


def ours_checker_moves(rng: np.random.Generator):
    def play_one():
        play_uniformly(new_game(), rng)
    return play_one


def ours_compiled(rng: np.random.Generator):
    seeds = iter(range(int(rng.integers(1 << 30)), 1 << 31))

    def play_one():
        fast.random_game(next(seeds))
    return play_one


def _openspiel():
    try:
        import pyspiel
    except ImportError:
        raise PipslabError("OpenSpiel is not installed: pip install 'pipslab[bench]'") from None
    return pyspiel.load_game("backgammon")


def openspiel_games(rng: np.random.Generator):
    game = _openspiel()
    u = _Uniform(rng)

    def play_one():
        s = game.new_initial_state()
        while not s.is_terminal():
            if s.is_chance_node():
                outcomes = s.chance_outcomes()
                x = u()
                acc = 0.0
                for action, p in outcomes:
                    acc += p
                    if x < acc:
                        break
                s.apply_action(action)
            else:
                legal = s.legal_actions()
                s.apply_action(legal[int(u() * len(legal))])
    return play_one


def _positions(rng, n):
    out = []
    while len(out) < n:
        state = new_game()
        while not state.is_terminal and len(out) < n:
            if state.is_chance:
                state.apply_chance(rng)
                out.append((state.position, state.roll))
            else:
                legal = state.legal_actions()
                state.apply(legal[int(rng.integers(len(legal)))])
    return out


def _openspiel_states(rng, n):
    game = _openspiel()
    out = []
    while len(out) < n:
        s = game.new_initial_state()
        while not s.is_terminal() and len(out) < n:
            if s.is_chance_node():
                outcomes = s.chance_outcomes()
                s.apply_action(outcomes[int(rng.integers(len(outcomes)))][0])
            else:
                out.append(s.clone())
                legal = s.legal_actions()
                s.apply_action(legal[int(rng.integers(len(legal)))])
    return out


def _per_item_us(fn, items, seconds):
    n = 0
    t0 = time.perf_counter()
    while True:
        for item in items:
            fn(item)
        n += len(items)
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds:
            return 1e6 * elapsed / n


def measure(seconds: float, seed: int) -> dict:
    t0 = time.perf_counter()
    fast.warm_up()
    compile_s = time.perf_counter() - t0
    rng = np.random.default_rng(seed)
    r = {
        "ours_games_per_s": _rate(ours_whole_plays(rng), seconds),
        "ours_mode": "uniform over whole plays (compiled afterstates, Python game loop)",
        "peers": {"openspiel_backgammon": _rate(openspiel_games(rng), seconds)},
        "ours_checker_moves_games_per_s": _rate(ours_checker_moves(rng), seconds),
        "ours_compiled_games_per_s": _rate(ours_compiled(rng), seconds),
    }
    r["speedup_vs_openspiel"] = r["ours_games_per_s"] / r["peers"]["openspiel_backgammon"]
    positions = _positions(rng, 400)
    budget = max(0.3, seconds / 3)
    r["legal_plays_us"] = {
        "ours_compiled": _per_item_us(lambda pr: fast.afterstates(pr[0], *pr[1]), positions, budget),
        "ours_python": _per_item_us(lambda pr: legal_plays(pr[0], dice_to_play(pr[1])), positions, budget),
        "openspiel_legal_actions": _per_item_us(lambda s: s.legal_actions(), _openspiel_states(rng, 400), budget),
    }
    r["compile_or_cache_load_s"] = compile_s
    r["seconds"] = seconds
    r["seed"] = seed
    return r


def format_table(r: dict) -> str:
    os_rate = r["peers"]["openspiel_backgammon"]
    rows = [
        ("ours: whole plays, compiled generation, Python loop", r["ours_games_per_s"]),
        ("ours: checker by checker, BackgammonState protocol", r["ours_checker_moves_games_per_s"]),
        ("ours: whole game compiled (numba)", r["ours_compiled_games_per_s"]),
        ("OpenSpiel backgammon, Python loop", os_rate),
    ]
    lines = ["backgammon: uniformly random games", f"{'engine':58s} {'games/s':>10s} {'x OpenSpiel':>12s}"]
    for name, rate in rows:
        lines.append(f"{name:58s} {rate:10.1f} {rate / os_rate:12.2f}")
    lp = r["legal_plays_us"]
    lines.append("")
    lines.append(f"{'legal plays of one position':58s} {'us':>10s}")
    lines.append(f"{'ours compiled (fast.afterstates)':58s} {lp['ours_compiled']:10.1f}")
    lines.append(f"{'ours pure Python (legal_plays)':58s} {lp['ours_python']:10.1f}")
    lines.append(f"{'OpenSpiel legal_actions()':58s} {lp['openspiel_legal_actions']:10.1f}")
    return "\n".join(lines)


def run(args) -> int:
    from .bench import report
    r = measure(args.seconds, args.seed)
    return report(args, r, format_table(r), "bench_backgammon.json")
