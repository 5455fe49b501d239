"""Result files are written atomically: to a temporary name beside the target, flushed
and fsynced, then renamed over it, so a crash or Ctrl-C never leaves half a file."""
from __future__ import annotations

import json
import os
from pathlib import Path


def atomic_write_text(path, text: str) -> None:
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def atomic_write_json(path, obj) -> None:
    atomic_write_text(path, json.dumps(obj, indent=2) + "\n")
