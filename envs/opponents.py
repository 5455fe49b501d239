"""Opponents of the Gymnasium adapters: an agent object, or an agent name.

The envs need nothing of an agent but ``act(observation, rng)``, ``reset(seat)`` and
``sees_hidden_state``, and they never import :mod:`pipslab.agents` (imports flow rules →
envs → agents → experiments).  A *name* (``"heaviest"``, ``"pimc:samples=50"``) is turned
into an agent by the factory that :mod:`pipslab.agents` installs here when it is imported
(``import pipslab`` imports it), so ``gymnasium.make("pipslab/HappyDominoes-v0",
opponents="heaviest")`` keeps working.  Every env takes them as ``opponents=`` (one for
every other seat, or one per seat; :mod:`pipslab.envs.base_env`).
"""
from __future__ import annotations

from typing import Callable, Optional

from .errors import PipslabError

# (spec, game) -> agent; installed by pipslab.agents
_factory: Optional[Callable] = None


def install_agent_factory(factory: Callable) -> None:
    """Let the envs make agents by name: ``factory(spec, game)`` returns an agent."""
    global _factory
    _factory = factory


def is_agent(obj) -> bool:
    return callable(getattr(obj, "act", None))


def resolve_opponent(opponent, game: str):
    """``opponent`` itself when it is an agent; a name (None means ``"random"``) made into
    one for ``game`` by the installed factory."""
    if opponent is None:
        opponent = "random"
    if isinstance(opponent, str):
        if _factory is None:
            raise PipslabError(f"opponent {opponent!r} is an agent name, and no agent factory is "
                               "installed: import pipslab (or pipslab.agents), or give an agent object")
        opponent = _factory(opponent, game)
    if not is_agent(opponent):
        raise PipslabError(f"opponent must be an agent or an agent name, got {opponent!r}")
    return opponent
