"""One experiment runner: what every long ``pipslab`` command shares.

``pipslab tournament`` and ``pipslab calibrate`` (and, next, training and the fish study)
are each an *experiment*: a dataclass of arguments (flags, or a TOML config with the same
keys), a seed plan, and an output folder that a run fills, that Ctrl-C or a kill may
interrupt, and that ``--resume`` continues.  The pieces every experiment gets from here:

* **Checks before anything is written** — :func:`check_out` (``--out`` empty, a file,
  under a file, not writable), :func:`check_int` / :func:`check_seed` (bounds, no
  floats, no true/false for a number), :func:`load_config` (a TOML table whose keys are
  known and whose values have the right types; an empty one is refused).  A bad input is
  one line and exit status 2, and ``--out`` is left as it was.
* :class:`Run` — the folder for a run's life, as a context manager::

      with Run("tournament", out, plan=..., resume=..., command=..., seeds=...) as run:
          ...                  # run.previous: the manifest found there (resume), checked
          run.start()          # clears a fresh run's old products, writes run.json
          with run.executor(job, workers, backend) as ex:
              for results in ex.run(items): ...
          run.update(columns=...)            # more manifest fields, any time

  - a **lock** (``.lock``: the owner's pid, host, start and command, held with ``flock``):
    a second run on the same folder is refused in one line naming the process that holds
    it; a lock left behind by a killed run (its pid is no longer running) is taken over
    with a note, so it never blocks ``--resume``;
  - the **manifest** ``run.json``: the plan's keys (what must match for ``--resume``),
    ``kind``, ``command``, ``seeds``, ``pipslab_version``, ``git_commit`` (and whether the
    work tree had local changes), ``python``, ``host``, ``started``/``ended``, ``status``
    (``running``, ``interrupted``, ``failed``, ``done``) and one entry per session in
    ``sessions``.  On ``--resume`` it is validated: unreadable, not an object, missing a
    plan key or holding another plan — refused in one line, never guessed;
  - **signals**: Ctrl-C, ``kill`` (SIGTERM) and a closed terminal (SIGHUP) stop the run
    the same way — what is done is saved and the command that resumes it is printed;
  - **executors** (:mod:`pipslab.experiments.executors`: serial, processes, Ray), closed
    and their workers stopped however the run ends;
  - a **progress bar** (:meth:`Run.bar`) and atomic writes (:mod:`pipslab.experiments.files`).
* :class:`RecordLog` — records appended to a CSV as they finish, each flushed block
  covered by a CRC-32 in ``NAME.sums``; :func:`recover_records` reads such a file back
  for ``--resume``: blocks that fail their checksum, torn or malformed rows and repeated
  ids are dropped (those items are played again: they are determined by their id) and a
  damaged header is restored from the manifest — each with a note on stderr; what cannot
  be repaired is refused in one line.

Long runs that checkpoint (training, the fish study) use the same pieces:
:meth:`Run.checkpoint` writes a checkpoint atomically and records it (and the progress
it holds) in the manifest, :meth:`Run.update` adds any other field, ``run.previous`` is
what the last session recorded, and the lock and manifest checks guard ``--resume``.
"""
from __future__ import annotations

import contextlib
import csv
import datetime as _dt
import functools
import io
import json
import numbers
import os
import re
import signal
import socket
import sys
import threading
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from pipslab.envs.errors import PipslabError

from .executors import make_executor, process_alive
from .files import atomic_path, atomic_write_json, atomic_write_text

MANIFEST = "run.json"
LOCK = ".lock"
MAX_SEED = 2 ** 63 - 1


def note(text: str) -> None:
    """A remark on stderr that does not stop the run (a repair, a stale lock taken over)."""
    sys.stderr.write(f"note: {text}\n")
    sys.stderr.flush()


def _now() -> str:
    return _dt.datetime.now().astimezone().isoformat(timespec="seconds")


def _show(value, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _kind_of(value) -> str:
    if isinstance(value, bool):
        return "true/false"
    return {int: "an integer", float: "a float", str: "a string", list: "a list", dict: "a table"}.get(
        type(value), type(value).__name__)


# ------------------------------------------------------------------ checks before anything is written
def check_int(name: str, value, low: Optional[int] = None, high: Optional[int] = None) -> int:
    """``value`` as an int within ``[low, high]``, or one line naming ``name``.  Floats,
    strings and true/false are refused (a config's ``games = 10.5`` is not ten games)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise PipslabError(f"{name} must be a whole number, got {_kind_of(value)} {_show(value)}")
    value = int(value)
    if low is not None and value < low:
        raise PipslabError(f"{name} must be at least {low:,}, got {value:,}")
    if high is not None and value > high:
        raise PipslabError(f"{name} must be at most {high:,}, got {value:,}")
    return value


def check_seed(value, name: str = "--seed") -> int:
    return check_int(name, value, 0, MAX_SEED)


def check_out(out, flag: str = "--out") -> Path:
    """``out`` as a folder path that a run can create or write in; one line otherwise
    (empty, an existing file, under a file, not writable: the CLI's one check,
    :func:`pipslab.experiments.checks.check_out_dir`).  Nothing is left behind."""
    from .checks import check_out_dir
    text = "" if out is None else str(out)
    if "\0" in text:
        raise PipslabError(f"{flag} holds a NUL character")
    return check_out_dir(text, flag)


# ------------------------------------------------------------------ config files
@dataclass(frozen=True)
class Kind:
    """A config value's expected type: a description for the message, and a test."""
    what: str
    test: Callable[[Any], bool]


INT = Kind("a whole number", lambda v: isinstance(v, int) and not isinstance(v, bool))
FLOAT = Kind("a number", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool))
STR = Kind("a string", lambda v: isinstance(v, str))
BOOL = Kind("true or false", lambda v: isinstance(v, bool))
TABLE = Kind("a table", lambda v: isinstance(v, dict))
STRINGS = Kind("a string or a list of strings",
               lambda v: isinstance(v, str) or (isinstance(v, list) and all(isinstance(x, str) for x in v)))
STRING_LIST = Kind("a list of strings", lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v))


def kind_of_type(t) -> Kind:
    return {int: INT, float: FLOAT, str: STR, bool: BOOL, dict: TABLE}.get(t, Kind(getattr(t, "__name__", str(t)),
                                                                               lambda v, t=t: isinstance(v, t)))


def load_config(path_text: str, schema: Dict[str, Kind], section: Optional[str] = None,
                config_dir: Optional[Path] = None) -> dict:
    """A TOML config: its ``[section]`` table (or the whole file), every key known to
    ``schema`` and of its type.  A bare ``NAME`` means ``config_dir/NAME.toml``."""
    path = Path(path_text)
    if config_dir is not None and not path.exists() and not path.suffix and (config_dir / f"{path_text}.toml").exists():
        path = config_dir / f"{path_text}.toml"
    if not path.exists():
        ready = ""
        if config_dir is not None:
            ready = f" (ready ones: {', '.join(sorted(p.stem for p in config_dir.glob('*.toml')))})"
        raise PipslabError(f"no config file {path_text!r}{ready}")
    try:
        import tomllib
    except ImportError:  # Python 3.10
        try:
            import tomli as tomllib
        except ImportError:
            raise PipslabError("reading TOML configs needs Python 3.11+ or the tomli package") from None
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise PipslabError(f"cannot read config {str(path)!r}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        data = tomllib.loads(text)
    except Exception as exc:  # noqa: BLE001 - any parse error is the user's file
        raise PipslabError(f"{path}: not valid TOML: {str(exc).splitlines()[0] if str(exc) else exc}") from None
    if section is not None and section in data:
        if not isinstance(data[section], dict):
            raise PipslabError(f"{path}: [{section}] must be a table, got {_kind_of(data[section])}")
        others = sorted(set(data) - {section})
        if others:
            raise PipslabError(f"{path}: unknown keys {', '.join(others)} beside [{section}]")
        data = data[section]
    data = dict(data)
    if not data:
        raise PipslabError(f"{path}: the config is empty; known keys: {', '.join(sorted(schema))}")
    unknown = set(data) - set(schema)
    if unknown:
        raise PipslabError(f"{path}: unknown keys {', '.join(sorted(unknown))}; known: {', '.join(sorted(schema))}")
    for key, value in data.items():
        kind = schema[key]
        if not kind.test(value):
            raise PipslabError(f"{path}: {key} must be {kind.what}, got {_kind_of(value)} {_show(value)}")
    return data


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


# ------------------------------------------------------------------ the lock
_HELD: Dict[int, int] = {}          # lock fd -> the pid that took it
_STOP_SIGNALS: List[int] = []       # signals a Run turned into KeyboardInterrupt (reset in forked children)


def _after_fork_in_child() -> None:
    # a forked worker must not keep its parent's lock alive, nor stop a run on SIGTERM
    for fd in list(_HELD):
        with contextlib.suppress(OSError):
            os.close(fd)
    _HELD.clear()
    for sig in _STOP_SIGNALS:
        with contextlib.suppress(ValueError, OSError):
            signal.signal(sig, signal.SIG_DFL)
    _STOP_SIGNALS.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _proc_start(pid: int) -> Optional[int]:
    """The start time of ``pid`` (clock ticks since boot), to tell it from a later process
    that got the same pid."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        return int(stat[stat.rfind(b")") + 2:].split()[19])
    except (OSError, ValueError, IndexError):
        return None


class RunLock:
    """``FOLDER/.lock``: held with ``flock`` (the kernel drops it when its process dies,
    however it dies) and naming its owner.  A lock file whose owner is gone — its pid no
    longer runs, or runs as another process — is stale and taken over."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.path = self.folder / LOCK
        self.fd: Optional[int] = None
        self.owner = os.getpid()
        self.stale: Optional[dict] = None    # the dead owner's entry, when one was taken over

    @staticmethod
    def _read(fd: int) -> Tuple[Optional[dict], bool]:
        """(owner entry or None, whether the file held anything)."""
        try:
            raw = os.pread(fd, 65536, 0)
        except OSError:
            return None, False
        try:
            info = json.loads(raw.decode())
            return (info if isinstance(info, dict) else None), bool(raw.strip())
        except (UnicodeDecodeError, ValueError):
            return None, bool(raw.strip())

    def _in_use(self, info: Optional[dict]) -> PipslabError:
        info = info or {}
        who = f"process {info.get('pid', '?')}"
        if info.get("host") and info.get("host") != socket.gethostname():
            who += f" on {info['host']}"
        since = f" since {info['started']}" if info.get("started") else ""
        what = f" ({' '.join(str(info['command']).split())})" if info.get("command") else ""
        return PipslabError(f"{self.folder} is in use by {who}{since}{what}; wait for it to finish or stop it, "
                            "or use another --out")

    def _alive(self, info: dict) -> bool:
        """Whether the entry's owner still runs (on this host; elsewhere it cannot be told,
        and the flock, which did not stop us, is trusted)."""
        pid = info.get("pid")
        if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0 or pid == os.getpid():
            return False
        if info.get("host") not in (None, socket.gethostname()):
            return False
        if not process_alive(pid):
            return False
        started = info.get("pid_start")
        return started is None or _proc_start(pid) in (None, started)

    def acquire(self, command: str) -> "RunLock":
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: the pid check alone
            fcntl = None
        for _ in range(50):
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except IsADirectoryError:
                raise PipslabError(f"{self.path} is a folder, not pipslab's lock file: move it away") from None
            except OSError as exc:
                raise PipslabError(f"cannot write to --out {str(self.folder)!r}: {exc.strerror or exc}") from None
            if fcntl is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    info, _ = self._read(fd)
                    os.close(fd)
                    raise self._in_use(info) from None
                except OSError:   # a file system without flock: the pid check below still holds
                    pass
            try:   # the path may have been unlinked (and made anew) by the owner we waited for
                same = os.path.samestat(os.fstat(fd), os.stat(self.path))
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            info, nonempty = self._read(fd)
            if info is not None and self._alive(info):
                os.close(fd)
                raise self._in_use(info)
            if nonempty:
                self.stale = info or {}
            entry = {"pid": os.getpid(), "pid_start": _proc_start(os.getpid()), "host": socket.gethostname(),
                     "started": _now(), "command": command}
            data = (json.dumps(entry) + "\n").encode()
            os.ftruncate(fd, 0)
            os.pwrite(fd, data, 0)
            os.fsync(fd)
            self.fd = fd
            _HELD[fd] = os.getpid()
            return self
        raise PipslabError(f"cannot lock {self.path}: other runs keep replacing it")

    def release(self) -> None:
        fd, self.fd = self.fd, None
        if fd is None or os.getpid() != self.owner:
            return
        try:
            with contextlib.suppress(OSError):
                if os.path.samestat(os.fstat(fd), os.stat(self.path)):
                    os.unlink(self.path)
        finally:
            _HELD.pop(fd, None)
            with contextlib.suppress(OSError):
                os.close(fd)


# ------------------------------------------------------------------ manifest
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
        raise PipslabError(f"--resume: {path} is damaged ({_kind_of(data)}, not a JSON object), so the run's plan is "
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


class Run:
    """An experiment's output folder for one session of its life (see the module docstring).

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
        self._session = {"started": _now(), "ended": None, "status": "running", "pid": os.getpid(),
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
        self.update(checkpoint={"file": name, "saved": _now(), **progress})
        return path

    def close(self, status: Optional[str] = None) -> None:
        self._restore_signals()
        try:
            if self.manifest is not None and self._session is not None and self.lock is not None \
                    and os.getpid() == self.lock.owner:
                ended = _now()
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
            if sig is None or signal.getsignal(sig) == signal.SIG_IGN:   # nohup: a hangup stays ignored
                continue
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


# ------------------------------------------------------------------ records with checksums
SUMS_SUFFIX = ".sums"
_SUMS_MAGIC = "pipslab-sums 1"
REWRITE_BLOCK = 200   # rows per checksummed block when a whole file is (re)written


def sums_path(path: Path) -> Path:
    return path.with_name(path.name + SUMS_SUFFIX)


def _crc(lines: Iterable[bytes]) -> int:
    """CRC-32 of lines (without their ``\n``), blind to ``\r\n`` against ``\n``: a file
    whose line ends were rewritten still matches its sums."""
    crc = 0
    for line in lines:
        crc = zlib.crc32(line.rstrip(b"\r") + b"\n", crc)
    return crc


def _sum_line(lines: Sequence[bytes]) -> str:
    return f"{len(lines)} {_crc(lines):08x}\n"


def _split(data: bytes) -> Tuple[List[bytes], bytes]:
    """Whole lines (without ``\n``) and what follows the last ``\n`` (a torn line, or b"")."""
    parts = data.split(b"\n")
    return parts[:-1], parts[-1]


def write_sums(path: Path) -> None:
    """Checksums for a whole records file just written: its header, then blocks of rows."""
    lines, _ = _split(path.read_bytes())
    out = [_SUMS_MAGIC + "\n"]
    if lines:
        out.append(_sum_line(lines[:1]))
        for k in range(1, len(lines), REWRITE_BLOCK):
            out.append(_sum_line(lines[k:k + REWRITE_BLOCK]))
    atomic_write_text(sums_path(path), "".join(out))


def write_records_file(path: Path, text: str) -> None:
    """Replace a records file and its checksums (the old sums go first: a kill in between
    leaves a file without sums, whose rows are then checked as unverified ones)."""
    with contextlib.suppress(FileNotFoundError):
        sums_path(path).unlink()
    atomic_write_text(path, text)
    write_sums(path)


class RecordLog:
    """Appends records (dicts) to a CSV file.

    Records are flushed to the OS at least every ``flush_every_s`` (so a killed process
    loses at most that much work, which ``--resume`` does again), and each flushed block
    gets a CRC-32 line in ``NAME.sums``; both files are fsynced at least every
    ``fsync_every_s`` and on close.  :meth:`write` returns how many records reached the file
    with this call: a progress bar counts an item only once it is there.  ``on_header`` is
    called with the columns when the header is first written (to record them in the
    manifest, from which a damaged header is restored).
    """

    def __init__(self, path: Path, header: Sequence[str] = (), fsync_every_s: float = 1.0,
                 flush_every_s: float = 0.05, on_header: Optional[Callable[[List[str]], None]] = None):
        self.path = Path(path)
        self.header = list(header)
        self.header_t = tuple(header)
        self.file = open(self.path, "ab")
        sums = sums_path(self.path)
        fresh_sums = not sums.exists() or sums.stat().st_size == 0
        self.sums = open(sums, "ab")
        if fresh_sums:
            self.sums.write((_SUMS_MAGIC + "\n").encode())
        self.buf = io.StringIO()
        self.writer = csv.writer(self.buf)
        self.fsync_every_s, self.flush_every_s = fsync_every_s, flush_every_s
        self.on_header = on_header
        self.last_sync = self.last_flush = time.monotonic()
        self.pending = 0
        self.warned = False

    def _emit(self) -> None:
        text = self.buf.getvalue()
        if not text:
            return
        self.buf.seek(0)
        self.buf.truncate()
        data = text.encode()
        self.file.write(data)
        self.file.flush()
        self.sums.write(_sum_line(_split(data)[0]).encode())
        self.sums.flush()

    def write(self, records: Sequence[dict]) -> int:
        if not records:
            return 0
        if not self.header:
            self.header = list(records[0])
            self.header_t = tuple(self.header)
            self.writer.writerow(self.header)
            self._emit()
            if self.on_header is not None:
                self.on_header(list(self.header))
        writerow, header_t = self.writer.writerow, self.header_t
        for rec in records:
            if tuple(rec) == header_t:
                writerow(rec.values())
            else:
                if not self.warned and set(rec) - set(self.header):
                    self.warned = True
                    sys.stderr.write(f"warning: record fields {sorted(set(rec) - set(self.header))} are not in "
                                     f"{self.path.name}'s header and are not saved\n")
                writerow([rec.get(c) for c in self.header])
        self.pending += len(records)
        now = time.monotonic()
        if now - self.last_flush >= self.flush_every_s:
            return self.flush(now)
        return 0

    def flush(self, now: Optional[float] = None) -> int:
        now = time.monotonic() if now is None else now
        self._emit()
        self.last_flush = now
        if now - self.last_sync >= self.fsync_every_s:
            os.fsync(self.file.fileno())
            os.fsync(self.sums.fileno())
            self.last_sync = now
        done, self.pending = self.pending, 0
        return done

    def close(self) -> int:
        if self.file.closed:
            return 0
        done = self.flush()
        for f in (self.file, self.sums):
            os.fsync(f.fileno())
            f.close()
        return done


@dataclass
class Recovered:
    """What :func:`recover_records` found: the header, the kept rows' ids, and whether the
    file must be rewritten (:meth:`commit`) before more records are appended."""
    path: Path
    header: List[str] = field(default_factory=list)
    ids: List[int] = field(default_factory=list)
    lines: List[bytes] = field(default_factory=list)      # kept rows, as they were on disk (no \n)
    notes: List[str] = field(default_factory=list)
    rewrite: bool = False
    header_line: bytes = b""

    def commit(self) -> None:
        """Rewrite the file to the kept rows (when anything was dropped, repaired or left
        without a checksum) and say what was done."""
        for text in self.notes:
            note(text)
        if self.rewrite:
            data = b"".join(line + b"\n" for line in [self.header_line] + self.lines) if self.header else b""
            write_records_file(self.path, data.decode())
        elif self.path.exists() and not sums_path(self.path).exists():
            write_sums(self.path)


def _parse_sums(path: Path) -> Optional[List[Tuple[int, int]]]:
    """The blocks ``(lines, crc)`` of a sums file: ``None`` when there is none (an older
    pipslab wrote the records); ``[]`` when it is damaged from its first line; a line that
    does not parse ends the list (what follows is unverified)."""
    try:
        text = path.read_bytes().decode("ascii", errors="replace")
    except FileNotFoundError:
        return None
    except OSError:
        return []
    lines = text.split("\n")
    if lines[0].strip() != _SUMS_MAGIC:
        return []
    out = []
    for line in lines[1:]:
        parts = line.split()
        if len(parts) != 2:
            break
        try:
            n, crc = int(parts[0]), int(parts[1], 16)
        except ValueError:
            break
        if n < 1:
            break
        out.append((n, crc))
    return out


def recover_records(path: Path, key: str = "game_id", columns: Optional[Sequence[str]] = None,
                    check_row: Optional[Callable[[dict], Optional[str]]] = None, what: str = "games",
                    required: Sequence[str] = ()) -> Recovered:
    """Read a records file back for ``--resume``, trusting nothing: see the module
    docstring.  ``columns``: the header the manifest recorded (restores a damaged one);
    ``required``: columns a header must have when the manifest records none;
    ``check_row(row) -> problem or None``: a further check of rows no checksum covers.
    Refuses (PipslabError) what cannot be repaired; writes nothing (see
    :meth:`Recovered.commit`)."""
    rec = Recovered(Path(path))
    path = rec.path
    name = path.name
    if not path.exists() and not path.is_symlink():
        with contextlib.suppress(FileNotFoundError):
            sums_path(path).unlink()
        return rec
    if not path.is_file():
        raise PipslabError(f"--resume: {path} is not a file (a folder?); move it away or use another --out")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise PipslabError(f"--resume: cannot read {path}: {exc.strerror or exc}") from None
    lines, torn = _split(data)
    if torn:                      # a torn last line (killed mid-write): cut off, played again
        rec.rewrite = True
    if not lines:                 # not even a whole header: a run killed at its very start
        rec.rewrite = True
        return rec

    # which lines a checksum vouches for: True (it matches), False (it does not), None (none covers it)
    sums = _parse_sums(sums_path(path))
    status: List[Optional[bool]] = [None] * len(lines)
    block_of: List[int] = [-1] * len(lines)
    used = 0
    at = 0
    for b, (n, crc) in enumerate(sums or ()):
        if at + n > len(lines):
            break
        ok = _crc(lines[at:at + n]) == crc
        status[at:at + n] = [ok] * n
        block_of[at:at + n] = [b] * n
        at += n
        used += 1

    # header
    header_line = lines[0]
    head_ok = status[0]
    try:
        header = next(csv.reader([header_line.rstrip(b"\r").decode()]))
    except (UnicodeDecodeError, csv.Error, StopIteration):
        header = []
    expected = list(columns) if columns else None
    good_shape = bool(header) and key in header and len(set(header)) == len(header) and all(
        re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", c) for c in header) and set(required) <= set(header)
    if expected is not None:
        if header != expected:
            if head_ok is True:
                raise PipslabError(f"--resume: {name}'s columns differ from those {MANIFEST} records; the folder "
                                   "holds files of two runs: start again without --resume or use another --out")
            rec.notes.append(f"{path}: the header was damaged; restored it from {MANIFEST}")
            header = expected
            header_line = (",".join(expected) + "\r").encode()
            rec.rewrite = True
    elif head_ok is False or not good_shape:
        raise PipslabError(f"--resume: {name}'s header is damaged and {MANIFEST} does not record the columns; "
                           "start again without --resume or use another --out")
    if head_ok is False:
        rec.rewrite = True    # the header is right (it is the manifest's): its checksum is not
    rec.header, rec.header_line = header, header_line
    k = header.index(key)
    width = len(header)

    # rows
    damaged_rows, damaged_blocks, bad_rows, repeats, unverified = 0, set(), [], 0, 0
    seen = set()
    for j in range(1, len(lines)):
        line, ok = lines[j], status[j]
        if ok is False:
            damaged_rows += 1
            damaged_blocks.add(block_of[j])
            rec.rewrite = True
            continue
        problem = None
        try:
            row = next(csv.reader([line.rstrip(b"\r").decode()]))
        except (UnicodeDecodeError, csv.Error, StopIteration):
            row, problem = None, "not readable"
        if row is not None:
            if len(row) != width:
                problem = f"{len(row)} fields, not {width}"
            elif not re.fullmatch(r"[0-9]+", row[k]):
                problem = f"{key} {row[k]!r}"
            elif ok is None and check_row is not None:
                problem = check_row(dict(zip(header, row)))
        if problem is not None:
            bad_rows.append(problem)
            rec.rewrite = True
            continue
        i = int(row[k])
        if i in seen:
            repeats += 1
            rec.rewrite = True
            continue
        unverified += ok is None
        seen.add(i)
        rec.ids.append(i)
        rec.lines.append(line)
    if damaged_rows:
        rec.notes.append(f"{path}: {damaged_rows} row{'s' if damaged_rows != 1 else ''} in {len(damaged_blocks)} "
                         f"block{'s' if len(damaged_blocks) != 1 else ''} failed {name}{SUMS_SUFFIX}'s checksums; "
                         f"dropped them, those {what} are played again")
    if bad_rows:
        rec.notes.append(f"{path}: dropped {len(bad_rows)} damaged row{'s' if len(bad_rows) != 1 else ''} "
                         f"({bad_rows[0]}{', …' if len(bad_rows) > 1 else ''}); those {what} are played again")
    if repeats:
        rec.notes.append(f"{path}: dropped {repeats} repeated {key}{'s' if repeats != 1 else ''} (a second writer?)")
    if sums is None and rec.ids:
        rec.notes.append(f"{path}: no {name}{SUMS_SUFFIX} (an older pipslab wrote it): its rows were checked "
                         "against the plan only")
    elif sums == [] and rec.ids:
        rec.notes.append(f"{path}: {name}{SUMS_SUFFIX} is damaged: the rows were checked against the plan only")
    if unverified or sums is None or used != len(sums):
        rec.rewrite = True    # the kept rows get checksums again
    return rec


__all__ = ["Run", "RunLock", "RunInterrupted", "RecordLog", "Recovered", "recover_records", "write_records_file",
           "write_sums", "sums_path", "check_int", "check_seed", "check_out", "load_config", "read_manifest",
           "provenance", "note", "Kind", "INT", "FLOAT", "STR", "BOOL", "TABLE", "STRINGS", "STRING_LIST",
           "kind_of_type", "MANIFEST", "LOCK", "MAX_SEED"]
