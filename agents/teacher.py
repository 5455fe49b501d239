"""The teacher of guided training (``pipslab train happy --guide oracle|pimc|AGENT``): the
moves it labels a learner's decision with.  It lives with the agents because its labels
are their moves: ``pimc``'s rule over worlds dealt by ``world_sampler`` from the seat's
view, the exact solver on the true state, or any agent's choice."""
from __future__ import annotations

from typing import List, Optional

import numpy as np

from pipslab.envs.dominoes.engine import packed_world_sampler, world_sampler
from pipslab.envs.game import get_game

from .base import Observation
from .registry import make_agent

__all__ = ["Teacher"]


class Teacher:
    """The moves a trainer's ``--guide`` labels a learner's decision with (ties all kept):

    * ``oracle`` — the exact solver (``pimc``'s) on the true state;
    * ``pimc`` — the solver's values summed over ``samples`` worlds dealt by
      ``sample_world`` from the seat's view, pimc's own rule (win first, then margin);
    * an agent spec — that agent's move from the seat's observation (built afresh for
      each label, as the harness builds agents per game).

    In draw mode the solver searches 8 placements deep, as ``pimc`` does.  Every random
    choice comes from the hand's generator.  ``compiled`` (the default) deals and solves
    ``pimc``'s worlds in one compiled call (:class:`~pipslab.agents.pimc_compiled.CompiledPIMC`,
    the worlds of ``engine.packed_world_sampler`` dealt by a generator seeded with one
    draw from the hand's): the same labels in distribution, other worlds than the Python
    sampler's (``compiled=False``, the reference)."""

    def __init__(self, game: str, options: dict, guide: str, samples: int = 6, compiled: bool = True):
        self.game, self.options, self.guide, self.samples = game, dict(options), guide, samples
        self.num_actions = get_game(game).actions(options)
        self.solver = None
        self.pimc = None
        if guide in ("oracle", "pimc"):
            from pipslab.agents.search_dominoes import PIMCAgent
            from pipslab.agents.solver import Solver
            variant = get_game(game).new_state(np.random.default_rng(0), options).variant
            depth = PIMCAgent.DRAW_MODE_DEPTH if variant.draw else None
            self.solver = Solver("margin", max_depth=depth)
            if guide == "pimc" and compiled:
                from pipslab.agents.pimc_compiled import CompiledPIMC
                self.pimc = CompiledPIMC(variant, depth)

    def oracle_moves(self, variant, boneyard, hands, seat, left, right, bpos) -> Optional[List[int]]:
        """``oracle``'s :meth:`best_moves` of a line position given by its parts
        (:meth:`Solver.root_move_values`: the same values, the same table after), or
        ``None`` where the solver needs the state."""
        totals = self.solver.root_move_values(variant, boneyard, hands, seat, left, right, bpos)
        if totals is None:
            return None
        top = max(totals.values())
        return [b for b, v in totals.items() if v == top]

    def best_moves(self, state, seat: int, rng: np.random.Generator) -> List[int]:
        if self.guide == "oracle":
            totals = self.solver.move_values(state)
        elif self.guide == "pimc":
            view = state.observe(seat)
            legal = state.legal_actions()
            if self.pimc is not None and view.left >= 0 and legal[-1] < view.variant.draw_action:
                from pipslab.envs.dominoes.compiled import new_rng
                sums = self.pimc.totals(packed_world_sampler(view), new_rng(int(rng.integers(1 << 62))),
                                        self.samples)
                totals = {b: int(sums[b]) for b in legal}
            else:
                totals = dict.fromkeys(legal, 0)
                worlds = world_sampler(view)
                for _ in range(self.samples):
                    for b, v in self.solver.move_values(worlds(rng)).items():
                        totals[b] += v
        else:
            obs = Observation(seat, state.observe(seat), state.legal_actions(), self.num_actions)
            totals = {make_agent(self.guide, self.game).act(obs, rng): 1}
        top = max(totals.values())
        return [b for b, v in totals.items() if v == top]
