"""What the subcommands share to read their arguments: agent lists (:func:`split_agent_list`),
the games' option flags (``--mode``, ``--players`` … and ``--option KEY=VALUE``) and TOML
config files whose keys and types are checked (:func:`load_config`)."""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

from pipslab import interrupts
from pipslab.envs.errors import PipslabError, excerpt
from pipslab.envs.game import GAMES

from .checks import kind_of

__all__ = ["split_agent_list", "add_option_flags", "flag_options_given", "parse_option_items", "Kind", "INT",
           "FLOAT", "STR", "BOOL", "TABLE", "STRINGS", "STRING_LIST", "kind_of_type", "load_config"]


# ------------------------------------------------------------------ agent lists
def split_agent_list(text: str) -> List[str]:
    """``"pimc:samples=50,time=1,random"`` -> ``["pimc:samples=50,time=1", "random"]``.  A
    ``key=value`` token continues the agent before it, its value may hold a colon
    (``expectimax:plies=1,eval=rollout:4,pubeval`` is two agents); ``name:key=value``
    starts a new one."""
    specs: List[str] = []
    for tok in (t.strip() for t in text.split(",")):
        if not tok:
            raise PipslabError(f"empty agent name in {text!r}")
        eq, colon = tok.find("="), tok.find(":")
        if eq > 0 and (colon < 0 or eq < colon) and specs and ":" in specs[-1]:
            specs[-1] += "," + tok
        else:
            specs.append(tok)
    return specs


# ------------------------------------------------------------------ option flags of the CLI
def add_option_flags(parser) -> List[str]:
    """``--NAME`` for every option a registered game marks ``flag`` (``--mode``, ``--players``,
    ``--pairs``, ``--match`` for the built-in games): a switch for a true/false option, else a
    typed value (with the allowed values when every game with that option lists them).
    Given or not is told by ``None``; each game checks its own options when the run starts.
    Returns the flags' names."""
    import argparse
    added = []
    for name, entries in GAMES.flag_options().items():
        opt = entries[0][1]
        games = ", ".join(g for g, _ in entries)
        texts = []
        for _, o in entries:
            text = o.describe()
            if text not in texts:
                texts.append(text)
        help_text = f"{games}: {'; '.join(texts)}"
        kwargs: dict = dict(default=None, dest=name, help=help_text.replace("%", "%%"))
        if opt.type is bool:
            kwargs["action"] = "store_true"
        else:
            kwargs["type"] = opt.type
            if all(o.choices is not None for _, o in entries):
                kwargs["choices"] = list(dict.fromkeys(c for _, o in entries for c in o.choices))
            else:
                kwargs["metavar"] = name.upper()
        try:
            parser.add_argument(f"--{name.replace('_', '-')}", **kwargs)
        except argparse.ArgumentError:   # the command has its own flag of that name
            continue
        added.append(name)
    return added


def flag_options_given(ns, config: Optional[dict] = None) -> Dict[str, object]:
    """The game options given with ``--NAME`` flags (or, failing that, a config file's
    ``NAME = …`` keys), each checked by the option's type (the first game's that has it)."""
    out: Dict[str, object] = {}
    for name, entries in GAMES.flag_options().items():
        value = getattr(ns, name, None)
        if value is None and config:
            value = config.get(name)
        if value is not None:
            out[name] = entries[0][1].validate(value)
    return out


def parse_option_items(items) -> Dict[str, object]:
    """``["gammons=false", "players=3"]`` (``--option KEY=VALUE``) -> ``{"gammons": False, "players": 3}``."""
    from pipslab.agents.registry import parse_value
    out: Dict[str, object] = {}
    for item in items or []:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise PipslabError(f"bad --option {excerpt(item)}: expected KEY=VALUE")
        out[key.strip()] = parse_value(value.strip())
    return out


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
            raise PipslabError(f"{path}: [{section}] must be a table, got {kind_of(data[section])}")
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
            raise PipslabError(f"{path}: {key} must be {kind.what}, got {kind_of(value)} {excerpt(value)}")
    return data


# ------------------------------------------------------------------ entry points
def _quiet_stdout() -> None:
    """stdout's reader went away (``pipslab … | head``): send what is left to /dev/null, so
    neither the rest of the output nor Python's flush at exit raises again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def guarded(prog: str, body) -> int:
    """``body()``'s exit status, every way it can end an exit status and at most one line
    on stderr, prefixed ``prog``: a user error (PipslabError) 2, Ctrl-C (also while
    modules load) 130, a closed stdout pipe 141 (as a process killed by SIGPIPE) — never
    a traceback for these.  The ``pipslab`` command and the ``python -m`` tools share it."""
    try:
        try:
            code = int(body() or 0)
            sys.stdout.flush()
            return code
        except PipslabError as exc:
            sys.stdout.flush()
            sys.stderr.write(f"{prog}: error: {exc}\n")
            return 2
        except KeyboardInterrupt:
            sys.stderr.write(f"{prog}: interrupted\n")
            return 130
        except Exception:
            if not interrupts.noted():   # Ctrl-C inside a compiled module's import surfaces as another error
                raise
            sys.stderr.write(f"{prog}: interrupted\n")
            return 130
    except BrokenPipeError:
        _quiet_stdout()
        return 141
    except KeyboardInterrupt:   # a second Ctrl-C while the first was being reported
        return 130
