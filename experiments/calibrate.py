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
under ``chunks/`` (each stamped with the evaluator, seed and games it holds) so an
interrupted run continues with ``--resume``; a chunk of another run is refused, never
mixed in.  The folder is the shared experiment runner's
(:class:`pipslab.experiments.runner.Run`): ``run.json``, a lock against a second run, the
same checks of ``--out`` and the arguments, ``--workers`` processes or ``--backend ray``,
``--config FILE.toml`` (keys as the flags, optionally under ``[calibrate]``).  The fits
search uses are the files in ``agents/calibrations/`` (copied from this command's output).
"""
from __future__ import annotations

import argparse
import json
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Optional, Tuple

import numpy as np

from pipslab.agents.search_backgammon import EVALUATORS, make_evaluator
from pipslab.agents.backgammon_value import FEATURES, PHASES, Calibration, play_out, race_mask, state_features, swap
from pipslab.envs.backgammon import Position, fast
from pipslab.envs.errors import PipslabError

from .checks import check_int, check_out, check_seed
from .cliargs import INT, STR, load_config
from .executors import BACKENDS, check_backend, default_workers
from .files import atomic_path, atomic_write_json
from .runner import Run, RunInterrupted, note

CHUNK = 100   # games per chunk file
MAX_GAMES = 1_000_000   # ~60 million positions: the fit's arrays already take gigabytes
_KEYS = ("x", "won", "game", "race")


@dataclass
class CalibrateArgs:
    eval: str = "pubeval"
    games: int = 20000
    seed: int = 0
    out: Optional[str] = None          # default results/calibration-EVAL
    workers: int = 0                   # 0: one per core
    resume: bool = False
    backend: str = "process"

    def command(self, resume: bool = False) -> str:
        return (f"pipslab calibrate --eval {self.eval} --games {self.games} --seed {self.seed} "
                f"--out {shlex.quote(str(self.out))}" + (f" --backend {self.backend}" if self.backend != "process" else "")
                + (" --resume" if resume else ""))

    def __post_init__(self):
        if self.out is None:
            self.out = f"results/calibration-{self.eval}"
        self.validate()

    def validate(self) -> None:
        """Every argument, before anything is written (one line each)."""
        check_int("--games", self.games, 10, MAX_GAMES)
        check_seed(self.seed)
        check_int("--workers", self.workers, 0)
        if self.backend not in BACKENDS:
            raise PipslabError(f"unknown backend {self.backend!r}; expected {' or '.join(BACKENDS)}")
        check_out(self.out)

    def chunk_workers(self) -> int:
        return self.workers or default_workers()


class CalibrationInterrupted(RunInterrupted):
    def __init__(self, done: int, command: str):
        super().__init__(f"interrupted after {done} games (saved); resume with: {command}", done, command)


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


class PlayChunks:
    """Calibrate's job for the executors: ``(first, count)`` -> ``(first, chunk data)``."""

    def __init__(self, eval_name: str, seed: int):
        self.eval_name, self.seed = eval_name, seed

    def __call__(self, item: Tuple[int, int]):
        first, count = item
        return first, play_chunk(self.eval_name, self.seed, first, count)

    def __eq__(self, other):
        return isinstance(other, PlayChunks) and (other.eval_name, other.seed) == (self.eval_name, self.seed)

    def __hash__(self):
        return hash((self.eval_name, self.seed))


def _stamp(args: CalibrateArgs, first: int, count: int) -> dict:
    return {"eval": args.eval, "seed": args.seed, "first": first, "count": count}


def _chunk_path(chunks: Path, first: int) -> Path:
    return chunks / f"games-{first:07d}.npz"


def _write_npz(path: Path, data: dict, stamp: dict) -> None:
    with atomic_path(path, suffix=".npz") as tmp:
        np.savez(tmp, meta=np.array(json.dumps(stamp, sort_keys=True)), **data)


def _load_chunk(path: Path, stamp: Optional[dict] = None) -> Tuple[dict, Optional[dict]]:
    """A chunk's arrays and its stamp (``None``: an older pipslab wrote it); refuses, in one
    line, a file that is not a chunk and (given ``stamp``) a chunk of another run."""
    try:
        with np.load(path) as z:
            data = {k: z[k] for k in _KEYS}
            meta = json.loads(str(z["meta"])) if "meta" in z.files else None
        n = len(data["x"])
        if any(len(data[k]) != n for k in _KEYS) or (meta is not None and not isinstance(meta, dict)):
            raise ValueError("arrays of different lengths")
    except Exception as exc:  # noqa: BLE001 - a bad zip, a missing array, a flipped byte: all "not a chunk"
        reason = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise PipslabError(f"{path} is not a readable chunk of games ({reason}); delete it and run with --resume") from None
    if stamp is not None and meta is not None:
        diff = [k for k in stamp if meta.get(k) != stamp[k]]
        games = data["game"]
        if not diff and len(games) and (games.min() < stamp["first"] or games.max() >= stamp["first"] + stamp["count"]):
            diff = ["games"]
        if diff:
            what = "; ".join(f"{k}: {meta.get(k)!r} there, {stamp.get(k)!r} here" for k in diff)
            raise PipslabError(f"--resume: {path} holds games of another run ({what}); delete it (or use another "
                               "--out) and run again")
    return data, meta


def _log_loss(y: np.ndarray, p: np.ndarray) -> float:
    from sklearn.metrics import log_loss
    return float(log_loss(y, p, labels=[0.0, 1.0]))


def _fit(x: np.ndarray, y: np.ndarray):
    from sklearn.linear_model import LogisticRegression
    return LogisticRegression(C=1e4, max_iter=5000).fit(x, y)


def run_calibration(args: CalibrateArgs, progress: bool = True) -> dict:
    """Play (what is left of) the games, fit, write ``calibration.json``; returns it.
    Raises :class:`CalibrationInterrupted` on Ctrl-C (or ``kill``), finished chunks saved."""
    args.validate()
    _ranker(args.eval)   # validates the name
    check_backend(args.backend, 1)
    plan = [(f, min(CHUNK, args.games - f)) for f in range(0, args.games, CHUNK)]
    run = Run("calibrate", args.out, noun="run", overwrite=False, resume=args.resume, progress=progress,
              plan={"eval": args.eval, "games": args.games, "seed": args.seed, "chunk": CHUNK},
              command=args.command(), seeds={"seed": args.seed, "dice": "[seed, game]"})
    with run:
        chunks = run.path("chunks")
        if chunks.exists() and not chunks.is_dir():
            raise PipslabError(f"{chunks} is a file, not a folder: move it away or use another --out")
        have: Dict[int, dict] = {}
        unstamped = 0
        for first, count in plan:       # what is there is checked before anything is played or written
            path = _chunk_path(chunks, first)
            if path.exists() or path.is_symlink():
                data, meta = _load_chunk(path, _stamp(args, first, count))
                if meta is None:
                    unstamped += 1      # an older pipslab's chunk: cannot be told from another run's
                else:
                    have[first] = data
        run.start()
        if unstamped:
            note(f"{chunks}: {unstamped} chunk{'s' if unstamped != 1 else ''} without a stamp (an older pipslab "
                 "wrote them) are played again")
        chunks.mkdir(exist_ok=True)
        for stale in chunks.glob("*.tmp.npz"):   # half-written by a killed run
            stale.unlink()
        todo = [(f, c) for f, c in plan if f not in have]
        saved = args.games - sum(c for _, c in todo)
        workers = max(1, min(args.chunk_workers(), len(todo)))
        bar = run.bar(args.games, saved, desc=f"calibrate {args.eval}", leave=True)
        try:
            with run.executor(PlayChunks(args.eval, args.seed), workers, args.backend) as executor:
                for batch in executor.run(todo):
                    for first, data in batch:
                        count = min(CHUNK, args.games - first)
                        _write_npz(_chunk_path(chunks, first), data, _stamp(args, first, count))
                        have[first] = data
                        saved += count
                        bar.update(count)
        except KeyboardInterrupt:
            bar.close()
            raise CalibrationInterrupted(saved, args.command(resume=True)) from None
        bar.close()
        result = _fit_all(args, [have[f] for f, _ in plan])
        atomic_write_json(run.path("calibration.json"), result)
    return result


def _fit_all(args: CalibrateArgs, parts) -> dict:
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
    return result


def add_arguments(parser) -> None:
    parser.add_argument("--eval", default=None, help="ranking evaluator to calibrate: pubeval (default) or race")
    parser.add_argument("--games", type=int, default=None, help="self-play games (default 20000)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the dice (default 0)")
    parser.add_argument("--out", default=None, help="output folder (default results/calibration-EVAL)")
    parser.add_argument("--workers", type=int, default=None, help="processes (default 0: one per core)")
    parser.add_argument("--backend", default=None, choices=list(BACKENDS),
                        help="process (default) or ray (pip install 'pipslab[ray]'; RAY_ADDRESS for a cluster)")
    parser.add_argument("--resume", action="store_true", help="continue an interrupted run in --out")
    parser.add_argument("--config", default=None, metavar="FILE.toml",
                        help="read the arguments from a TOML file (keys as the flags, optionally under "
                             "[calibrate]; flags given here win)")
    parser.add_argument("--json", action="store_true", help="print calibration.json instead of the table")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


CONFIG_SCHEMA = {"eval": STR, "games": INT, "seed": INT, "out": STR, "workers": INT, "backend": STR}


def args_from_namespace(ns: argparse.Namespace) -> CalibrateArgs:
    """Flags given on the command line, then the config file, then the defaults."""
    cfg = load_config(ns.config, CONFIG_SCHEMA, section="calibrate") if getattr(ns, "config", None) else {}

    def pick(key, default):
        value = getattr(ns, key, None)
        return value if value is not None else cfg.get(key, default)

    return CalibrateArgs(eval=pick("eval", "pubeval"), games=pick("games", 20000), seed=pick("seed", 0),
                         out=pick("out", None), workers=pick("workers", 0), backend=pick("backend", "process"),
                         resume=ns.resume)


def run(ns: argparse.Namespace) -> int:
    args = args_from_namespace(ns)
    try:
        result = run_calibration(args, progress=not getattr(ns, "no_progress", False))
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
