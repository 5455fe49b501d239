"""The one agent interface every game uses.

An agent is asked for an action with ``act(observation, rng)``.  The observation is
what its seat may see — the game's *view* (``state.observe(player)``) — plus the legal
actions, so an agent never touches the true (hidden) state.  ``rng`` is a
``numpy.random.Generator`` owned by the caller: every random choice an agent makes flows
from it, so a seeded tournament replays exactly.

Search agents are given the game's rules at construction and plan from
``sample_world(view, rng)`` only.  The one exception is the ``oracle`` agent, which is
labelled as cheating and receives the true state explicitly.
"""
from __future__ import annotations

import numpy as np

from pipslab.envs.observation import Observation

__all__ = ["Agent", "Observation"]


class Agent:
    """Base class: subclasses implement :meth:`act`.

    The replay contract — what lets any game of a tournament be replayed alone, and makes
    serial, process and Ray runs give the same records:

    * a game's every random choice flows from the ``rng`` the harness passes to ``act``
      (one generator per game, seeded from the game's id); an agent draws nothing from a
      global generator, the clock, or a seed or counter of its own;
    * an agent object lives for one game: it may keep state *within* the game (a plan, a
      search tree, a cache), never from one game to the next — the harness builds fresh
      agents from their spec strings for every game, one object per seat, and so do
      ``pipslab play`` and its ``--replay``;
    * construction is therefore cheap: what is costly and read-only (a loaded network, a
      calibration) is cached at module level and shared, never trained or changed by play.
    """

    name: str = "agent"
    # True only for the labelled cheating upper bound ("oracle"): the game loop then puts a
    # copy of the true state in ``observation.state``.
    sees_hidden_state: bool = False

    def act(self, observation: Observation, rng: np.random.Generator) -> int:
        raise NotImplementedError

    def check_table(self, game: str, options: dict) -> None:
        """Called once before a run's first game with the game's name and options: raises
        :class:`~pipslab.envs.errors.PipslabError` when the agent cannot play them (a net
        trained for another variant), so the run stops with one line before any game is
        played.  Most agents can play whatever their registry entry names."""

    def reset(self, seat: int) -> None:
        """Called at the start of the game with the seat the agent plays (the harness's
        agents are fresh for each game; this also readies one reused by hand)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"
