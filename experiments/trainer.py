"""The one trainer skeleton under every ``pipslab train GAME`` (docs/training.md).

A trainer file keeps only what is its own — how a batch of self-play is played and how
the net is updated — as a :class:`Trainer` subclass with an args dataclass derived from
:class:`TrainArgs` (CleanRL's shape: the dataclass, a seeding block, one loop).  This
module gives every trainer the rest, alike: the command line generated from the
dataclass (each field's docstring is its help) plus the game's own option flags; the run
folder on :class:`~pipslab.experiments.runner.Run` (lock, ``run.json``, SIGTERM and
SIGHUP taken as Ctrl-C: a checkpoint, the resume command, exit 130); atomic checkpoints
through :meth:`Run.checkpoint` and ``--resume``; the curve and periodic evaluation
through the tournament harness; TensorBoard scalars; the progress bar; self-play workers
(:class:`SelfPlay`: processes or Ray) and the learner's device.

Why the weights do not depend on the workers: a trainer plays a batch as contiguous
shards of game (or hand) numbers, each game's randomness drawn from its own stream
(``[seed, …, game]``), and the learner concatenates the shards in order — so 1 or N
workers, on either backend, hand the learner the same data in the same order.
"""
from __future__ import annotations

import ast
import dataclasses
import inspect
import math
import os
import shlex
import time
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from pipslab.envs.errors import PipslabError, excerpt

from .checks import kind_of
from .cliargs import parse_option_items, split_agent_list
from .executors import start_ray
from .runner import Run, RunInterrupted, interrupts_held

CHECKPOINT = "checkpoint.pt"
NET = "net.pt"
CURVE_FIELDS = ("wall_s", "opponent", "eval_games", "win_rate", "win_low", "win_high", "points_per_game")
DEVICES = ("auto", "cpu", "cuda")
BACKENDS = ("process", "ray")

__all__ = ["TrainArgs", "Trainer", "SelfPlay", "train", "add_arguments", "args_from_namespace", "shards",
           "resolve_device", "field_help", "CHECKPOINT", "NET", "run_trainer"]


# ------------------------------------------------------------------ the args
@dataclass
class TrainArgs:
    """What every trainer takes; a trainer's dataclass adds its own fields (its budget
    ``games`` or ``hands``, its batch, its hyper-parameters) and may change defaults."""

    seed: int = 0
    """seed of the whole run: initial weights, deals or dice, minibatch order"""
    out: str = ""
    """run folder (default results/train-VARIANT)"""
    resume: bool = False
    """continue the run in --out from its checkpoint"""
    init: str = ""
    """start from this net's weights (a net file or checkpoint of the same game; a narrower one is widened)"""
    checkpoint_every: int = 10
    """updates between checkpoints"""
    eval_every: int = 50_000
    """games or hands between evaluations"""
    eval_games: int = 200
    """duplicate games per opponent at every evaluation (0: none)"""
    eval_against: List[str] = field(default_factory=list)
    """the curve's opponents, agent specs (default: the trainer's)"""
    workers: int = 1
    """self-play workers (the weights do not depend on how many)"""
    backend: str = field(default="process", metadata={"choices": BACKENDS})
    """where self-play runs: process (this machine) or ray (a local Ray, or the cluster of RAY_ADDRESS)"""
    device: str = field(default="auto", metadata={"choices": DEVICES})
    """the learner's device: auto (a GPU when torch sees one), cpu or cuda"""
    threads: int = 1
    """torch and numpy threads of the learner"""
    tensorboard: bool = False
    """TensorBoard scalars in DIR/tensorboard (pip install tensorboard)"""
    progress: bool = True
    """show the progress bar"""
    config: str = ""
    """TOML file with any of these flags as keys (dashes or underscores); the command line wins"""
    game: str = field(default="", metadata={"cli": False})
    options: Dict[str, Any] = field(default_factory=dict, metadata={"cli": False})
    imports: List[str] = field(default_factory=list, metadata={"cli": False})

    # what a checkpoint's run may differ in and still be resumed (the rest must match)
    RUN_FIELDS = ("out", "resume", "checkpoint_every", "eval_every", "eval_games", "eval_against", "workers",
                  "backend", "device", "threads", "tensorboard", "progress", "config", "imports")

    def settings(self, budget: str) -> dict:
        """The settings ``--resume`` must find again (everything but the budget and how the
        run is carried out), as JSON values."""
        import json
        skip = set(self.RUN_FIELDS) | {budget}
        return json.loads(json.dumps({f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                                      if f.name not in skip}))

    def validate(self) -> None:
        """Every common field in range (one line naming the flag when not); a trainer's
        dataclass extends this with its own checks."""
        for name in ("checkpoint_every", "eval_every", "workers", "threads"):
            whole(self, name, 1)
        whole(self, "eval_games", 0)
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or not 0 <= self.seed < 2**63:
            raise PipslabError(f"--seed must be a whole number from 0 to 2^63-1, got {excerpt(self.seed)}")
        if self.backend not in BACKENDS:
            raise PipslabError(f"--backend must be {' or '.join(BACKENDS)}, got {excerpt(self.backend)}")
        if self.device not in DEVICES:
            raise PipslabError(f"--device must be one of {', '.join(DEVICES)}, got {excerpt(self.device)}")


def whole(args, name: str, low: int = 1, high: int = 10**9) -> None:
    """``args.name`` a whole number in ``[low, high]``, or one line naming its flag."""
    v = getattr(args, name)
    if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high:
        raise PipslabError(f"--{name.replace('_', '-')} must be a whole number from {low} to {high:,}, "
                           f"got {excerpt(v)}")


def number(args, name: str, low: float, high: float, open_low: bool = False) -> None:
    """``args.name`` a finite number in ``[low, high]`` (``(low, high]``), or one line."""
    v = getattr(args, name)
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and \
        (v > low if open_low else v >= low) and v <= high
    if not ok:
        raise PipslabError(f"--{name.replace('_', '-')} must lie in {'(' if open_low else '['}{low}, {high}], "
                           f"got {excerpt(v)}")


# ------------------------------------------------------------------ the CLI, generated
def field_help(cls) -> Dict[str, str]:
    """Each field's docstring (the string literal under it in the class body, as CleanRL's
    tyro reads them), over the class and its bases."""
    out: Dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not dataclasses.is_dataclass(klass):
            continue
        try:
            tree = ast.parse(inspect.cleandoc("\n" + inspect.getsource(klass)))
        except (OSError, TypeError, SyntaxError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for a, b in zip(body, body[1:]):
            if isinstance(a, ast.AnnAssign) and isinstance(a.target, ast.Name) and isinstance(b, ast.Expr) \
                    and isinstance(b.value, ast.Constant) and isinstance(b.value.value, str):
                out[a.target.id] = " ".join(b.value.value.split())
    return out


def _base_type(hint) -> Tuple[type, Optional[type]]:
    """``(outer, item)``: ``int`` -> ``(int, None)``, ``List[str]`` -> ``(list, str)``,
    ``Optional[X]`` as ``X``."""
    origin = typing.get_origin(hint)
    if origin is typing.Union:
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        return _base_type(args[0])
    if origin in (list, List):
        (item,) = typing.get_args(hint) or (str,)
        return list, item
    if origin in (dict, Dict):
        return dict, None
    return hint, None


def _list_of(item: type, agents: bool):
    def parse(text: str):
        import argparse
        if agents:
            if not str(text).strip():
                return []
            try:
                return split_agent_list(text)
            except PipslabError as exc:
                raise argparse.ArgumentTypeError(str(exc)) from None
        try:
            return [item(x) for x in str(text).split(",") if x.strip()]
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected comma-separated {item.__name__}s, got {text!r}") from None
    parse.__name__ = f"list of {item.__name__}"
    return parse


AGENT_LISTS = ("eval_against", "league")


def add_arguments(parser, args_cls, game: Optional[str] = None) -> None:
    """``--FIELD`` for every field of ``args_cls`` (its docstring the help, its default
    shown; a true/false field as ``--FIELD/--no-FIELD``; a list as comma-separated
    values), then ``game``'s own option flags (every option of its ``Game`` as
    ``--NAME``, and ``--option NAME=VALUE``).  Every default is ``None`` here, so what was
    given is told from what was not (a ``--config`` file fills the rest)."""
    import argparse
    helps = field_help(args_cls)
    hints = typing.get_type_hints(args_cls)
    defaults = args_cls(game=game) if game and "game" in {f.name for f in dataclasses.fields(args_cls)} \
        else args_cls()
    for f in dataclasses.fields(args_cls):
        if not f.metadata.get("cli", True) or f.name.isupper():
            continue
        flag = "--" + f.name.replace("_", "-")
        outer, item = _base_type(hints[f.name])
        default = getattr(defaults, f.name)
        text = helps.get(f.name, "")
        if outer is bool:
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=None,
                                help=f"{text} (default {'on' if default else 'off'})".replace("%", "%%"))
            continue
        shown = ",".join(map(str, default)) if isinstance(default, list) else default
        suffix = f" (default {shown})" if shown not in ("", None, []) else ""
        kwargs: Dict[str, Any] = dict(default=None, help=(text + suffix).replace("%", "%%"))
        if outer is list:
            kwargs["type"] = _list_of(item or str, f.name in AGENT_LISTS)
            kwargs["metavar"] = "A,B,…"
        elif outer in (int, float, str):
            kwargs["type"] = outer
            kwargs["metavar"] = {int: "N", float: "X", str: "TEXT"}[outer]
            if f.metadata.get("choices"):
                kwargs["choices"] = list(f.metadata["choices"])
                del kwargs["metavar"]
        else:
            continue
        parser.add_argument(flag, **kwargs)
    if game:
        add_game_options(parser, game)


def add_game_options(parser, game_name: str) -> None:
    """The game's options as flags (``--mode``, ``--players``, ``--max-pip`` …: every option
    its ``Game`` defines, typed and with its allowed values) and ``--option NAME=VALUE``."""
    import argparse
    from pipslab.envs.game import get_game
    game = get_game(game_name)
    for o in game.options_spec:
        flag = "--" + o.name.replace("_", "-")
        kwargs: Dict[str, Any] = dict(default=None, dest=f"option:{o.name}",
                                      help=(o.describe() if hasattr(o, "describe") else o.help).replace("%", "%%"))
        if o.type is bool:
            kwargs["action"] = argparse.BooleanOptionalAction
        else:
            kwargs["type"] = str     # the game's Option checks and converts it (one line when wrong)
            kwargs["metavar"] = o.name.upper()
            if o.choices is not None:
                kwargs["choices"] = [str(c) for c in o.choices]
        try:
            parser.add_argument(flag, **kwargs)
        except argparse.ArgumentError:   # a trainer field of that name wins
            continue
    parser.add_argument("--option", action="append", default=None, metavar="NAME=VALUE",
                        help="a game option (repeatable), e.g. --option max_pip=4")


def _config_values(path_text: str, args_cls) -> dict:
    import tomllib
    path = Path(path_text)
    try:
        values = tomllib.loads(path.read_text())
    except OSError as exc:
        raise PipslabError(f"cannot read --config {path_text!r}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise PipslabError(f"--config {path_text!r} is not valid TOML: {exc}") from None
    return {k.replace("-", "_"): v for k, v in values.items()}


def args_from_namespace(ns, args_cls, game: str):
    """The args of a ``pipslab train GAME`` command: the dataclass's defaults, then a
    ``--config`` file's keys, then the flags given; game options from their flags,
    ``--option`` and the config's option keys, each checked by the game.  Unknown keys and
    values of the wrong type are one line each."""
    from pipslab.envs.game import get_game
    g = get_game(game)
    names = {f.name for f in dataclasses.fields(args_cls) if f.metadata.get("cli", True)}
    values: Dict[str, Any] = {}
    options: Dict[str, Any] = {}
    config = getattr(ns, "config", None)
    if config:
        for key, value in _config_values(config, args_cls).items():
            if key == "game":
                continue
            if key == "options" and isinstance(value, dict):
                options.update(value)
            elif key in names:
                values[key] = value
            elif key in g.option_names:
                options[key] = value
            else:
                raise PipslabError(f"--config {config}: unknown key {key!r} (known: {', '.join(sorted(names))}, "
                                   f"and {game}'s options {', '.join(g.option_names) or 'none'})")
    for key, value in vars(ns).items():
        if value is None or key.startswith("_") or key in ("command", "game", "option"):
            continue
        if key.startswith("option:"):
            options[key[len("option:"):]] = value
        elif key in names:
            values[key] = value
    options.update(parse_option_items(getattr(ns, "option", None)))
    hints = typing.get_type_hints(args_cls)
    if "out" in values and not str(values["out"]).strip():
        raise PipslabError("--out must name a folder")
    for key, value in list(values.items()):
        outer, item = _base_type(hints[key])
        if outer is list and isinstance(value, str):
            import argparse
            try:
                values[key] = _list_of(item or str, key in AGENT_LISTS)(value)
            except argparse.ArgumentTypeError as exc:
                raise PipslabError(f"--{key.replace('_', '-')}: {exc}") from None
        elif outer is list and isinstance(value, (int, float)) and not isinstance(value, bool):
            values[key] = [value]
        elif outer is float and isinstance(value, int) and not isinstance(value, bool):
            values[key] = float(value)
        ok = {bool: lambda v: isinstance(v, bool), int: lambda v: isinstance(v, int) and not isinstance(v, bool),
              float: lambda v: isinstance(v, float), str: lambda v: isinstance(v, str),
              list: lambda v: isinstance(v, list)}.get(outer, lambda v: True)
        if not ok(values[key]):
            raise PipslabError(f"--{key.replace('_', '-')}: expected {getattr(outer, '__name__', outer)}, "
                               f"got {kind_of(values[key])} {excerpt(values[key])}")
    resolved = g.resolve(options)     # unknown or bad options: one line naming the option
    given = {k: resolved[k] for k in options}
    args = args_cls(game=game, options=g.options_for(given), **values)
    args.config = config or ""
    return args


# ------------------------------------------------------------------ device
def resolve_device(name: str):
    """``torch.device`` for ``--device``: ``auto`` takes CUDA when torch sees a GPU;
    ``cuda`` without one is one line."""
    import torch
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise PipslabError("--device cuda: torch sees no GPU here (torch.cuda.is_available() is false); "
                           "use --device cpu or auto")
    return torch.device(name)


def device_label(device) -> str:
    """The machine as figures name it: its cores and the learner's device."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    text = f"{cores} CPU cores"
    if getattr(device, "type", str(device)) == "cuda":
        import torch
        text += f", {torch.cuda.get_device_name(device)}"
    return text


# ------------------------------------------------------------------ self-play workers
def shards(first: int, count: int, workers: int) -> List[Tuple[int, int]]:
    """``count`` games from ``first`` as at most ``workers`` contiguous ``(first, count)``
    shards, in order."""
    bounds = [first + count * i // workers for i in range(workers + 1)]
    return [(lo, hi - lo) for lo, hi in zip(bounds, bounds[1:]) if hi > lo]


_WORKER_IMPORTS: Tuple[str, ...] = ()


_WORKER_READY = [False]


def _run_shard(fn, shared, shard, imports=(), worker=False):
    """In a worker: one BLAS and torch thread (as Ray's workers have: N workers on N cores,
    not N times the cores), the user's ``--import`` modules once, then
    ``fn(shared, first, count)``."""
    global _WORKER_IMPORTS
    if worker and not _WORKER_READY[0]:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
        import sys
        if "torch" in sys.modules:
            sys.modules["torch"].set_num_threads(1)
        _WORKER_READY[0] = True
    if imports and tuple(imports) != _WORKER_IMPORTS:
        from .imports import import_user_modules
        import_user_modules(list(imports))
        _WORKER_IMPORTS = tuple(imports)
    return fn(shared, *shard)


def check_ray() -> None:
    """The Ray that ``--backend ray`` would use can start (or be reached): one line when not."""
    ray, started = start_ray(1)
    if started:
        ray.shutdown()


class SelfPlay:
    """Where a batch's shards are played: in this process (``process`` with one worker),
    a pool of worker processes, or Ray tasks.  :meth:`map` returns the shards' results in
    shard order whatever finished first."""

    def __init__(self, backend: str = "process", workers: int = 1, imports: Sequence[str] = ()):
        self.backend, self.workers, self.imports = backend, workers, tuple(imports)
        self.pool = None
        self.ray = None
        self._started = False
        if backend == "ray":
            self.ray, self._started = start_ray(workers)
            self._remote = self.ray.remote(_run_shard)
        elif workers > 1:
            import multiprocessing as mp
            import signal
            import sys
            import threading
            from .executors import start_method, worker_init
            main = threading.current_thread() is threading.main_thread()
            previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
            try:
                self.pool = mp.get_context(start_method(sys.modules)).Pool(
                    workers, initializer=worker_init, initargs=(os.getpid(),))
            finally:
                if main:
                    signal.signal(signal.SIGINT, previous)

    def map(self, fn: Callable, shared: Any, first: int, count: int) -> list:
        """``[fn(shared, first_i, count_i) for each shard]`` (module docstring)."""
        parts = shards(first, count, self.workers)
        if self.ray is not None:
            ref = self.ray.put(shared)
            return self.ray.get([self._remote.remote(fn, ref, p, self.imports, True) for p in parts])
        if self.pool is not None:
            jobs = [self.pool.apply_async(_run_shard, (fn, shared, p, self.imports, True)) for p in parts]
            return [j.get() for j in jobs]
        return [fn(shared, *p) for p in parts]

    def close(self) -> None:
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()
            self.pool = None
        if self.ray is not None and self._started:
            self.ray.shutdown()
        self.ray = None


def on_cpu(obj):
    """``obj`` with every tensor in it on the CPU (a checkpoint a CPU machine can read)."""
    import torch
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu()
    if isinstance(obj, dict):
        return {k: on_cpu(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(on_cpu(v) for v in obj)
    return obj


def resumed_optimizer(net, lr: float, data: dict, path: Path):
    """Adam over ``net`` with the checkpoint's state (one line when it does not fit)."""
    import torch
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    try:
        opt.load_state_dict(data["optimizer"])
    except (ValueError, KeyError, TypeError, RuntimeError) as exc:
        raise PipslabError(f"{path}: the optimizer state does not fit the network ({type(exc).__name__})") from None
    return opt


def write_curve(out: Path, curve: List[dict], fields: Sequence[str], x: str, x_label: str, title: str) -> None:
    """``out/curve.csv`` (atomically) and ``out/curve.png``: win rate with its Wilson band
    against each opponent, over ``x`` (games or hands trained)."""
    import csv
    import io

    from .files import atomic_path, atomic_write_text
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


# ------------------------------------------------------------------ the trainer seam
class Trainer:
    """What a trainer file defines (one subclass): ``name`` (``pipslab train NAME``),
    ``Args`` (its :class:`TrainArgs` dataclass), ``unit`` (what the budget counts:
    ``"game"`` or ``"hand"``), ``batch_field`` (the args field of one update's games), and
    the methods below.  The skeleton seeds torch before ``__init__`` builds the fresh net
    and optimizer on ``device``."""

    name = ""
    Args = TrainArgs
    unit = "game"
    batch_field = "batch_games"

    def __init__(self, args, device):
        self.args, self.device = args, device

    # the run's own parts
    def step(self, done: int, update: int, selfplay: SelfPlay) -> Dict[str, float]:
        """Play one batch (games ``done ..``) through ``selfplay`` and update the net;
        returns the scalars to show and log."""
        raise NotImplementedError

    def checkpoint(self, **extra) -> dict:
        """What ``checkpoint.pt`` holds: the net (a checkpoint plays as a net file),
        the optimizer and the trainer's own state, plus ``extra``."""
        raise NotImplementedError

    def load(self, data: dict, path: Path) -> None:
        """The state of a checkpoint of the same run."""
        raise NotImplementedError

    def begin(self) -> None:
        """What a fresh run takes in before its first update, after ``--init`` (a resumed
        run has it in its checkpoint already): nothing by default; the Happy trainer's
        ``--replay-from`` fills its buffer here."""

    def init_from(self, path: str) -> None:
        """Weights of another net file of the same game (``--init``); a narrower net is widened
        to the run's layers computing what it did, anything else is one line."""
        raise NotImplementedError

    def net_file(self, meta: dict) -> dict:
        """``net.pt``: the net alone."""
        raise NotImplementedError

    @classmethod
    def agent_spec(cls, path) -> str:
        """The agent spec that plays a net file in the harness (``td:net=PATH``)."""
        raise NotImplementedError

    def read(self, path: Path) -> dict:
        """A checkpoint file's contents (``weights_only``), one line when it is not one."""
        raise NotImplementedError

    @classmethod
    def error_rate(cls, net_file: Path) -> Optional[dict]:
        """The net's error rate on its family's benchmark — fixed decisions whose every
        choice a strong reference valued once — as ``{"error_rate", "error_rate_low",
        "error_rate_high", "reference", ...}``; None where the family has none.  A recipe
        draws it over the nets its evaluations kept (``evals/DONE-net.pt``): it separates
        two nets in a thousand decisions where win rates need thousands of games."""
        return None

    @classmethod
    def default_against(cls, args) -> List[str]:
        """The curve's opponents when ``--eval-against`` is not given."""
        return []

    @classmethod
    def default_out(cls, args) -> str:
        from pipslab.envs.game import get_game
        return f"results/train-{get_game(args.game).variant_label(args.options)}"

    def shown(self, stats: Dict[str, float]) -> Dict[str, str]:
        return {k: f"{v:.3f}" for k, v in stats.items()}


def budget_name(trainer_cls) -> str:
    return trainer_cls.unit + "s"


def command_of(trainer_cls, args, resume: bool = False) -> str:
    """The command that runs ``args``: the game, its options, every field that differs
    from the trainer's default (the budget always)."""
    defaults = trainer_cls.Args(game=args.game)
    parts = ["pipslab", "train", args.game]
    from pipslab.envs.game import get_game
    g = get_game(args.game)
    for key, value in args.options.items():
        o = g.option(key)
        if o.always and value == o.default:
            continue
        if isinstance(value, bool):
            parts += [f"--{key.replace('_', '-')}" if value else f"--no-{key.replace('_', '-')}"]
        else:
            parts += [f"--{key.replace('_', '-')}", str(value)]
    budget = budget_name(trainer_cls)
    for f in dataclasses.fields(args):
        if not f.metadata.get("cli", True) or f.name in ("resume", "config", "progress"):
            continue
        value = getattr(args, f.name)
        if f.name != budget and value == getattr(defaults, f.name):
            continue
        flag = "--" + f.name.replace("_", "-")
        if isinstance(value, bool):
            parts.append(flag if value else "--no-" + f.name.replace("_", "-"))
        elif isinstance(value, list):
            parts += [flag, ",".join(map(str, value))]
        else:
            parts += [flag, str(value)]
    return shlex.join(parts + (["--resume"] if resume else []))


# ------------------------------------------------------------------ the loop
class _Scalars:
    """TensorBoard scalars (``--tensorboard``), or nothing."""

    def __init__(self, out: Path, on: bool):
        self.w = None
        if on:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except ImportError:
                raise PipslabError("--tensorboard needs the tensorboard package: pip install 'pipslab[rl]'") from None
            self.w = SummaryWriter(str(out / "tensorboard"))

    def add(self, tag: str, value: float, step: int) -> None:
        if self.w is not None:
            self.w.add_scalar(tag, value, step)

    def close(self) -> None:
        if self.w is not None:
            self.w.close()


def play_off(game: str, options: dict, me: str, opp: str, games: int, seed: int, out: Path,
             progress: bool = False) -> dict:
    """``me`` against ``opp``: ``games`` duplicate games through the tournament harness in
    ``out`` (resuming what it holds), as ``me``'s row: games, wins, draws, losses, win rate
    with its Wilson 95% interval, points per game.  The win rate counts the games ``me``'s
    seat (or pair) won outright."""
    from .ratings import wilson_interval
    from .tournament import TournamentArgs, run_tournament
    options = dict(options)
    mode = options.pop("mode", None)
    targs = TournamentArgs(game=game, agents=[me, opp], games=games, seed=seed, mode=mode, extra_options=options,
                           out=str(out), progress=progress, workers=1, plots=False, bootstrap=0,
                           resume=(out / "run.json").is_file())
    s = run_tournament(targs).summary
    row = s[s["agent"] == me].iloc[0]
    n, wins = int(row["games"]), int(row["wins"])
    lo, hi = wilson_interval(wins, n)
    return {"opponent": opp, "games": n, "wins": wins, "draws": int(row["draws"]), "losses": int(row["losses"]),
            "win_rate": round(wins / n, 4), "win_low": round(lo, 4), "win_high": round(hi, 4),
            "points_per_game": round(float(row["avg_points"]), 4), "command": targs.command(resume=False)}


def folder_name(spec: str) -> str:
    """An agent spec as a folder name."""
    return spec.replace(":", "_").replace("=", "").replace(",", "_").replace("/", "_")


def evaluate(trainer: Trainer, net_file: Path, out: Path, done: int, wall: float) -> List[dict]:
    """``eval_games`` duplicate games of the net against each ``eval_against`` agent
    (:func:`play_off`, in ``out/evals/…``), as curve rows.  The net evaluated is kept as
    ``out/evals/DONE-net.pt`` (a few hundred KB), so that any later measure — an error
    rate on a benchmark, a longer match — can be drawn against the budget afterwards."""
    import torch

    from .files import atomic_path
    args = trainer.args
    me = trainer.agent_spec(net_file)
    snapshot = out / "evals" / f"{done:09d}-net.pt"
    snapshot.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(snapshot, suffix=".pt") as tmp:
        torch.save(trainer.net_file({budget_name(type(trainer)): done}), tmp)
    rows = []
    for opp in args.eval_against:
        r = play_off(args.game, args.options, me, opp, args.eval_games, args.seed,
                     out / "evals" / f"{done:09d}-{folder_name(opp)}")
        rows.append({budget_name(type(trainer)): done, "wall_s": round(wall, 1), "opponent": opp,
                     "eval_games": r["games"], **{k: r[k] for k in ("win_rate", "win_low", "win_high",
                                                                      "points_per_game")}})
    return rows


def train(trainer_cls, args, stage: Optional[dict] = None) -> dict:
    """Run (or ``--resume``) a training in ``args.out``; returns ``{"done", "updates",
    "wall_s", "curve", "out", "net"}``.  Refused in one line, before anything is written:
    bad settings, a ``--resume`` of another run or of nothing, a fresh run over a
    training run, a device or backend that cannot run.  ``stage``: fields a recipe adds
    to ``run.json``."""
    import torch

    if not args.eval_against:
        args.eval_against = list(trainer_cls.default_against(args))
    args.validate()
    budget = budget_name(trainer_cls)
    if not args.out:
        args.out = trainer_cls.default_out(args)
    device = resolve_device(args.device)
    batch = getattr(args, trainer_cls.batch_field)
    target = -(-getattr(args, budget) // batch) * batch
    settings = args.settings(budget)
    command = command_of(trainer_cls, args)
    resume_command = command_of(trainer_cls, args, resume=True)
    with Run("training", args.out, plan={"trainer": trainer_cls.name, "settings": settings}, compare=("trainer",),
             resume=args.resume, command=command, seeds=args.seed, overwrite=False, noun="training run",
             products=(NET, "curve.csv", "curve.png"), progress=args.progress) as run:
        ckpt = run.path(CHECKPOINT)
        if args.resume:
            if not ckpt.exists():
                raise PipslabError(f"nothing to resume in {str(run.out)!r} (no {CHECKPOINT})")
            if run.previous is not None and run.previous.get("settings") != settings:
                old = run.previous.get("settings") or {}
                diff = ", ".join(f"{k}={old.get(k)!r} (now {settings.get(k)!r})" for k in settings
                                 if old.get(k) != settings.get(k))
                raise PipslabError(f"--resume: {run.out} was trained with other settings: {diff}; "
                                   "use the same flags or another --out")
        elif ckpt.exists():
            raise PipslabError(f"{str(run.out)!r} already holds a training run; add --resume to continue it "
                               "or pick another --out")
        # seeding block
        torch.set_num_threads(args.threads)
        from threadpoolctl import threadpool_limits
        threadpool_limits(args.threads)
        torch.manual_seed(args.seed)
        trainer = trainer_cls(args, device)
        done = updates = 0
        wall, curve = 0.0, []
        if args.resume:
            data = trainer.read(ckpt)
            trainer.load(data, ckpt)
            try:
                done, updates, wall = int(data["done"]), int(data["updates"]), float(data["wall_s"])
                import json
                curve = json.loads(data["curve"])
            except (KeyError, TypeError, ValueError) as exc:
                raise PipslabError(f"{ckpt}: damaged training checkpoint ({type(exc).__name__})") from None
        else:
            if args.init:
                trainer.init_from(args.init)
            trainer.begin()
        selfplay = SelfPlay(args.backend, args.workers, args.imports)
        try:
            scalars = _Scalars(run.out, args.tensorboard)
            run.start(unit=trainer_cls.unit, budget=target, device=str(device), machine=device_label(device),
                      **(stage or {}))
            return _loop(run, trainer, selfplay, scalars, target, done, updates, wall, curve, resume_command,
                         write_curve)
        finally:
            selfplay.close()


def _loop(run: Run, trainer: Trainer, selfplay: SelfPlay, scalars: _Scalars, target: int, done: int,
          updates: int, wall: float, curve: list, resume_command: str, write_curve) -> dict:
    import json

    import torch
    args = trainer.args
    unit = trainer.unit
    batch = getattr(args, type(trainer).batch_field)
    fields = [unit + "s", *CURVE_FIELDS]

    def meta():
        return {unit + "s": done, "wall_s": round(wall, 1), "command": run.command}

    def save():
        state = trainer.checkpoint(meta=meta(), done=done, updates=updates, wall_s=wall, curve=json.dumps(curve))
        run.checkpoint(CHECKPOINT, lambda p: torch.save(state, p), **{unit + "s": done, "updates": updates})

    bar = run.bar(total=target, initial=min(done, target), unit=unit)
    t0 = time.perf_counter() - wall
    try:
        while done < target:
            with interrupts_held():          # an update and its count: whole, or not begun
                stats = trainer.step(done, updates, selfplay)
                done += batch
                updates += 1
            wall = time.perf_counter() - t0
            bar.update(batch)
            bar.set_postfix(trainer.shown(stats))
            for k, v in stats.items():
                scalars.add(f"train/{k}", v, done)
            scalars.add(f"train/{unit}s_per_s", done / max(wall, 1e-9), done)
            crossed = done // args.eval_every > (done - batch) // args.eval_every
            due_eval = args.eval_games > 0 and (crossed or done >= target)
            if due_eval or updates % args.checkpoint_every == 0:
                save()
            if due_eval:
                rows = evaluate(trainer, run.path(CHECKPOINT), run.out, done, wall)
                curve.extend(rows)
                write_curve(run.out, curve, fields, unit + "s", f"training {unit}s",
                            f"{trainer.name}: the net against fixed opponents, duplicate games")
                for r in rows:
                    scalars.add(f"win_rate/{r['opponent']}", r["win_rate"], done)
                    bar.write(f"{done:,} {unit}s, {wall:.0f} s: {r['win_rate']:.1%} "
                              f"[{r['win_low']:.1%}, {r['win_high']:.1%}] against {r['opponent']}")
                t0 += time.perf_counter() - t0 - wall     # evaluation time is not training time
                save()
    except KeyboardInterrupt:
        bar.close()
        save()
        raise RunInterrupted(f"interrupted after {done:,} {unit}s; resume with: {resume_command}", done,
                             resume_command) from None
    finally:
        scalars.close()
    bar.close()
    save()
    net = trainer.net_file(meta())
    from .files import atomic_path
    with atomic_path(run.path(NET), suffix=".pt") as tmp:
        torch.save(net, tmp)
    if not curve:
        write_curve(run.out, curve, fields, unit + "s", f"training {unit}s", "")
    result = {"done": done, "updates": updates, "wall_s": round(wall, 1), "unit": unit}
    run.update(result=result)
    return {**result, "curve": curve, "out": str(run.out), "net": str(run.path(NET))}


# ------------------------------------------------------------------ the command
def run_trainer(trainer_cls, ns, game: str) -> int:
    """``pipslab train NAME ...``: the args from the command line, the training, its last
    evaluation printed; an interruption is one line with the resume command and 130."""
    import sys
    from .imports import import_specs, import_user_modules
    imports = list(import_specs(getattr(ns, "imports", None) or ()))
    import_user_modules(imports)     # before the agent specs naming its agents are checked
    ns.imports = None
    args = args_from_namespace(ns, trainer_cls.Args, game)
    args.imports = [str(i) for i in imports]
    try:
        result = train(trainer_cls, args)
    except RunInterrupted as exc:
        sys.stdout.flush()
        sys.stderr.write(f"pipslab: {exc}\n")
        return 130
    print(f"trained {result['done']:,} {result['unit']}s in {result['wall_s']:.0f} s -> {result['net']}")
    last = result["curve"][-len(args.eval_against):] if result["curve"] and args.eval_against else []
    for r in last:
        print(f"  {r['win_rate']:.1%} [{r['win_low']:.1%}, {r['win_high']:.1%}] against {r['opponent']} "
              f"({r['eval_games']} games)")
    exploit = getattr(args, "exploit", "")
    if exploit and last:
        print(f"exploiter of {exploit}: wins {last[0]['win_rate']:.1%} of {last[0]['eval_games']} "
              f"duplicate games against it (lower is better for {exploit})")
    return 0
