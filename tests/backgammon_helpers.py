"""Helpers shared by the backgammon tests."""
import gzip
import json
from pathlib import Path

import numpy as np

from pipslab.envs.backgammon import new_game

# GNU Backgammon's legal plays for 2,000+ (position, dice) cases
# (written by ``python -m pipslab.experiments.crosscheck_backgammon --fixture ...``)
MOVES_FIXTURE = Path(__file__).resolve().parent / "data" / "backgammon_moves.json.gz"


def fixture_cases():
    """The cases of :data:`MOVES_FIXTURE`: ``position_id``, ``dice``, ``results``, ``tags``."""
    with gzip.open(MOVES_FIXTURE, "rt", encoding="utf-8") as fh:
        return json.load(fh)["cases"]


def turn_positions(n, seed):
    """``n`` positions with a player on roll (from that player's side), drawn from
    uniformly random games: each position after a roll is kept with probability 0.15."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        state = new_game()
        while not state.is_terminal and len(out) < n:
            if state.is_chance:
                state.apply_chance(rng)
                if rng.random() < 0.15:
                    out.append(state.position)
            else:
                legal = state.legal_actions()
                state.apply(legal[int(rng.integers(len(legal)))])
    return out
