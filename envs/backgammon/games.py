"""Backgammon's definition (:class:`pipslab.envs.game.Game`), registered in
:data:`pipslab.envs.GAMES` when :mod:`pipslab.envs` is imported.

Options: ``gammons`` (default true: gammons and backgammons count 2 and 3) and
``position`` (a GNU Backgammon Position ID, the player on roll in seat 0).  A finished
game records returns and points per seat (±1/2/3), pips left, and the columns
``gammon``, ``backgammon`` and ``turns`` (rolls made).

The engine is imported on first use, so registering the game costs no compilation.
"""
from __future__ import annotations

from pipslab.envs.game import Encoder, Game, Option, Outcome, outcome_from_returns, register_game

NUM_ACTIONS = 151          # pipslab.envs.backgammon.game.NUM_ACTIONS (checked in its tests)
NUM_FEATURES = 198         # Tesauro's inputs, pipslab.envs.backgammon.features.NUM_FEATURES
OBS_SIZE = 223             # with the dice left to play: pipslab.envs.backgammon.features.OBS_SIZE


def _new_game(rng, o):
    from .game import new_game
    return new_game(rng, gammons=o["gammons"])


def _from_position(text, o, rng):
    from .game import BackgammonState
    return BackgammonState.from_position_id(text, gammons=o["gammons"])


def backgammon_outcome(state) -> Outcome:
    """+points to the winner and −points to the loser (1 single, 2 gammon, 3 backgammon)."""
    r = state.result()
    pts, winner = r["points"], r["winner"]
    points = [0, 0] if winner is None else [pts if s == winner else -pts for s in (0, 1)]
    turns = sum(1 for h in state.history if h[0] == "roll")
    return outcome_from_returns(state.returns(), (0, 1), points=points, pips_left=r["pips_left"],
                                extra={"gammon": r["gammon"], "backgammon": r["backgammon"], "turns": turns})


def _encode(view):
    """The env's observation of a view (:func:`pipslab.envs.backgammon.features.observation`):
    Tesauro's 198 inputs and the dice the viewer has left to play (zero off its turn)."""
    from .features import observation
    on_roll = view.player == view.current_player and not view.is_terminal
    return observation(view.position, on_roll, view.dice if on_roll else (), view.moves_left if on_roll else 0)


BACKGAMMON = Game(
    name="backgammon",
    description="Backgammon (RULES §5), money play without the cube",
    options_spec=(Option("gammons", bool, True, help="gammons and backgammons count 2 and 3"),),
    seats=2,
    num_actions=NUM_ACTIONS,
    label=lambda o: "backgammon" if o["gammons"] else "backgammon-nogammons",
    make_state=_new_game,
    parse_position=_from_position,
    format_position=lambda state: state.position.id,
    outcome=backgammon_outcome,
    render=lambda state: state.render(),
    action_name=lambda state, action: state.action_name(action),
    encoder=lambda o: Encoder(OBS_SIZE, _encode, 0.0, 7.5),
    family="backgammon",
    env_id="pipslab/Backgammon-v0",
    env_entry="pipslab.envs.backgammon.env:BackgammonEnv",
)

register_game(BACKGAMMON, replace=True)
