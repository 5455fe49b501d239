"""Where the games of a tournament run: the executor seam.

An executor takes a :class:`~experiments.seedplan.Task` and chunks of game ids and yields
lists of records as chunks finish (in any order; the harness sorts by ``game_id``).  Every
backend plays a game by id through the same :class:`~experiments.seedplan.GameRunner`, with
agents built afresh for that game, so the records are the same whichever backend or number
of workers played them, and in whatever order (only ``duration_s`` differs).

* ``serial``  — in this process (``--workers 1``);
* ``process`` — a pool of worker processes on this machine (``--workers N``); workers build
  each game's agents from the spec strings and ignore Ctrl-C (the parent handles it);
* ``ray``     — the same chunks as Ray tasks (``--backend ray``; ``pip install pipslab[ray]``):
  a local Ray instance by default, or the cluster named by ``RAY_ADDRESS``.
"""
from __future__ import annotations

import os
import signal
from typing import Iterable, Iterator, List, Sequence

from pipslab.envs.errors import PipslabError

from .seedplan import GameRunner, Task

BACKENDS = ("process", "ray")


def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def chunked(ids: Sequence[int], size: int) -> List[List[int]]:
    size = max(1, size)
    return [list(ids[k:k + size]) for k in range(0, len(ids), size)]


class SerialExecutor:
    name = "serial"

    def __init__(self, task: Task):
        self.runner = GameRunner(task)

    def run(self, chunks: Iterable[Sequence[int]], batch_s: float = 0.02) -> Iterator[List[dict]]:
        """Yields the records of the games finished in each ``batch_s`` (at least one game)."""
        import time
        record, clock = self.runner.record, time.monotonic
        batch: List[dict] = []
        last = clock()
        for chunk in chunks:
            for game_id in chunk:
                batch.append(record(game_id))
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
_RUNNER: GameRunner | None = None


def _init_worker(task: Task) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the parent's to handle
    global _RUNNER
    _RUNNER = GameRunner(task)


def _play_chunk(ids: Sequence[int]) -> List[dict]:
    return _RUNNER.records(ids)


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

    def __init__(self, task: Task, workers: int):
        import multiprocessing as mp
        import sys
        self.pool = mp.get_context(start_method(sys.modules)).Pool(workers, initializer=_init_worker,
                                                                   initargs=(task,))

    def run(self, chunks: Iterable[Sequence[int]]) -> Iterator[List[dict]]:
        yield from self.pool.imap_unordered(_play_chunk, list(chunks))

    def terminate(self) -> None:
        self.pool.terminate()

    def close(self) -> None:
        self.pool.terminate()
        self.pool.join()


# ------------------------------------------------------------------ Ray
class RayExecutor:
    """Chunks as Ray tasks.  Each Ray worker process keeps one GameRunner per task (it
    holds the plan, not agents: every game gets fresh ones)."""

    name = "ray"

    def __init__(self, task: Task, workers: int):
        try:
            import ray
        except ImportError:
            raise PipslabError("--backend ray needs Ray: pip install 'pipslab[ray]'") from None
        self.ray = ray
        self._started = False
        if not ray.is_initialized():
            kwargs = dict(include_dashboard=False, logging_level="ERROR", log_to_driver=False)
            if not os.environ.get("RAY_ADDRESS"):
                kwargs["num_cpus"] = workers
            ray.init(**kwargs)
            self._started = True
        self.task = task
        self.workers = workers
        self.remote = ray.remote(_ray_play_chunk)
        self.pending: list = []

    def run(self, chunks: Iterable[Sequence[int]]) -> Iterator[List[dict]]:
        ray = self.ray
        task_ref = ray.put(self.task)
        queue = list(chunks)
        queue.reverse()
        limit = max(2, 2 * self.workers)   # keep a bounded number of chunks in flight
        while queue or self.pending:
            while queue and len(self.pending) < limit:
                self.pending.append(self.remote.remote(task_ref, queue.pop()))
            done, self.pending = ray.wait(self.pending, num_returns=1)
            for ref in done:
                yield ray.get(ref)

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


_RAY_RUNNERS: dict = {}


def _ray_play_chunk(task: Task, ids: Sequence[int]) -> List[dict]:
    runner = _RAY_RUNNERS.get(task)
    if runner is None:
        runner = _RAY_RUNNERS[task] = GameRunner(task)
    return runner.records(ids)


def make_executor(task: Task, workers: int, backend: str = "process"):
    if backend not in BACKENDS:
        raise PipslabError(f"unknown backend {backend!r}; expected {' or '.join(BACKENDS)}")
    if workers < 1:
        raise PipslabError(f"--workers must be at least 1, got {workers}")
    if backend == "ray":
        return RayExecutor(task, workers)
    if workers == 1:
        return SerialExecutor(task)
    return ProcessExecutor(task, workers)
