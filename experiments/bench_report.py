"""What every benchmark of ``pipslab bench`` shares: :func:`report` (print the table, write
the JSON, print it with ``--json``) and :func:`rate` (calls per second of one loop).  Its
own module, imported by ``bench`` and every ``bench_*`` one, so that none of them imports
another for these."""
from __future__ import annotations

import time

from .checks import writing_out
from .files import atomic_write_json


def report(args, result: dict, table: str, filename: str) -> int:
    """Print ``table``; write ``result`` to ``--out/filename``; with ``--json`` print it as
    one JSON object on the last line."""
    import json
    from pathlib import Path
    print(table)
    if args.out:
        out = Path(args.out)
        with writing_out(out):
            out.mkdir(parents=True, exist_ok=True)
            atomic_write_json(out / filename, result)
    if args.json:
        print(json.dumps(result))
    return 0


def rate(play_one, seconds: float) -> float:
    """Calls of ``play_one`` per second over ``seconds`` (one call first, off the clock, to
    warm caches)."""
    play_one()                                   # warm caches outside the clock
    n = 0
    t0 = time.perf_counter()
    while True:
        play_one()
        n += 1
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds:
            return n / elapsed
