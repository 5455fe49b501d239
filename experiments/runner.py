"""The run folder every long ``pipslab`` command shares (:class:`Run`).

``pipslab tournament``, ``calibrate``, ``analyze`` and the fish study are each a run of an
experiment in an output folder that Ctrl-C or a kill may interrupt and ``--resume``
continues.  :class:`Run` holds the folder for one session: the lock
(:mod:`pipslab.experiments.runlock`), the manifest ``run.json`` (the plan that ``--resume``
must match, provenance, sessions), signals turned into a clean stop, and executors stopped
however the run ends.  Records with checksums are :mod:`pipslab.experiments.records`;
argument and config checks are :mod:`pipslab.experiments.checks` and
:mod:`pipslab.experiments.cliargs`.  The whole story: docs/harness.md.
"""
from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import signal
import socket
import sys
import threading
from pathlib import Path
from typing import Any, Callable, Iterable, List, Optional, Sequence, Tuple

from pipslab.envs.errors import PipslabError

from .checks import check_out, kind_of
from .executors import make_executor
from .files import atomic_path, atomic_write_json
from .runlock import RunLock, timestamp

__all__ = ["Run", "RunInterrupted", "read_manifest", "provenance", "note", "MANIFEST"]

MANIFEST = "run.json"


def note(text: str) -> None:
    """A remark on stderr that does not stop the run (a repair, a stale lock taken over)."""
    sys.stderr.write(f"note: {text}\n")
    sys.stderr.flush()


# ------------------------------------------------------------------ provenance
@functools.lru_cache(maxsize=1)
def provenance() -> dict:
    """``pipslab_version``, ``git_commit`` (``None`` outside a git checkout) and
    ``git_dirty``, ``python``."""
    try:
        from importlib.metadata import version
        ver = version("pipslab")
    except Exception:  # noqa: BLE001 - not installed as a distribution
        ver = getattr(sys.modules.get("pipslab"), "__version__", None)
    commit, dirty = None, None
    here = Path(__file__).resolve().parent
    try:
        import subprocess
        r = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
        if r.returncode == 0 and re.fullmatch(r"[0-9a-f]{40,64}", r.stdout.strip()):
            commit = r.stdout.strip()
            # --no-optional-locks: a status must never hold index.lock against someone's commit
            s = subprocess.run(["git", "--no-optional-locks", "-C", str(here), "status", "--porcelain",
                                "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
            dirty = bool(s.stdout.strip()) if s.returncode == 0 else None
    except (OSError, ValueError, Exception):  # noqa: BLE001 - no git, a timeout: provenance is best effort
        pass
    return {"pipslab_version": ver, "git_commit": commit, "git_dirty": dirty,
            "python": ".".join(map(str, sys.version_info[:3]))}


# ------------------------------------------------------------------ signals
_STOP_SIGNALS: List[int] = []       # signals a Run turned into KeyboardInterrupt (reset in forked children)


def _after_fork_in_child() -> None:
    # a forked worker must not stop a run on SIGTERM
    for sig in _STOP_SIGNALS:
        with contextlib.suppress(ValueError, OSError):
            signal.signal(sig, signal.SIG_DFL)
    _STOP_SIGNALS.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


# ------------------------------------------------------------------ the manifest
def read_manifest(path: Path, required: Iterable[str] = ()) -> dict:
    """``run.json`` as a dict, or one line saying how it is damaged."""
    if not path.is_file():
        raise PipslabError(f"--resume: {path} is not a file; move it away or use another --out")
    try:
        data = json.loads(path.read_bytes().decode())
    except (UnicodeDecodeError, ValueError) as exc:
        raise PipslabError(f"--resume: {path} is damaged (not valid JSON: {str(exc).splitlines()[0]}), so the run's "
                           "plan is unknown; start again without --resume or use another --out") from None
    except OSError as exc:
        raise PipslabError(f"--resume: cannot read {path}: {exc.strerror or exc}") from None
    if not isinstance(data, dict):
        raise PipslabError(f"--resume: {path} is damaged ({kind_of(data)}, not a JSON object), so the run's plan is "
                           "unknown; start again without --resume or use another --out")
    missing = [k for k in required if k not in data]
    if missing:
        raise PipslabError(f"--resume: {path} is damaged (no {', '.join(missing)}), so the run's plan is unknown; "
                           "start again without --resume or use another --out")
    return data


class RunInterrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C, ``kill`` or a closed terminal, its work saved."""

    def __init__(self, message: str, done: int = 0, command: str = ""):
        super().__init__(message)
        self.done, self.command = done, command


def _raise_interrupt(signum, frame):  # noqa: ARG001 - signal handler signature
    raise KeyboardInterrupt


@contextlib.contextmanager
def interrupts_held():
    """Ctrl-C and the stop signals a Run catches wait until the block ends, then stop the
    run as they would have: a block that changes state in several steps (a training
    update: the net, the optimizer, the league, the count of hands) is never cut in two,
    so the checkpoint written on the way out is of whole updates and ``--resume`` gives
    the uninterrupted run's weights.  Outside the main thread the block runs as is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: List[Tuple[int, Callable]] = []
    previous = {}
    for sig in {signal.SIGINT, *_STOP_SIGNALS}:
        handler = signal.getsignal(sig)
        if callable(handler):
            previous[sig] = signal.signal(sig, lambda signum, frame, h=handler: held.append((signum, h)))
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if held:
        signum, handler = held[0]
        handler(signum, None)


class Run:
    """An experiment's output folder for one session of its life::

        with Run("tournament", out, plan=..., resume=..., command=..., seeds=...) as run:
            ...                  # run.previous: the manifest found there (resume), checked
            run.start()          # clears a fresh run's old products, writes run.json
            with run.executor(job, workers, backend) as ex:
                for results in ex.run(items): ...
            run.update(columns=...)            # more manifest fields, any time

    ``plan``: the manifest's own keys; ``compare``: those that must match for ``--resume``
    (default: all of ``plan``); ``noun``: how messages name the run ("tournament");
    ``overwrite``: a fresh run over an earlier one replaces it (removing ``products``) —
    when false it is refused unless ``--resume`` is given.
    """

    def __init__(self, kind: str, out, *, plan: dict, resume: bool, command: str, seeds: Any = None,
                 compare: Optional[Sequence[str]] = None, noun: Optional[str] = None, overwrite: bool = True,
                 products: Sequence[str] = (), progress: bool = True):
        self.kind, self.noun = kind, noun or kind
        self.out = check_out(out)
        self.plan = dict(plan)
        self.compare = tuple(self.plan if compare is None else compare)
        self.resume, self.command, self.seeds = resume, command, seeds
        self.overwrite, self.products, self.progress = overwrite, tuple(products), progress
        self.previous: Optional[dict] = None
        self.manifest: Optional[dict] = None
        self.lock: Optional[RunLock] = None
        self._created: List[Path] = []
        self._signals: List[Tuple[int, Any]] = []
        self._session: Optional[dict] = None

    def path(self, name: str) -> Path:
        return self.out / name

    # -------------------------------------------------------------- open / close
    def __enter__(self) -> "Run":
        self.open()
        return self

    def __exit__(self, et, ev, tb) -> None:
        self.close(None if et is None else ("interrupted" if issubclass(et, KeyboardInterrupt) else "failed"))

    def open(self) -> "Run":
        from pipslab import interrupts
        interrupts.check()              # a Ctrl-C of the command's start-up that a library swallowed
        self._mkdir()
        try:
            self.lock = RunLock(self.out).acquire(self.command)
            if self.lock.stale is not None:
                pid = self.lock.stale.get("pid")
                note(f"{self.out}: taking over the lock of a run that is no longer running"
                     + (f" (process {pid})" if pid else ""))
            self._check_previous()
        except BaseException:
            self._abandon()
            raise
        self._catch_signals()
        return self

    def _mkdir(self) -> None:
        missing = []
        p = self.out
        while not p.exists() and p != p.parent:
            missing.append(p)
            p = p.parent
        try:
            self.out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise PipslabError(f"cannot create --out {str(self.out)!r}: {exc.strerror or exc}") from None
        self._created = missing   # innermost first

    def _abandon(self) -> None:
        """Leave the folder as it was found (a refused run writes nothing)."""
        if self.lock is not None:
            self.lock.release()
            self.lock = None
        for p in self._created:
            with contextlib.suppress(OSError):
                p.rmdir()

    def _check_previous(self) -> None:
        manifest = self.path(MANIFEST)
        exists = manifest.exists() or manifest.is_symlink()
        if not self.resume:
            if exists and not self.overwrite:
                raise PipslabError(f"{self.out} already holds a {self.kind} run; pass --resume to continue it or "
                                   "choose another --out")
            if manifest.is_dir():
                raise PipslabError(f"{manifest} is a folder, not a file: move it away or use another --out")
            return
        if not exists:
            return
        old = read_manifest(manifest, required=self.compare)
        diff = [k for k in self.compare if old.get(k) != self.plan.get(k)]
        if diff:
            what = "; ".join(f"{k}: {old.get(k)!r} there, {self.plan.get(k)!r} here" for k in diff)
            raise PipslabError(f"--resume: {self.out} holds a different {self.noun} ({what}); "
                               "use the same arguments or another --out")
        self.previous = old

    def start(self, **fields) -> None:
        """Begin the session: a fresh run's old products go, ``run.json`` is written."""
        if not self.resume or self.previous is None:
            for name in self.products:
                p = self.path(name)
                if p.is_dir() and not p.is_symlink():
                    raise PipslabError(f"{p} is a folder, not a file: move it away or use another --out")
                with contextlib.suppress(FileNotFoundError):
                    p.unlink()
        info = provenance()
        self._session = {"started": timestamp(), "ended": None, "status": "running", "pid": os.getpid(),
                         "resumed": bool(self.resume and self.previous is not None),
                         "pipslab_version": info["pipslab_version"], "git_commit": info["git_commit"]}
        old = self.previous or {}
        manifest = {k: v for k, v in old.items()}   # what earlier sessions recorded (e.g. columns)
        manifest.update(self.plan)
        manifest.update({"kind": self.kind, "command": self.command, "seeds": self.seeds, **info,
                         "host": socket.gethostname(), "started": old.get("started") or self._session["started"],
                         "ended": None, "status": "running"})
        sessions = [dict(x) for x in old.get("sessions", ()) if isinstance(x, dict)] \
            if isinstance(old.get("sessions"), list) else []
        for earlier in sessions:   # we hold the lock: a session still "running" was killed
            if earlier.get("status") == "running":
                earlier["status"] = "killed"
        manifest["sessions"] = sessions + [self._session]
        manifest.update(fields)
        self.manifest = manifest
        self._write()

    def update(self, **fields) -> None:
        """More manifest fields (written at once, atomically)."""
        if self.manifest is None:
            raise RuntimeError("Run.update before Run.start")
        self.manifest.update(fields)
        self._write()

    def _write(self) -> None:
        atomic_write_json(self.path(MANIFEST), self.manifest)

    def checkpoint(self, name: str, write: Callable[[Path], None], **progress) -> Path:
        """Save a checkpoint of a long run: ``write(tmp)`` fills a temporary file (e.g.
        ``lambda p: torch.save(state, p)``), which then replaces ``name`` atomically; the
        manifest's ``checkpoint`` records the file, when, and ``progress`` (games done …)."""
        path = self.path(name)
        with atomic_path(path, suffix=Path(name).suffix) as tmp:
            write(tmp)
        self.update(checkpoint={"file": name, "saved": timestamp(), **progress})
        return path

    def close(self, status: Optional[str] = None) -> None:
        self._restore_signals()
        try:
            if self.manifest is not None and self._session is not None and self.lock is not None \
                    and os.getpid() == self.lock.owner:
                ended = timestamp()
                self._session.update(ended=ended, status=status or "done")
                self.manifest.update(ended=ended, status=status or "done")
                with contextlib.suppress(OSError):   # never mask what ended the run
                    self._write()
        finally:
            if self.manifest is None:
                self._abandon()
            elif self.lock is not None:
                self.lock.release()
                self.lock = None

    # -------------------------------------------------------------- signals
    def _catch_signals(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for name in ("SIGTERM", "SIGHUP"):
            sig = getattr(signal, name, None)
            if sig is None or (name == "SIGHUP" and signal.getsignal(sig) == signal.SIG_IGN):
                continue    # nohup: a hangup stays ignored; a SIGTERM always stops the run cleanly
            try:
                previous = signal.signal(sig, _raise_interrupt)
            except (ValueError, OSError):
                continue
            self._signals.append((sig, previous))
            _STOP_SIGNALS.append(sig)

    def _restore_signals(self) -> None:
        while self._signals:
            sig, previous = self._signals.pop()
            with contextlib.suppress(ValueError, OSError, TypeError):
                signal.signal(sig, previous if previous is not None else signal.SIG_DFL)
            with contextlib.suppress(ValueError):
                _STOP_SIGNALS.remove(sig)

    # -------------------------------------------------------------- work
    @contextlib.contextmanager
    def executor(self, job, workers: int = 1, backend: str = "process"):
        """An executor for ``job`` (see :mod:`pipslab.experiments.executors`); its workers
        are stopped however the block ends."""
        ex = make_executor(job, workers, backend)
        try:
            yield ex
        except BaseException:
            ex.terminate()
            raise
        finally:
            ex.close()

    def bar(self, total: int, initial: int = 0, desc: Optional[str] = None, unit: str = "game", leave: bool = False):
        from tqdm import tqdm
        return tqdm(total=total, initial=initial, desc=desc or self.kind, unit=unit, disable=not self.progress,
                    leave=leave, dynamic_ncols=True, smoothing=0.1)
