"""Search agents for dominoes: ``pimc``, ``ismcts`` and the cheating ``oracle``.

Search values positions through the evaluator seam (:mod:`pipslab.agents.evaluators`,
family ``"dominoes"``): ``eval=NAME[:ARG]`` picks any registered evaluator — ``rollout``,
``hand``, ``pips`` (:mod:`pipslab.agents.dominoes_value`) or one registered with
``register_evaluator("dominoes", NAME, factory)`` — without touching this module.

* ``pimc`` — Perfect Information Monte Carlo: for each decision, sample worlds with
  ``sample_world(view, rng)``, solve each exactly (``pipslab.agents.solver``), play the move with
  the best average value.  Parameters: ``samples`` (default 30), ``time`` (seconds per
  move; when given, samples until the time is up, ``samples`` then being a minimum of 1),
  ``depth`` — placements searched before the evaluator scores the position:
  ``-1`` (default) solves block-mode worlds exactly and searches 8 placements deep in
  draw mode (a draw-mode world with 14 tiles in the boneyard can take seconds to solve
  exactly), ``0`` always solves exactly, ``n`` searches ``n`` placements; ``eval`` — the
  evaluator at that depth limit (default ``hand``, the solver's own heuristic), its value
  for the side to move scaled by 1000 into the solver's units (a win is 1000 plus the
  margin).  ``infer=MODEL`` (an evaluator with a prior: ``net``, ``net:NAME``) weighs
  each world by how likely MODEL made the other seats' own placements in it
  (:mod:`pipslab.agents.belief`: inference, which ``sample_world``'s public constraints
  leave out), ``floor`` (default 0.1) the share of a uniform choice mixed into MODEL's
  probabilities; the worlds are then solved by the Python road, each move's value
  summed with its world's weight (``weighted_move_totals``).
* ``ismcts`` — single-observer information-set MCTS (Cowling, Powley & Whitehouse 2012):
  every iteration determinizes with ``sample_world``, descends one tree over the observer's
  information sets with UCB1 using availability counts, expands one node, values the new
  node's state with the evaluator — every seat's expected return at once; by default
  ``eval=rollout``, finishing the game with uniformly random moves — and backs the values
  up.  Works for every domino variant and player count.  Parameters: ``iters`` (default
  1000), ``time`` (seconds per move), ``c`` (exploration, default 0.7; 1.5 with a prior),
  ``eval``, ``net``, ``mix``, ``compiled``.
  In a Troshin match a simulation goes on past the hand: where a world reaches the
  match's chance node (the hand is over, the match is not) the next hand is dealt with
  ``apply_chance`` from the search's own stream (below), and the tree goes on over the
  new hand's moves; a node is never valued at a chance node.
  With random playouts (``eval=rollout[:N]``) on a hand (not a match) the
  iterations run compiled (:mod:`pipslab.agents.ismcts_compiled`: the same loop, worlds
  from ``engine.packed_world_sampler``, tens of times faster), their generator seeded by
  the decision's first draw from ``rng`` — the same search, other random numbers than
  the Python loop's, so other moves for a seed; ``compiled=false`` runs the Python loop
  (the reference; every other evaluator runs there, rollouts then compiled too unless
  ``compiled=false``).
  One loop, two selection rules, by the evaluator (:mod:`pipslab.agents.evaluators`):
  an evaluator with a ``prior`` (``eval=net[:NAME|PATH]``, a policy-and-value network,
  :mod:`pipslab.agents.domino_net`) runs PUCT as AlphaZero's but over information sets:
  a node is valued when it is first reached by ``evaluate`` (every seat's value, each
  from its own view of the sampled world) — no playout — and the ``prior`` of the seat to
  move there is kept for its children; selection maximises
  ``Q + c * P * sqrt(availability) / (1 + visits)`` (availability counts as in plain
  ISMCTS; an action the prior never saw, legal only in another sampled world, gets
  ``1 / legal moves``; unvisited children count Q = 0).  With a uniform prior and zero
  values this is a round-robin over the legal moves in their order (each unvisited move
  in turn, then the least visited).  Any other evaluator runs UCB1 as above.
  ``net=NAME|PATH`` (or ``net=shipped``: the variant's shipped net) is an alias of
  ``eval=net:NAME|PATH`` (``eval=net``).  ``mix=M`` (0 to 1, default 0; with a prior)
  values a new node as AlphaGo did: ``(1 - M)`` times the evaluator's values plus ``M``
  times one uniformly random playout from the sampled world.
  The Python loop is :func:`search_many`: many searches (one per decision, each on its own
  stream) in lock-step, the new nodes of all valued by one evaluator call
  (``evaluate_prior``: one forward pass of a net) — ``act`` runs one,
  :meth:`ISMCTSAgent.search_batch` many (a trainer's: the root's visit counts, the move,
  the root value; optional root Dirichlet noise).  A search's visits are the same alone or
  in a batch (as far as the evaluator values a state the same in any batch: a net's
  float32 products can differ in the last bits with the batch's size).  With the net
  (``eval=net``), ``mix=0`` and hands (not a match) the same lock-step steps run compiled
  (:mod:`pipslab.agents.puct_compiled`: worlds from ``engine.packed_world_sampler`` by
  each search's compiled generator seeded with its seed, the descent and backup in numba,
  one ``NetPlayer.forward`` a step between them: 2-4x faster alone, where that forward
  pass of a few rows is most of a step, ~9x in a batch of 64, ``bench ismcts --batch``);
  the same search on the same worlds (tested step for step), other worlds for a seed;
  ``compiled=false`` runs the Python loop, the reference.
* ``oracle`` — **cheats**: sees every hand and the boneyard order and plays the exact
  solver's move.  Only an upper bound for tables; never a fair opponent.

The fair agents plan only from the view in their observation; none reads the true state.
"""
from __future__ import annotations

import math
import random
import time
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from pipslab.envs.dominoes.engine import packed_world_sampler, world_sampler
from pipslab.envs.errors import PipslabError
from pipslab.envs.game import get_game

from .base import Agent, Observation
from .dominoes_value import HandEvaluator, DominoRollout
from .evaluators import as_evaluator, draws_random, has_prior, make_evaluator, reseed
from .registry import register
from .solver import Solver


class _Budget:
    """Stop after ``count`` units of work, or — when ``seconds`` is given — once that much
    time has passed (at least one unit is always done)."""

    def __init__(self, agent: str, unit: str, count: int, seconds: float | None):
        if count < 1:
            raise PipslabError(f"{agent}: {unit} must be at least 1, got {count}")
        if seconds is not None and seconds <= 0:
            raise PipslabError(f"{agent}: time must be positive, got {seconds}")
        self.count, self.seconds = count, seconds

    def start(self) -> "_Budget":
        self.done = 0
        self.deadline = None if self.seconds is None else time.perf_counter() + self.seconds
        return self

    def more(self) -> bool:
        """Count one unit done; whether another may follow."""
        self.done += 1
        if self.deadline is None:
            return self.done < self.count
        return time.perf_counter() < self.deadline


def _check_solver_table(agent: str, game: str, options: dict) -> None:
    """The solver's games (:meth:`Game.solver_support`: single hands of two sides, a scoring
    rule the solver knows); refused in one line before the first game otherwise."""
    refusal = get_game(game).solver_support(options)
    if refusal is not None:
        raise PipslabError(f"{agent}: {refusal}")


def _solvable(game) -> bool:
    """A domino game whose default options the exact solver can play (pimc, oracle)."""
    return game.solver_support() is None


def _best(values: dict) -> int:
    """The action with the highest value; ties go to the lowest action id."""
    top = max(values.values())
    return min(a for a, v in values.items() if v == top)


class PIMCAgent(Agent):
    name = "pimc"

    DRAW_MODE_DEPTH = 8

    def __init__(self, samples: int = 30, time: float | None = None, depth: int = -1, eval: str = "hand",
                 infer: str = "", floor: float = 0.1):
        if depth < -1:
            raise PipslabError(f"pimc: depth must be -1 (auto), 0 (exact) or positive, got {depth}")
        self.budget = _Budget("pimc", "samples", samples, time)
        self.belief = None
        if infer:
            if time is not None:
                raise PipslabError("pimc: infer weighs a fixed number of worlds: give samples, not time")
            from .belief import Belief
            self.belief = Belief(infer, floor)
        self.depth = depth
        self.evaluator = make_evaluator("dominoes", eval)
        if depth == 0 and type(self.evaluator) is not HandEvaluator:
            raise PipslabError(f"pimc: eval={eval} needs a depth limit; depth=0 solves every world exactly")
        self.solvers = {}

    def check_table(self, game: str, options: dict) -> None:
        _check_solver_table("pimc", game, options)

    def _solver(self, variant) -> Solver:
        if variant not in self.solvers:
            depth = self.depth
            if depth == -1:
                depth = self.DRAW_MODE_DEPTH if variant.draw else 0
            # ``hand`` is the solver's own heuristic, computed inline on its bitmasks
            leaf = None if type(self.evaluator) is HandEvaluator else self.evaluator
            self.solvers[variant] = Solver("margin", max_depth=depth or None, evaluator=leaf)
        return self.solvers[variant]

    def act(self, observation: Observation, rng: np.random.Generator) -> int:
        legal = observation.legal_actions
        if len(legal) == 1:
            return legal[0]
        view = observation.view
        solver = self._solver(view.variant)
        reseed(self.evaluator, rng)
        if self.belief is not None:
            return _best(weighted_move_totals(view, legal, rng, solver, self.budget.count, self.belief))
        return _best(pimc_move_totals(view, legal, rng, solver, self.budget))


def pimc_move_totals(view, legal, rng: np.random.Generator, solver: Solver, budget, compiled=None) -> dict:
    """``pimc``'s scores of the legal moves of ``view`` (its rule; ``pimc`` and the
    ``--guide pimc`` teacher both call this): per move in ``legal``, the values
    ``solver.move_values`` gives it summed over worlds dealt from the view — as many as
    ``budget`` (a :class:`_Budget`, or a number of worlds) allows.

    With ``compiled`` (a :class:`~pipslab.agents.pimc_compiled.CompiledPIMC` of the view's
    variant, the same solver settings) and a view it can take — an opened line, no draw
    or pass among the moves, not a match, a budget of a fixed count — the worlds come
    from ``engine.packed_world_sampler`` dealt by the compiled generator seeded with one
    draw from ``rng``, and are solved in one compiled call: the same scores in
    distribution, other worlds.  Otherwise the Python reference: ``world_sampler(view)``
    dealt by ``rng`` itself (``pimc``'s own moves for a seed)."""
    if not isinstance(budget, _Budget):
        budget = _Budget("pimc", "samples", int(budget), None)
    if budget.seconds is None and _compiled_takes(view, legal, compiled):
        from pipslab.envs.dominoes.compiled import new_rng
        sums = compiled.totals(packed_world_sampler(view), new_rng(int(rng.integers(1 << 62))), budget.count)
        return {b: int(sums[b]) for b in legal}
    totals = dict.fromkeys(legal, 0)
    budget = budget.start()
    worlds = world_sampler(view)
    while True:
        for a, v in solver.move_values(worlds(rng)).items():
            totals[a] += v
        if not budget.more():
            return totals


def _compiled_takes(view, legal, compiled) -> bool:
    """Whether the compiled sum can score this view: an opened line, no draw or pass
    among the moves, not a match."""
    return (compiled is not None and view.match is None and view.left >= 0
            and legal[-1] < view.variant.draw_action)


def weighted_move_totals(view, legal, rng: np.random.Generator, solver: Solver, samples: int, belief,
                         compiled=None) -> dict:
    """``pimc:infer=...``'s scores: ``samples`` worlds dealt from the view by ``rng``
    (``world_sampler``), each solved exactly and its move values added with the weight
    ``belief`` gives the world (:class:`~pipslab.agents.belief.Belief`: how likely the
    other seats' own moves were in it).  With ``compiled`` (as in :func:`pimc_move_totals`,
    the ``--guide pimc --guide-infer`` teacher's road) the worlds are dealt and solved in
    one compiled call and weighed by their hands: the same scores in distribution, other
    worlds."""
    if _compiled_takes(view, legal, compiled):
        from pipslab.envs.dominoes.compiled import new_rng
        values, hands = compiled.world_values(packed_world_sampler(view), new_rng(int(rng.integers(1 << 62))),
                                              samples)
        sums = belief(view, hands.tolist()) @ values
        return {b: float(sums[b]) for b in legal}
    worlds = world_sampler(view)
    dealt = [worlds(rng) for _ in range(samples)]
    weights = belief(view, dealt)
    totals = dict.fromkeys(legal, 0.0)
    for w, world in zip(weights, dealt):
        for a, v in solver.move_values(world).items():
            totals[a] += w * v
    return totals


def _most_visited(root: "_Node", legal) -> int:
    """The root's most visited legal action (ties: the first in ``legal``)."""
    best_visits, best_a = -1, legal[0]
    for a in legal:
        ch = root.children.get(a)
        if ch is not None and ch.visits > best_visits:
            best_visits, best_a = ch.visits, a
    return best_a


class _Node:
    __slots__ = ("children", "visits", "avail", "total", "player", "prior")

    def __init__(self, player: int):
        self.children = {}
        self.visits = 0
        self.avail = 1
        self.total = 0.0
        self.player = player  # the seat that chose the action leading here (the root: the observer)
        self.prior = None     # PUCT: the evaluator's prior here, once valued


def _descend_ucb(root: _Node, world, fast: random.Random, c: float):
    """Plain ISMCTS (UCB1 with availability counts): select, expand one untried action;
    ``(path, None, the world there)`` — a finished world, or a state for the evaluator."""
    log, sqrt = math.log, math.sqrt
    node = root
    path = []
    while not world.is_terminal:
        if world.is_chance:            # a match between hands: deal the next one
            world.apply_chance(fast)
            continue
        acts = world.legal_actions()
        children = node.children
        untried = [a for a in acts if a not in children]
        if untried:
            a = untried[fast.randrange(len(untried))] if len(untried) > 1 else untried[0]
            for b in acts:
                if b in children:
                    children[b].avail += 1
            child = _Node(world.current_player)
            children[a] = child
            world.apply(a)
            path.append(child)
            if world.is_chance:        # the evaluator values a state with a seat to move
                world.apply_chance(fast)
            break
        best_score, best_a = -1e18, acts[0]
        for b in acts:
            children[b].avail += 1
        for b in acts:
            ch = children[b]
            score = ch.total / ch.visits + c * sqrt(log(ch.avail) / ch.visits)
            if score > best_score:
                best_score, best_a = score, b
        node = children[best_a]
        world.apply(best_a)
        path.append(node)
    return path, None, world


def _descend_puct(root: _Node, world, fast: random.Random, c: float):
    """PUCT over information sets (the module docstring), down to a finished world or a
    node reached for the first time; ``(path, that node — its prior to be set when it is
    valued —, the world there)``."""
    sqrt = math.sqrt
    node = root
    path = []
    while True:
        if world.is_terminal:
            return path, node, world
        if world.is_chance:            # a match between hands: deal the next one
            world.apply_chance(fast)
            continue
        if node.prior is None:          # first reached: the evaluator values it
            return path, node, world
        acts = world.legal_actions()
        children, prior = node.children, node.prior
        unseen = 1.0 / len(acts)
        best_score, best_a = -1e18, acts[0]
        for b in acts:
            ch = children.get(b)
            if ch is None:
                ch = children[b] = _Node(world.current_player)
            else:
                ch.avail += 1
            q = ch.total / ch.visits if ch.visits else 0.0
            score = q + c * prior.get(b, unseen) * sqrt(ch.avail) / (1 + ch.visits)
            if score > best_score:
                best_score, best_a = score, b
        node = children[best_a]
        world.apply(best_a)
        path.append(node)


class SearchResult(NamedTuple):
    """One search's answer: ``visits`` — the root's visits per legal action, in legal
    order (the visit-count policy a trainer learns from); ``action`` — the most visited
    (ties: the first legal), the move ``ismcts`` plays; ``value`` — the observer's mean
    return over the iterations (the root's own valuation included); ``iterations``."""
    visits: Dict[int, int]
    action: int
    value: float
    iterations: int


class _Search:
    """One search of :func:`search_many`: its tree, its own stream (worlds, tie-breaks,
    playouts, noise) and, between its descent and its backup, its leaf."""

    __slots__ = ("root", "fast", "worlds", "legal", "path", "node")

    def __init__(self, view, seed: int):
        self.root = _Node(view.current_player)
        self.fast = random.Random(seed)
        self.worlds = world_sampler(view)
        self.legal: Optional[List[int]] = None
        self.path, self.node = [], None

    def descend(self, descend, c: float):
        """One iteration down to its leaf: the world there (finished or to be valued)."""
        world = self.worlds(self.fast)
        if self.legal is None:
            self.legal = list(world.legal_actions())   # the observer's moves: the same in every world
        self.path, self.node, world = descend(self.root, world, self.fast, c)
        return world

    def backup(self, returns) -> None:
        root = self.root
        root.visits += 1
        root.total += returns[root.player]
        for nd in self.path:
            nd.visits += 1
            nd.total += returns[nd.player]

    def result(self) -> SearchResult:
        root, legal = self.root, self.legal
        visits = {a: (root.children[a].visits if a in root.children else 0) for a in legal}
        return SearchResult(visits, _most_visited(root, legal), root.total / root.visits, root.visits)


def _noisy(prior: Dict[int, float], noise: Tuple[float, float], fast: random.Random) -> Dict[int, float]:
    """AlphaZero's root exploration noise: ``(1 - fraction) * prior + fraction * Dir(alpha)``,
    the Dirichlet draw (normalised gammas, one per action in the prior's order) from ``fast``."""
    alpha, fraction = noise
    g = [fast.gammavariate(alpha, 1.0) for _ in prior]
    total = sum(g) or 1.0
    return {a: (1 - fraction) * p + fraction * x / total for (a, p), x in zip(prior.items(), g)}


def check_noise(noise, name: str = "ismcts: noise") -> Optional[Tuple[float, float]]:
    """Root noise as ``(alpha, fraction)`` (None: none), the one check of it — the search's
    and the trainer's ``--guide-noise`` (``name`` says which in the one-line error)."""
    if noise is None:
        return None
    try:
        alpha, fraction = (float(x) for x in noise)
    except (TypeError, ValueError):
        raise PipslabError(f"{name} is ALPHA,FRACTION, got {noise!r}") from None
    if not (math.isfinite(alpha) and alpha > 0 and 0.0 <= fraction <= 1.0):
        raise PipslabError(f"{name} is ALPHA,FRACTION with alpha > 0 and a fraction from 0 to 1, "
                           f"got {alpha},{fraction}")
    return alpha, fraction


def search_many(views: Sequence, seeds: Sequence[int], evaluator, iters: int = 1000, c: float = 1.5,
                noise=None, mix: float = 0.0, seconds: Optional[float] = None, playout=None,
                compiled: bool = True) -> List[SearchResult]:
    """Independent ISMCTS searches of ``views`` (one decision each, its seat to move the
    observer), run in lock-step so that their leaves are valued together: at every step
    each search samples a world from its own ``random.Random(seed)`` stream and descends —
    PUCT when ``evaluator`` has a prior, UCB1 otherwise (the module docstring) — to a
    finished world (its returns, no evaluator) or a state to value; then one
    ``evaluate_prior`` (UCB1: ``evaluate``) call values the leaves of every search, and
    each search backs up its own path.  An evaluator that draws random numbers
    (:func:`~pipslab.agents.evaluators.draws_random`: rollouts) values each search's leaf
    in a call of its own, reseeded with that search's stream, so a search's visits are
    the same alone or in a batch (the module docstring says how far).

    ``iters`` iterations each (or, with ``seconds``, steps until the time is up; at least
    one); ``noise=(alpha, fraction)``: AlphaZero's Dirichlet noise mixed into each root's
    prior, drawn from that search's stream (training only; needs a prior); ``mix``: the
    share of one random ``playout`` (default a rollout evaluator; drawn from the search's
    stream) in a new node's value (needs a prior).  Returns one :class:`SearchResult` per view.

    With ``compiled`` (the default), a net evaluator the compiled encoder can feed
    (``compiled_player``), ``mix == 0`` and hands of one variant (no match), the same
    steps run compiled (:mod:`pipslab.agents.puct_compiled`): each search's worlds dealt
    by its own compiled generator seeded with its seed — the same searches, other
    worlds than this loop's, so other visits for a seed.  ``compiled=False``: this loop."""
    if len(views) != len(seeds):
        raise PipslabError(f"ismcts: {len(views)} views but {len(seeds)} seeds; give one seed per search")
    evaluator = as_evaluator("dominoes", evaluator)
    guided = has_prior(evaluator)
    noise = check_noise(noise)
    if (noise is not None or mix) and not guided:
        raise PipslabError("ismcts: root noise and mix need an evaluator with a prior (eval=net)")
    if not 0.0 <= mix <= 1.0:
        raise PipslabError(f"ismcts: mix is a share from 0 to 1, got {mix}")
    if mix and playout is None:
        playout = make_evaluator("dominoes", "rollout")
    budget = _Budget("ismcts", "iters", iters, seconds).start()
    if not views:
        return []
    net = _compiled_net(views, evaluator, mix) if compiled else None
    if net is not None:
        from . import puct_compiled
        return [SearchResult(*r) for r in puct_compiled.run_searches(views, seeds, net[0], net[1], iters, c, noise,
                                                                     seconds)]
    searches = [_Search(view, int(seed)) for view, seed in zip(views, seeds)]
    descend = _descend_puct if guided else _descend_ucb
    shared = not draws_random(evaluator)     # deterministic: one call values every search's leaf
    while True:
        waiting = []
        for s in searches:
            world = s.descend(descend, c)
            if world.is_terminal:
                s.backup(world.returns())
            else:
                waiting.append((s, world))
        if waiting:
            _value(waiting, evaluator, guided, shared, noise, mix, playout)
        if not budget.more():
            break
    return [s.result() for s in searches]


def _compiled_net(views, evaluator, mix: float):
    """``(net, encoder kind)`` where compiled PUCT can run these searches (:func:`search_many`), else None."""
    ask = getattr(evaluator, "compiled_player", None)
    variant = views[0].variant
    if ask is None or mix or any(v.match is not None or v.variant != variant for v in views):
        return None
    return ask(variant)


def _value(waiting, evaluator, guided: bool, shared: bool, noise, mix: float, playout) -> None:
    """Value the leaves ``[(search, state)]`` of one lock-step step and back them up."""
    if shared:
        states = [w for _, w in waiting]
        values, priors = evaluator.evaluate_prior(states) if guided else (evaluator.evaluate(states), None)
    else:
        values, priors = [], []
        for s, w in waiting:   # on each search's own stream
            reseed(evaluator, s.fast)
            v, p = evaluator.evaluate_prior([w]) if guided else (evaluator.evaluate([w]), [None])
            values.append(v[0])
            priors.append(p[0])
    for i, (s, world) in enumerate(waiting):
        returns = np.asarray(values[i], dtype=float).tolist()
        if guided:
            prior = priors[i]
            if mix:   # AlphaGo's mixed leaf value: (1 - mix) * evaluator + mix * one random playout
                reseed(playout, s.fast)
                rolled = playout.estimate(world)
                returns = [(1 - mix) * v + mix * r for v, r in zip(returns, rolled)]
            if noise is not None and s.node is s.root:
                prior = _noisy(prior, noise, s.fast)
            s.node.prior = prior
        s.backup(returns)


class ISMCTSAgent(Agent):
    name = "ismcts"

    TIME_ROUND = 64   # compiled iterations between looks at the clock (time=)

    def __init__(self, iters: int = 1000, time: float | None = None, c: float | None = None,
                 eval: str = "rollout", net: str = "", mix: float = 0.0, compiled: bool = True):
        self.budget = _Budget("ismcts", "iters", iters, time)
        self.compiled = bool(compiled)
        if net:   # net=NAME: an alias of eval=net:NAME (net=shipped: the variant's shipped net)
            if eval != "rollout":
                raise PipslabError("ismcts: net= values nodes with the net; give net= or eval=, not both")
            eval = "net" + ("" if net == "shipped" else f":{net}")
        self.evaluator = make_evaluator("dominoes", eval)
        self.guided = has_prior(self.evaluator)     # PUCT with the evaluator's prior, else UCB1
        if not 0.0 <= mix <= 1.0 or (mix and not self.guided):
            raise PipslabError(f"ismcts: mix is the share of a random playout in a node's value beside the "
                               f"evaluator's, from 0 to 1, and needs an evaluator with a prior (eval=net); "
                               f"got mix={mix}" + ("" if self.guided else f" with eval={eval}"))
        self.mix = float(mix)
        self.playout = make_evaluator("dominoes", "rollout") if self.mix else None
        self.c = c if c is not None else (1.5 if self.guided else 0.7)
        for rollout in (self.evaluator, self.playout):
            if isinstance(rollout, DominoRollout):
                rollout.compiled = self.compiled

    def act(self, observation: Observation, rng: np.random.Generator) -> int:
        legal = observation.legal_actions
        if len(legal) == 1:
            return legal[0]
        view = observation.view
        seed = int(rng.integers(1 << 62))
        if not self.guided and self.compiled and type(self.evaluator) is DominoRollout and view.match is None:
            return self._act_compiled(observation, seed)
        return self._search([view], [seed])[0].action

    def search_batch(self, observations: Sequence[Observation], rngs: Sequence[np.random.Generator],
                     noise=None) -> List[SearchResult]:
        """This agent's search of many decisions at once (:func:`search_many`: lock-step,
        the leaves of all valued in one evaluator call) — what a trainer asks for the
        visit-count policies of many games' decisions.  Each decision's stream is seeded
        by one draw from its ``rngs`` generator, as :meth:`act` seeds its own, so
        ``search_batch([o], [rng])[0].action`` is ``act(o, rng)`` wherever ``act`` runs the
        Python loop (a forced move is searched too; the compiled random playouts of
        :meth:`act` are never used here).  ``noise=(alpha, fraction)``: root exploration
        noise (training; off in play)."""
        if len(observations) != len(rngs):
            raise PipslabError(f"ismcts: {len(observations)} observations but {len(rngs)} generators")
        seeds = [int(rng.integers(1 << 62)) for rng in rngs]
        return self._search([o.view for o in observations], seeds, noise)

    def _search(self, views, seeds, noise=None) -> List[SearchResult]:
        return search_many(views, seeds, self.evaluator, self.budget.count, self.c, noise=noise, mix=self.mix,
                           seconds=self.budget.seconds, playout=self.playout, compiled=self.compiled)

    def _act_compiled(self, observation: Observation, seed: int) -> int:
        """The same iterations with random playouts, compiled (:mod:`pipslab.agents.ismcts_compiled`),
        their generator seeded with ``seed`` (the decision's first draw, as the Python loop's)."""
        from pipslab.envs.dominoes.compiled import new_rng, params

        from . import ismcts_compiled
        view = observation.view
        variant = view.variant
        worlds = packed_world_sampler(view)
        tree = ismcts_compiled.Tree(variant.num_actions, 1024)
        r = new_rng(seed)
        prm = params(variant)
        budget, rollouts = self.budget, self.evaluator.rollouts
        if budget.seconds is None:
            ismcts_compiled.run(prm, worlds, tree, r, budget.count, self.c, rollouts)
        else:   # in rounds of a few iterations until the time is up (at least one round)
            deadline = time.perf_counter() + budget.seconds
            while True:
                ismcts_compiled.run(prm, worlds, tree, r, self.TIME_ROUND, self.c, rollouts)
                if time.perf_counter() >= deadline:
                    break
        legal = observation.legal_actions
        best_visits, best_a = -1, legal[0]
        for a in legal:
            v = tree.root_visits(a)
            if v > best_visits:
                best_visits, best_a = v, a
        return best_a

    def check_table(self, game: str, options: dict) -> None:
        """An evaluator that plays only some variants (``eval=net``) refuses the others in
        one line before any game."""
        check = getattr(self.evaluator, "check_table", None)
        if check is not None:
            check(game, options)


class OracleAgent(Agent):
    """Cheats: plays the exact solver's move on the true state (an upper bound, not a player)."""

    name = "oracle"
    sees_hidden_state = True

    def __init__(self, objective: str = "margin"):
        self.solver = Solver(objective)

    def check_table(self, game: str, options: dict) -> None:
        _check_solver_table("oracle", game, options)

    def act(self, observation: Observation, rng: np.random.Generator) -> int:
        legal = observation.legal_actions
        if len(legal) == 1:
            return legal[0]
        state = observation.state
        if state is None:
            raise PipslabError("the oracle needs the true state: run it through pipslab's game loop")
        return _best(self.solver.move_values(state))


@register("pimc", family="dominoes", when=_solvable)
def _make_pimc(game: str, **params) -> PIMCAgent:
    return PIMCAgent(**params)


@register("ismcts", family="dominoes")
def _make_ismcts(game: str, **params) -> ISMCTSAgent:
    return ISMCTSAgent(**params)


@register("oracle", family="dominoes", when=_solvable)
def _make_oracle(game: str, **params) -> OracleAgent:
    return OracleAgent(**params)
