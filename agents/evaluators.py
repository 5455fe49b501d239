"""The evaluator seam: the one interface search calls to value positions, in both games.

Search (backgammon ``expectimax`` and ``mcts``, domino ``ismcts`` and ``pimc``) never
values a position itself: it asks an evaluator, chosen by name with ``eval=NAME`` or
``eval=NAME:ARG``.  Evaluators are registered per game family with
:func:`register_evaluator` and built with :func:`make_evaluator`, so a new heuristic or a
trained network plugs in by name — from any module, a test or ``--import MODULE`` —
without touching the search code (as OpenSpiel's ``Evaluator``).

Two small protocols, one per family (an object that follows one is enough: search wraps
it with :func:`as_evaluator`; the base classes only add defaults):

* **dominoes** — ``evaluate(states) -> array (k, players)``: every seat's expected return
  of each state, each seat's value from what that seat may see; optional
  ``prior(states) -> [{action: probability}]`` for the seat to move (``ismcts`` runs PUCT
  when there is one, UCB1 otherwise) and ``evaluate_prior(states) -> (values, priors)``,
  both at once — what PUCT asks of every new node (derived: the two calls; a network
  answers it from one forward pass).
* **backgammon** — ``probabilities(positions) -> array (k, 5)`` (the equity follows by
  :func:`equity`).  *Rankers* (``pubeval``, ``race``) are a separate protocol,
  ``afterstate_values(rows, race)``: scores that only order the plays of one roll, used
  to filter and choose moves, never as a value.

Both may have ``reseed(rng)``, called by the searching agent at the start of each
decision with that decision's generator: an evaluator that draws random numbers
(rollouts) takes them from there (the replay contract of :class:`~pipslab.agents.base.Agent`).
An evaluator with a ``reseed`` of its own is taken to draw (:func:`draws_random`): a
lock-step search of many decisions at once (``ismcts``'s ``search_many``) then values
each decision's states in a call of their own, reseeded with that decision's stream, and
an evaluator without one in one call for all of them.

Dominoes (family ``"dominoes"``, :class:`DominoEvaluator`)
    ``states``: full states — the worlds search samples with ``sample_world(view, rng)``
    and the states it reaches from them (:class:`~pipslab.envs.dominoes.engine.DominoState`,
    ``TripleState``, ``TroshinMatch``); an evaluator must not change them.  Scale: the
    game's ``returns()`` — zero-sum, +1 for a winner, the losers share the loss; a
    finished state gets its exact result.  The states are sampled worlds with every hand
    filled in: an evaluator that should judge only what a seat may see values
    ``state.observe(seat)`` (as ``eval=net`` does).  ``values(states, seat)``, one seat's
    column, is derived (the depth-limited solver of ``pimc`` asks it; an evaluator that
    defines only ``values`` is accepted too).
    Built in (:mod:`pipslab.agents.dominoes_value`): ``rollout`` (:class:`DominoRollout`,
    uniformly random play to the end; ``ismcts``'s default), ``hand`` (the solver's
    tiles-and-pips heuristic; ``pimc``'s default) and ``pips``; ``net``
    (:mod:`pipslab.agents.domino_net`: value heads and the policy as ``prior``).

Backgammon (family ``"backgammon"``, :class:`BackgammonEvaluator`; the built-in ones
in :mod:`pipslab.agents.backgammon_evaluators`, ``td`` in :mod:`pipslab.agents.td`)
    ``positions``: boards, ``k x 26`` integer arrays (a :class:`~pipslab.envs.backgammon.Position`
    each), every board **from the side of the player on roll, before his roll** (GNU BG's
    convention).  The base class derives ``values(boards, seat)``, search's leaf value;
    ``seat``: :data:`ON_ROLL` (0), the player on roll, or :data:`OPPONENT` (1),
    the other one — the player who has just moved.  Scale: cubeless equity in points —
    +1 a win, 2 a gammon, 3 a backgammon, negative for a loss — ``OPPONENT``'s value being
    minus ``ON_ROLL``'s.  A board whose opponent has borne off all his checkers is worth
    exactly -1, -2 or -3 to the player on roll.
    ``probabilities(boards) -> (k, 5)``, for evaluators that have them
    (:attr:`BackgammonEvaluator.has_probabilities`; networks, GNU BG): ``[win, win gammon,
    win backgammon, lose gammon, lose backgammon]`` for the player on roll, the gammon
    columns including backgammons (GNU BG's and wildbg's outputs); the equity follows as
    :func:`equity`.  An evaluator that defines only ``probabilities`` is complete: its
    state values and afterstate scores follow from them.
    Besides values, a backgammon evaluator **ranks** the plays of one roll
    (``afterstate_values(rows, race)``: scores of the positions just after each play, for
    the player who made it), which search uses to pick a reply.  Rankers and value
    functions are kept apart: ``pubeval`` and ``race`` are *rankers* — their scores order
    the plays of one roll but are no value (:mod:`pipslab.agents.backgammon_value`) — and
    their ``values`` are their calibrated state value (a logistic fit on their self-play,
    so equity ``2p - 1``, gammons not modelled); ``rollout``, ``gnubg`` and ``td`` are value
    functions (``in_points``): their scores are equities, the same numbers as ``values``.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Sequence

import numpy as np

from pipslab.envs.errors import PipslabError

from .backgammon_value import finished_points, swap

FAMILIES = ("backgammon", "dominoes")
ON_ROLL, OPPONENT = 0, 1          # the seats of a backgammon board
WIN = 100.0                       # a finished game outranks every score of an unfinished one

Factory = Callable[..., "Evaluator"]
_REGISTRY: Dict[str, Dict[str, Factory]] = {family: {} for family in FAMILIES}


class Evaluator:
    """The base of both families' evaluators (see the module docstring); ``reseed(rng)``."""

    family = ""

    def reseed(self, rng) -> None:
        """Deterministic evaluators draw nothing."""

    def values(self, batch, seat: int) -> np.ndarray:
        raise NotImplementedError


# ------------------------------------------------------------------------ registry
def _family(family: str) -> str:
    """A family's name, or a game's name (``happy``) taken to its family."""
    if family in _REGISTRY:
        return family
    from pipslab.envs.game import GAMES
    game = GAMES.get(family)
    if game is not None and getattr(game, "family", "") in _REGISTRY:
        return game.family
    raise PipslabError(f"unknown game family {family!r}; known: {', '.join(FAMILIES)}")


def register_evaluator(family: str, name: str, factory: Factory) -> None:
    """Make ``eval=NAME`` known to every search of ``family`` (``"backgammon"`` or
    ``"dominoes"``); ``eval=NAME:ARG`` calls ``factory(ARG)`` (``ARG`` as text), ``eval=NAME``
    calls ``factory()``.  Registering a name again replaces the factory."""
    if not name or ":" in name or "," in name or "=" in name:
        raise PipslabError(f"evaluator name {name!r} must be a plain word")
    _REGISTRY[_family(family)][name] = factory


def evaluators(family: str, load: bool = True) -> Dict[str, Factory]:
    """The registered evaluators of ``family``: the live table, name -> factory (``load``:
    first import the modules that register the built-in ones)."""
    if load:
        from .registry import load_catalogue   # the agent modules register the built-in evaluators
        load_catalogue()
    return _REGISTRY[_family(family)]


def evaluator_names(family: str) -> List[str]:
    return sorted(evaluators(family))


def make_evaluator(family: str, spec) -> Evaluator:
    """``make_evaluator("backgammon", "td:NET")``: the evaluator registered in ``family``
    under the name before the colon, built with the text after it (if any) as its one
    argument; an object that follows the family's protocol without its base class comes
    wrapped (:func:`as_evaluator`)."""
    if not isinstance(spec, str):
        return as_evaluator(family, spec)
    table = evaluators(family)
    name, colon, arg = spec.strip().partition(":")
    if name not in table:
        raise PipslabError(f"unknown {_family(family)} evaluator {name!r}; known: {', '.join(sorted(table))}")
    try:
        made = table[name](arg) if colon else table[name]()
    except TypeError as exc:
        raise PipslabError(f"bad argument for evaluator {spec!r}: {exc}") from None
    return as_evaluator(family, made)


def rollout_count(text) -> int:
    """``N`` of ``eval=rollout:N`` (handed over as text): a whole number, at least 1."""
    try:
        n = int(text)
    except ValueError:
        raise PipslabError(f"eval=rollout:N: N must be a whole number of rollouts, got {text!r}") from None
    if n < 1:
        raise PipslabError(f"eval=rollout:N: N must be at least 1, got {n}")
    return n


def reseed(evaluator, rng) -> None:
    """``evaluator.reseed(rng)``, for evaluators built without :class:`Evaluator`'s (which
    then draw nothing)."""
    method = getattr(evaluator, "reseed", None)
    if method is not None:
        method(rng)


# ------------------------------------------------------------------------ dominoes
class DominoEvaluator(Evaluator):
    """A domino evaluator (the dominoes protocol: ``evaluate(states)``, optional ``prior``).
    Subclasses implement :meth:`estimate` (one unfinished state -> every seat's expected
    return; finished states are taken care of), or :meth:`evaluate`, or :meth:`values`
    (then :meth:`evaluate` asks it seat by seat)."""

    family = "dominoes"

    def estimate(self, state) -> Sequence[float]:
        raise NotImplementedError(f"{type(self).__name__} implements neither estimate, evaluate nor values")

    def _estimates(self, states) -> np.ndarray:
        return np.array([state.returns() if state.is_terminal else self.estimate(state) for state in states],
                        dtype=float).reshape(len(states), -1)

    def evaluate(self, states) -> np.ndarray:
        """``(k, players)``: every seat's expected return; a finished state's exact returns."""
        if type(self).values is not DominoEvaluator.values:   # the subclass's own values, seat by seat
            return _stack_values(self, states)
        return self._estimates(states)

    def values(self, states, seat: int) -> np.ndarray:
        """One seat's column of :meth:`evaluate` (the depth-limited solver asks this)."""
        if type(self).evaluate is not DominoEvaluator.evaluate:   # the subclass's own evaluate
            return np.asarray(self.evaluate(states), dtype=float)[:, seat]
        return self._estimates(states)[:, seat]

    def hand_priors(self, state, hands) -> list:
        """``prior`` of the seat to move in ``state`` were its hand each of ``hands`` (the
        rest of the state as it is): what inference asks of every world's hand before a
        past move (:mod:`pipslab.agents.belief`).  A network overrides it to encode the
        state once, since only the hand differs."""
        return self.prior(states_holding(state, hands))

    def evaluate_prior(self, states):
        """``(evaluate(states), prior(states))`` in one call — what PUCT asks of each new
        node, so an evaluator that gets both from one pass (a network) overrides this;
        ``priors`` is None for an evaluator without a ``prior``."""
        values = np.asarray(self.evaluate(states), dtype=float).reshape(len(states), -1)
        return values, (self.prior(states) if has_prior(self) else None)


def states_holding(state, hands) -> list:
    """Copies of ``state`` with the seat to move holding each of ``hands`` instead."""
    seat = state.current_player
    out = []
    for hand in hands:
        s = state.clone()
        s.hands[seat] = hand
        out.append(s)
    return out


def _stack_values(evaluator, states) -> np.ndarray:
    players = states[0].variant.players if len(states) else 0
    return np.array([evaluator.values(states, s) for s in range(players)], dtype=float).T.reshape(len(states), -1)


class _DominoAdapter(DominoEvaluator):
    """Any object with ``evaluate(states)`` or ``values(states, seat)`` (and optionally
    ``prior``, ``reseed``, ``check_table``) as a :class:`DominoEvaluator`."""

    def __init__(self, inner):
        self.inner = inner
        for name in ("prior", "check_table"):
            if callable(getattr(inner, name, None)):
                setattr(self, name, getattr(inner, name))

    def reseed(self, rng) -> None:
        reseed(self.inner, rng)

    def evaluate(self, states) -> np.ndarray:
        if callable(getattr(self.inner, "evaluate", None)):
            return np.asarray(self.inner.evaluate(states), dtype=float).reshape(len(states), -1)
        return _stack_values(self.inner, states)

    def values(self, states, seat: int) -> np.ndarray:
        if callable(getattr(self.inner, "values", None)):
            return np.asarray(self.inner.values(states, seat), dtype=float)
        return self.evaluate(states)[:, seat]

    def evaluate_prior(self, states):
        if callable(getattr(self.inner, "evaluate_prior", None)):
            values, priors = self.inner.evaluate_prior(states)
            return np.asarray(values, dtype=float).reshape(len(states), -1), priors
        return super().evaluate_prior(states)


def has_prior(evaluator) -> bool:
    """Whether a domino evaluator gives a policy prior (``ismcts`` then runs PUCT)."""
    return callable(getattr(evaluator, "prior", None))


def draws_random(evaluator) -> bool:
    """Whether an evaluator draws random numbers — has a ``reseed`` of its own (the base
    class's draws nothing) — so that a search interleaving many decisions must value each
    decision's states on that decision's stream, not all of them in one call."""
    if isinstance(evaluator, (_DominoAdapter, _BackgammonAdapter)):
        evaluator = evaluator.inner
    method = getattr(type(evaluator), "reseed", None)
    return callable(method) and method is not Evaluator.reseed


# ---------------------------------------------------------------------- backgammon
def equity(p: np.ndarray) -> np.ndarray:
    """Cubeless equity (expected points) of ``(..., 5)`` outcome probabilities::

        2 win - 1 + (win gammon - lose gammon) + (win backgammon - lose backgammon)"""
    p = np.asarray(p)
    return 2.0 * p[..., 0] - 1.0 + p[..., 1] - p[..., 3] + p[..., 2] - p[..., 4]


def boards(rows) -> np.ndarray:
    """Boards as a ``k x 26`` int64 array."""
    return np.asarray(rows, dtype=np.int64).reshape(-1, 26)


class BackgammonEvaluator(Evaluator):
    """A backgammon evaluator (see the module docstring).  Subclasses give:

    * ``afterstate_values(rows, race)``: scores of afterstates (``k x 26``, the mover's
      side), for the mover, which rank the plays of one roll (``race``: whether the
      position before the play had no contact);
    * ``state_values(rows)``: equity of unfinished positions (``k x 26``) for the player on
      roll, comparable across positions — what search compares at its leaves;
    * optionally ``probabilities(rows)``.

    ``in_points``: the afterstate scores are equities too (value functions), not just a
    ranking.  Defaults: an evaluator with ``probabilities`` gets the other two from them;
    one in points gets each of the two from the other (the same position seen from the
    other side)."""

    family = "backgammon"
    in_points = False

    # ----------------------------------------------------------------- the seam
    def values(self, rows, seat: int = ON_ROLL) -> np.ndarray:
        """Equity in points for ``seat`` (:data:`ON_ROLL` or :data:`OPPONENT`) of boards
        from the side of the player on roll; exact for a finished game."""
        if seat not in (ON_ROLL, OPPONENT):
            raise PipslabError(f"a backgammon seat is ON_ROLL (0) or OPPONENT (1), got {seat!r}")
        rows = boards(rows)
        won = finished_points(swap(rows))   # what the player who just moved has won
        out = np.where(won != 0, -won, self.state_values(rows))
        return out if seat == ON_ROLL else -out

    @property
    def has_probabilities(self) -> bool:
        return type(self).probabilities is not BackgammonEvaluator.probabilities

    def probabilities(self, rows) -> np.ndarray:
        """``k x 5`` outcome probabilities for the player on roll (see the module docstring)."""
        raise NotImplementedError(f"{type(self).__name__} gives no outcome probabilities")

    # ------------------------------------------------------- for search's use
    def state_values(self, rows) -> np.ndarray:
        """Equity for the player on roll (finished positions are search's, or :meth:`values`'s)."""
        if self.has_probabilities:
            return equity(self.probabilities(boards(rows)))
        if self.in_points and type(self).afterstate_values is not BackgammonEvaluator.afterstate_values:
            return -self.afterstate_values(swap(boards(rows)), False)
        raise NotImplementedError(f"{type(self).__name__} has no state value")

    def afterstate_values(self, rows, race: bool) -> np.ndarray:
        """Scores for the mover; by default minus the state value of the opponent on roll."""
        if self.has_probabilities or type(self).state_values is not BackgammonEvaluator.state_values:
            return -self.state_values(swap(boards(rows)))
        raise NotImplementedError(f"{type(self).__name__} has no afterstate scores")

    def ranked(self, rows, race: bool) -> np.ndarray:
        """Ranking scores of afterstates with finished games put first: ``WIN`` x points
        when the mover has borne off his last checker."""
        rows = boards(rows)
        done = WIN * finished_points(rows)
        scores = self.afterstate_values(rows, race)
        return np.where(done != 0, done, scores)


class _BackgammonAdapter(BackgammonEvaluator):
    """Any object with ``probabilities(positions)`` (a value function) and/or
    ``afterstate_values(rows, race)`` (a ranker), and optionally ``reseed``, as a
    :class:`BackgammonEvaluator`."""

    def __init__(self, inner):
        self.inner = inner
        self.in_points = bool(getattr(inner, "in_points", False))

    def reseed(self, rng) -> None:
        reseed(self.inner, rng)

    @property
    def has_probabilities(self) -> bool:
        return callable(getattr(self.inner, "probabilities", None))

    def probabilities(self, rows) -> np.ndarray:
        if not self.has_probabilities:
            return super().probabilities(rows)
        return np.asarray(self.inner.probabilities(boards(rows)), dtype=float).reshape(-1, 5)

    def afterstate_values(self, rows, race: bool) -> np.ndarray:
        if callable(getattr(self.inner, "afterstate_values", None)):
            return np.asarray(self.inner.afterstate_values(rows, race), dtype=float)
        return super().afterstate_values(rows, race)


def as_evaluator(family: str, evaluator) -> Evaluator:
    """An evaluator of ``family`` as the search's base class: an instance of it as it is,
    any other object that follows the family's protocol (the module docstring) wrapped."""
    family = _family(family)
    if family == "dominoes":
        if isinstance(evaluator, DominoEvaluator):
            return evaluator
        if callable(getattr(evaluator, "evaluate", None)) or callable(getattr(evaluator, "values", None)):
            return _DominoAdapter(evaluator)
        raise PipslabError(f"a domino evaluator has evaluate(states) (or values(states, seat)): "
                           f"{type(evaluator).__name__} has neither")
    if isinstance(evaluator, BackgammonEvaluator):
        return evaluator
    if callable(getattr(evaluator, "probabilities", None)) or callable(getattr(evaluator, "afterstate_values", None)):
        return _BackgammonAdapter(evaluator)
    raise PipslabError(f"a backgammon evaluator has probabilities(positions) (or, a ranker, "
                       f"afterstate_values(rows, race)): {type(evaluator).__name__} has neither")


__all__ = [
    "FAMILIES", "ON_ROLL", "OPPONENT", "WIN", "BackgammonEvaluator", "DominoEvaluator", "Evaluator",
    "as_evaluator", "boards", "draws_random", "has_prior", "equity", "evaluator_names", "evaluators",
    "make_evaluator", "register_evaluator", "reseed", "states_holding",
]
