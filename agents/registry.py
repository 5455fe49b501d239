"""Agents by name: ``make_agent("pimc:samples=50", game="happy")``.

A spec is ``NAME`` or ``NAME:key=value,key=value``.  Every agent module registers its
factories here with :func:`register`; a factory is called as ``factory(game, **params)``.
The registry imports no agent module: the first lookup by name imports the catalogue
modules (:func:`add_catalogue`; the built-in agents are :mod:`pipslab.agents.builtin`).
Game names are those of :data:`pipslab.envs.GAMES`; which games an agent plays is resolved
at lookup time (:class:`Scope`): registered with ``games=None`` (``random``) it plays every
game there, with ``family="dominoes"`` every domino game, with ``when=`` (or a callable
``games=``) those its predicate on the Game takes — games registered later included.

Parameters are checked when the agent is built, against what it declares: the factory's
keyword arguments or, for a factory taking ``**params`` whose return annotation is a
class, that class's ``__init__``.  A value is read as the parameter's annotated type (or,
unannotated, its default's type): ``int`` takes whole numbers only, ``float`` finite
numbers, ``bool`` true/false, ``str`` the text as written, ``X | None`` also ``none``.  An
unknown name or a value of the wrong type is one line naming the agent, the parameter
and what it expects — before any game starts.  Parameters an agent does not declare
(``**params`` all the way down) are parsed as int, float, bool or text.
"""
from __future__ import annotations

import importlib
import inspect
import math
import re
import types
import typing
from typing import Any, Callable, Dict, List, Optional, Tuple

from pipslab.envs.errors import PipslabError, excerpt
from pipslab.envs.game import GAMES, get_game

from .base import Agent

Factory = Callable[..., Agent]


class Scope:
    """The games an agent plays, resolved at lookup time against :data:`GAMES` (so a game
    registered later, by ``--import``, is played by every agent whose scope takes it):
    ``games`` — these names (None: any); ``family`` — games of this family
    (``"dominoes"``); ``when`` — a predicate on the :class:`~pipslab.envs.game.Game`
    (``lambda g: g.solver_support() is None``).  All given must hold; none given: every
    game.  ``parts`` — a union of scopes (a name registered for disjoint games twice)."""

    __slots__ = ("games", "family", "when", "parts")

    def __init__(self, games=None, family: Optional[str] = None, when: Optional[Callable] = None, parts=()):
        self.games = None if games is None else frozenset(games)
        self.family, self.when, self.parts = family, when, tuple(parts)

    @property
    def everything(self) -> bool:
        return self.games is None and self.family is None and self.when is None and not self.parts

    def plays(self, game: str) -> bool:
        g = GAMES.get(game) if isinstance(game, str) else None
        if g is None:
            return False
        if self.parts:
            return any(s.plays(game) for s in self.parts)
        if self.games is not None and game not in self.games:
            return False
        if self.family is not None and getattr(g, "family", "") != self.family:
            return False
        if self.when is not None:
            try:
                return bool(self.when(g))
            except PipslabError:
                return False
        return True

    def __contains__(self, game: str) -> bool:
        return self.plays(game)

    def disjoint(self, other: "Scope") -> bool:
        """No game both take: by their names when both list names, else among the games
        registered now."""
        if self.everything or other.everything:
            return False
        if self.games is not None and other.games is not None and not (self.parts or other.parts):
            return not self.games & other.games
        return not any(self.plays(n) and other.plays(n) for n in GAMES)


_REGISTRY: Dict[str, Tuple[Factory, Scope]] = {}


def register(name: str, games=None, family: Optional[str] = None,
             when: Optional[Callable] = None) -> Callable[[Factory], Factory]:
    """Decorator: make ``factory`` available as ``name`` for the games of a :class:`Scope`,
    resolved when an agent is looked up: ``games`` — a list of names, or a predicate on the
    Game (None: any); ``family`` — every game of that family (``"dominoes"``), also one
    registered later; ``when`` — a predicate on the Game.  Nothing given: every game.
    Registering a name again for games it did not play yet adds them, with this factory
    for those games (``human``: the dominoes module's for the domino games, the backgammon
    module's for backgammon); otherwise the new factory replaces the old."""
    if callable(games):
        games, when = None, (games if when is None else (lambda g, a=games, b=when: a(g) and b(g)))
    elif isinstance(games, str):
        games = [games]

    def deco(factory: Factory) -> Factory:
        new = Scope(games, family, when)
        old = _REGISTRY.get(name)
        if old is not None and old[1].disjoint(new):
            table = list(getattr(old[0], "per_scope", None) or [(old[1], old[0])])
            table.append((new, factory))
            _REGISTRY[name] = (_per_scope(table), Scope(parts=[s for s, _ in table]))
        else:
            _REGISTRY[name] = (factory, new)
        return factory

    return deco


def _per_scope(table: List[Tuple[Scope, Factory]]) -> Factory:
    def factory(game: str, **params) -> Agent:
        return _pick(table, game)(game, **params)

    factory.per_scope = table
    return factory


def _pick(table: List[Tuple[Scope, Factory]], game: str) -> Factory:
    """The factory of the last scope of ``table`` that plays ``game``."""
    for scope, f in reversed(table):
        if scope.plays(game):
            return f
    return table[-1][1]


def _plays(scope: Scope, game: str) -> bool:
    return scope.plays(game)


def parse_value(text: str):
    """``"3"`` -> 3, ``"0.5"`` -> 0.5, ``"true"`` -> True, anything else stays a string."""
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def _split_spec(spec: str) -> Tuple[str, Dict[str, str]]:
    """``"pimc:samples=50,time=1"`` -> ``("pimc", {"samples": "50", "time": "1"})`` (texts)."""
    if not isinstance(spec, str):
        raise PipslabError(f"an agent spec is text like 'pimc:samples=50', got {type(spec).__name__}")
    name, _, rest = spec.strip().partition(":")
    params: Dict[str, str] = {}
    if rest:
        for item in rest.split(","):
            key, eq, value = item.partition("=")
            if not eq or not key.strip():
                raise PipslabError(f"bad agent parameter {excerpt(item)} in {excerpt(spec)}: expected key=value")
            key = key.strip()
            if key in params:
                raise PipslabError(f"agent parameter {excerpt(key)} is given twice in {excerpt(spec)}")
            params[key] = value.strip()
    return name.strip(), params


def parse_spec(spec: str) -> Tuple[str, dict]:
    """``"x:a=1,b=0.5,c=true,d=pubeval"`` -> ``("x", {"a": 1, "b": 0.5, "c": True, "d": "pubeval"})``
    (values parsed by :func:`parse_value`; :func:`make_agent` reads them by the agent's
    declared types instead)."""
    name, texts = _split_spec(spec)
    return name, {k: parse_value(v) for k, v in texts.items()}


# ------------------------------------------------------------------ declared parameters
_NO_DEFAULT = inspect.Parameter.empty
_WHOLE = re.compile(r"[+-]?[0-9]+")


_DECLARED: Dict[Tuple[Factory, str], Optional[Dict[str, Tuple[Any, Any]]]] = {}


def _declared(factory: Factory, game: str) -> Optional[Dict[str, Tuple[Any, Any]]]:
    """:func:`_read_declared`, read once per (factory, game): the harness builds fresh
    agents for every game, and reading a signature's type hints costs ~50 µs."""
    key = (factory, game)
    if key not in _DECLARED:
        _DECLARED[key] = _read_declared(factory, game)
    return _DECLARED[key]


def _read_declared(factory: Factory, game: str) -> Optional[Dict[str, Tuple[Any, Any]]]:
    """``{name: (type, default)}`` of the parameters the agent takes (besides ``game``), or
    None when it takes any (``**params`` all the way down, or a signature that cannot be
    read)."""
    table = getattr(factory, "per_scope", None)
    if table is not None:
        factory = _pick(table, game)
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())[1:]   # the first is the game
    func = factory
    if any(p.kind is p.VAR_KEYWORD for p in params):
        target = _return_class(factory)
        if target is None:
            return None
        try:
            func = target.__init__
            params = list(inspect.signature(func).parameters.values())[1:]   # the first is self
        except (TypeError, ValueError):
            return None
        if any(p.kind is p.VAR_KEYWORD for p in params):
            return None
    try:
        hints = typing.get_type_hints(func)
    except Exception:   # an annotation that does not resolve: fall back to the defaults
        hints = {}
    out = {}
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.POSITIONAL_ONLY):
            continue
        out[p.name] = (hints.get(p.name, _NO_DEFAULT), p.default)
    return out


def _return_class(factory) -> Optional[type]:
    try:
        ret = typing.get_type_hints(factory).get("return")
    except Exception:
        return None
    return ret if isinstance(ret, type) else None


def _optional_of(annotation):
    """``(X, True)`` for ``Optional[X]`` / ``X | None``; ``(annotation, False)`` otherwise."""
    origin = typing.get_origin(annotation)
    if origin is typing.Union or (hasattr(types, "UnionType") and origin is types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0], True
    return annotation, False


def _convert(agent: str, key: str, text: str, annotation, default):
    """``text`` read as the declared type of parameter ``key``."""
    kind, optional = _optional_of(annotation)
    if kind is _NO_DEFAULT or kind is Any:
        kind = type(default) if isinstance(default, (bool, int, float, str)) else None
        optional = optional or default is None
    if optional and text.lower() == "none":
        return None
    what = f"agent {excerpt(agent)}: {key}={excerpt(text)}"
    if kind is bool:
        low = text.lower()
        if low in ("true", "1", "yes"):
            return True
        if low in ("false", "0", "no"):
            return False
        raise PipslabError(f"{what} must be true or false")
    if kind is int:
        if not _WHOLE.fullmatch(text):
            raise PipslabError(f"{what} must be a whole number")
        try:
            return int(text)
        except ValueError:   # past Python's digit limit
            raise PipslabError(f"{what} must be a whole number") from None
    if kind is float:
        try:
            value = float(text)
        except ValueError:
            raise PipslabError(f"{what} must be a number") from None
        if not math.isfinite(value):
            raise PipslabError(f"{what} must be a finite number")
        return value
    if kind is str:
        return text
    value = parse_value(text)
    if isinstance(value, float) and not math.isfinite(value):
        raise PipslabError(f"{what} must be a finite number")
    return value


def check_params(name: str, factory: Factory, game: str, texts: Dict[str, str]) -> Dict[str, Any]:
    """The parameters of agent ``name`` read by their declared types (one line naming the
    parameter and the type it expects when one is unknown or of the wrong type)."""
    declared = _declared(factory, game)
    if declared is None:
        return {k: _convert(name, k, v, _NO_DEFAULT, None) for k, v in texts.items()}
    out = {}
    for key, text in texts.items():
        if key not in declared:
            known = f"it takes {', '.join(declared)}" if declared else "it takes none"
            raise PipslabError(f"bad parameters for agent {excerpt(name)}: no parameter {excerpt(key)} ({known})")
        annotation, default = declared[key]
        out[key] = _convert(name, key, text, annotation, default)
    return out


def agent_names(game: str | None = None) -> list:
    load_catalogue()
    return sorted(n for n, (_, games) in _REGISTRY.items() if game is None or _plays(games, game))


def make_agent(spec: str, game: str) -> Agent:
    load_catalogue()
    get_game(game)   # an unknown game is one line naming the known ones
    name, texts = _split_spec(spec)
    if name not in _REGISTRY:
        raise PipslabError(
            f"unknown agent {excerpt(name)} for {game}; known: {', '.join(agent_names(game))}")
    factory, games = _REGISTRY[name]
    if not _plays(games, game):
        raise PipslabError(
            f"agent {name!r} does not play {game}; agents for {game}: {', '.join(agent_names(game))}")
    params = check_params(name, factory, game, texts)
    try:
        agent = factory(game, **params)
    except PipslabError:
        raise
    except (TypeError, ValueError) as exc:
        raise PipslabError(f"bad parameters for agent {name!r}: {str(exc)[:200]}") from None
    agent.name = spec.strip()
    return agent


# Modules whose import registers agents and evaluators (``pipslab.agents`` adds the
# built-in ones, agents/builtin.py), imported on the first lookup by name.  The registry
# imports no agent module itself: they import it.
_CATALOGUES: List[str] = []
_LOADED = 0


def add_catalogue(module: str) -> None:
    """Have ``module`` imported before agents are first looked up by name (its import
    registers agents or evaluators)."""
    if module not in _CATALOGUES:
        _CATALOGUES.append(module)


def load_catalogue() -> None:
    """Import the catalogue modules not imported yet (:func:`add_catalogue`)."""
    global _LOADED
    while _LOADED < len(_CATALOGUES):
        _LOADED += 1
        importlib.import_module(_CATALOGUES[_LOADED - 1])
