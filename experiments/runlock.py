"""``FOLDER/.lock``: one run at a time in an output folder (:class:`RunLock`).

The lock is held with ``flock`` (the kernel drops it when its process dies, however it
dies) and names its owner (pid, host, start, command), so a second run on the folder is
refused in one line naming the process that holds it, and a lock left by a killed run is
taken over (:class:`pipslab.experiments.runner.Run` says so in a note).
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import socket
from pathlib import Path
from typing import Dict, Optional, Tuple

from pipslab.envs.errors import PipslabError

from .executors import process_alive

LOCK = ".lock"
_HELD: Dict[int, int] = {}          # lock fd -> the pid that took it

__all__ = ["RunLock", "LOCK", "timestamp"]


def timestamp() -> str:
    """Now, as the lock and the manifest record it (ISO 8601 with the local offset)."""
    return _dt.datetime.now().astimezone().isoformat(timespec="seconds")


def _after_fork_in_child() -> None:
    # a forked worker must not keep its parent's lock alive
    for fd in list(_HELD):
        with contextlib.suppress(OSError):
            os.close(fd)
    _HELD.clear()


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
                     "started": timestamp(), "command": command}
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
