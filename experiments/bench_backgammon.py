"""Backgammon throughput against OpenSpiel, measured side by side in one run.

``pipslab bench backgammon [--seconds S] [--seed N] [--json] [--out DIR]``

Games per second of uniformly random games, each engine driven from a Python loop:

* **ours** (the headline, ``ours_games_per_s``): each turn rolls the dice with numpy,
  lists every distinct legal *whole play* of the side to move with the compiled generator
  (:func:`pipslab.envs.backgammon.fast.replies_won`: the plays after the last play, the
  board turned round in the same call, and which of them win) and picks one uniformly --
  the path of an afterstate agent.
* ours, **per checker move** through the full game-state protocol
  (:class:`pipslab.envs.backgammon.BackgammonState`; its mask comes from the compiled
  generator): uniform over the legal checker moves (``legal_actions()``), the turn built
  move by move -- what an agent or the env sees.
* ours, **whole game compiled** (:func:`pipslab.envs.backgammon.fast.random_game`, one
  call a game), and **256 games a call** (:func:`~pipslab.envs.backgammon.fast.random_games`,
  ``ours_compiled_batch_games_per_s``): the engine alone, roll to result.
* **OpenSpiel** ``pyspiel.load_game("backgammon")``: uniform over ``legal_actions()``
  (its actions are whole plays too), chance outcomes sampled with their probabilities.

The game loops take turns in six slices of ``seconds / 6`` each (so a change of the
machine's load during the run weighs on all of them alike); ``seconds`` is each loop's
total.  Then the time to list the legal plays of one position (positions met in random games):
ours compiled (the afterstates; ``ours_compiled_plays``: the :class:`Play` objects with
their steps, as ``legal_plays`` gives them), ours pure Python (``legal_plays``),
OpenSpiel's ``legal_actions()``.
Compilation (numba) happens before any clock starts.
"""
from __future__ import annotations

import time

import numpy as np

from pipslab.envs.backgammon import Position, fast, legal_plays, new_game
from pipslab.envs.backgammon.game import play_uniformly
from pipslab.envs.backgammon.moves import dice_to_play
from pipslab.envs.errors import PipslabError


def _rates(loops: dict, seconds: float, slices: int = 6) -> dict:
    """Calls per second of each of ``loops`` (name -> function), measured in ``slices``
    alternating turns of ``seconds / slices`` each, so that a change of the machine's load
    during the run weighs on every loop alike (the rows are compared with each other)."""
    for play_one in loops.values():
        play_one()                               # warm caches outside the clock
    calls = dict.fromkeys(loops, 0)
    spent = dict.fromkeys(loops, 0.0)
    for _ in range(slices):
        for name, play_one in loops.items():
            t0 = time.perf_counter()
            while True:
                play_one()
                calls[name] += 1
                elapsed = time.perf_counter() - t0
                if elapsed >= seconds / slices:
                    break
            spent[name] += elapsed
    return {name: calls[name] / spent[name] for name in loops}


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
    before = -start[::-1]          # the start as the "afterstate" of the side not to move
    u = _Uniform(rng)

    def play_one():
        b = before
        opening = True
        while True:
            x = int(u() * 36)                    # one uniform draw for the two dice
            d1, d2 = x // 6 + 1, x % 6 + 1
            while opening and d1 == d2:          # opening: ties roll again
                x = int(u() * 36)
                d1, d2 = x // 6 + 1, x % 6 + 1
            opening = False
            plays, won = fast.replies_won(b, d1, d2)    # the plays of the side to move
            n = len(plays)
            if n:
                k = int(u() * n)
                if won[k]:                       # bore off the last checker
                    return
                b = plays[k]
            else:
                b = -b[::-1]                     # no legal play: his board stays as it is
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


def ours_compiled_batch(rng: np.random.Generator, games: int = 256):
    """``games`` whole games per compiled call (:func:`~pipslab.envs.backgammon.fast.random_games`):
    the rate of the engine itself, without a Python call per game."""
    seeds = iter(range(int(rng.integers(1 << 30)), 1 << 31))

    def play_many():
        fast.random_games(next(seeds), games)
    return play_many


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
    rates = _rates({"ours": ours_whole_plays(rng), "openspiel": openspiel_games(rng),
                    "checker_moves": ours_checker_moves(rng), "compiled": ours_compiled(rng),
                    "compiled_batch": ours_compiled_batch(rng, 256)}, seconds)
    r = {
        "ours_games_per_s": rates["ours"],
        "ours_mode": "uniform over whole plays (compiled afterstates, Python game loop)",
        "peers": {"openspiel_backgammon": rates["openspiel"]},
        "ours_checker_moves_games_per_s": rates["checker_moves"],
        "ours_compiled_games_per_s": rates["compiled"],
        "ours_compiled_batch_games_per_s": 256 * rates["compiled_batch"],
    }
    r["speedup_vs_openspiel"] = r["ours_games_per_s"] / r["peers"]["openspiel_backgammon"]
    positions = _positions(rng, 400)
    budget = max(0.3, seconds / 3)
    r["legal_plays_us"] = {
        "ours_compiled": _per_item_us(lambda pr: fast.afterstates(pr[0], *pr[1]), positions, budget),
        "ours_compiled_plays": _per_item_us(lambda pr: fast.legal_plays(pr[0], dice_to_play(pr[1])), positions,
                                            budget),
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
        ("ours: whole game compiled (numba), one call a game", r["ours_compiled_games_per_s"]),
        ("ours: whole games compiled, 256 a call", r["ours_compiled_batch_games_per_s"]),
        ("OpenSpiel backgammon, Python loop", os_rate),
    ]
    lines = ["backgammon: uniformly random games", f"{'engine':58s} {'games/s':>10s} {'x OpenSpiel':>12s}"]
    for name, rate in rows:
        lines.append(f"{name:58s} {rate:10.1f} {rate / os_rate:12.2f}")
    lp = r["legal_plays_us"]
    lines.append("")
    lines.append(f"{'legal plays of one position':58s} {'us':>10s}")
    lines.append(f"{'ours compiled (fast.afterstates)':58s} {lp['ours_compiled']:10.1f}")
    lines.append(f"{'ours compiled, Play objects (fast.legal_plays)':58s} {lp['ours_compiled_plays']:10.1f}")
    lines.append(f"{'ours pure Python (legal_plays)':58s} {lp['ours_python']:10.1f}")
    lines.append(f"{'OpenSpiel legal_actions()':58s} {lp['openspiel_legal_actions']:10.1f}")
    return "\n".join(lines)


def run(args) -> int:
    from .bench_report import report
    r = measure(args.seconds, args.seed)
    return report(args, r, format_table(r), "bench_backgammon.json")
