"""Backgammon search: n-ply ``expectimax`` and ``mcts`` with chance nodes, over an evaluator seam.

An evaluator (the seam, as OpenSpiel's ``Evaluator``; :class:`Evaluator`) gives two things:

* **afterstate scores** — of the positions just after each play of one roll, from the
  side of the player who made it — which *rank* the plays (the 0-ply choice, and the
  reply a searched opponent is assumed to make);
* **state values** — expected points for the player on roll, comparable across
  positions — which search compares at its leaves.

``eval=pubeval`` is Tesauro's linear evaluator (race weights when the position before the
play has no contact — as the ``pubeval`` agent) and ``eval=race`` the hand-written
``race`` heuristic.  Both are rankers; their state value is a calibration of their scores
of the position from both sides plus the race (pips, bar, borne off), fitted on their own
self-play (:mod:`pipslab.agents.backgammon_value`, ``pipslab calibrate``).  ``eval=gnubg`` is GNU
BG's 0-ply net (evaluation only) and ``eval=rollout`` pubeval-vs-pubeval rollouts to the
end (Tesauro & Galperin's Monte Carlo policy improvement; ``eval=rollout:N`` plays ``N``
rollouts per afterstate, default 16); both are in points already.
A network evaluator plugs in the same way.

* ``expectimax:plies=N,eval=E,filter=K`` — GNU BG-style n-ply over the ``K`` best plays by
  pubeval (the move filter, default 8).  0-ply picks the candidate ``E`` ranks first
  (``expectimax:plies=0,eval=pubeval`` plays like ``pubeval``); 1-ply scores each
  candidate by the average over the opponent's 21 rolls of the state value, for the
  mover, of the position after the reply ``E`` ranks first; 2-ply looks one roll further
  under each reply.  A finished game scores its points (1, 2 for a gammon, 3 for a
  backgammon).
* ``mcts:iters=N,eval=E,c=C`` — UCT over afterstates with explicit chance nodes (a roll
  is sampled with its probability at each chance node); a new leaf is scored by ``E``'s
  state value (a single pubeval-policy rollout's points with ``eval=rollout``).

Both choose a whole play and then emit its checker moves (``AfterstateAgent``).
"""
from __future__ import annotations

import math

import numpy as np

from pipslab.envs.backgammon import Position
from pipslab.envs.backgammon import fast
from pipslab.envs.errors import PipslabError

from .backgammon import AfterstateAgent, RaceAgent, pubeval_scores
from .backgammon_value import calibration, finished_points, play_out, race_mask, swap
from .registry import register

WIN = 100.0
# the 21 distinct rolls and their probabilities
ROLLS = tuple((a, b) for a in range(1, 7) for b in range(1, a + 1))
ROLL_P = np.array([1 / 36 if a == b else 2 / 36 for a, b in ROLLS])


def _is_race(board) -> bool:
    return bool(race_mask(board)[0])


def _finished_value(rows: np.ndarray) -> np.ndarray:
    """For afterstates where the mover has borne off everything: ±WIN×points, else 0."""
    return WIN * finished_points(rows)


class Evaluator:
    """The seam.  ``afterstate_values``: scores of afterstates (k x 26, the mover's side)
    for the mover, used to *rank* the plays of one roll (``race``: whether the position
    before the play had no contact); ``in_points`` says they are expected points too.
    ``state_values``: expected points (cubeless, win = +1) of positions for the player on
    roll, comparable across positions — what search compares at its leaves.
    ``reseed(rng)``: called by the searching agent at the start of each decision with the
    game's rng; an evaluator that draws random numbers takes them from there, never from a
    seed or counter of its own (the replay contract of :class:`~pipslab.agents.base.Agent`)."""

    in_points = False

    def reseed(self, rng: np.random.Generator) -> None:
        """Deterministic evaluators draw nothing."""

    def afterstate_values(self, rows: np.ndarray, race: bool) -> np.ndarray:
        raise NotImplementedError

    def values(self, rows: np.ndarray, race: bool) -> np.ndarray:
        """Ranking scores with finished games replaced by ±WIN×points."""
        rows = np.asarray(rows, dtype=np.int64)
        done = _finished_value(rows)
        scores = self.afterstate_values(rows, race)
        return np.where(done != 0, done, scores)

    def state_values(self, rows: np.ndarray) -> np.ndarray:
        """Default for evaluators in points: minus the value of the same position as the
        opponent's afterstate (evaluators in points do not use the race flag)."""
        if not self.in_points:
            raise NotImplementedError(f"{type(self).__name__} has no state value")
        return -self.afterstate_values(swap(np.asarray(rows, dtype=np.int64).reshape(-1, 26)), False)


class CalibratedEvaluator(Evaluator):
    """A ranker whose state value is its calibration (:mod:`pipslab.agents.backgammon_value`)."""

    calibration_name = ""

    def state_values(self, rows):
        return calibration(self.calibration_name).state_values(rows, self.afterstate_values)


class PubevalEvaluator(CalibratedEvaluator):
    calibration_name = "pubeval"

    def afterstate_values(self, rows, race):
        s = pubeval_scores(rows, race)
        return np.where(np.isfinite(s), s, WIN)


class RaceEvaluator(CalibratedEvaluator):
    calibration_name = "race"

    def __init__(self):
        self._agent = RaceAgent()

    def afterstate_values(self, rows, race):
        return np.array([self._agent.score(Position._trusted(tuple(int(v) for v in r))) for r in rows])


class GnubgEvaluator(Evaluator):
    """GNU Backgammon's 0-ply net (``gnubg_nn.probabilities``): cubeless equity, natively
    of a position with a player on roll.  For evaluation only (``[bench]`` extra)."""

    in_points = True

    def __init__(self):
        from .backgammon import _gnubg
        self._g = _gnubg()

    def state_values(self, rows):
        out = np.empty(len(rows))
        for i, r in enumerate(np.asarray(rows, dtype=np.int64).reshape(-1, 26)):
            on_roll = Position._trusted(tuple(int(v) for v in r))
            win, wg, wbg, lg, lbg = self._g.probabilities(on_roll.to_gnubg(), 0)
            out[i] = (2 * win - 1) + (wg - lg) + (wbg - lbg)
        return out

    def afterstate_values(self, rows, race):
        return -self.state_values(swap(np.asarray(rows, dtype=np.int64)))


class RolloutEvaluator(Evaluator):
    """Monte Carlo rollouts: from each afterstate both sides play on with ``pubeval``'s
    choices to the end of the game; the value is the mean result in points (±1/2/3) for the
    player who made the play.  Every afterstate of one call sees the same dice sequences
    (common random numbers), so differences between plays are not drowned in dice luck.
    The dice come from the game: :meth:`reseed` draws one number from the game's rng at
    each decision, and the calls within that decision count on from it; ``seed`` only
    serves an evaluator used by hand, never reseeded."""

    in_points = True

    def __init__(self, rollouts: int = 16, seed: int = 0):
        try:   # ``eval=rollout:N`` hands N over as text
            rollouts = int(rollouts)
        except ValueError:
            raise PipslabError(f"eval=rollout:N: N must be a whole number of rollouts, got {rollouts!r}") from None
        if rollouts < 1:
            raise PipslabError(f"eval=rollout:N: N must be at least 1, got {rollouts}")
        self.rollouts = rollouts
        self.seed = seed
        self._calls = 0

    def reseed(self, rng: np.random.Generator) -> None:
        self.seed = int(rng.integers(2 ** 63))
        self._calls = 0

    def afterstate_values(self, rows, race):
        self._calls += 1
        out = np.zeros(len(rows))
        for k in range(self.rollouts):
            for i, r in enumerate(rows):
                dice = np.random.default_rng([self.seed, self._calls, k])
                out[i] -= play_out(swap(np.asarray(r, dtype=np.int64)), pubeval_scores, dice)
        return out / self.rollouts


EVALUATORS = {"pubeval": PubevalEvaluator, "race": RaceEvaluator, "gnubg": GnubgEvaluator,
              "rollout": RolloutEvaluator}


def register_evaluator(name: str, factory) -> None:
    """Make ``eval=NAME`` (and ``eval=NAME:ARG``, the factory called with ``ARG``) known
    to every backgammon search; a trained network plugs in here without touching the
    search code."""
    EVALUATORS[name] = factory


def make_evaluator(spec: str) -> Evaluator:
    """``"pubeval"`` or ``"td:NET"``: the evaluator registered under the name before the
    colon, built with the text after it (if any) as its one argument."""
    from .registry import _load_builtin
    _load_builtin()   # modules that register evaluators (e.g. agents.td) are imported
    name, colon, arg = str(spec).partition(":")
    if name not in EVALUATORS:
        raise PipslabError(f"unknown backgammon evaluator {name!r}; known: {', '.join(sorted(EVALUATORS))}")
    return EVALUATORS[name](arg) if colon else EVALUATORS[name]()


_PUBEVAL = PubevalEvaluator()


def _reseed(evaluator, rng) -> None:
    """The evaluator's random numbers for this decision come from the game's rng (an
    evaluator registered without :class:`Evaluator`'s ``reseed`` draws none)."""
    reseed = getattr(evaluator, "reseed", None)
    if reseed is not None:
        reseed(rng)


def _replies(afterstate):
    """The opponent's afterstates for each of the 21 rolls, stacked: ``(rows, starts,
    race)`` with roll ``k``'s plays at ``rows[starts[k]:starts[k+1]]`` (his unchanged
    position when he cannot move) and ``race`` for the position before them."""
    before = swap(np.asarray(afterstate, dtype=np.int64))
    parts = []
    for a, b in ROLLS:
        rows = fast.afterstates(before, a, b)   # a view of a reused buffer: copied here
        parts.append(rows.astype(np.int64) if len(rows) else before[None, :])
    starts = np.cumsum([0] + [len(r) for r in parts])
    return np.concatenate(parts), starts, _is_race(before)


class ExpectimaxAgent(AfterstateAgent):
    name = "expectimax"

    def __init__(self, plies: int = 1, eval: str = "pubeval", filter: int = 8):
        super().__init__()
        if plies not in (0, 1, 2):
            raise PipslabError(f"expectimax: plies must be 0, 1 or 2, got {plies}")
        if filter < 1:
            raise PipslabError(f"expectimax: filter must be at least 1, got {filter}")
        self.plies = plies
        self.evaluator = make_evaluator(eval)
        self.filter = filter

    def value(self, afterstate: np.ndarray, plies: int) -> float:
        """Expected points of an afterstate for the player who just made it, searched
        ``plies`` deep: at 0 plies minus the evaluator's state value of the position for
        the opponent on roll; else the average over his 21 rolls of minus the value of
        the reply the evaluator ranks best, searched one ply less."""
        done = finished_points(afterstate)[0]
        if done:
            return done
        if plies == 0:
            return -float(self.evaluator.state_values(swap(afterstate)[None, :])[0])
        rows, starts, race = _replies(afterstate)
        scores = self.evaluator.values(rows, race)
        # the reply he would choose for each roll
        replies = rows[[lo + int(np.argmax(scores[lo:hi])) for lo, hi in zip(starts[:-1], starts[1:])]]
        if plies == 1:   # one batch: his finished games, and state values for me on roll
            done = finished_points(replies)
            mine = self.evaluator.state_values(swap(replies))
            return float(ROLL_P @ np.where(done != 0, -done, mine))
        return -sum(p * self.value(r, plies - 1) for p, r in zip(ROLL_P, replies))

    def choose_play(self, view, plays, rng):
        if len(plays) == 1:
            return plays[0]
        _reseed(self.evaluator, rng)
        race = Position.is_race(view.turn_start)
        rows = np.array([p.position for p in plays], dtype=np.int64)
        # move filter: the candidates are the best plays by pubeval (cheap) at 0 ply
        prefilter = _PUBEVAL.values(rows, race)
        order = np.argsort(-prefilter, kind="stable")[: self.filter]
        if self.plies == 0:   # the evaluator's own ranking (for pubeval: pubeval's play)
            values = self.evaluator.values(rows[order], race)
        else:
            values = [self.value(rows[i], self.plies) for i in order]
        return plays[int(order[int(np.argmax(values))])]


class _ChanceNode:
    """After a play: the opponent's roll is drawn here; children keyed by roll index."""
    __slots__ = ("children", "visits", "total")

    def __init__(self):
        self.children = {}
        self.visits = 0
        self.total = 0.0   # sum of values for the player who made the play


class _DecisionNode:
    """A player on roll with a known roll: children are afterstates (chance nodes)."""
    __slots__ = ("rows", "children", "visits")

    def __init__(self, rows: np.ndarray):
        self.rows = rows
        self.children = [None] * len(rows)
        self.visits = 0


class MCTSAgent(AfterstateAgent):
    name = "mcts"

    def __init__(self, iters: int = 200, eval: str = "pubeval", c: float = 1.0):
        super().__init__()
        if iters < 1:
            raise PipslabError(f"mcts: iters must be at least 1, got {iters}")
        self.iters = iters
        self.evaluator = make_evaluator(eval)
        if isinstance(self.evaluator, RolloutEvaluator):
            self.evaluator.rollouts = 1  # the tree does the averaging
        self.c = c

    def _leaf(self, afterstate) -> float:
        """Expected points for the player who just moved: the result when the game is
        over, else minus the evaluator's state value for the opponent on roll."""
        row = np.asarray(afterstate, dtype=np.int64)
        done = finished_points(row)[0]
        if done:
            return done
        return -float(self.evaluator.state_values(swap(row)[None, :])[0])

    def choose_play(self, view, plays, rng):
        if len(plays) == 1:
            return plays[0]
        _reseed(self.evaluator, rng)
        rows = np.array([p.position for p in plays], dtype=np.int64)
        root = _DecisionNode(rows)
        for _ in range(self.iters):
            self._simulate(root, rng)
        visits = [ch.visits if ch is not None else 0 for ch in root.children]
        return plays[int(np.argmax(visits))]

    def _simulate(self, node: _DecisionNode, rng) -> float:
        """Select, expand, evaluate, back up; returns the value for the player to move at ``node``."""
        node.visits += 1
        # selection: unvisited afterstates first, then UCT
        best_i, best_s = -1, -math.inf
        log_n = math.log(node.visits)
        for i, ch in enumerate(node.children):
            if ch is None:
                best_i = i
                break
            s = ch.total / ch.visits + self.c * math.sqrt(log_n / ch.visits)
            if s > best_s:
                best_i, best_s = i, s
        chance = node.children[best_i]
        afterstate = node.rows[best_i]
        if chance is None:
            chance = _ChanceNode()
            node.children[best_i] = chance
            value = self._leaf(afterstate)
        else:
            done = finished_points(afterstate)[0]
            if done:
                value = done
            else:
                k = int(rng.choice(len(ROLLS), p=ROLL_P))
                child = chance.children.get(k)
                if child is None:
                    a, b = ROLLS[k]
                    before = swap(afterstate)
                    replies = fast.afterstates(before, a, b)
                    replies = np.array(replies, dtype=np.int64) if len(replies) else before[None, :]
                    child = _DecisionNode(replies)
                    chance.children[k] = child
                value = -self._simulate(child, rng)
        chance.visits += 1
        chance.total += value
        return value


@register("expectimax", games=["backgammon"])
def _make_expectimax(game: str, **params) -> ExpectimaxAgent:
    return ExpectimaxAgent(**params)


@register("mcts", games=["backgammon"])
def _make_mcts(game: str, **params) -> MCTSAgent:
    return MCTSAgent(**params)
