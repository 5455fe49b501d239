"""Result files are written atomically: to a temporary name beside the target, flushed
and fsynced, then renamed over it, so a crash or Ctrl-C never leaves half a file.

:func:`atomic_path` is the general form, for writers that want a path (``torch.save``,
``np.savez``, ``fig.savefig``)::

    with atomic_path(out / "checkpoint.pt") as tmp:
        torch.save(state, tmp)
"""
from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path


def fsync_dir(folder) -> None:
    """Make a rename in ``folder`` durable (best effort: not every OS opens folders)."""
    try:
        fd = os.open(str(folder), os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_path(path, suffix: str = ""):
    """Yields a temporary path beside ``path`` (``NAME.tmp`` + ``suffix``, for writers that
    insist on an extension); when the block ends without an exception the file is fsynced
    and renamed over ``path``; otherwise it is removed and ``path`` is left as it was."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp" + suffix)
    try:
        yield tmp
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(path.parent)


def atomic_write_bytes(path, data: bytes) -> None:
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as f:
            f.write(data)


def atomic_write_text(path, text: str) -> None:
    atomic_write_bytes(path, text.encode())


def atomic_write_json(path, obj) -> None:
    atomic_write_text(path, json.dumps(obj, indent=2) + "\n")
