"""Network files: where shipped nets live and how a file is read safely (torch).

A net file is ``torch.save`` of a plain dict with a ``format`` tag, a ``config`` table and a
``model`` state dict (plus free ``meta`` and, in training checkpoints, the trainer's
keys).  It is read with ``torch.load(..., weights_only=True)`` — never an arbitrary
pickle — and checked for shape, so a damaged or foreign file is refused with one line
(:class:`~pipslab.envs.errors.PipslabError`), never half-loaded.  Shipped nets are
package data: ``agents/nets/NAME.pt`` with a model card ``NAME.md`` beside it.  torch is
imported only when a file is read, so the agents' registration (:mod:`pipslab.agents.neural`)
reads the names here without it.
"""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Callable, Dict, Tuple

from pipslab.envs.errors import PipslabError

NETS_DIR = Path(__file__).resolve().parent / "nets"
DEFAULT_NET = "backgammon"     # the shipped backgammon net: agents/nets/backgammon.pt


def net_path(name_or_path: str) -> Path:
    """A shipped net's file for a bare name, else the path as given."""
    text = str(name_or_path)
    if "/" in text or text.endswith(".pt") or Path(text).exists():
        return Path(text)
    return NETS_DIR / f"{text}.pt"


def shipped_nets() -> list:
    """The names of every shipped net (both games' families)."""
    return sorted(p.stem for p in NETS_DIR.glob("*.pt"))


def read_net_file(path: Path, fmt: str, what: str, known: str = "") -> dict:
    """The dict in a net or checkpoint file of format ``fmt`` (``what`` names it in
    errors; ``known`` lists the shipped names for the "no such file" message)."""
    path = Path(path)
    if not path.is_file():
        raise PipslabError(f"no network file {str(path)!r} (shipped nets: {known or 'none'})")
    import torch
    try:
        with warnings.catch_warnings():   # torch warns before refusing a foreign pickle
            warnings.simplefilter("ignore")
            data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many kinds for a damaged file
        raise PipslabError(f"{path}: not a readable network file ({type(exc).__name__})") from None
    if not isinstance(data, dict) or data.get("format") != fmt:
        raise PipslabError(f"{path}: not a pipslab {what} (format {fmt!r} expected)")
    for key in ("config", "model"):
        if not isinstance(data.get(key), dict):
            raise PipslabError(f"{path}: the network file has no {key!r} table")
    return data


_CACHE: Dict[Tuple[str, str, float], Any] = {}


def load_cached(kind: str, name_or_path: str, build: Callable[[Path], Any]):
    """``build(path)`` of a shipped name or a file, once per process, keyed by the file
    and its modification time (a checkpoint that changes is read again).  What is cached
    is used read-only: agents never train it, so sharing it keeps games independent."""
    path = net_path(name_or_path)
    try:
        key = (kind, str(path.resolve()), path.stat().st_mtime)
    except OSError:
        key = None
    if key is not None and key in _CACHE:
        return _CACHE[key]
    value = build(path)
    if key is not None:
        _CACHE[key] = value
    return value
