"""Throughput benchmarks against peers, measured side by side in one run.

``pipslab bench GAME [--json]`` runs the benchmark of one game and prints a readable
table (and, with ``--json``, one JSON object on the last line).

``pipslab bench GAME --compare REF [--rounds N]`` runs the same benchmark on this checkout
and on git ref ``REF`` of the same repository (a ``git worktree`` of it in a temporary
folder, run by the same Python with that tree's code first on ``PYTHONPATH``), each in its
own process, ``N`` times each (default 2) in alternating order — so load that comes and
goes falls on both — and prints every number of both beside their ratio (the medians
over the rounds): a before/after table in one command.  With ``--json`` the last line
is this checkout's result (every key as without ``--compare``) with a ``compare`` key
added: the ref, its commit, the rounds, its result and the ratios.
"""
from __future__ import annotations

import importlib

from pipslab.envs.errors import PipslabError

from .checks import check_out_dir, count_arg, out_arg, seconds_arg, seed_arg

# game -> module with ``add_arguments(parser)`` and ``run(args)``
BENCHMARKS = {
    "dominoes": "pipslab.experiments.bench_dominoes",
    "harness": "pipslab.experiments.bench_harness",
    "backgammon": "pipslab.experiments.bench_backgammon",
    "solver": "pipslab.experiments.bench_search",
    "ismcts": "pipslab.experiments.bench_search",
    "train": "pipslab.experiments.bench_train",
    "agents": "pipslab.experiments.bench_agents",
}


def _counts(text: str):
    import argparse
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated whole numbers, got {text!r}") from None
    if not out or min(out) < 1:
        raise argparse.ArgumentTypeError(f"expected whole numbers of 1 or more, got {text!r}")
    return out


def _backends(text: str):
    import argparse
    out = [x.strip() for x in text.split(",") if x.strip()]
    bad = [x for x in out if x not in ("process", "ray")]
    if not out or bad:
        raise argparse.ArgumentTypeError(f"expected process and/or ray, got {text!r}")
    return out


def add_arguments(parser) -> None:
    parser.add_argument("game", choices=sorted(BENCHMARKS), help="what to benchmark")
    parser.add_argument("--json", action="store_true", help="also print one JSON object")
    parser.add_argument("--seconds", type=seconds_arg, default=3.0,
                        help="time budget per measured engine (default 3)")
    parser.add_argument("--seed", type=seed_arg, default=0, help="seed of the random games (0 or more)")
    parser.add_argument("--out", type=out_arg, default=None, help="folder to write bench.json into (optional)")
    parser.add_argument("--deals", type=count_arg(1), default=None, help="solver: random deals to solve (default 200)")
    parser.add_argument("--moves", type=count_arg(1), default=None,
                        help="ismcts, agents: decisions to time (default 20)")
    parser.add_argument("--batch", type=count_arg(1), default=None,
                        help="ismcts: time N net-guided searches in lock-step beside one at a time (e.g. 64)")
    parser.add_argument("--agents", default=None, help="agents: the domino agents to time, comma-separated")
    parser.add_argument("--game", dest="bench_game", default=None,
                        help="agents: the domino game (default happy; any game of the dominoes family)")
    parser.add_argument("--mode", default=None, choices=("block", "draw"), help="agents: Happy's mode")
    parser.add_argument("--players", type=count_arg(2), default=None, help="agents: seats (troshin, triple)")
    parser.add_argument("--pairs", action="store_true", default=None, help="agents: Troshin in pairs")
    parser.add_argument("--workers", type=_counts, default=None, metavar="N,N,…",
                        help="train: also a scaling table with these numbers of self-play workers (e.g. 1,2,4)")
    parser.add_argument("--backends", type=_backends, default=None, metavar="B,B",
                        help="train: the backends of the scaling table (process, ray; default process)")
    parser.add_argument("--compare", metavar="REF", default=None,
                        help="also run the benchmark on git ref REF (a worktree of this repository), interleaved "
                             "with this checkout's runs, and print both side by side")
    parser.add_argument("--rounds", type=count_arg(1), default=None,
                        help="--compare: runs of each checkout, in alternating order (default 2)")


# flags that only some benchmarks read: flag -> (attribute, the benchmarks that read it)
_ONLY = {"--deals": ("deals", ("solver",)), "--moves": ("moves", ("ismcts", "agents")),
         "--batch": ("batch", ("ismcts",)),
         "--agents": ("agents", ("agents",)), "--game": ("bench_game", ("agents",)), "--mode": ("mode", ("agents",)),
         "--players": ("players", ("agents",)), "--pairs": ("pairs", ("agents",))}


def run(args) -> int:
    if args.seconds <= 0:
        raise PipslabError("--seconds must be positive")
    for flag, (attr, games) in _ONLY.items():
        if getattr(args, attr, None) is not None and args.game not in games:
            raise PipslabError(f"{flag} applies to pipslab bench {' and '.join(games)}, not {args.game}")
    if args.out is not None:
        check_out_dir(args.out)
    if getattr(args, "rounds", None) is not None and not getattr(args, "compare", None):
        raise PipslabError("--rounds applies to --compare")
    if getattr(args, "compare", None):
        from .bench_compare import run_compare
        return run_compare(args)
    module = importlib.import_module(BENCHMARKS[args.game])
    return module.run(args)
