"""``pipslab/Backgammon-v0``: one learner seat against an opponent agent.

Contract
--------
* **Game**: RULES §5 backgammon (:mod:`pipslab.envs.backgammon.game`), gammons and backgammons
  counted unless ``gammons=False``.  Seat 0 is X, seat 1 is O.
* **Action space**: ``Discrete(151)``, one checker move inside a turn::

      action = (from_point - 1) * 6 + (die - 1)   from_point 1..24 (learner's side), 25 = bar
      action = 150                                PASS (only when nothing can move)

  The mask already enforces "both dice / the larger die / as many of a double as
  possible", so following the mask always builds a legal whole play; a turn takes as many
  steps as checker moves.
* **Observation space**: ``Dict(observation=Box(0, 7.5, (198,), float32),
  action_mask=Box(0, 1, (151,), int8))``.  ``observation`` is Tesauro's 198-input
  encoding from the learner's side (:mod:`pipslab.envs.backgammon.features`); ``action_mask`` marks
  the legal actions; the same mask is in ``info["action_mask"]`` and ``action_masks()``.
  ``info`` also carries ``legal_actions``, ``position_id`` (from the learner's side),
  ``dice`` (left to play) and ``roll``, and at the end ``result``.
* **Reward**: 0 until the game ends, then +1/+2/+3 (single, gammon, backgammon) when the
  learner wins and -1/-2/-3 when it loses.  ``terminated`` at the end of the game; never
  truncated.
* **Opponent**: ``opponents`` is an agent (``act(observation, rng)``, see
  :mod:`pipslab.agents.base`) or an agent spec string such as ``"pubeval"``, or a list of
  two (one per seat, the learner's ignored); ``None`` plays uniformly at random.
  ``opponent=`` is the deprecated old name (it warns).  Its randomness and the dice come from ``self.np_random``, so
  ``reset(seed=...)`` replays a game exactly.
* **Arguments**: ``learner_seat`` (0 or 1), ``opponents``, ``illegal_action`` ("raise":
  :class:`pipslab.envs.errors.IllegalActionError`; "lose": the episode ends with the worst score,
  -3, or -1 without gammons, and ``info["illegal_action"] = True``), ``gammons``,
  ``render_mode`` (``"ansi"``: :meth:`render` returns the board as text), ``reveal``
  (accepted for uniformity with the other envs: backgammon hides nothing).
  The plumbing is :class:`pipslab.envs.base_env.SeatEnv`'s, shared by every env.
* **reset options**: ``{"position": "<GNU BG Position ID>"}`` starts from that position
  with the learner on roll (``"player"`` may name the seat on roll instead, ``"dice"``
  gives its roll; without dice the roll is made with ``np_random``).  Without a position:
  the start position and the opening roll.

Version history: v0 — first version.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from pipslab.envs.base_env import UNSET, SeatEnv, opponents_argument
from pipslab.envs.checks import check_flag, check_seat
from pipslab.envs.errors import IllegalActionError, PipslabError

from .features import NUM_FEATURES, tesauro_features
from .game import NUM_ACTIONS, BackgammonState, new_game
from .moves import check_dice


def render(state: BackgammonState) -> str:
    """The board of a game state as text (X = seat 0 at the bottom), with whose turn it
    is, the dice, and the Position ID."""
    return state.render()


class BackgammonEnv(SeatEnv):
    __doc__ = __doc__

    reset_keys = ("position", "dice", "player")

    def __init__(self, learner_seat: int = 0, opponents=None, illegal_action: str = "raise",
                 gammons: bool = True, render_mode: Optional[str] = None, reveal: bool = False, *,
                 opponent=UNSET):
        opponents = opponents_argument(opponents, opponent)
        self.gammons = check_flag("gammons", gammons)
        self._setup(players=2, num_actions=NUM_ACTIONS, obs_size=NUM_FEATURES, obs_low=0.0, obs_high=7.5,
                    learner_seat=learner_seat, opponents=opponents, render_mode=render_mode,
                    illegal_action=illegal_action, reveal=reveal, agent_game="backgammon")
        self.illegal_penalty = -3.0 if self.gammons else -1.0

    # ------------------------------------------------------------------ hooks
    def resolve_agent(self, spec):
        # None: uniformly random from self.np_random (no agent); a name is made by pipslab.agents' factory
        return None if spec is None else super().resolve_agent(spec)

    def _agent_action(self, seat: int) -> int:
        if self.seat_agents[seat] is not None:
            return int(super()._agent_action(seat))
        legal = self.state.legal_actions()
        return legal[int(self.np_random.integers(len(legal)))] if len(legal) > 1 else legal[0]

    def new_state(self):
        return new_game(gammons=self.gammons)

    def check_reset_options(self, options: dict) -> None:
        if "position" not in options and ("dice" in options or "player" in options):
            raise PipslabError("reset options dice and player go with a position")
        if "position" in options:
            options["player"] = check_seat("reset option player", options.get("player", self.learner_seat), 2)
            dice = options.get("dice", ())
            if dice is None or (isinstance(dice, (tuple, list, np.ndarray)) and len(dice) == 0):
                dice = ()
            else:
                check_dice(dice)
                dice = tuple(int(d) for d in dice)
            options["dice"] = dice

    def state_from_position(self, text: str, options: dict):
        return BackgammonState.from_position_id(text, options["dice"], player=options["player"],
                                                gammons=self.gammons)

    def encode(self) -> np.ndarray:
        s = self.state
        on_roll = s.current_player == self.learner_seat and not s.is_terminal
        return tesauro_features(s.position_from(self.learner_seat), on_roll)

    def public_info(self) -> dict:
        s = self.state
        return {"position_id": s.position_from(self.learner_seat).id,
                "dice": s.dice if s.current_player == self.learner_seat else (),
                "roll": s.roll}

    def illegal_action_error(self, action: int) -> IllegalActionError:
        try:
            self.state.clone().apply(action)      # the rules' message names the legal moves
        except IllegalActionError as err:
            return err
        return super().illegal_action_error(action)   # pragma: no cover

    def render_text(self) -> str:
        return render(self.state)   # backgammon hides nothing
