"""Test doubles for the harness tests: a tiny N-seat card game and deterministic agents.

Importing this module registers (:func:`install`; :func:`uninstall` takes them out again):

* games ``fake3`` (3 seats), ``fake4pairs`` (4 seats, partners 0+2 against 1+3) and
  ``fakegammon`` (2 seats, backgammon-like result: one number of points, gammon flags) in
  ``pipslab.experiments.games.GAMES``;
* agents for them and for Happy: ``t_stand`` / ``t_stand2`` / ``t_stand3`` (always the
  first legal action — identical play under different names), ``t_bump`` (always the last),
  ``t_random``, and ``slow`` (Happy: ``heaviest`` that sleeps ``PIPSLAB_TEST_DELAY`` seconds,
  default 0.002, before each move — only for the kill/resume tests).

The card game: each seat is dealt a card 0..9 from the deal stream; in seat order each
seat either stands (action 0) or bumps its card by 1 (action 1, legal when the card is
below 9); the highest card (a team's sum) wins, ties between all sides are draws.
"""
from __future__ import annotations

import os
import time

import pytest

from pipslab.agents.base import Agent
from pipslab.agents.registry import make_agent, register
from pipslab.experiments import games as _games


class FakeState:
    num_actions = 2

    def __init__(self, cards, teams):
        self.cards = list(cards)
        self.teams = list(teams)
        self.turn = 0

    @property
    def is_chance(self):
        return False

    @property
    def is_terminal(self):
        return self.turn >= len(self.cards)

    @property
    def current_player(self):
        return self.turn

    def legal_actions(self):
        return [0, 1] if self.cards[self.turn] < 9 else [0]

    def observe(self, player):
        return {"card": self.cards[player], "player": player}

    def apply(self, action):
        if action == 1:
            self.cards[self.turn] += 1
        self.turn += 1

    def _team_totals(self):
        totals = {}
        for seat, team in enumerate(self.teams):
            totals[team] = totals.get(team, 0) + self.cards[seat]
        return totals

    def returns(self):
        totals = self._team_totals()
        best = max(totals.values())
        if min(totals.values()) == best:
            return [0.0] * len(self.cards)
        return [1.0 if totals[t] == best else -1.0 for t in self.teams]

    def result(self):
        r = self.returns()
        return {"winner": None, "pips_left": [9 - c for c in self.cards], "points": r, "returns": r,
                "blocked": self.cards[0] % 2 == 0}

    def render(self):
        return f"cards {self.cards}"


class FakeSpec:
    def __init__(self, name, players, teams):
        self.name = name
        self._players = players
        self._teams = tuple(teams)

    def players(self, options):
        return self._players

    def teams(self, options):
        return self._teams

    def new_state(self, rng, options):
        return FakeState(rng.integers(0, 10, size=self._players), self._teams)

    def variant_label(self, options):
        return self.name

    def render(self, state):
        return state.render()

    def action_name(self, state, action):
        return ["stand", "bump"][action]

    def stats(self, state):
        return {"passes": 0, "draws": 0}


class FakeGammonState(FakeState):
    """Two seats; the winner scores 1, 2 (a "gammon": won by 3 or more) or 3 (a
    "backgammon": by 6 or more), as one number for the game, like backgammon's result."""

    def _points(self):
        margin = abs(self.cards[0] - self.cards[1])
        return 0 if margin == 0 else 1 + (margin >= 3) + (margin >= 6)

    def returns(self):
        pts = self._points()
        sign = 1 if self.cards[0] > self.cards[1] else -1
        return [float(sign * pts), float(-sign * pts)] if pts else [0.0, 0.0]

    def result(self):
        pts = self._points()
        return {"winner": None if not pts else (0 if self.cards[0] > self.cards[1] else 1), "points": pts,
                "gammon": pts >= 2, "backgammon": pts == 3, "pips_left": [9 - c for c in self.cards]}


class FakeGammonSpec(FakeSpec):
    def new_state(self, rng, options):
        return FakeGammonState(rng.integers(0, 10, size=2), (0, 1))


FAKE_GAMES = ["fake3", "fake4pairs", "fakegammon"]


class FirstAgent(Agent):
    def act(self, observation, rng):
        return observation.legal_actions[0]


class LastAgent(Agent):
    def act(self, observation, rng):
        return observation.legal_actions[-1]


class RandomFake(Agent):
    def act(self, observation, rng):
        legal = observation.legal_actions
        return legal[int(rng.integers(len(legal)))]


class SlowAgent(Agent):
    """``heaviest`` with a pause before each move, so a run can be killed midway."""

    def __init__(self, game):
        self.inner = make_agent("heaviest", game)
        self.delay = float(os.environ.get("PIPSLAB_TEST_DELAY", "0.002"))

    def reset(self, seat):
        self.inner.reset(seat)

    def act(self, observation, rng):
        if self.delay > 0:
            time.sleep(self.delay)
        return self.inner.act(observation, rng)


_FAKE_SPECS = {"fake3": FakeSpec("fake3", 3, (0, 1, 2)), "fake4pairs": FakeSpec("fake4pairs", 4, (0, 1, 0, 1)),
               "fakegammon": FakeGammonSpec("fakegammon", 2, (0, 1))}
_FAKE_AGENTS = {
    "t_stand": (FAKE_GAMES + ["happy"], lambda game: FirstAgent()),
    "t_stand2": (FAKE_GAMES + ["happy"], lambda game: FirstAgent()),
    "t_stand3": (FAKE_GAMES + ["happy"], lambda game: FirstAgent()),
    "t_bump": (FAKE_GAMES, lambda game: LastAgent()),
    "t_random": (FAKE_GAMES, lambda game: RandomFake()),
    "slow": (["happy"], lambda game: SlowAgent(game)),
}


def install() -> None:
    """Register the fake games and agents (idempotent)."""
    for name, spec in _FAKE_SPECS.items():
        _games.GAMES.setdefault(name, spec)
    for name, (games, factory) in _FAKE_AGENTS.items():
        register(name, games=games)(factory)


def uninstall() -> None:
    """Take them out again, so tests elsewhere see only the real games and agents."""
    from pipslab.agents import registry
    for name in _FAKE_SPECS:
        if _games.GAMES.get(name) is _FAKE_SPECS[name]:
            del _games.GAMES[name]
    for name in _FAKE_AGENTS:
        registry._REGISTRY.pop(name, None)


install()   # imported as a plugin (``--import harness_fakes``): everything is there at once


@pytest.fixture(autouse=True, scope="module")
def fakes_installed():
    """The fake games and test agents, for the importing test module only (autouse there)."""
    install()
    yield
    uninstall()
