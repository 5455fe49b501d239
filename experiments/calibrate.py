"""Fit the state value that backgammon search uses for a ranking evaluator.

``pipslab calibrate --eval pubeval --games 20000 --seed 0 [--out DIR] [--workers N] [--resume]``

Plays ``--games`` self-play games in which both sides play the evaluator's best play
(0-ply), records every position met with a player on roll (the opening excepted), and
fits a logistic regression (scikit-learn) of "the player on roll wins" on
:func:`pipslab.agents.backgammon_value.state_features` — the evaluator's score of the position
from both sides, the pip lead, checkers on the bar and borne off — one fit for contact
positions and one for races.  The last fifth of the games (by index) is held out: the
table compares the log-loss of the fit with the base rate, the pip lead alone and the
two scores alone on them.

Writes ``calibration.json`` (the weights, loadable by
:meth:`pipslab.agents.backgammon_value.Calibration.from_json`, with the held-out scores) to
``--out`` (default ``results/calibration-EVAL``); the game records are kept per chunk
under ``chunks/`` so an interrupted run continues with ``--resume``.  The fits search
uses are the files in ``agents/calibrations/`` (copied from this command's output).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

from pipslab.agents.search_backgammon import EVALUATORS, make_evaluator
from pipslab.agents.backgammon_value import FEATURES, PHASES, Calibration, play_out, race_mask, state_features, swap
from pipslab.envs.backgammon import Position, fast
from pipslab.envs.errors import PipslabError

from .files import atomic_write_json

CHUNK = 100   # games per chunk file


@dataclass
class CalibrateArgs:
    eval: str = "pubeval"
    games: int = 20000
    seed: int = 0
    out: str = ""
    workers: int = 0
    resume: bool = False

    def command(self, resume: bool = False) -> str:
        return (f"pipslab calibrate --eval {self.eval} --games {self.games} --seed {self.seed} --out {self.out}"
                + (" --resume" if resume else ""))

    def __post_init__(self):
        if self.games < 10:
            raise PipslabError(f"--games must be at least 10, got {self.games}")
        if not self.out:
            self.out = f"results/calibration-{self.eval}"


class CalibrationInterrupted(KeyboardInterrupt):
    def __init__(self, done: int, command: str):
        super().__init__(f"interrupted after {done} games (saved); resume with: {command}")


def _ranker(name: str):
    if name not in ("pubeval", "race"):
        raise PipslabError(f"calibrate: --eval must be a ranking evaluator (pubeval or race), got {name!r}"
                           + ("" if name in EVALUATORS else f"; known evaluators: {', '.join(sorted(EVALUATORS))}"))
    return make_evaluator(name).afterstate_values


def play_chunk(eval_name: str, seed: int, first: int, count: int) -> dict:
    """Games ``first .. first+count-1``: features, labels and game index of every position
    with a player on roll (after the opening play).  Game ``i`` draws its dice from
    ``default_rng([seed, i])``, so the data do not depend on chunks or workers."""
    ranker = _ranker(eval_name)
    start = np.asarray(Position.start(), dtype=np.int64)
    boards, won, game = [], [], []
    for i in range(first, first + count):
        dice = np.random.default_rng([seed, i])
        while True:                       # the opening roll is never a double
            a, b = (int(v) for v in dice.integers(1, 7, size=2))
            if a != b:
                break
        plays = np.asarray(fast.afterstates(start, a, b), dtype=np.int64)
        after = plays[int(np.argmax(ranker(plays, False)))]
        record = []
        points = play_out(swap(after), ranker, dice, record)   # for the second player
        for board, sign in record:        # sign: +1 where the second player is on roll
            boards.append(board)
            won.append(sign * points > 0)
            game.append(i)
    x = state_features(np.array(boards), ranker)
    return {"x": x, "won": np.array(won), "game": np.array(game), "race": race_mask(np.array(boards))}


def _write_npz(path: Path, data: dict) -> None:
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, **data)
    os.replace(tmp, path)


def _load_chunk(path: Path) -> dict:
    try:
        with np.load(path) as data:
            return {k: data[k] for k in ("x", "won", "game", "race")}
    except (OSError, ValueError, KeyError) as exc:
        raise PipslabError(f"{path} is not a readable chunk of games ({exc}); delete it and run with --resume") from None


def _log_loss(y: np.ndarray, p: np.ndarray) -> float:
    from sklearn.metrics import log_loss
    return float(log_loss(y, p, labels=[0.0, 1.0]))


def _fit(x: np.ndarray, y: np.ndarray):
    from sklearn.linear_model import LogisticRegression
    return LogisticRegression(C=1e4, max_iter=5000).fit(x, y)


def run_calibration(args: CalibrateArgs, progress: bool = True) -> dict:
    _ranker(args.eval)   # validates the name
    out = Path(args.out)
    chunks = out / "chunks"
    manifest = {"eval": args.eval, "games": args.games, "seed": args.seed, "chunk": CHUNK}
    run_json = out / "run.json"
    if run_json.exists():
        try:
            old = json.loads(run_json.read_text())
        except ValueError:
            raise PipslabError(f"{run_json} is not readable JSON; choose another --out") from None
        if not args.resume:
            raise PipslabError(f"{out} already holds a calibration run; pass --resume to continue it or choose another --out")
        if old != manifest:
            raise PipslabError(f"--resume: {out} holds a different run ({old}); choose another --out")
    chunks.mkdir(parents=True, exist_ok=True)
    atomic_write_json(run_json, manifest)
    todo = [(f, min(CHUNK, args.games - f)) for f in range(0, args.games, CHUNK)
            if not (chunks / f"games-{f:07d}.npz").exists()]
    workers = args.workers or os.cpu_count() or 1
    bar = tqdm(total=args.games, initial=args.games - sum(c for _, c in todo), unit="game",
               desc=f"calibrate {args.eval}", disable=not progress)
    saved = [args.games - sum(c for _, c in todo)]

    def save(first, data):
        _write_npz(chunks / f"games-{first:07d}.npz", data)
        saved[0] += min(CHUNK, args.games - first)
        bar.update(min(CHUNK, args.games - first))
    try:
        if workers > 1 and len(todo) > 1:
            with ProcessPoolExecutor(workers) as pool:
                futures = {pool.submit(play_chunk, args.eval, args.seed, f, c): f for f, c in todo}
                try:
                    for fut in as_completed(futures):
                        save(futures[fut], fut.result())
                except KeyboardInterrupt:
                    pool.shutdown(wait=False, cancel_futures=True)
                    raise
        else:
            for f, c in todo:
                save(f, play_chunk(args.eval, args.seed, f, c))
    except KeyboardInterrupt:
        bar.close()
        raise CalibrationInterrupted(saved[0], args.command(resume=True)) from None
    bar.close()
    parts = [_load_chunk(chunks / f"games-{f:07d}.npz") for f in range(0, args.games, CHUNK)]
    x = np.concatenate([p["x"] for p in parts])
    y = np.concatenate([p["won"] for p in parts]).astype(float)
    game = np.concatenate([p["game"] for p in parts])
    race = np.concatenate([p["race"] for p in parts])
    test = game >= int(args.games * 0.8)

    weights, bias, rows = {}, {}, []
    for phase, flag in zip(PHASES, (False, True)):
        m = race == flag
        tr, te = m & ~test, m & test
        if tr.sum() < 20 or len(np.unique(y[tr])) < 2:
            raise PipslabError(f"calibrate: too few {phase} positions ({int(tr.sum())}) to fit; play more --games")
        full = _fit(x[tr], y[tr])
        weights[phase], bias[phase] = full.coef_[0].tolist(), float(full.intercept_[0])
        row = {"phase": phase, "train_positions": int(tr.sum()), "test_positions": int(te.sum()),
               "win_rate": float(y[te].mean()) if te.any() else float("nan")}
        if te.any():
            row["logloss_base"] = _log_loss(y[te], np.full(te.sum(), y[tr].mean()))
            for name, cols in (("pip_lead", [2]), ("scores", [0, 1])):
                row[f"logloss_{name}"] = _log_loss(y[te], _fit(x[tr][:, cols], y[tr]).predict_proba(x[te][:, cols])[:, 1])
            row["logloss_fit"] = _log_loss(y[te], full.predict_proba(x[te])[:, 1])
        rows.append(row)
    cal = Calibration(weights=weights, bias=bias)
    result = {**cal.to_json(), "eval": args.eval, "games": args.games, "seed": args.seed,
              "positions": int(len(y)), "held_out": rows,
              "command": f"pipslab calibrate --eval {args.eval} --games {args.games} --seed {args.seed}"}
    atomic_write_json(out / "calibration.json", result)
    return result


def add_arguments(parser) -> None:
    parser.add_argument("--eval", default="pubeval", help="ranking evaluator to calibrate: pubeval (default) or race")
    parser.add_argument("--games", type=int, default=20000, help="self-play games (default 20000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="", help="output folder (default results/calibration-EVAL)")
    parser.add_argument("--workers", type=int, default=0, help="processes (default: one per core)")
    parser.add_argument("--resume", action="store_true", help="continue an interrupted run in --out")
    parser.add_argument("--json", action="store_true", help="print calibration.json instead of the table")


def run(ns: argparse.Namespace) -> int:
    args = CalibrateArgs(eval=ns.eval, games=ns.games, seed=ns.seed, out=ns.out, workers=ns.workers,
                         resume=ns.resume)
    try:
        result = run_calibration(args)
    except CalibrationInterrupted as exc:
        sys.stdout.flush()
        sys.stderr.write(f"pipslab calibrate: {exc}\n")
        return 130
    if ns.json:
        print(json.dumps(result, indent=2))
        return 0
    import pandas as pd
    print(f"{result['positions']} positions from {args.games} games of {args.eval} self-play (seed {args.seed}); "
          f"held out: the last {args.games - int(args.games * 0.8)} games")
    print(pd.DataFrame(result["held_out"]).to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    print()
    coef = pd.DataFrame({p: result["weights"][p] + [result["bias"][p]] for p in PHASES},
                        index=list(FEATURES) + ["bias"])
    print(coef.to_string(float_format=lambda v: f"{v:+.4f}"))
    print(f"\nwritten: {Path(args.out) / 'calibration.json'}")
    return 0
