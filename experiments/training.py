"""What the trainers share (``pipslab train backgammon`` and ``happy|troshin|triple``):
opening a run folder, atomic torch files, the learning curve's CSV and plot, the TOML
``--config`` and the interruption that prints the resume command.  Each trainer keeps its
own loop; this is only the run's plumbing, so both behave alike on disk and on Ctrl-C.
"""
from __future__ import annotations

import csv
import io
import json
import tomllib
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import torch

from pipslab.envs.errors import PipslabError

from .checks import check_out
from .files import atomic_path, atomic_write_text
from .runlock import RunLock

CHECKPOINT = "checkpoint.pt"


class TrainingInterrupted(KeyboardInterrupt):
    """Ctrl-C (or ``kill -INT``): the checkpoint is saved; the message says how to go on."""

    def __init__(self, done: int, unit: str, command: str):
        super().__init__(f"interrupted after {done} {unit}; resume with: {command}")
        self.done, self.command = done, command


def open_run(out_arg: str, resume: bool, command: str) -> Tuple[Path, Path, RunLock]:
    """``(folder, checkpoint path, lock)`` of a run: ``--resume`` needs a checkpoint, a new
    run refuses a folder that holds one; the folder is locked (a second trainer on it is
    refused with one line naming the first; a killed run's lock is taken over)."""
    out = check_out(out_arg)
    ckpt = out / CHECKPOINT
    if resume:
        if not ckpt.exists():
            raise PipslabError(f"nothing to resume in {str(out)!r} (no {CHECKPOINT})")
    elif ckpt.exists():
        raise PipslabError(f"{str(out)!r} already holds a training run; add --resume to continue it or pick another --out")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PipslabError(f"cannot write to --out {str(out)!r}: {exc.strerror or exc}") from None
    return out, ckpt, RunLock(out).acquire(command)


def atomic_torch_save(obj, path: Path) -> None:
    with atomic_path(path) as tmp:
        torch.save(obj, tmp)


def write_curve(out: Path, curve: List[dict], fields: Sequence[str], x: str, x_label: str, title: str) -> None:
    """``out/curve.csv`` (atomically) and ``out/curve.png``: win rate with its Wilson band
    against each opponent, over ``x`` (games or hands trained)."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(fields), lineterminator="\n")
    w.writeheader()
    w.writerows(curve)
    atomic_write_text(out / "curve.csv", buf.getvalue())
    if not curve:
        return
    from .plots import new_figure
    fig, ax = new_figure((7, 4))
    for opp in sorted({r["opponent"] for r in curve}):
        rows = [r for r in curve if r["opponent"] == opp]
        xs = [r[x] for r in rows]
        ax.plot(xs, [r["win_rate"] for r in rows], marker="o", label=f"vs {opp}")
        ax.fill_between(xs, [r["win_low"] for r in rows], [r["win_high"] for r in rows], alpha=0.2)
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_xlabel(x_label)
    ax.set_ylabel("win rate (Wilson 95%)")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    with atomic_path(out / "curve.png") as tmp:
        fig.savefig(tmp, format="png", dpi=100)


def settings(ns, skip: Sequence[str] = ("config", "_run", "command", "game")) -> Dict[str, object]:
    """The settings of a ``pipslab train`` command: the ``--config`` TOML file's keys
    (dashes read as underscores; ``game`` ignored), then every flag given on the command
    line over them."""
    values: Dict[str, object] = {}
    if getattr(ns, "config", None):
        path = Path(ns.config)
        try:
            values = tomllib.loads(path.read_text())
        except OSError as exc:
            raise PipslabError(f"cannot read --config {ns.config!r}: {exc.strerror or exc}") from None
        except tomllib.TOMLDecodeError as exc:
            raise PipslabError(f"--config {ns.config!r} is not valid TOML: {exc}") from None
        values = {k.replace("-", "_"): v for k, v in values.items()}
        values.pop("game", None)
    for key in vars(ns):
        if key in skip or getattr(ns, key) is None:
            continue
        values[key] = getattr(ns, key)
    return values


def check_checkpoint(data: dict, path: Path, keys: Sequence[str], hyper_now: dict) -> None:
    """A training checkpoint of this run: every trainer key present (a shipped net has
    none), and the settings it was trained with equal to ``hyper_now``."""
    for key in keys:
        if key not in data:
            raise PipslabError(f"{path}: not a training checkpoint (no {key!r}); a shipped net cannot be resumed")
    try:
        hyper = json.loads(data["hyper"])
    except (TypeError, ValueError) as exc:
        raise PipslabError(f"{path}: damaged training checkpoint ({type(exc).__name__})") from None
    mine = json.loads(json.dumps(hyper_now))
    if hyper != mine:
        diff = ", ".join(f"{k}={hyper.get(k)!r} (now {mine.get(k)!r})" for k in mine if hyper.get(k) != mine.get(k))
        raise PipslabError(f"{path} was trained with other settings: {diff}; use another --out or the same flags")


def resumed_optimizer(net: torch.nn.Module, lr: float, data: dict, path: Path) -> torch.optim.Optimizer:
    """Adam over ``net`` with the checkpoint's state (one line when it does not fit)."""
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    try:
        opt.load_state_dict(data["optimizer"])
    except (ValueError, KeyError, TypeError, RuntimeError) as exc:
        raise PipslabError(f"{path}: the optimizer state does not fit the network ({type(exc).__name__})") from None
    return opt
