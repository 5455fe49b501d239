"""Where an experiment's work runs: the executor seam of :mod:`pipslab.experiments.runner`.

An executor takes a *job* and an iterable of work items and yields lists of results as
items finish (in any order: the experiment orders them).  A job is a picklable object
with ``__call__(item) -> result`` and, optionally, ``setup()`` (called once in each
process before its first item: build what every item needs).  The tournament's job plays
chunks of game ids (:class:`pipslab.experiments.tournament.PlayGames`), calibrate's plays
chunks of self-play games; the results are the same whichever backend or number of
workers ran them, because an item depends only on itself.

* ``serial``  — in this process (``--workers 1``); results come in batches of what
  finished in each ``batch_s``;
* ``process`` — a pool of worker processes on this machine (``--workers N``).  Workers
  are started with Ctrl-C ignored (the parent handles it: the terminal sends it to the
  whole process group) and watch the process that started them: when it is gone — a
  SIGKILL leaves no chance to clean up — they exit within a quarter of a second instead
  of lingering;
* ``ray``     — the same items as Ray tasks (``--backend ray``; ``pip install pipslab[ray]``):
  a local Ray instance by default, or the cluster named by ``RAY_ADDRESS``.
"""
from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any, Dict, Iterable, Iterator, List

from pipslab.envs.errors import PipslabError

BACKENDS = ("process", "ray")


def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def chunked(ids: Iterable[int], size: int) -> Iterator[List[int]]:
    """``ids`` in lists of ``size`` (the last may be shorter), lazily."""
    size = max(1, size)
    chunk: List[int] = []
    for i in ids:
        chunk.append(i)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def check_backend(backend: str, workers: int) -> None:
    """Refuse, in one line and before anything is written, a backend that cannot run."""
    if backend not in BACKENDS:
        raise PipslabError(f"unknown backend {backend!r}; expected {' or '.join(BACKENDS)}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise PipslabError(f"--workers must be at least 1, got {workers!r}")
    if backend == "ray":
        try:
            import ray  # noqa: F401  (only whether it imports)
        except ImportError:
            raise PipslabError("--backend ray needs Ray: pip install 'pipslab[ray]'") from None


def _setup(job) -> None:
    setup = getattr(job, "setup", None)
    if setup is not None:
        setup()


class SerialExecutor:
    name = "serial"

    def __init__(self, job):
        self.job = job
        _setup(job)

    def run(self, items: Iterable[Any], batch_s: float = 0.02) -> Iterator[List[Any]]:
        """Yields the results finished in each ``batch_s`` (at least one).  When an item
        raises (Ctrl-C), the results finished before it are yielded first."""
        job, clock = self.job, time.monotonic
        batch: List[Any] = []
        last = clock()
        for item in items:
            try:
                result = job(item)
            except BaseException:
                if batch:
                    done, batch = batch, []
                    yield done
                raise
            batch.append(result)
            now = clock()
            if now - last >= batch_s:
                yield batch
                batch, last = [], now
        if batch:
            yield batch

    def terminate(self) -> None:
        pass

    def close(self) -> None:
        pass


# ------------------------------------------------------------------ worker processes
_JOB: Any = None


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie — dead, not yet reaped — does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        return stat[stat.rfind(b")") + 2:][:1] not in (b"Z", b"X")
    except OSError:
        return True


def _watch_owner(owner: int, every_s: float = 0.25) -> None:
    """A thread that ends this process when ``owner`` is gone."""
    forked = os.getppid() == owner     # forked by the owner: the parent changes the moment it dies

    def watch():
        while True:
            time.sleep(every_s)
            if (os.getppid() != owner) if forked else not process_alive(owner):
                os._exit(1)
    threading.Thread(target=watch, name="pipslab-owner-watch", daemon=True).start()


def worker_init(owner: int, job=None) -> None:
    """Start-up of every worker process: Ctrl-C is the parent's to handle, the parent's
    SIGTERM handling does not apply here, the worker exits when its owner is gone — all
    before the job is unpickled (``job`` may come as pickled bytes: importing what it
    needs can take seconds, and a worker must not outlive a killed owner meanwhile) —
    then the job is set up."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None:
            signal.signal(sig, signal.SIG_DFL)
    _watch_owner(owner)
    if isinstance(job, bytes):
        import pickle
        job = pickle.loads(job)
    global _JOB
    _JOB = job
    if job is not None:
        _setup(job)


def _call(item):
    return _JOB(item)


def start_method(loaded_modules) -> str:
    """``fork`` where the platform has it: workers start at once and inherit agents registered
    at run time.  Once torch is loaded a forked child can hang on its thread pools, so then
    ``forkserver`` (or ``spawn``): workers import ``--import`` modules and build their agents
    afresh from the spec strings."""
    import multiprocessing as mp
    methods = mp.get_all_start_methods()
    if "fork" in methods and "torch" not in loaded_modules:
        return "fork"
    return "forkserver" if "forkserver" in methods else "spawn"


class ProcessExecutor:
    name = "process"

    def __init__(self, job, workers: int):
        import multiprocessing as mp
        import pickle
        import sys
        ctx = mp.get_context(start_method(sys.modules))
        # Children started while SIGINT is ignored begin life ignoring it (fork copies the
        # disposition, exec keeps an ignored signal ignored, and Python then leaves it be),
        # so a Ctrl-C while they import cannot print a traceback from each of them.
        main = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
        try:
            self.pool = ctx.Pool(workers, initializer=worker_init, initargs=(os.getpid(), pickle.dumps(job)))
        finally:
            if main:
                signal.signal(signal.SIGINT, previous)

    def run(self, items: Iterable[Any]) -> Iterator[List[Any]]:
        for result in self.pool.imap_unordered(_call, items):
            yield [result]

    def terminate(self) -> None:
        self.pool.terminate()

    def close(self) -> None:
        self.pool.terminate()
        self.pool.join()


# ------------------------------------------------------------------ Ray
def start_ray(workers: int):
    """``(ray, started)``: the Ray already running in this process, the one of
    ``RAY_ADDRESS``, or a local one of ``workers`` CPUs — the one start-up of ``--backend
    ray`` for tournaments and trainers; a missing Ray, an unreachable address or a
    start-up that fails is one line."""
    try:
        import ray
    except ImportError:
        raise PipslabError("--backend ray needs Ray: pip install 'pipslab[ray]'") from None
    if ray.is_initialized():
        return ray, False
    address = os.environ.get("RAY_ADDRESS")
    if address and address not in ("auto", "local"):
        _check_reachable(address)
    kwargs: Dict[str, Any] = dict(include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    if not address:   # a Ray of its own: never attach to a cluster another process started here
        kwargs.update(address="local", num_cpus=workers)
    try:
        ray.init(**kwargs)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:   # noqa: BLE001 - ConnectionError, TimeoutError, RuntimeError, a failed node
        where = f"RAY_ADDRESS={address}" if address else "a local Ray"
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise PipslabError(f"--backend ray: could not start or reach {where}: {first[:200]}") from None
    return ray, True


def _check_reachable(address: str, timeout_s: float = 3.0) -> None:
    """A ``RAY_ADDRESS`` of ``[ray://]host:port`` answers a TCP connection within
    ``timeout_s`` — else one line now, not Ray's minutes of retries."""
    import socket
    hostport = address.split("://", 1)[-1].rstrip("/")
    host, _, port = hostport.rpartition(":")
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout_s):
            pass
    except ValueError:
        raise PipslabError(f"--backend ray: RAY_ADDRESS={address!r} is not host:port") from None
    except OSError as exc:
        raise PipslabError(f"--backend ray: RAY_ADDRESS={address} cannot be reached "
                           f"({exc.strerror or type(exc).__name__})") from None


class RayExecutor:
    """Items as Ray tasks.  Each Ray worker process sets a job up once and keeps it."""

    name = "ray"

    def __init__(self, job, workers: int):
        ray, self._started = start_ray(workers)
        self.ray = ray
        self.job = job
        self.workers = workers
        self.remote = ray.remote(_ray_call)
        self.pending: list = []

    def run(self, items: Iterable[Any]) -> Iterator[List[Any]]:
        ray = self.ray
        job_ref = ray.put(self.job)
        queue = iter(items)
        limit = max(2, 2 * self.workers)   # keep a bounded number of items in flight
        more = True
        while more or self.pending:
            while more and len(self.pending) < limit:
                item = next(queue, _END)
                if item is _END:
                    more = False
                    break
                self.pending.append(self.remote.remote(job_ref, item))
            if not self.pending:
                break
            done, self.pending = ray.wait(self.pending, num_returns=1)
            for ref in done:
                yield [ray.get(ref)]

    def terminate(self) -> None:
        for ref in self.pending:
            try:
                self.ray.cancel(ref, force=True)
            except Exception:  # noqa: BLE001 - best effort on the way out
                pass
        self.pending = []

    def close(self) -> None:
        self.terminate()
        if self._started:
            self.ray.shutdown()


_END = object()
_RAY_JOBS: dict = {}


def _ray_call(job, item):
    key = _job_key(job)
    ready = _RAY_JOBS.get(key)
    if ready is None:
        _setup(job)
        ready = _RAY_JOBS[key] = job
    return ready(item)


def _job_key(job):
    try:
        hash(job)
        return job
    except TypeError:
        return id(job)


def make_executor(job, workers: int, backend: str = "process"):
    check_backend(backend, workers)
    if backend == "ray":
        return RayExecutor(job, workers)
    if workers == 1:
        return SerialExecutor(job)
    return ProcessExecutor(job, workers)


def plan_chunks(remaining: int, workers: int, backend: str, serial_size: int | None = None,
                process_max: int = 50, ray_max: int = 500) -> int:
    """Items per chunk: big enough to keep overheads small, small enough that progress shows
    and every worker stays busy to the end."""
    if backend == "ray":
        return max(1, min(ray_max, remaining // (workers * 4)))
    if workers > 1:
        return max(1, min(process_max, remaining // (workers * 16)))
    return serial_size if serial_size is not None else max(1, remaining)


__all__ = ["BACKENDS", "default_workers", "chunked", "check_backend", "make_executor", "plan_chunks",
           "SerialExecutor", "ProcessExecutor", "RayExecutor", "worker_init", "process_alive", "start_method"]
