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

* ``expectimax:plies=N,eval=E,filter=K,margin=M,filter2=K2,margin2=M2`` — GNU BG-style
  n-ply with its move filters: each play is valued at one ply only if it is among the
  ``K`` best (default 8) at 0 ply within ``M`` (default 0.16) equity of the best; at 2 ply
  only the ``K2`` best (default 2) at 1 ply within ``M2`` (default 0.04) are searched
  deeper, and the best at the deepest ply reached is played (a dropped play is never
  chosen; one survivor is played at once).  Why: most plays are hopeless at 0 ply, and
  2 ply costs ~21 x 21 evaluations of each play it searches (measured on ``eval=td``:
  K2=2, M2=0.04 chose differently from 2 ply over all K in 5% of positions, losing 0.0006
  equity a move, in a fifth of the time).  The 0-ply values are ``E``'s own scores
  (``pubeval``'s for ``eval=rollout``, whose 0 ply is the costly thing); a ranker's scores
  are no equity, so only ``K`` applies to them.  0-ply plays ``E``'s best
  (``expectimax:plies=0,eval=pubeval`` plays like ``pubeval``); 1-ply values a play by the
  average over the opponent's 21 rolls of the state value, for the mover, after the
  reply ``E`` ranks first; 2-ply looks one roll further under each reply.  A finished
  game scores its points (1, 2 for a gammon, 3 for a backgammon).  Each depth is one
  batch: all rolls' plays from one compiled call (``fast.batch_afterstates``), one
  ``ranked`` call for them.  The 21 rolls and their probabilities are the rules' table
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
from .evaluators import OPPONENT, WIN, BackgammonEvaluator, evaluators
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
_DICE = np.array(ROLLS, dtype=np.int64)     # the 21 rolls, as batch_afterstates takes them


def first_best(scores: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """For each segment ``scores[offsets[g]:offsets[g + 1]]`` (none empty): the index of its
    best score, the first of equal ones (as ``argmax``)."""
    starts = offsets[:-1]
    best = np.maximum.reduceat(scores, starts)
    hits = np.flatnonzero(scores == np.repeat(best, np.diff(offsets)))
    return hits[np.searchsorted(hits, starts)]


def keep_best(values, k: int, margin: float) -> np.ndarray:
    """GNU BG's move filter: the indices of the ``k`` best ``values`` that lie within
    ``margin`` of the best, best first (equal values in their order)."""
    values = np.asarray(values, dtype=float)
    order = np.argsort(-values, kind="stable")[:k]
    return order[values[order] >= values[order[0]] - margin]


class ExpectimaxAgent(AfterstateAgent):
    """GNU BG-style n-ply with its move filters (see the module docstring)."""

    name = "expectimax"

    def __init__(self, plies: int = 1, eval: str = "pubeval", filter: int = 8, margin: float = 0.16,
                 filter2: int = 2, margin2: float = 0.04):
        super().__init__()
        if plies not in (0, 1, 2):
            raise PipslabError(f"expectimax: plies must be 0, 1 or 2, got {plies}")
        for key, k in (("filter", filter), ("filter2", filter2)):
            if k < 1:
                raise PipslabError(f"expectimax: {key} must be at least 1, got {k}")
        for key, m in (("margin", margin), ("margin2", margin2)):
            if not m >= 0:
                raise PipslabError(f"expectimax: {key} must be 0 or more (equity), got {m}")
        self.plies = plies
        self.evaluator = make_evaluator(eval)
        self.filter, self.margin, self.filter2, self.margin2 = filter, margin, filter2, margin2
        # the root's 0-ply scores: the evaluator's own, but pubeval's for rollouts (rolling
        # out every play is the very work the filter is there to save)
        self.zero = _PUBEVAL if isinstance(self.evaluator, BackgammonRollout) else self.evaluator

    @staticmethod
    def _scores_are_equity(ev) -> bool:
        return bool(ev.in_points or ev.has_probabilities)

    def _ranked(self, rows, offsets, race) -> np.ndarray:
        """``ranked`` of stacked plays, segment ``g``'s made from a position with ``race[g]``:
        one evaluator call for each kind of position (contact, race) present."""
        row_race = np.repeat(race, np.diff(offsets))
        if row_race.all() or not row_race.any():
            return np.asarray(self.evaluator.ranked(rows, bool(row_race[0])), dtype=float)
        scores = np.empty(len(rows))
        for flag in (False, True):
            scores[row_race == flag] = self.evaluator.ranked(rows[row_race == flag], flag)
        return scores

    def _replies(self, befores, leaf: bool = True):
        """For each board (the side of the player on roll, game not over) and each of his 21
        rolls, in ``ROLLS`` order: the play the evaluator ranks first (his unchanged board
        when he cannot move) and, with ``leaf``, its 0-ply value for him (exact points
        when it ends the game): ``(n*21 x 26, n*21)``.  One compiled move generation and
        one ``ranked`` call (two when races and contact positions mix) for all of them."""
        n = len(befores)
        rows, offsets = fast.batch_afterstates(np.repeat(befores, len(ROLLS), axis=0), np.tile(_DICE, (n, 1)))
        rows = rows.astype(np.int64)
        scores = self._ranked(rows, offsets, np.repeat(race_mask(befores), len(ROLLS)))
        best = first_best(scores, offsets)
        chosen = rows[best]
        if not leaf:
            return chosen, None
        if self._scores_are_equity(self.evaluator):   # his score is his value: no second call
            done = finished_points(chosen)
            return chosen, np.where(done != 0, done, scores[best])
        return chosen, np.asarray(self.evaluator.values(swap(chosen), OPPONENT), dtype=float)

    def values(self, afterstates, plies: int) -> np.ndarray:
        """Expected points of afterstates (``k x 26``) for the player who just made each,
        searched ``plies`` deep: a finished game its points; at 0 plies minus the
        evaluator's state value of the opponent on roll; else the average over his 21
        rolls of minus the value (for him) of the reply the evaluator ranks best, searched
        one ply less.  Unfiltered below the root, and batched: all the afterstates' replies
        at each depth in one move generation and one evaluator call."""
        afterstates = np.asarray(afterstates, dtype=np.int64).reshape(-1, 26)
        out = finished_points(afterstates).astype(float)
        live = np.flatnonzero(out == 0)
        if not len(live):
            return out
        if plies == 0:
            out[live] = self.evaluator.values(swap(afterstates[live]), OPPONENT)
            return out
        replies, his = self._replies(swap(afterstates[live]), leaf=plies == 1)
        if plies > 1:
            his = self.values(replies, plies - 1)
        out[live] = -(his.reshape(-1, len(ROLLS)) @ ROLL_P)
        return out

    def value(self, afterstate: np.ndarray, plies: int) -> float:
        """:meth:`values` of one afterstate."""
        return float(self.values(np.asarray(afterstate)[None, :], plies)[0])

    def choose_play(self, view, plays, rng):
        if len(plays) == 1:
            return plays[0]
        _reseed(self.evaluator, rng)
        race = Position.is_race(view.turn_start)
        rows = np.array([p.position for p in plays], dtype=np.int64)
        # root filter: the best `filter` plays at 0 ply, within `margin` when the scores are equities
        zero = self.zero.ranked(rows, race)
        keep = keep_best(zero, self.filter, self.margin if self._scores_are_equity(self.zero) else np.inf)
        if self.plies == 0:   # the evaluator's own ranking (for pubeval: pubeval's play)
            if self.zero is self.evaluator:
                return plays[int(keep[0])]
            return plays[int(keep[int(np.argmax(self.evaluator.ranked(rows[keep], race)))])]
        if len(keep) == 1:
            return plays[int(keep[0])]
        # 1 ply for the kept plays: all their replies in one batch
        after = rows[keep]
        one = finished_points(after).astype(float)
        live = np.flatnonzero(one == 0)
        if len(live):
            replies, his = self._replies(swap(after[live]))
            one[live] = -(his.reshape(-1, len(ROLLS)) @ ROLL_P)
        if self.plies == 1:
            return plays[int(keep[int(np.argmax(one))])]
        # second filter: the best `filter2` at 1 ply within `margin2`; 2 ply for those only
        keep2 = keep_best(one, self.filter2, self.margin2)
        if len(keep2) > 1:
            two = one[keep2]          # a finished game keeps its points
            slot = np.full(len(keep), -1)
            slot[live] = np.arange(len(live))
            deep = slot[keep2] >= 0
            if deep.any():            # his replies are the 1-ply's: 2 ply is their 1 ply
                under = replies.reshape(-1, len(ROLLS), 26)[slot[keep2][deep]].reshape(-1, 26)
                two[deep] = -(self.values(under, 1).reshape(-1, len(ROLLS)) @ ROLL_P)
            keep2 = keep2[[int(np.argmax(two))]]
        return plays[int(keep[int(keep2[0])])]


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
