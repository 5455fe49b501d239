"""``--import MODULE``: load a module that registers agents, evaluators or games before a
command uses them (``pipslab play``, ``pipslab tournament`` and its workers, ``--replay``).

``MODULE`` is a module name — found on ``sys.path`` or, failing that, in the current
folder, as ``python -m`` would find it (the ``pipslab`` console script's ``sys.path`` does
not hold the current folder) — or the path of a ``.py`` file (``experiments/my_agents.py``,
``./ppo.py``), loaded under its file name.  A path is made absolute when the command
starts (:func:`import_spec`), so the run's records, its workers and a later ``--resume`` or
``--replay`` from another folder load the same file.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import Iterable, List

from pipslab.envs.errors import PipslabError, excerpt

__all__ = ["import_spec", "import_specs", "import_user_module", "import_user_modules"]


def _is_path(text: str) -> bool:
    return text.endswith(".py") or "/" in text or os.sep in text


def import_spec(text: str) -> str:
    """``text`` as it is recorded: a module name unchanged, a ``.py`` path made absolute
    (and checked: a missing file is one line)."""
    if not isinstance(text, str) or not text.strip():
        raise PipslabError(f"--import takes a module name or a .py file, got {excerpt(text)}")
    text = text.strip()
    if not _is_path(text):
        return text
    path = Path(text).expanduser()
    if path.suffix != ".py":
        raise PipslabError(f"--import {text}: a file to import must be a .py file")
    if not path.is_file():
        raise PipslabError(f"--import {text}: no such file")
    return str(path.resolve())


def import_specs(texts: Iterable[str]) -> List[str]:
    return [import_spec(t) for t in texts or ()]


def _load_file(path: Path):
    name = path.stem
    if not name.isidentifier():
        raise PipslabError(f"--import {path}: the file name is not a Python module name")
    loaded = sys.modules.get(name)
    if loaded is not None:
        if getattr(loaded, "__file__", None) and Path(loaded.__file__).resolve() == path:
            return loaded
        raise PipslabError(f"--import {path}: a different module named {name!r} is already loaded; rename the file")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise PipslabError(f"--import {path}: cannot be loaded as a module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def import_user_module(text: str):
    """Import one ``--import`` value (module docstring); an import error is one line."""
    spec = import_spec(text)
    try:
        if _is_path(spec):
            return _load_file(Path(spec))
        try:
            return importlib.import_module(spec)
        except ModuleNotFoundError as exc:
            top = spec.partition(".")[0]
            here = os.getcwd()
            if exc.name != top or here in sys.path or "" in sys.path:
                raise
            sys.path.append(here)      # after the installed packages: a stray file cannot shadow them
            return importlib.import_module(spec)
    except ImportError as exc:
        raise PipslabError(f"cannot import {text!r}: {exc}") from None


def import_user_modules(texts: Iterable[str]) -> None:
    for text in texts or ():
        import_user_module(text)
