"""The teacher of guided training (``pipslab train happy --guide oracle|pimc|AGENT``): the
moves it labels a learner's decision with.  It lives with the agents because its labels
are their moves: ``pimc``'s rule over worlds dealt by ``world_sampler`` from the seat's
view, the exact solver on the true state, or any agent's choice."""
from __future__ import annotations

from typing import List, Optional

import numpy as np

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

    # block mode: a world's exact solve visits a few hundred positions, so a table that
    # stays in the cache beats a big one (which, kept for the run, grew to millions of
    # rows and made every probe a cache miss: 3x slower); the values are exact either way
    BLOCK_TABLE = 1 << 14

    def __init__(self, game: str, options: dict, guide: str, samples: int = 6, compiled: bool = True):
        self.game, self.options, self.guide, self.samples = game, dict(options), guide, samples
        self.num_actions = get_game(game).actions(options)
        self.solver = None
        self.pimc = None
        self.variant = None
        if guide in ("oracle", "pimc"):
            from pipslab.agents.search_dominoes import PIMCAgent
            from pipslab.agents.solver import Solver
            variant = self.variant = get_game(game).new_state(np.random.default_rng(0), options).variant
            depth = PIMCAgent.DRAW_MODE_DEPTH if variant.draw else None
            self.solver = Solver("margin", max_depth=depth)
            if guide == "pimc" and compiled or guide == "oracle" and not variant.draw:
                from pipslab.agents.pimc_compiled import CompiledPIMC
                if variant.draw:
                    self.pimc = CompiledPIMC(variant, depth)
                else:
                    self.pimc = CompiledPIMC(variant, depth, max_table=self.BLOCK_TABLE, first_table=self.BLOCK_TABLE)

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
            from pipslab.agents.search_dominoes import pimc_move_totals
            totals = pimc_move_totals(state.observe(seat), state.legal_actions(), rng, self.solver, self.samples,
                                      self.pimc)
        else:
            obs = Observation(seat, state.observe(seat), state.legal_actions(), self.num_actions)
            totals = {make_agent(self.guide, self.game).act(obs, rng): 1}
        top = max(totals.values())
        return [b for b, v in totals.items() if v == top]

    def batched(self) -> bool:
        """Whether :meth:`label_many` solves the decisions of compiled rows in one compiled
        call (``pimc`` compiled, or ``oracle``, on a block-mode line variant opened by the
        highest double); otherwise it labels them one at a time, as :meth:`best_moves`."""
        v = self.variant
        return (self.guide in ("pimc", "oracle") and self.pimc is not None and not v.draw and v.layout == "line"
                and v.opening == "highest_double")

    def label_many(self, S: np.ndarray, rows, rngs, openings, state_of=None) -> np.ndarray:
        """The labels of many decisions at once: a 0/1 ``int8`` array of shape
        ``(len(rows), num_actions)``, 1 on the teacher's best moves of each.

        ``S``: compiled state rows (``pipslab.envs.dominoes.compiled``); decision ``i`` is
        the seat to move's in ``S[rows[i]]``; ``rngs[i]``: its hand's generator;
        ``openings[i]``: the tile that opened that hand (its deal's ``S_OPENING``);
        ``state_of(rows[i])``: its Python state, asked only where a decision is labelled
        one at a time.  Each decision makes the draws from ``rngs[i]`` that
        :meth:`best_moves` makes — ``pimc``: one, seeding the compiled generator that deals
        its worlds — so a label is the one :meth:`best_moves` gives for that state and
        generator, whatever other decisions share the call; with :meth:`batched` the
        worlds of every decision are dealt and solved in one compiled call."""
        rows = np.asarray(rows, dtype=np.int64)
        out = np.zeros((len(rows), self.num_actions), dtype=np.int8)
        if not len(rows):
            return out
        if self.batched() and self.guide == "oracle":     # the exact solver on the true rows: no draws
            from pipslab.envs.dominoes.compiled import S_LEFT
            slow = [i for i, h in enumerate(rows.tolist()) if S[h, S_LEFT] < 0]
            fast = np.array([i for i, h in enumerate(rows.tolist()) if S[h, S_LEFT] >= 0], dtype=np.int64)
            if len(fast):
                out[fast] = self.pimc.label_rows(S, rows[fast], None, None, 0)
        elif self.batched():
            from pipslab.envs.dominoes.compiled import S_LEFT
            openings = np.asarray(openings, dtype=np.int64).reshape(len(rows))
            fast = [i for i, h in enumerate(rows.tolist()) if S[h, S_LEFT] >= 0 and openings[i] >= 0]
            seeds = np.zeros(len(rows), dtype=np.uint64)
            for i in fast:
                seeds[i] = int(rngs[i].integers(1 << 62))
            slow = sorted(set(range(len(rows))) - set(fast))
            if fast:
                idx = np.array(fast, dtype=np.int64)
                out[idx] = self.pimc.label_rows(S, rows[idx], openings[idx], seeds[idx],
                                                self.samples)
        else:
            slow = range(len(rows))
        for i in slow:
            h = int(rows[i])
            state = state_of(h)
            out[i, self.best_moves(state, state.current_player, rngs[i])] = 1
        return out
