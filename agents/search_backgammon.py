"""Backgammon search: n-ply ``expectimax`` and ``mcts`` with chance nodes, over the evaluator seam.

Search values positions only through an evaluator (:mod:`pipslab.agents.evaluators`,
family ``"backgammon"``, chosen with ``eval=NAME[:ARG]``; the protocol is
``probabilities(positions)``, an object with only that runs both searches), from which
:class:`~pipslab.agents.evaluators.BackgammonEvaluator` derives two things:

* **afterstate scores** — of the positions just after each play of one roll, from the
  side of the player who made it — which *rank* the plays (the 0-ply choice, and the
  reply a searched opponent is assumed to make; ``ranked``); a ranker (``pubeval``,
  ``race``) gives only these, with a calibrated value beside them;
* **values** — cubeless equity in points of boards for a seat (``values(boards, seat)``),
  comparable across positions — which search compares at its leaves.

``eval=pubeval`` is Tesauro's linear evaluator (race weights when the position before the
play has no contact — as the ``pubeval`` agent) and ``eval=race`` the hand-written
``race`` heuristic.  Both are rankers; their state value is a calibration of their scores
of the position from both sides plus the race (pips, bar, borne off), fitted on their own
self-play (:mod:`pipslab.agents.backgammon_value`, ``pipslab calibrate``).  ``eval=gnubg`` is GNU
BG's 0-ply net (evaluation only) and ``eval=rollout`` pubeval-vs-pubeval rollouts to the
end (Tesauro & Galperin's Monte Carlo policy improvement; ``eval=rollout:N`` plays ``N``
rollouts per afterstate, default 16); both are in points already, and ``gnubg`` gives
outcome probabilities as well.  ``eval=td`` is the TD network (:mod:`pipslab.agents.td`); any
evaluator registered with ``register_evaluator("backgammon", NAME, factory)`` plugs in
the same way, without touching this module.  The built-in ones are defined in
:mod:`pipslab.agents.backgammon_evaluators`.

* ``expectimax:plies=N,eval=E,filter=K`` — GNU BG-style n-ply over the ``K`` best plays by
  pubeval (the move filter, default 8).  0-ply picks the candidate ``E`` ranks first
  (``expectimax:plies=0,eval=pubeval`` plays like ``pubeval``); 1-ply scores each
  candidate by the average over the opponent's 21 rolls of the state value, for the
  mover, of the position after the reply ``E`` ranks first; 2-ply looks one roll further
  under each reply.  A finished game scores its points (1, 2 for a gammon, 3 for a
  backgammon).  The 21 rolls and their probabilities are the rules' table
  (:data:`pipslab.envs.backgammon.game.CHANCE_OUTCOMES`).
* ``mcts:iters=N,eval=E,c=C`` — UCT over afterstates with explicit chance nodes (a roll
  is sampled with its probability at each chance node); a new leaf is scored by ``E``'s
  value (a single pubeval-policy rollout's points with ``eval=rollout``).

Both choose a whole play and then emit its checker moves (``AfterstateAgent``).
"""
from __future__ import annotations

import math

import numpy as np

from pipslab.envs.backgammon import Position
from pipslab.envs.backgammon import fast
from pipslab.envs.backgammon.game import ROLL_PROBABILITIES as ROLL_P
from pipslab.envs.backgammon.game import ROLLS
from pipslab.envs.errors import PipslabError

from .backgammon import AfterstateAgent
from .backgammon_evaluators import BackgammonRollout, PubevalEvaluator
from .backgammon_value import finished_points, race_mask, swap
from .evaluators import OPPONENT, ON_ROLL, WIN, BackgammonEvaluator, evaluators
from .evaluators import make_evaluator as _make_evaluator
from .evaluators import reseed as _reseed
from .registry import register


def _is_race(board) -> bool:
    return bool(race_mask(board)[0])


def _finished_value(rows: np.ndarray) -> np.ndarray:
    """For afterstates where the mover has borne off everything: ±WIN×points, else 0."""
    return WIN * finished_points(rows)


# The backgammon family's table and builder under their old names (``pipslab calibrate``
# uses them): ``make_evaluator("td:NET")`` is ``evaluators.make_evaluator("backgammon", "td:NET")``.
EVALUATORS = evaluators("backgammon", load=False)


def make_evaluator(spec) -> BackgammonEvaluator:
    """``"pubeval"`` or ``"td:NET"``: :func:`pipslab.agents.evaluators.make_evaluator` of the
    backgammon family."""
    return _make_evaluator("backgammon", spec)


_PUBEVAL = PubevalEvaluator()


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
            return float(self.evaluator.values(swap(afterstate)[None, :], OPPONENT)[0])
        rows, starts, race = _replies(afterstate)
        scores = self.evaluator.ranked(rows, race)
        # the reply he would choose for each roll
        replies = rows[[lo + int(np.argmax(scores[lo:hi])) for lo, hi in zip(starts[:-1], starts[1:])]]
        if plies == 1:   # one batch: my values on roll after his replies (his finished games exact)
            return float(ROLL_P @ self.evaluator.values(swap(replies), ON_ROLL))
        return -sum(p * self.value(r, plies - 1) for p, r in zip(ROLL_P, replies))

    def choose_play(self, view, plays, rng):
        if len(plays) == 1:
            return plays[0]
        _reseed(self.evaluator, rng)
        race = Position.is_race(view.turn_start)
        rows = np.array([p.position for p in plays], dtype=np.int64)
        # move filter: the candidates are the best plays by pubeval (cheap) at 0 ply
        prefilter = _PUBEVAL.ranked(rows, race)
        order = np.argsort(-prefilter, kind="stable")[: self.filter]
        if self.plies == 0:   # the evaluator's own ranking (for pubeval: pubeval's play)
            values = self.evaluator.ranked(rows[order], race)
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
        if isinstance(self.evaluator, BackgammonRollout):
            self.evaluator.rollouts = 1  # the tree does the averaging
        self.c = c

    def _leaf(self, afterstate) -> float:
        """Expected points for the player who just moved: the result when the game is
        over, else the evaluator's value for him of the opponent on roll."""
        row = np.asarray(afterstate, dtype=np.int64)
        done = finished_points(row)[0]
        if done:
            return done
        return float(self.evaluator.values(swap(row)[None, :], OPPONENT)[0])

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
