"""Agents by name: ``make_agent("pimc:samples=50", game="happy")``.

A spec is ``NAME`` or ``NAME:key=value,key=value``; values are parsed as int, float,
bool or left as strings.  Every agent module registers its factories here with
:func:`register`; a factory is called as ``factory(game, **params)``.
"""
from __future__ import annotations

from typing import Callable, Dict, Iterable, Tuple

from pipslab.envs.errors import PipslabError

from .base import Agent

Factory = Callable[..., Agent]
_REGISTRY: Dict[str, Tuple[Factory, frozenset]] = {}


def register(name: str, games: Iterable[str]) -> Callable[[Factory], Factory]:
    """Decorator: make ``factory`` available as ``name`` for the given games."""

    def deco(factory: Factory) -> Factory:
        _REGISTRY[name] = (factory, frozenset(games))
        return factory

    return deco


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
    return sorted(n for n, (_, games) in _REGISTRY.items() if game is None or game in games)


def make_agent(spec: str, game: str) -> Agent:
    _load_builtin()
    name, params = parse_spec(spec)
    if name not in _REGISTRY:
        raise PipslabError(
            f"unknown agent {name!r} for {game}; known: {', '.join(agent_names(game))}")
    factory, games = _REGISTRY[name]
    if game not in games:
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
