"""The teacher of guided training (``pipslab train happy --guide oracle|pimc|ismcts|AGENT``):
the labels it gives a learner's decision.  It lives with the agents because its labels
are their moves: ``pimc``'s rule over worlds dealt by ``world_sampler`` from the seat's
view, the exact solver on the true state, any agent's choice — each 1 on its best moves —
or the root visit counts of ISMCTS guided by the learner's own net (expert iteration)."""
from __future__ import annotations

from typing import List, Optional

import numpy as np

from pipslab.envs.errors import PipslabError
from pipslab.envs.game import get_game

from .base import Observation
from .registry import make_agent, parse_spec

__all__ = ["LABELS", "LEARNER", "Teacher", "guide_search", "search_target"]

# ``infer=learner``: the opponent model that weighs pimc's worlds is the learner's own net
# of the update being labelled (given to each call), not a fixed one
LEARNER = "learner"

# a label row: weights per action id (visit counts; 1 on each best move; or, with a
# temperature, the solver teachers' softmax over their move values), the imitation
# target being the row over its sum — a row summing to less than 1 (``weigh``) is not
# scaled up, so its sum is the label's weight in the loss
LABELS = np.float32

# what an ``ismcts`` guide may set: the learner's net is its evaluator, the hand's
# generator its seed (no clock: a label must come back from the seed)
SEARCH_KEYS = ("iters", "c", "mix", "target")
# what an ``ismcts`` guide teaches: the root's visit distribution, or 1 on its most visited moves
SEARCH_TARGETS = ("visits", "best")


def guide_search(guide: str, game: str):
    """The search a ``--guide ismcts[:iters=N,c=C,mix=M,target=T]`` spec asks for — an
    :class:`~pipslab.agents.search_dominoes.ISMCTSAgent` whose ``eval=net`` is a
    placeholder the teacher replaces with the learner's net at each call — or ``None``
    for any other guide.  ``target`` is the teacher's, not the search's
    (:func:`search_target`).  A bad spec is one line."""
    name, params = parse_spec(guide)
    if name != "ismcts":
        return None
    extra = sorted(set(params) - set(SEARCH_KEYS))
    if extra:
        raise PipslabError(f"--guide {guide}: the search is guided by the learner's own net and seeded by the hand; "
                           f"it takes {', '.join(SEARCH_KEYS)}, not {', '.join(extra)}")
    search_target(guide)
    spec = ",".join(f"{k}={v}" for k, v in params.items() if k != "target")
    search = make_agent(f"ismcts:{spec + ',' if spec else ''}eval=net", game)
    if search.budget.count < 2:
        raise PipslabError(f"--guide {guide}: iters must be at least 2 (the first values the root; "
                           f"the rest are the visit counts)")
    return search


def search_target(guide: str) -> str:
    """``visits`` (the default: AlphaZero's target, the root's visit distribution) or
    ``best`` (1 on the most visited moves, ties all kept, as the solver teachers label):
    why ``best`` — a search that follows its prior spreads its visits over the moves the
    net already likes, so the distribution teaches mostly the prior back; the move the
    search plays is where it improves on the net (expert iteration's chosen-action
    target)."""
    target = str(parse_spec(guide)[1].get("target", "visits"))
    if target not in SEARCH_TARGETS:
        raise PipslabError(f"--guide {guide}: target is one of {', '.join(SEARCH_TARGETS)}, not {target!r}")
    return target


class Teacher:
    """The labels a trainer's ``--guide`` gives a learner's decision: 1 on the best moves
    (ties all kept) of

    * ``oracle`` — the exact solver (``pimc``'s) on the true state;
    * ``pimc`` — the solver's values summed over ``samples`` worlds dealt by
      ``sample_world`` from the seat's view, pimc's own rule (win first, then margin);
      with ``infer=MODEL`` each world weighed as ``pimc:infer=MODEL,floor=F`` weighs it
      (:class:`~pipslab.agents.belief.Belief`), and with ``infer=learner`` by the
      learner's own net given to each labelling call (a recipe stage then depends on no
      net outside its run, and the model improves with the learner);
    * an agent spec — that agent's move from the seat's observation (built afresh for
      each label, as the harness builds agents per game);

    — or, with ``temperature`` T > 0 (``pimc`` and ``oracle``), the softmax over the legal
    moves of their mean value over the worlds, in hands won (the solver's value / 1000),
    divided by T: every move's value taught, not only the best one's.  Why: pimc's top
    move over a few worlds is noisy (two 40-world labels of one draw-mode decision agree
    on 83.5%), and the argmax of a noisy sum is a biased estimate of the argmax of the
    mean; at a temperature above the values' spread the softmax is nearly linear in
    them, so the net's average target over many labels of one situation is nearly the
    softmax of the mean over all their worlds.  (Measured in Happy draw: no stronger
    net; docs/training.md.)

    With ``weigh`` W > 0 (``pimc`` and ``oracle``) each such row is scaled by
    ``min(1, (best - mean) / W)``: how many hands a uniform choice among the legal moves
    loses against the best, counting fully from W — cost-sensitive imitation.  Why: the
    plain loss weighs every decision alike, and most are early ones where every move is
    about as good; the draw net's losses lie in the late ones, where a wrong move costs
    a hand (``pipslab analyze``'s phases, docs/training.md).  A decision whose moves are
    all worth the same gets no label.

    With ``phases`` (names of the game's :meth:`~pipslab.envs.game.Game.phase_of`) only
    the decisions in those phases are labelled; the rest get an all-zero row (no label)
    and cost nothing.  Why: the draw net loses most of its hands after the boneyard drops
    below ten tiles (``pipslab analyze``'s phases), and labels spent there buy more than
    labels spread over the hand (docs/training.md).

    Or, for ``ismcts[:iters=N,c=C,mix=M,target=T]`` (:func:`guide_search`), the root visit counts of
    PUCT ISMCTS guided by ``net`` — the learner's own :class:`~pipslab.agents.domino_net.NetPlayer`
    of the update being played, given to each labelling call: its policy the prior, its
    value heads the leaves' values — with AlphaZero's root Dirichlet ``noise=(alpha,
    fraction)`` when given (expert iteration: the visit distribution is the target; with
    ``target=best`` 1 on its most visited moves, :func:`search_target`).

    In draw mode the solver searches 8 placements deep, as ``pimc`` does.  Every random
    choice comes from the hand's generator.  ``compiled`` (the default) deals and solves
    ``pimc``'s worlds in one compiled call (:class:`~pipslab.agents.pimc_compiled.CompiledPIMC`,
    the worlds of ``engine.packed_world_sampler`` dealt by a generator seeded with one
    draw from the hand's), and runs the ``ismcts`` searches compiled where
    ``search_many`` can (:mod:`~pipslab.agents.puct_compiled`): the same labels in
    distribution, other worlds than the Python sampler's (``compiled=False``, the reference)."""

    # block mode: a world's exact solve visits a few hundred positions, so a table that
    # stays in the cache beats a big one (which, kept for the run, grew to millions of
    # rows and made every probe a cache miss: 3x slower); the values are exact either way
    BLOCK_TABLE = 1 << 14

    def __init__(self, game: str, options: dict, guide: str, samples: int = 6, compiled: bool = True,
                 noise=None, infer: str = "", floor: float = 0.1, temperature: float = 0.0, weigh: float = 0.0,
                 phases=()):
        self.game, self.options, self.guide, self.samples = game, dict(options), guide, samples
        self.phases = frozenset(phases)
        try:
            get_game(game).check_phases(sorted(self.phases), options)
        except PipslabError as exc:
            raise PipslabError(f"phases: {exc}") from None
        if temperature < 0 or temperature and guide not in ("pimc", "oracle"):
            raise PipslabError(f"a temperature softens the solver teachers' labels (pimc, oracle) and is not "
                               f"negative; got {temperature} with {guide!r}")
        if weigh < 0 or weigh and guide not in ("pimc", "oracle"):
            raise PipslabError(f"weigh scales the solver teachers' labels (pimc, oracle) by their moves' values and "
                               f"is not negative; got {weigh} with {guide!r}")
        self.temperature, self.weigh = float(temperature), float(weigh)
        self.belief = None
        self.infer_learner, self.floor = infer == LEARNER, float(floor)
        if infer:
            if guide != "pimc":
                raise PipslabError(f"infer weighs the pimc teacher's worlds, not {guide!r}'s")
            from .belief import Belief, check_floor
            if self.infer_learner:
                check_floor(floor)
            else:
                self.belief = Belief(infer, floor)
        self.compiled = bool(compiled)
        self.num_actions = get_game(game).actions(options)
        self.search = guide_search(guide, game)
        self.search_target = search_target(guide) if self.search is not None else None
        self.noise = tuple(noise) if noise else None
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

    def best_moves(self, state, seat: int, rng: np.random.Generator, net=None) -> List[int]:
        """The moves the teacher labels ``seat``'s decision in ``state`` with (``ismcts``:
        the most visited by the search guided by ``net``)."""
        if self.search is not None:
            row = self._label_all([state], [rng], net)[0]
            return np.flatnonzero(row == row.max()).tolist()
        totals = self.move_values(state, seat, rng, net)
        top = max(totals.values())
        return [b for b, v in totals.items() if v == top]

    def belief_of(self, net=None):
        """The :class:`~pipslab.agents.belief.Belief` that weighs pimc's worlds (``None``:
        uniform): the fixed model's, or with ``infer=learner`` one on ``net``."""
        if not self.infer_learner:
            return self.belief
        if net is None:
            raise PipslabError("infer=learner: the pimc teacher weighs its worlds by the learner's net; none was given")
        from .belief import Belief
        from .domino_net import NetEvaluator
        return Belief(NetEvaluator.of(net), self.floor)

    def move_values(self, state, seat: int, rng: np.random.Generator, net=None) -> dict:
        """The teacher's mean value of each legal move of ``seat``'s decision in ``state``
        (not ``ismcts``): the solver's values (outcome * 1000 + margin) averaged over
        ``pimc``'s worlds (weighed by the belief with ``infer``), of the true state
        (``oracle``), or 1 on an agent's move."""
        if self.guide == "oracle":
            return self.solver.move_values(state)
        belief = self.belief_of(net) if self.guide == "pimc" else None
        if belief is not None:     # the weights sum to 1
            from pipslab.agents.search_dominoes import weighted_move_totals
            return weighted_move_totals(state.observe(seat), state.legal_actions(), rng, self.solver, self.samples,
                                        belief, self.pimc)
        if self.guide == "pimc":
            from pipslab.agents.search_dominoes import pimc_move_totals
            totals = pimc_move_totals(state.observe(seat), state.legal_actions(), rng, self.solver, self.samples,
                                      self.pimc)
            return {b: v / self.samples for b, v in totals.items()}
        obs = Observation(seat, state.observe(seat), state.legal_actions(), self.num_actions)
        return {make_agent(self.guide, self.game).act(obs, rng): 1}

    def label(self, state, seat: int, rng: np.random.Generator, net=None) -> np.ndarray:
        """One decision's :data:`LABELS` row (not ``ismcts``): 1 on :meth:`best_moves`, or
        with a temperature the softmax of :meth:`move_values`; with ``weigh`` scaled by
        the decision's cost (class docstring)."""
        row = np.zeros(self.num_actions, dtype=LABELS)
        if not self.temperature and not self.weigh:
            row[self.best_moves(state, seat, rng, net)] = 1
            return row
        from .solver import BIG             # the solver's unit of one hand won (loaded with the solver)
        totals = self.move_values(state, seat, rng, net)
        moves = list(totals)
        raw = np.array([totals[b] for b in moves], dtype=np.float64)
        if self.temperature:
            z = raw / (BIG * self.temperature)
            p = np.exp(z - z.max())
            p /= p.sum()
        else:
            p = (raw == raw.max()) / np.count_nonzero(raw == raw.max())
        if self.weigh:
            v = raw / BIG
            p *= min(1.0, (v.max() - v.mean()) / self.weigh)
        row[moves] = p
        return row

    def batched(self) -> bool:
        """Whether :meth:`label_many` solves the decisions of compiled rows in one compiled
        call (``pimc`` compiled, or ``oracle``, on a block-mode line variant opened by the
        highest double, no temperature or weighing); otherwise it labels them one at a
        time, as :meth:`label`."""
        v = self.variant
        return (self.guide in ("pimc", "oracle") and self.pimc is not None and self.belief is None
                and not self.infer_learner and not self.temperature and not self.weigh and not self.phases
                and not v.draw and v.layout == "line" and v.opening == "highest_double")

    def label_many(self, S: np.ndarray, rows, rngs, openings, state_of=None, net=None) -> np.ndarray:
        """The labels of many decisions at once: a :data:`LABELS` array of shape
        ``(len(rows), num_actions)`` — 1 on the teacher's best moves of each, or the
        search's root visit counts (``ismcts``; ``net``: the learner's player).

        ``S``: compiled state rows (``pipslab.envs.dominoes.compiled``); decision ``i`` is
        the seat to move's in ``S[rows[i]]``; ``rngs[i]``: its hand's generator;
        ``openings[i]``: the tile that opened that hand (its deal's ``S_OPENING``);
        ``state_of(rows[i])``: its Python state, asked only where a decision is labelled
        from it (:meth:`label_states`).  Each decision makes the draws from ``rngs[i]`` that
        :meth:`best_moves` makes — ``pimc`` and ``ismcts``: one, seeding the compiled
        generator that deals its worlds or the search's stream — so a label is the one
        :meth:`best_moves` gives for that state and generator, whatever other decisions
        share the call.  With :meth:`batched` the worlds of every decision are dealt and
        solved in one compiled call; ``ismcts`` searches every decision of the call in one
        lock-step :func:`~pipslab.agents.search_dominoes.search_many`."""
        rows = np.asarray(rows, dtype=np.int64)
        out = np.zeros((len(rows), self.num_actions), dtype=LABELS)
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
            slow = list(range(len(rows)))
        if len(slow):
            slow = np.asarray(slow, dtype=np.int64)
            out[slow] = self.label_states([state_of(int(rows[i])) for i in slow.tolist()],
                                          [rngs[i] for i in slow.tolist()], net)
        return out

    def label_states(self, states, rngs, net=None) -> np.ndarray:
        """The labels (as :meth:`label_many`'s) of decisions given by their Python states,
        the seat to move's in each; ``rngs[i]``: its hand's generator.  ``ismcts``: every
        decision searched together in one lock-step ``search_many`` guided by ``net``,
        decision ``i``'s stream seeded by one draw from ``rngs[i]`` (as
        ``ISMCTSAgent.search_batch`` seeds it), so its visits do not depend on the others
        (up to the last bits of the net's batched products); the others: one at
        a time, :meth:`label`.  With ``phases`` a decision in another phase gets an
        all-zero row and makes no draw."""
        if self.phases:
            game = get_game(self.game)
            keep = [i for i, s in enumerate(states) if game.phase_of(s) in self.phases]
            if len(keep) < len(states):
                out = np.zeros((len(states), self.num_actions), dtype=LABELS)
                if keep:
                    out[keep] = self._label_all([states[i] for i in keep], [rngs[i] for i in keep], net)
                return out
        return self._label_all(states, rngs, net)

    def _label_all(self, states, rngs, net) -> np.ndarray:
        out = np.zeros((len(states), self.num_actions), dtype=LABELS)
        if self.search is None:
            for i, (state, rng) in enumerate(zip(states, rngs)):
                out[i] = self.label(state, state.current_player, rng, net)
            return out
        if net is None:
            raise PipslabError(f"--guide {self.guide}: the search needs the learner's net")
        if not len(states):
            return out
        from pipslab.agents.domino_net import NetEvaluator
        from pipslab.agents.search_dominoes import search_many
        search = self.search
        seeds = [int(rng.integers(1 << 62)) for rng in rngs]
        results = search_many([s.observe(s.current_player) for s in states], seeds, NetEvaluator.of(net),
                              search.budget.count, search.c, noise=self.noise, mix=search.mix,
                              playout=search.playout, compiled=self.compiled)
        best = self.search_target == "best"
        for i, r in enumerate(results):
            counts = np.array(list(r.visits.values()), dtype=LABELS)
            out[i, list(r.visits)] = (counts == counts.max()) if best else counts
        return out
