"""Agents by name: ``make_agent("pimc:samples=50", game="happy")``.

A spec is ``NAME`` or ``NAME:key=value,key=value``; values are parsed as int, float,
bool or left as strings.  Every agent module registers its factories here with
:func:`register`; a factory is called as ``factory(game, **params)``.  Game names are
those of :data:`pipslab.envs.GAMES`; an agent registered with ``games=None`` (``random``)
plays every game there, also games registered later.
"""
from __future__ import annotations

from typing import Callable, Dict, Iterable, Optional, Tuple

from pipslab.envs.errors import PipslabError
from pipslab.envs.game import GAMES

from .base import Agent

Factory = Callable[..., Agent]
_REGISTRY: Dict[str, Tuple[Factory, Optional[frozenset]]] = {}


def register(name: str, games: Optional[Iterable[str]] = None) -> Callable[[Factory], Factory]:
    """Decorator: make ``factory`` available as ``name`` for the given games (``None``: for
    every game).  Registering a name again for games it did not play yet adds them, with
    this factory for those games (``human``: the dominoes module's for the domino games,
    the backgammon module's for backgammon); otherwise the new factory replaces the old."""

    def deco(factory: Factory) -> Factory:
        new = None if games is None else frozenset(games)
        old = _REGISTRY.get(name)
        if old is not None and new is not None and old[1] is not None and not new & old[1]:
            table = dict(getattr(old[0], "per_game", None) or {g: old[0] for g in old[1]})
            table.update((g, factory) for g in new)
            _REGISTRY[name] = (_per_game(table), old[1] | new)
        else:
            _REGISTRY[name] = (factory, new)
        return factory

    return deco


def _per_game(table: Dict[str, Factory]) -> Factory:
    def factory(game: str, **params) -> Agent:
        return table[game](game, **params)

    factory.per_game = table
    return factory


def _plays(games: Optional[frozenset], game: str) -> bool:
    return game in GAMES if games is None else game in games


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


def parse_spec(spec: str) -> Tuple[str, dict]:
    name, _, rest = spec.strip().partition(":")
    params = {}
    if rest:
        for item in rest.split(","):
            key, eq, value = item.partition("=")
            if not eq or not key.strip():
                raise PipslabError(f"bad agent parameter {item!r} in {spec!r}: expected key=value")
            params[key.strip()] = parse_value(value.strip())
    return name.strip(), params


def agent_names(game: str | None = None) -> list:
    _load_builtin()
    return sorted(n for n, (_, games) in _REGISTRY.items() if game is None or _plays(games, game))


def make_agent(spec: str, game: str) -> Agent:
    _load_builtin()
    if game not in GAMES:
        raise PipslabError(f"unknown game {game!r}; known: {', '.join(sorted(GAMES))}")
    name, params = parse_spec(spec)
    if name not in _REGISTRY:
        raise PipslabError(
            f"unknown agent {name!r} for {game}; known: {', '.join(agent_names(game))}")
    factory, games = _REGISTRY[name]
    if not _plays(games, game):
        raise PipslabError(
            f"agent {name!r} does not play {game}; agents for {game}: {', '.join(agent_names(game))}")
    try:
        agent = factory(game, **params)
    except TypeError as exc:
        raise PipslabError(f"bad parameters for agent {name!r}: {exc}") from None
    agent.name = spec.strip()
    return agent


_LOADED = False


def _load_builtin() -> None:
    """Import the modules that register the built-in agents."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    import importlib

    for module in _BUILTIN_MODULES:
        importlib.import_module(module)


# Modules whose import registers agents.  Each game's agents live in their own module.
_BUILTIN_MODULES = [
    "pipslab.agents.random_agent",
    "pipslab.agents.dominoes",
    "pipslab.agents.human",
    "pipslab.agents.search_dominoes",
    "pipslab.agents.search_backgammon",
    "pipslab.agents.backgammon",
    "pipslab.agents.td",
]
