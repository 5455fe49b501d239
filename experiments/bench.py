"""Throughput benchmarks against peers, measured side by side in one run.

``pipslab bench GAME [--json]`` runs the benchmark of one game and prints a readable
table (and, with ``--json``, one JSON object on the last line).
"""
from __future__ import annotations

import importlib

from pipslab.envs.errors import PipslabError

from .files import atomic_write_json

# game -> module with ``add_arguments(parser)`` and ``run(args)``
BENCHMARKS = {
    "dominoes": "pipslab.experiments.bench_dominoes",
    "harness": "pipslab.experiments.bench_harness",
    "backgammon": "pipslab.experiments.bench_backgammon",
    "solver": "pipslab.experiments.bench_search",
    "ismcts": "pipslab.experiments.bench_search",
    "train": "pipslab.experiments.bench_train",
}


def add_arguments(parser) -> None:
    parser.add_argument("game", choices=sorted(BENCHMARKS), help="what to benchmark")
    parser.add_argument("--json", action="store_true", help="also print one JSON object")
    parser.add_argument("--seconds", type=float, default=3.0,
                        help="time budget per measured engine (default 3)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random games")
    parser.add_argument("--out", default=None, help="folder to write bench.json into (optional)")
    parser.add_argument("--deals", type=int, default=None, help="solver: random deals to solve (default 200)")
    parser.add_argument("--moves", type=int, default=None, help="ismcts: decisions to time (default 20)")


def report(args, result: dict, table: str, filename: str) -> int:
    """Print ``table``; write ``result`` to ``--out/filename``; with ``--json`` print it as
    one JSON object on the last line."""
    import json
    from pathlib import Path
    print(table)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_json(out / filename, result)
    if args.json:
        print(json.dumps(result))
    return 0


def run(args) -> int:
    if args.seconds <= 0:
        raise PipslabError("--seconds must be positive")
    module = importlib.import_module(BENCHMARKS[args.game])
    return module.run(args)
