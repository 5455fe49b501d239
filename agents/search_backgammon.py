"""Backgammon search: n-ply ``expectimax`` and ``mcts`` with chance nodes, over an evaluator seam.

Evaluators (the seam, as OpenSpiel's ``Evaluator``) score **afterstates**: positions just
after a play, from the side of the player who made it (the opponent to roll), higher
being better for that player.  ``eval=pubeval`` is Tesauro's linear evaluator (race
weights when the position before the play has no contact — as the ``pubeval`` agent);
``eval=race`` is the hand-written ``race`` heuristic.  A network evaluator plugs in the
same way (:class:`Evaluator`).

* ``expectimax:plies=N,eval=E,filter=K`` — GNU BG-style n-ply over the ``K`` best plays by
  pubeval (the move filter, default 8): 0-ply picks the candidate whose afterstate ``E``
  scores best (``expectimax:plies=0,eval=pubeval`` plays like ``pubeval``); 1-ply scores
  each candidate by the average over the opponent's 21 rolls of minus the score of the
  reply ``E`` would choose; 2-ply looks one roll further under each reply.  A finished
  game scores ±``WIN`` (×2 gammon, ×3 backgammon).  ``eval=rollout`` scores afterstates by
  pubeval-vs-pubeval rollouts to the end (Tesauro & Galperin's Monte Carlo policy
  improvement), ``eval=gnubg`` by GNU BG's 0-ply net (evaluation only).
* ``mcts:iters=N,eval=E,c=C`` — UCT over afterstates with explicit chance nodes (a roll
  is sampled with its probability at each chance node); a new leaf is scored by ``E`` —
  pubeval's or race's score squashed into (−1, 1) by ``tanh(score / scale)``, a single
  pubeval-policy rollout's points with ``eval=rollout``, GNU BG's equity with
  ``eval=gnubg``.

Both choose a whole play and then emit its checker moves (``AfterstateAgent``).
"""
from __future__ import annotations

import math

import numpy as np

from envs.backgammon import Position
from envs.backgammon import fast
from envs.errors import PipslabError

from .backgammon import AfterstateAgent, RaceAgent, pubeval_scores
from .registry import register

WIN = 100.0
# the 21 distinct rolls and their probabilities
ROLLS = tuple((a, b) for a in range(1, 7) for b in range(1, a + 1))
ROLL_P = np.array([1 / 36 if a == b else 2 / 36 for a, b in ROLLS])


def _swap(rows: np.ndarray) -> np.ndarray:
    """Boards turned round to the other side (``swapped[i] == -board[25 - i]``)."""
    return -rows[..., ::-1]


def _is_race(board) -> bool:
    b = np.asarray(board)
    mine = np.flatnonzero(b[1:26] > 0)
    theirs = np.flatnonzero(b[0:25] < 0)
    my_back = mine[-1] + 1 if mine.size else 0
    opp_back = theirs[0] if theirs.size else 25
    return my_back < opp_back


def _finished_value(rows: np.ndarray) -> np.ndarray:
    """For afterstates where the mover has borne off everything: ±WIN×points, else 0."""
    mine_left = np.clip(rows[:, 1:], 0, None).sum(axis=1)
    theirs = np.clip(-rows[:, :25], 0, None)
    opp_left = theirs.sum(axis=1)
    opp_off = 15 - opp_left
    # backgammon: the loser still has a checker on the bar (index 0) or in the winner's home (1-6)
    in_home = theirs[:, 0:7].sum(axis=1) > 0
    points = np.where(opp_off > 0, 1.0, np.where(in_home, 3.0, 2.0))
    return np.where(mine_left == 0, WIN * points, 0.0)


class Evaluator:
    """Scores afterstates (k x 26, mover's side) for the mover; ``race`` is whether the
    position before the play had no contact.  ``in_points``: the scores are expected
    points (±1/2/3), not just an ordering."""

    in_points = False

    def afterstate_values(self, rows: np.ndarray, race: bool) -> np.ndarray:
        raise NotImplementedError

    def values(self, rows: np.ndarray, race: bool) -> np.ndarray:
        """Scores with finished games replaced by ±WIN×points."""
        rows = np.asarray(rows, dtype=np.int64)
        done = _finished_value(rows)
        scores = self.afterstate_values(rows, race)
        return np.where(done != 0, done, scores)


class PubevalEvaluator(Evaluator):
    def afterstate_values(self, rows, race):
        s = pubeval_scores(rows, race)
        return np.where(np.isfinite(s), s, WIN)


class RaceEvaluator(Evaluator):
    def __init__(self):
        self._agent = RaceAgent()

    def afterstate_values(self, rows, race):
        return np.array([self._agent.score(Position._trusted(tuple(int(v) for v in r))) for r in rows])


class GnubgEvaluator(Evaluator):
    """GNU Backgammon's 0-ply net (``gnubg_nn.probabilities``): cubeless equity of the
    afterstate for the player who made the play.  For evaluation only (``[bench]`` extra)."""

    in_points = True

    def __init__(self):
        from .backgammon import _gnubg
        self._g = _gnubg()

    def afterstate_values(self, rows, race):
        out = np.empty(len(rows))
        for i, r in enumerate(rows):
            on_roll = Position._trusted(tuple(int(v) for v in -r[::-1]))  # the opponent to roll
            win, wg, wbg, lg, lbg = self._g.probabilities(on_roll.to_gnubg(), 0)
            out[i] = -((2 * win - 1) + (wg - lg) + (wbg - lbg))
        return out


class RolloutEvaluator(Evaluator):
    """Monte Carlo rollouts: from each afterstate both sides play on with ``pubeval``'s
    choices to the end of the game; the value is the mean result in points (±1/2/3) for the
    player who made the play.  Every afterstate of one call sees the same dice sequences
    (common random numbers), so differences between plays are not drowned in dice luck."""

    in_points = True

    def __init__(self, rollouts: int = 16, seed: int = 0):
        self.rollouts = rollouts
        self.seed = seed
        self._calls = 0

    def afterstate_values(self, rows, race):
        self._calls += 1
        out = np.zeros(len(rows))
        for k in range(self.rollouts):
            for i, r in enumerate(rows):
                dice = np.random.default_rng([self.seed, self._calls, k])
                out[i] += self.playout(np.asarray(r, dtype=np.int64), dice)
        return out / self.rollouts

    @staticmethod
    def playout(afterstate: np.ndarray, dice) -> float:
        board, sign = afterstate, 1.0
        for _ in range(1000):
            board, sign = _swap(board), -sign
            a, b = dice.integers(1, 7, size=2)
            rows = fast.afterstates(board, int(a), int(b))
            if len(rows):
                rows = np.array(rows, dtype=np.int64)
                board = rows[int(np.argmax(pubeval_scores(rows, _is_race(board))))]
                done = _finished_value(board[None, :])[0]
                if done:
                    return sign * done / WIN
        return 0.0


_PUBEVAL = PubevalEvaluator()
EVALUATORS = {"pubeval": PubevalEvaluator, "race": RaceEvaluator, "gnubg": GnubgEvaluator,
              "rollout": RolloutEvaluator}


def make_evaluator(name: str) -> Evaluator:
    try:
        return EVALUATORS[name]()
    except KeyError:
        raise PipslabError(f"unknown backgammon evaluator {name!r}; known: {', '.join(sorted(EVALUATORS))}") from None


def _replies(afterstate) -> list:
    """For each of the 21 rolls: (probability, opponent's afterstates as rows, race flag)."""
    before = _swap(np.asarray(afterstate, dtype=np.int64))
    race = _is_race(before)
    out = []
    for (a, b), p in zip(ROLLS, ROLL_P):
        rows = fast.afterstates(before, a, b)
        rows = np.array(rows, dtype=np.int64) if len(rows) else before[None, :]
        out.append((p, rows, race))
    return out


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

    def value(self, afterstate: np.ndarray, plies: int, static: float) -> float:
        """Value of an afterstate for the player who just moved, searched ``plies`` deep;
        ``static`` is its 0-ply score."""
        done = _finished_value(afterstate[None, :])[0]
        if done or plies == 0:
            return done if done else static
        total = 0.0
        for p, rows, race in _replies(afterstate):
            scores = self.evaluator.values(rows, race)
            best = int(np.argmax(scores))  # the reply the evaluator would choose
            total -= p * self.value(rows[best], plies - 1, scores[best])
        return total

    def choose_play(self, view, plays, rng):
        if len(plays) == 1:
            return plays[0]
        race = Position.is_race(view.turn_start)
        rows = np.array([p.position for p in plays], dtype=np.int64)
        # move filter: the candidates are the best plays by pubeval (cheap) at 0 ply
        prefilter = _PUBEVAL.values(rows, race)
        order = np.argsort(-prefilter, kind="stable")[: self.filter]
        static = self.evaluator.values(rows[order], race)
        values = [self.value(rows[i], self.plies, static[j]) for j, i in enumerate(order)]
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

    def __init__(self, iters: int = 200, eval: str = "pubeval", c: float = 1.0, scale: float = 5.0):
        super().__init__()
        if iters < 1:
            raise PipslabError(f"mcts: iters must be at least 1, got {iters}")
        self.iters = iters
        self.evaluator = make_evaluator(eval)
        if isinstance(self.evaluator, RolloutEvaluator):
            self.evaluator.rollouts = 1  # the tree does the averaging
        self.c = c
        self.scale = scale

    def _leaf(self, afterstate) -> float:
        """Value for the player who just moved: points (±1/2/3) when the game is over or
        the evaluator speaks in points, else its score squashed into (-1, 1)."""
        row = np.asarray(afterstate, dtype=np.int64)[None, :]
        done = _finished_value(row)[0]
        if done:
            return done / WIN
        value = self.evaluator.values(row, _is_race(row[0]))[0]
        return float(value) if self.evaluator.in_points else math.tanh(value / self.scale)

    def choose_play(self, view, plays, rng):
        if len(plays) == 1:
            return plays[0]
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
            done = _finished_value(afterstate[None, :])[0]
            if done:
                value = done / WIN
            else:
                k = int(rng.choice(len(ROLLS), p=ROLL_P))
                child = chance.children.get(k)
                if child is None:
                    a, b = ROLLS[k]
                    before = _swap(afterstate)
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
