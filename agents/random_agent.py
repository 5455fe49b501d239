"""``random``: uniform over the legal actions, in every game."""
from __future__ import annotations

import numpy as np

from .base import Agent, Observation
from .registry import register


class RandomAgent(Agent):
    name = "random"

    def act(self, observation: Observation, rng: np.random.Generator) -> int:
        legal = observation.legal_actions
        return legal[int(rng.integers(len(legal)))] if len(legal) > 1 else legal[0]


@register("random", games=None)   # every game in pipslab.envs.GAMES
def _make_random(game: str) -> RandomAgent:
    return RandomAgent()
