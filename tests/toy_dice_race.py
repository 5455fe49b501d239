"""A toy game that lives only here: ``toy-race``, a dice race in the style of Pig.

It is the proof that a game is one file: the rules, the :class:`~pipslab.envs.game.Game`
definition and :func:`~pipslab.envs.game.register_game`, nothing else.  Importing it (for
example ``pipslab tournament toy-race --import toy_dice_race``) makes it playable by the
harness, ``pipslab play`` and its replay, the ``random`` agent and the generic Gymnasium env
(``pipslab/ToyDiceRace-v0``, :class:`pipslab.envs.generic_env.GameEnv`).

Rules: ``players`` seats (2..4) race to ``target`` points.  A turn starts with a roll of a
die (a chance node).  A 1 ends the turn and loses what the turn had gathered; any other
number adds to the turn's total, and the seat chooses: action 0 ``roll`` again, or action
1 ``hold`` — bank the total and pass the die on.  Banking ``target`` or more wins.  After
``max_turns`` turns the highest score wins (equal scores: a draw).  Returns: +1 to the
winner, the others share −1; all 0 in a draw.  Pips left: the points still to make.

Position notation: ``toy-race; scores=5/12; turn=1; total=4; turns=7`` (the seat to move
has a turn total of 4 and rolls next).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Tuple

import numpy as np

from pipslab.envs import Encoder, Game, Option, register_game
from pipslab.envs.errors import IllegalActionError, PositionError
from pipslab.envs.game import outcome_from_returns

ROLL, HOLD = 0, 1
ACTION_NAMES = ("roll", "hold")


@dataclass(frozen=True)
class RaceView:
    player: int
    scores: Tuple[int, ...]
    current_player: int
    total: int
    die: int               # the last roll (0 before the first)
    turns: int
    target: int
    max_turns: int
    is_terminal: bool


class RaceState:
    """A dice race (see the module docstring); the chance node is the roll of the die."""

    num_actions = 2

    def __init__(self, players: int, target: int, max_turns: int):
        self.target, self.max_turns = target, max_turns
        self.scores = [0] * players
        self.current_player = 0
        self.total = 0
        self.die = 0
        self.turns = 0
        self.is_chance = True
        self.is_terminal = False
        self.winner = None

    def clone(self) -> "RaceState":
        new = RaceState.__new__(RaceState)
        new.__dict__.update(self.__dict__)
        new.scores = list(self.scores)
        return new

    def legal_actions(self) -> List[int]:
        return [] if self.is_terminal or self.is_chance else [ROLL, HOLD]

    def apply_chance(self, rng: np.random.Generator) -> None:
        self.die = int(rng.integers(1, 7))
        self.is_chance = False
        if self.die == 1:
            self.total = 0
            self._next_turn()
        else:
            self.total += self.die

    def apply(self, action: int) -> None:
        if action not in self.legal_actions():
            raise IllegalActionError(f"{action} is not legal here (legal: {self.legal_actions()})")
        if action == ROLL:
            self.is_chance = True
            return
        self.scores[self.current_player] += self.total
        self.total = 0
        if self.scores[self.current_player] >= self.target:
            self.winner = self.current_player
            self.is_terminal, self.is_chance = True, False
            return
        self._next_turn()

    def _next_turn(self) -> None:
        self.turns += 1
        if self.turns >= self.max_turns:
            best = max(self.scores)
            top = [p for p, s in enumerate(self.scores) if s == best]
            self.winner = top[0] if len(top) == 1 else None
            self.is_terminal, self.is_chance = True, False
            return
        self.current_player = (self.current_player + 1) % len(self.scores)
        self.is_chance = True

    def returns(self) -> List[float]:
        n = len(self.scores)
        if not self.is_terminal or self.winner is None:
            return [0.0] * n
        return [1.0 if p == self.winner else -1.0 / (n - 1) for p in range(n)]

    def observe(self, player: int) -> RaceView:
        return RaceView(player, tuple(self.scores), self.current_player, self.total, self.die, self.turns,
                        self.target, self.max_turns, self.is_terminal)

    def action_name(self, action: int) -> str:
        return ACTION_NAMES[action]


# ------------------------------------------------------------------ what the Game needs
def new_race(rng, options) -> RaceState:
    return RaceState(options["players"], options["target"], options["max_turns"])


def format_race(state: RaceState) -> str:
    return (f"toy-race; scores={'/'.join(map(str, state.scores))}; turn={state.current_player}; "
            f"total={state.total}; turns={state.turns}")


def parse_race(text: str, options, rng) -> RaceState:
    head, *fields = [p.strip() for p in text.split(";")]
    if head != "toy-race":
        raise PositionError(f"not a toy-race position: {text!r}")
    values = dict(f.split("=", 1) for f in fields if f)
    try:
        scores = [int(x) for x in values["scores"].split("/")]
        state = RaceState(len(scores), options["target"], options["max_turns"])
        state.scores = scores
        state.current_player = int(values.get("turn", 0))
        state.total = int(values.get("total", 0))
        state.turns = int(values.get("turns", 0))
    except (KeyError, ValueError) as exc:
        raise PositionError(f"bad toy-race position {text!r}: {exc}") from None
    if len(scores) != options["players"]:
        raise PositionError(f"the position has {len(scores)} seats, not {options['players']} (see players)")
    return state


def race_outcome(state: RaceState):
    n = len(state.scores)
    return outcome_from_returns(state.returns(), tuple(range(n)), points=list(state.scores),
                                pips_left=[max(0, state.target - s) for s in state.scores],
                                extra={"turns": state.turns, "capped": state.turns >= state.max_turns})


def render_race(state: RaceState) -> str:
    lines = [f"seat {p}: {s:3d}" + (" <" if p == state.current_player and not state.is_terminal else "")
             for p, s in enumerate(state.scores)]
    lines.append(f"turn total {state.total}, last die {state.die or '-'}, turn {state.turns}/{state.max_turns}")
    if state.is_terminal:
        lines.append("game over: " + ("draw" if state.winner is None else f"seat {state.winner} wins"))
    return "\n".join(lines)


def encode_race(view: RaceView) -> np.ndarray:
    """[own score, the others' scores from the next seat on (/ target, at most 1), turn
    total / target, my turn, last die one-hot 1..6, turns / max_turns]; 4 score slots."""
    n = len(view.scores)
    x = np.zeros(13, dtype=np.float32)
    for r in range(n):
        x[r] = min(1.0, view.scores[(view.player + r) % n] / view.target)
    x[4] = min(1.0, view.total / view.target)
    x[5] = 1.0 if view.current_player == view.player and not view.is_terminal else 0.0
    if view.die:
        x[5 + view.die] = 1.0
    x[12] = min(1.0, view.turns / view.max_turns)
    return x


TOY_RACE = register_game(Game(
    name="toy-race",
    description="a dice race in the style of Pig (tests/toy_dice_race.py)",
    options_spec=(Option("players", int, 2, low=2, high=4, help="seats"),
                  Option("target", int, 20, low=2, high=1000, help="points that win"),
                  Option("max_turns", int, 200, low=1, high=100000, help="turns before the highest score wins")),
    seats=lambda o: o["players"],
    num_actions=2,
    label=lambda o: f"toy-race-{o['target']}",
    make_state=new_race,
    parse_position=parse_race,
    format_position=format_race,
    outcome=race_outcome,
    render=render_race,
    encoder=lambda o: Encoder(13, encode_race),
    utility_sum=0.0,                                       # returns in [-1, 1] (the default bounds)
    info_columns=lambda o: {"turns": 0, "capped": False},  # Outcome.extra in every road's info
    live_info=lambda state, seat: {f"score_{p}": int(s) for p, s in enumerate(state.scores)},
    env_id="pipslab/ToyDiceRace-v0",
), replace=True)


# ------------------------------------------------------------------ an agent for it (optional)
from pipslab.agents.base import Agent  # noqa: E402
from pipslab.agents.registry import register  # noqa: E402


class HoldAt(Agent):
    """Rolls until the turn total reaches ``k`` (or would win), then holds."""

    def __init__(self, k: int = 8):
        self.k = k

    def act(self, observation, rng) -> int:
        v = observation.view
        if v.total >= self.k or v.scores[v.player] + v.total >= v.target:
            return HOLD
        return ROLL


@register("toy-hold", games=["toy-race"])
def _make_hold(game: str, k: int = 8) -> HoldAt:
    return HoldAt(k)
