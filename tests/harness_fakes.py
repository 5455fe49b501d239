"""Test doubles for the harness tests: a tiny N-seat card game and deterministic agents.

Importing this module registers (:func:`install`; :func:`uninstall` takes them out again):

* games ``fake3`` (3 seats), ``fake4pairs`` (4 seats, partners 0+2 against 1+3) and
  ``fakegammon`` (2 seats, backgammon-like points: 1, 2 or 3, gammon flags), each a
  :class:`~pipslab.envs.game.Game` put in ``pipslab.envs.GAMES`` (without the Gymnasium
  ids :func:`~pipslab.envs.register_game` would add, so that they can be taken out again);
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
from pipslab.envs.game import GAMES, Game, outcome_from_returns


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

    def outcome(self):
        return outcome_from_returns(self.returns(), self.teams, pips_left=[9 - c for c in self.cards],
                                    extra={"blocked": self.cards[0] % 2 == 0, "passes": 0, "draws": 0})

    def render(self):
        return f"cards {self.cards}"


class FakeGammonState(FakeState):
    """Two seats; the winner scores 1, 2 (a "gammon": won by 3 or more) or 3 (a
    "backgammon": by 6 or more), like backgammon's result."""

    def _points(self):
        margin = abs(self.cards[0] - self.cards[1])
        return 0 if margin == 0 else 1 + (margin >= 3) + (margin >= 6)

    def returns(self):
        pts = self._points()
        sign = 1 if self.cards[0] > self.cards[1] else -1
        return [float(sign * pts), float(-sign * pts)] if pts else [0.0, 0.0]

    def outcome(self):
        pts, returns = self._points(), self.returns()
        points = [pts if r > 0 else -pts for r in returns]   # whole points, as backgammon records them
        return outcome_from_returns(returns, self.teams, points=points, pips_left=[9 - c for c in self.cards],
                                    extra={"gammon": pts >= 2, "backgammon": pts == 3, "passes": 0, "draws": 0})


def _game(name: str, teams, state_class, utility=(-1.0, 1.0)) -> Game:
    return Game(name=name, seats=len(teams), team_of=lambda options: teams, num_actions=2, utility=utility,
                make_state=lambda rng, options: state_class(rng.integers(0, 10, size=len(teams)), teams),
                outcome=lambda state: state.outcome(), render=lambda state: state.render(),
                action_name=lambda state, action: ["stand", "bump"][action])


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


_FAKE_SPECS = {"fake3": _game("fake3", (0, 1, 2), FakeState),
               "fake4pairs": _game("fake4pairs", (0, 1, 0, 1), FakeState),
               "fakegammon": _game("fakegammon", (0, 1), FakeGammonState, utility=(-3.0, 3.0))}
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
        GAMES.setdefault(name, spec)
    for name, (games, factory) in _FAKE_AGENTS.items():
        register(name, games=games)(factory)


def uninstall() -> None:
    """Take them out again, so tests elsewhere see only the real games and agents."""
    from pipslab.agents import registry
    for name in _FAKE_SPECS:
        if GAMES.get(name) is _FAKE_SPECS[name]:
            del GAMES[name]
    for name in _FAKE_AGENTS:
        registry._REGISTRY.pop(name, None)


install()   # imported as a plugin (``--import harness_fakes``): everything is there at once


@pytest.fixture(autouse=True, scope="module")
def fakes_installed():
    """The fake games and test agents, for the importing test module only (autouse there)."""
    install()
    yield
    uninstall()
