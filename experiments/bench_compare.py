"""``pipslab bench GAME --compare REF``: the same benchmark on this checkout and on another
git ref, interleaved in one run (see :mod:`pipslab.experiments.bench`).

Each side runs in its own process — ``python -m pipslab.experiments.cli bench GAME
--json …`` with the benchmark's own flags — with a folder first on ``PYTHONPATH`` whose
``pipslab`` package is that side's code (links to its ``src/pipslab/__init__.py``,
``envs/``, ``agents/`` and ``experiments/``): this checkout's, and a ``git worktree add
--detach`` of ``REF`` in a temporary folder, removed at the end.  The same interpreter and
installed packages serve both, so the difference is the code.  The runs alternate (this,
ref, then ref, this, …) so that load which comes and goes on a shared machine falls on
both sides alike; each number is the median over the rounds.
"""
from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from pipslab.envs.errors import PipslabError

ROOT = Path(__file__).resolve().parents[1]
# the flags a benchmark reads, passed on to both sides: attribute -> flag
_FLAGS = {"seconds": "--seconds", "seed": "--seed", "deals": "--deals", "moves": "--moves", "agents": "--agents",
          "bench_game": "--game", "mode": "--mode", "players": "--players"}


def _git(*argv, cwd=ROOT) -> str:
    try:
        done = subprocess.run(["git", *argv], cwd=cwd, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise PipslabError("--compare needs git") from None
    if done.returncode:
        last = (done.stderr or done.stdout).strip().splitlines()[-1:] or [f"status {done.returncode}"]
        raise PipslabError(f"git {' '.join(argv)}: {last[0]}")
    return done.stdout.strip()


def _package(tree: Path, where: Path) -> Path:
    """A folder holding a ``pipslab`` package made of links to ``tree``'s code."""
    init = tree / "src" / "pipslab" / "__init__.py"
    if not init.is_file():
        raise PipslabError(f"{tree} has no src/pipslab/__init__.py: not a pipslab checkout of this layout")
    pkg = where / "pipslab"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").symlink_to(init)
    for part in ("envs", "agents", "experiments"):
        (pkg / part).symlink_to(tree / part, target_is_directory=True)
    return where


def bench_argv(args) -> list:
    """The command line of the benchmark itself (``--compare``, ``--out`` and the like left out)."""
    argv = [sys.executable, "-m", "pipslab.experiments.cli", "bench", args.game, "--json"]
    for attr, flag in _FLAGS.items():
        value = getattr(args, attr, None)
        if value is not None:
            argv += [flag, str(value)]
    if getattr(args, "pairs", None):
        argv.append("--pairs")
    return argv


def _run_side(argv, path: Path, label: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(path)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    done = subprocess.run(argv, cwd=path, env=env, capture_output=True, text=True, check=False)
    lines = done.stdout.strip().splitlines()
    if done.returncode or not lines:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise PipslabError(f"the benchmark on {label} failed (status {done.returncode}): {' | '.join(tail)}")
    try:
        return json.loads(lines[-1])
    except json.JSONDecodeError:
        raise PipslabError(f"the benchmark on {label} printed no JSON result") from None


def merge(results: list):
    """The median of each number over the rounds' results (nested alike); other values,
    and numbers the same in every round (a seed, a batch size), from the first round."""
    first = results[0]
    if isinstance(first, dict):
        keys = list(first) + [k for r in results[1:] if isinstance(r, dict) for k in r if k not in first]
        return {k: merge([r[k] for r in results if isinstance(r, dict) and k in r]) for k in keys}
    if all(isinstance(r, (int, float)) and not isinstance(r, bool) for r in results) and len(set(results)) > 1:
        return statistics.median(results)
    return first


def flatten(result, prefix: str = "") -> dict:
    """``{"a.b": number}`` of every number in a result."""
    out = {}
    if isinstance(result, dict):
        for k, v in result.items():
            out.update(flatten(v, f"{prefix}{k}."))
    elif isinstance(result, (int, float)) and not isinstance(result, bool):
        out[prefix[:-1]] = result
    return out


def compare_table(this: dict, ref: dict, ref_name: str, rounds: int) -> tuple:
    """The side-by-side table and the ratios (this / ref) of every number both have."""
    a, b = flatten(this), flatten(ref)
    keys = list(a) + [k for k in b if k not in a]
    width = max([len(k) for k in keys] + [20])
    lines = [f"this checkout against {ref_name}: medians of {rounds} run(s) each, alternating",
             f"{'':<{width}} {'this':>14} {ref_name[:14]:>14} {'this/ref':>9}", "-" * (width + 40)]
    ratios = {}
    for k in keys:
        x, y = a.get(k), b.get(k)
        ratio = x / y if x is not None and y else None
        if ratio is not None:
            ratios[k] = ratio
        lines.append(f"{k:<{width}} {_num(x):>14} {_num(y):>14} {(f'{ratio:.2f}' if ratio is not None else ''):>9}")
    return "\n".join(lines), ratios


def _num(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, int) or abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.4g}"


def run_compare(args) -> int:
    from .bench_report import report
    rounds = args.rounds or 2
    commit = _git("rev-parse", "--verify", f"{args.compare}^{{commit}}")
    tmp = Path(tempfile.mkdtemp(prefix="pipslab-compare-"))
    tree = tmp / "tree"
    try:
        _git("worktree", "add", "--detach", "--quiet", str(tree), commit)
        sides = {"this": _package(ROOT, tmp / "this"), "ref": _package(tree, tmp / "ref")}
        argv = bench_argv(args)
        results = {"this": [], "ref": []}
        for r in range(rounds):
            for side in (("this", "ref") if r % 2 == 0 else ("ref", "this")):
                label = "this checkout" if side == "this" else f"{args.compare} ({commit[:10]})"
                sys.stderr.write(f"pipslab bench {args.game}: round {r + 1}/{rounds}, {label}\n")
                results[side].append(_run_side(argv, sides[side], label))
    finally:
        if tree.exists():
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True,
                           check=False)
        shutil.rmtree(tmp, ignore_errors=True)
        subprocess.run(["git", "worktree", "prune"], cwd=ROOT, capture_output=True, check=False)
    this, ref = merge(results["this"]), merge(results["ref"])
    table, ratios = compare_table(this, ref, args.compare, rounds)
    out = dict(this, compare={"ref": args.compare, "commit": commit, "rounds": rounds, "ref_result": ref,
                              "ratio": ratios})
    return report(args, out, table, f"bench_{args.game}_compare.json")
