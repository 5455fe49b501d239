"""``pipslab bench dominoes``: uniformly random games per second, side by side.

Measured in one run, each for ``--seconds``:

* ours, compiled — whole random games (a fresh deal, then uniformly random legal moves to
  the end) by the compiled engine (:mod:`pipslab.envs.dominoes.compiled`), many games per
  call: the fastest path, the random playout rollouts and ``ismcts`` run; and the same
  with one call from Python per game (deal and playout), and from a Python state as
  ``eval=rollout`` plays out a search's state (packing the state, one call);
  Happy block and draw, Troshin's game for 4 players in pairs and Triple for luck with 4
  players (the spinner, luck draws and scoring);
* ours, Python engine — the same games through the public engine API (``legal_actions()``
  + ``apply()``, a uniform choice each move, a fresh deal each game): what the harness and
  the envs play;
* OpenSpiel's ``python_block_dominoes`` driven the same way from Python (chance outcomes
  sampled uniformly);
* the ``dominoes`` package's game (4 players, as it comes), a uniform valid move each turn;
* ``clone()`` of a fresh deal, in microseconds (and of a compiled state: an array copy).

``speedup_vs_openspiel`` is the compiled Happy block rate over OpenSpiel's
(``speedup_vs_openspiel_engine_api``: the Python engine's); ``triple4_speedup_vs_dominoes_pkg``
the compiled Triple-for-4 rate over the ``dominoes`` package's 4-player game.  The
compiled code is loaded (or compiled, once per install) before the clock starts.

Peers come from the ``[bench]`` extra; a missing one is reported as ``null``.
"""
from __future__ import annotations

import random
import time

import numpy as np

from pipslab.envs.dominoes import compiled
from pipslab.envs.dominoes.engine import deal
from pipslab.envs.dominoes.variants import HAPPY_BLOCK, HAPPY_DRAW, TRIPLE_4, TROSHIN_4_PAIRS

ROWS = (("", HAPPY_BLOCK), ("draw_", HAPPY_DRAW), ("troshin4_pairs_", TROSHIN_4_PAIRS), ("triple4_", TRIPLE_4))


def _rate(play_one, seconds: float, per_call: int = 1) -> float:
    play_one()  # warm-up
    n = 0
    start = time.perf_counter()
    while True:
        play_one()
        n += per_call
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return n / elapsed


def ours(variant, rng: random.Random):
    def play_one():
        s = deal(variant, rng)
        while not s.is_terminal:
            legal = s.legal_actions()
            s.apply(legal[rng.randrange(len(legal))] if len(legal) > 1 else legal[0])
    return play_one


BATCH = 1000   # compiled games per call


def ours_compiled(variant, rng: random.Random):
    """``BATCH`` whole random games in one compiled call."""
    prm, r = compiled.params(variant), compiled.rng_from(rng)
    tally = np.zeros(8, dtype=np.int64)

    def play_many():
        compiled.random_games(prm, BATCH, r, tally)
    return play_many


def ours_compiled_per_call(variant, rng: random.Random):
    """One game per call from Python: a compiled deal, then a compiled playout."""
    prm, r = compiled.params(variant), compiled.rng_from(rng)
    s = np.zeros(compiled.WIDTH, dtype=np.int64)
    tiles = np.empty(28, dtype=np.int64)
    acts = np.empty(compiled.MAX_ACTIONS, dtype=np.int64)
    scratch = np.empty(compiled.MAX_ACTIONS, dtype=np.int64)

    def play_one():
        compiled.deal_into(prm, s, r, tiles)
        compiled.playout(prm, s, r, acts, scratch)
    return play_one


def ours_rollout(variant, rng: random.Random):
    """A playout of a Python state as ``eval=rollout`` makes it: pack the fresh deal, one call."""
    prm, r = compiled.params(variant), compiled.rng_from(rng)
    start = deal(variant, rng)
    out = np.zeros(4)

    def play_one():
        compiled.rollouts(prm, compiled.pack(start, history=False), r, 1, out)
    return play_one


def openspiel_block(rng: random.Random):
    import pyspiel
    from open_spiel.python.games import block_dominoes  # noqa: F401  (registers the game)
    game = pyspiel.load_game("python_block_dominoes")

    def play_one():
        s = game.new_initial_state()
        while not s.is_terminal():
            if s.is_chance_node():
                outcomes = s.chance_outcomes()
                s.apply_action(outcomes[rng.randrange(len(outcomes))][0])
            else:
                legal = s.legal_actions()
                s.apply_action(legal[rng.randrange(len(legal))])
    return play_one


def dominoes_pkg(rng: random.Random):
    import dominoes

    def play_one():
        g = dominoes.Game.new()
        while g.result is None:
            moves = g.valid_moves
            g.make_move(*moves[rng.randrange(len(moves))])
    return play_one


def clone_us(rng: random.Random, n: int = 200_000) -> float:
    s = deal(HAPPY_BLOCK, rng)
    start = time.perf_counter()
    for _ in range(n):
        s.clone()
    return (time.perf_counter() - start) / n * 1e6


def clone_compiled(rng: random.Random, n: int = 200_000) -> float:
    s = compiled.pack(deal(HAPPY_BLOCK, rng))
    start = time.perf_counter()
    for _ in range(n):
        s.copy()
    return (time.perf_counter() - start) / n * 1e6


def measure(seconds: float, seed: int) -> dict:
    rng = random.Random(seed)
    start = time.perf_counter()
    compiled.warm_up()
    load_s = time.perf_counter() - start
    result = {}
    for prefix, variant in ROWS:
        result[f"ours_{prefix}games_per_s"] = _rate(ours(variant, rng), seconds)
        result[f"compiled_{prefix}games_per_s"] = _rate(ours_compiled(variant, rng), seconds, BATCH)
    result["compiled_per_call_games_per_s"] = _rate(ours_compiled_per_call(HAPPY_BLOCK, rng), seconds)
    result["compiled_rollout_from_state_per_s"] = _rate(ours_rollout(HAPPY_BLOCK, rng), seconds)
    result.update(clone_us=clone_us(rng), compiled_clone_us=clone_compiled(rng), peers={}, peer_errors={})
    for name, factory in (("openspiel_block_dominoes", openspiel_block), ("dominoes_pkg", dominoes_pkg)):
        try:
            result["peers"][name] = _rate(factory(rng), seconds)
        except ImportError as exc:
            result["peers"][name] = None
            result["peer_errors"][name] = f"not installed ({exc.name}); pip install .[bench]"
    os_rate = result["peers"].get("openspiel_block_dominoes")
    pkg_rate = result["peers"].get("dominoes_pkg")
    result["speedup_vs_openspiel"] = result["compiled_games_per_s"] / os_rate if os_rate else None
    result["speedup_vs_openspiel_engine_api"] = result["ours_games_per_s"] / os_rate if os_rate else None
    result["triple4_speedup_vs_dominoes_pkg"] = result["compiled_triple4_games_per_s"] / pkg_rate if pkg_rate else None
    result["triple4_engine_api_speedup_vs_dominoes_pkg"] = (result["ours_triple4_games_per_s"] / pkg_rate
                                                            if pkg_rate else None)
    result["seconds_per_engine"] = seconds
    result["load_or_compile_s"] = load_s
    return result


def format_table(r: dict) -> str:
    rows = [("pipslab Happy block, compiled (1,000 games a call)", r["compiled_games_per_s"]),
            ("pipslab Happy block, compiled (a call per game)", r["compiled_per_call_games_per_s"]),
            ("pipslab Happy block, compiled playout of a Python state", r["compiled_rollout_from_state_per_s"]),
            ("pipslab Happy block (engine API)", r["ours_games_per_s"]),
            ("pipslab Happy draw, compiled", r["compiled_draw_games_per_s"]),
            ("pipslab Happy draw (engine API)", r["ours_draw_games_per_s"]),
            ("pipslab Troshin 4 players, pairs, compiled", r["compiled_troshin4_pairs_games_per_s"]),
            ("pipslab Troshin 4 players, pairs (engine API)", r.get("ours_troshin4_pairs_games_per_s")),
            ("pipslab Triple for luck, 4 players, compiled", r["compiled_triple4_games_per_s"]),
            ("pipslab Triple for luck, 4 players (engine API)", r.get("ours_triple4_games_per_s")),
            ("OpenSpiel python_block_dominoes", r["peers"].get("openspiel_block_dominoes")),
            ("dominoes package (4 players)", r["peers"].get("dominoes_pkg"))]
    w = 56
    lines = [f"{'engine':<{w}} {'games/s':>11}", "-" * (w + 12)]
    for name, rate in rows:
        lines.append(f"{name:<{w}} {rate:>11,.0f}" if rate else f"{name:<{w}} {'n/a':>11}")
    lines.append("-" * (w + 12))
    if r.get("speedup_vs_openspiel"):
        lines.append(f"Happy block / OpenSpiel block: compiled {r['speedup_vs_openspiel']:.1f}x, "
                     f"engine API {r['speedup_vs_openspiel_engine_api']:.1f}x")
    if r.get("triple4_speedup_vs_dominoes_pkg"):
        lines.append(f"Triple for 4 / dominoes package's 4-player game: compiled "
                     f"{r['triple4_speedup_vs_dominoes_pkg']:.1f}x, engine API "
                     f"{r['triple4_engine_api_speedup_vs_dominoes_pkg']:.2f}x")
    lines.append(f"clone(): {r['clone_us']:.2f} us (a compiled state's copy: {r['compiled_clone_us']:.2f} us); "
                 f"the compiled code loaded in {r['load_or_compile_s']:.2f} s once, before timing")
    return "\n".join(lines)


def run(args) -> int:
    from .bench_report import report
    r = measure(args.seconds, args.seed)
    return report(args, r, format_table(r), "bench_dominoes.json")
