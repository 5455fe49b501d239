"""Backgammon's definition (:class:`pipslab.envs.game.Game`), registered in
:data:`pipslab.envs.GAMES` when :mod:`pipslab.envs` is imported.

Options: ``gammons`` (default true: gammons and backgammons count 2 and 3) and
``position`` (a GNU Backgammon Position ID, the player on roll in seat 0).  A finished
game records returns and points per seat (±1/2/3: the utility bounds are ±3, or ±1
without gammons; zero-sum), pips left, and the columns ``gammon``, ``backgammon`` and
``turns`` (rolls made); ``info`` also has, live, the position, the roll and the dice left
(:func:`live_info`).  The observation is :func:`encode_view`
(:func:`pipslab.envs.backgammon.features.observation`, 223 inputs: Gym id
``pipslab/Backgammon-v1``; ``-v0``, from when it had 198, is a deprecated alias).  The
Gymnasium env composes in :class:`pipslab.envs.backgammon.env.BackgammonEnvMixin`
(``afterstates()``, ``step_play()``, reset to a position with dice).

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


def encode_view(view):
    """The observation of a view (:func:`pipslab.envs.backgammon.features.observation`):
    Tesauro's 198 inputs and the dice the viewer has left to play (zero off its turn)."""
    from .features import observation
    on_roll = view.player == view.current_player and not view.is_terminal
    return observation(view.position, on_roll, view.dice if on_roll else (), view.moves_left if on_roll else 0)


def live_info(state, seat: int):
    """``position_id`` (from ``seat``'s side), ``roll_0``/``roll_1`` (this turn's roll, 0
    when none), ``dice_0`` .. ``dice_3`` (``seat``'s dice left to play, larger first, 0 for
    none and off its turn) and ``moves_left`` (0 off its turn)."""
    mine = state.current_player == seat and not state.is_terminal
    dice = tuple(state.dice) if mine else ()
    roll = tuple(state.roll) + (0, 0)
    info = {"position_id": state.position_from(seat).id, "roll_0": int(roll[0]), "roll_1": int(roll[1])}
    info.update((f"dice_{i}", int(dice[i]) if i < len(dice) else 0) for i in range(4))
    info["moves_left"] = int(state.moves_left) if mine else 0
    return info


def backgammon_phase(state) -> str:
    """The mover's phase: ``contact`` while a checker of each side can still hit or block
    the other's, then ``race``, and ``bear-off`` once the mover's checkers are all home."""
    position = state.position                 # from the side of the player to move
    if not position.is_race():
        return "contact"
    return "bear-off" if position.all_home() else "race"


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
    encoder=lambda o: Encoder(OBS_SIZE, encode_view, 0.0, 7.5),
    phase=backgammon_phase,
    phase_names=lambda options: ("contact", "race", "bear-off"),
    family="backgammon",
    utility=lambda o: (-3.0, 3.0) if o["gammons"] else (-1.0, 1.0),
    utility_sum=0.0,
    # a bound, not a certainty: hitting can prolong a game without limit, but a game of
    # 10,000 checker moves and rolls has never been seen
    max_length=10_000,
    info_columns=lambda o: {"gammon": False, "backgammon": False, "turns": 0},
    live_info=live_info,
    perfect_information=True,
    env_id="pipslab/Backgammon-v1",
    env_aliases=("pipslab/Backgammon-v0",),
    env_mixin="pipslab.envs.backgammon.env:BackgammonEnvMixin",
)

register_game(BACKGAMMON, replace=True)
