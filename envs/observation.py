"""What a seat is shown when it must act: the one argument of ``Agent.act``.

It lives with the environments (which build it for the agents they drive) so that the
imports flow one way, envs -> agents; ``pipslab.agents.base`` re-exports it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np


@dataclass(frozen=True)
class Observation:
    """What a seat is shown when it must act."""

    player: int
    view: Any
    legal_actions: Sequence[int]
    num_actions: int
    # The true state, given only to agents that declare ``sees_hidden_state`` (the labelled
    # cheating "oracle"); None for every fair agent.
    state: Any = None

    @property
    def action_mask(self) -> np.ndarray:
        mask = np.zeros(self.num_actions, dtype=np.int8)
        mask[list(self.legal_actions)] = 1
        return mask
