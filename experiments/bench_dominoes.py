"""``pipslab bench dominoes``: uniformly random games per second, side by side.

Measured in one run, each for ``--seconds``:

* ours — Happy block dominoes (and draw mode) through the public engine API
  (``legal_actions()`` + ``apply()``, a uniform choice each move, a fresh deal each game);
  likewise Troshin's game for 4 players in pairs (one hand, redeals included) and Triple
  for luck with 4 players (the spinner, luck draws and scoring), to set beside the
  ``dominoes`` package's 4-player game;
* OpenSpiel's ``python_block_dominoes`` driven the same way from Python (chance outcomes
  sampled uniformly);
* the ``dominoes`` package's game (4 players, as it comes), a uniform valid move each turn;
* ``clone()`` of a fresh deal, in microseconds.

Peers come from the ``[bench]`` extra; a missing one is reported as ``null``.
"""
from __future__ import annotations

import random
import time

from pipslab.envs.dominoes.engine import deal
from pipslab.envs.dominoes.variants import HAPPY_BLOCK, HAPPY_DRAW, TRIPLE_4, TROSHIN_4_PAIRS


def _rate(play_one, seconds: float) -> float:
    play_one()  # warm-up
    n = 0
    start = time.perf_counter()
    while True:
        play_one()
        n += 1
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


def measure(seconds: float, seed: int) -> dict:
    rng = random.Random(seed)
    result = {"ours_games_per_s": _rate(ours(HAPPY_BLOCK, rng), seconds),
              "ours_draw_games_per_s": _rate(ours(HAPPY_DRAW, rng), seconds),
              "ours_troshin4_pairs_games_per_s": _rate(ours(TROSHIN_4_PAIRS, rng), seconds),
              "ours_triple4_games_per_s": _rate(ours(TRIPLE_4, rng), seconds),
              "clone_us": clone_us(rng), "peers": {}, "peer_errors": {}}
    for name, factory in (("openspiel_block_dominoes", openspiel_block), ("dominoes_pkg", dominoes_pkg)):
        try:
            result["peers"][name] = _rate(factory(rng), seconds)
        except ImportError as exc:
            result["peers"][name] = None
            result["peer_errors"][name] = f"not installed ({exc.name}); pip install .[bench]"
    os_rate = result["peers"].get("openspiel_block_dominoes")
    result["speedup_vs_openspiel"] = result["ours_games_per_s"] / os_rate if os_rate else None
    result["seconds_per_engine"] = seconds
    return result


def format_table(r: dict) -> str:
    rows = [("pipslab Happy block (engine API)", r["ours_games_per_s"]),
            ("pipslab Happy draw (engine API)", r["ours_draw_games_per_s"]),
            ("pipslab Troshin 4 players, pairs", r.get("ours_troshin4_pairs_games_per_s")),
            ("pipslab Triple for luck, 4 players", r.get("ours_triple4_games_per_s")),
            ("OpenSpiel python_block_dominoes", r["peers"].get("openspiel_block_dominoes")),
            ("dominoes package (4 players)", r["peers"].get("dominoes_pkg"))]
    lines = [f"{'engine':<36} {'games/s':>10}", "-" * 47]
    for name, rate in rows:
        lines.append(f"{name:<36} {rate:>10,.0f}" if rate else f"{name:<36} {'n/a':>10}")
    lines.append("-" * 47)
    if r.get("speedup_vs_openspiel"):
        lines.append(f"ours / OpenSpiel block: {r['speedup_vs_openspiel']:.1f}x")
    lines.append(f"clone(): {r['clone_us']:.2f} us")
    return "\n".join(lines)


def run(args) -> int:
    from .bench import report
    r = measure(args.seconds, args.seed)
    return report(args, r, format_table(r), "bench_dominoes.json")
