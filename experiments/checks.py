"""Checks of the command line's values, shared by the subcommands.

Each ``*_arg`` is an ``argparse`` ``type=``: a bad value is refused while the flags are
parsed, as one line (``pipslab play: error: argument --seed: …``) and exit status 2,
before anything runs.  :func:`check_int`, :func:`check_seed` and :func:`check_out` check
the same values when they come from a config file or the Python API (no floats, no
true/false for a number).

:func:`check_out_dir` refuses an ``--out`` that cannot become a folder (empty, an
existing file, under a file, in a place that cannot be written) *before* the run starts,
without creating anything; :func:`writing_out` turns an error met while writing there
later into one line.
"""
from __future__ import annotations

import argparse
import contextlib
import math
import numbers
import os
import tempfile
from pathlib import Path
from typing import Optional

from pipslab.envs.errors import PipslabError, excerpt

__all__ = ["seed_arg", "count_arg", "share_arg", "seconds_arg", "out_arg", "check_out_dir", "writing_out",
           "check_int", "check_seed", "check_out", "kind_of", "MAX_SEED"]

MAX_SEED = 2 ** 63 - 1


def _whole(text: str) -> int:
    s = str(text).strip()
    if not s.lstrip("+-").isascii() or not s.lstrip("+-").isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number, got {excerpt(text)}")
    try:
        return int(s, 10)
    except ValueError:   # more digits than Python converts
        raise argparse.ArgumentTypeError(f"expected a whole number, got {excerpt(text)}") from None


def seed_arg(text: str) -> int:
    """A seed: a whole number, 0 or more."""
    value = _whole(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"a seed is 0 or more, got {value}")
    return value


def count_arg(minimum: int = 1):
    """A whole number of at least ``minimum``."""

    def parse(text: str) -> int:
        value = _whole(text)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    parse.__name__ = "count"
    return parse


def _number(text: str, expected: str) -> float:
    try:
        return float(str(text).strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {excerpt(text)}") from None


def share_arg(text: str) -> float:
    """A share: a number from 0 to 1."""
    value = _number(text, "a share between 0 and 1")
    if not 0.0 <= value <= 1.0:   # nan fails this too
        raise argparse.ArgumentTypeError(f"expected a share between 0 and 1, got {excerpt(text)}")
    return value


def seconds_arg(text: str) -> float:
    """A positive, finite number of seconds."""
    value = _number(text, "a number of seconds")
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"the seconds must be a positive, finite number, got {excerpt(text)}")
    return value


def out_arg(text: str) -> str:
    """A folder name: not empty."""
    if not text.strip():
        raise argparse.ArgumentTypeError("the folder name is empty: give a folder, e.g. --out results/run1")
    if "\0" in text:
        raise argparse.ArgumentTypeError("the folder name holds a NUL character")
    return text


def check_out_dir(out, flag: str = "--out") -> Path:
    """``out`` as a Path, once it is known that the folder exists or can be made there:
    refused (one line) when it is empty, an existing file, below a file, or in a folder
    that cannot be written.  Creates nothing (the check makes and removes a probe folder
    in the nearest existing folder when ``out`` does not exist yet)."""
    text = str(out)
    if not text.strip():
        raise PipslabError(f"{flag} is empty: give a folder")
    path = Path(text)
    shown = excerpt(text)
    probe_in = None
    for folder in (path, *path.parents):
        try:
            exists = folder.exists() or folder.is_symlink()
        except OSError as exc:
            raise PipslabError(f"{flag} {shown}: cannot look at {excerpt(str(folder))} ({exc.strerror})") from None
        if not exists:
            continue
        if not folder.is_dir():
            if folder == path:
                raise PipslabError(f"{flag} {shown} is a file, not a folder")
            raise PipslabError(f"{flag} {shown}: {excerpt(str(folder))} is a file, so no folder can be made "
                               "below it")
        probe_in = folder
        break
    if probe_in is None:   # a relative path whose every part is missing: the working folder
        probe_in = Path(".")
    try:
        probe = tempfile.mkdtemp(prefix=".pipslab-probe-", dir=probe_in)
    except OSError as exc:
        where = "" if probe_in == path else f": cannot make folders in {excerpt(str(probe_in))}"
        raise PipslabError(f"{flag} {shown} cannot be written{where} ({exc.strerror or exc})") from None
    with contextlib.suppress(OSError):
        os.rmdir(probe)
    return path


@contextlib.contextmanager
def writing_out(out, flag: str = "--out"):
    """Turns an ``OSError`` met while writing results into ``out`` into one line."""
    try:
        yield
    except OSError as exc:
        raise PipslabError(f"cannot write the results to {flag} {excerpt(str(out))}: "
                           f"{exc.strerror or exc}") from None


def kind_of(value) -> str:
    """What a value is, for a message: ``an integer``, ``true/false``, ``a table`` …"""
    if isinstance(value, bool):
        return "true/false"
    return {int: "an integer", float: "a float", str: "a string", list: "a list", dict: "a table"}.get(
        type(value), type(value).__name__)


def check_int(name: str, value, low: Optional[int] = None, high: Optional[int] = None) -> int:
    """``value`` as an int within ``[low, high]``, or one line naming ``name``.  Floats,
    strings and true/false are refused (a config's ``games = 10.5`` is not ten games)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise PipslabError(f"{name} must be a whole number, got {kind_of(value)} {excerpt(value)}")
    value = int(value)
    if low is not None and value < low:
        raise PipslabError(f"{name} must be at least {low:,}, got {value:,}")
    if high is not None and value > high:
        raise PipslabError(f"{name} must be at most {high:,}, got {value:,}")
    return value


def check_seed(value, name: str = "--seed") -> int:
    return check_int(name, value, 0, MAX_SEED)


def check_out(out, flag: str = "--out") -> Path:
    """:func:`check_out_dir` of a value that may be None or hold a NUL character (a config
    file's, the API's)."""
    text = "" if out is None else str(out)
    if "\0" in text:
        raise PipslabError(f"{flag} holds a NUL character")
    return check_out_dir(text, flag)
