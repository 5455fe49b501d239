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
  ``info`` also carries ``position_id`` (from the learner's side), ``dice`` (left to play)
  and ``roll``.
* **Reward**: 0 until the game ends, then +1/+2/+3 (single, gammon, backgammon) when the
  learner wins and -1/-2/-3 when it loses.  ``terminated`` at the end of the game; never
  truncated.
* **Opponent**: ``opponent`` is an agent (``act(observation, rng)``, see
  :mod:`pipslab.agents.base`) or an agent spec string such as ``"pubeval"``; ``None`` plays
  uniformly at random.  Its randomness and the dice come from ``self.np_random``, so
  ``reset(seed=...)`` replays a game exactly.
* **Arguments**: ``learner_seat`` (0 or 1), ``opponent``, ``illegal_action`` ("raise":
  :class:`pipslab.envs.errors.IllegalActionError`; "lose": the episode ends with the worst score,
  -3, or -1 without gammons, and ``info["illegal_action"] = True``), ``gammons``,
  ``render_mode`` (``"ansi"``: :meth:`render` returns the board as text).
* **reset options**: ``{"position": "<GNU BG Position ID>"}`` starts from that position
  with the learner on roll (``"player"`` may name the seat on roll instead, ``"dice"``
  gives its roll; without dice the roll is made with ``np_random``).  Without a position:
  the start position and the opening roll.

Version history: v0 — first version.
"""
from __future__ import annotations

from typing import Optional

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from pipslab.envs.checks import check_action, check_choice, check_flag, check_seat, require_reset, reset_options
from pipslab.envs.errors import IllegalActionError, PipslabError
from pipslab.envs.observation import Observation
from pipslab.envs.opponents import resolve_opponent

from .features import NUM_FEATURES, tesauro_features
from .game import NUM_ACTIONS, BackgammonState, new_game
from .moves import check_dice


def render(state: BackgammonState) -> str:
    """The board of a game state as text (X = seat 0 at the bottom), with whose turn it
    is, the dice, and the Position ID."""
    return state.render()


class BackgammonEnv(gym.Env):
    __doc__ = __doc__

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(self, learner_seat: int = 0, opponent=None, illegal_action: str = "raise",
                 gammons: bool = True, render_mode: Optional[str] = None):
        learner_seat = check_seat("learner_seat", learner_seat, 2)
        illegal_action = check_choice("illegal_action", illegal_action, ("raise", "lose"))
        render_mode = check_choice("render_mode", render_mode, (None, "ansi"))
        gammons = check_flag("gammons", gammons)
        if opponent is not None:   # None: uniformly random; a spec string is made by pipslab.agents' factory
            opponent = resolve_opponent(opponent, "backgammon")
        self.learner_seat = learner_seat
        self.opponent = opponent
        self.illegal_action = illegal_action
        self.gammons = gammons
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = spaces.Dict({
            "observation": spaces.Box(0.0, 7.5, (NUM_FEATURES,), np.float32),
            "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
        })
        self.state: Optional[BackgammonState] = None
        self._done = False

    # ------------------------------------------------------------------ helpers
    def action_masks(self) -> np.ndarray:
        require_reset(self.state, "action_masks()")
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        if not self._done and self.state.current_player == self.learner_seat:
            mask[self.state.legal_actions()] = 1
        return mask

    def _obs(self):
        s = self.state
        pos = s.position_from(self.learner_seat)
        on_roll = s.current_player == self.learner_seat and not s.is_terminal
        return {"observation": tesauro_features(pos, on_roll), "action_mask": self.action_masks()}

    def _info(self, **extra):
        s = self.state
        info = {"action_mask": self.action_masks(),
                "position_id": s.position_from(self.learner_seat).id,
                "dice": s.dice if s.current_player == self.learner_seat else (),
                "roll": s.roll}
        if s.is_terminal:
            info["result"] = s.result()
        info.update(extra)
        return info

    def _opponent_action(self) -> int:
        s = self.state
        legal = s.legal_actions()
        if self.opponent is None:
            return legal[int(self.np_random.integers(len(legal)))] if len(legal) > 1 else legal[0]
        obs = Observation(s.current_player, s.observe(s.current_player), legal, NUM_ACTIONS)
        return int(self.opponent.act(obs, self.np_random))

    def _advance(self) -> None:
        """Roll dice and play the opponent until the learner must act or the game ends."""
        s = self.state
        while not s.is_terminal:
            if s.is_chance:
                s.apply_chance(self.np_random)
            elif s.current_player == self.learner_seat:
                return
            else:
                s.apply(self._opponent_action())

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        options = reset_options(options, ("position", "dice", "player"))
        if "position" not in options and ("dice" in options or "player" in options):
            raise PipslabError("reset options dice and player go with a position")
        if "position" in options:
            player = check_seat("reset option player", options.get("player", self.learner_seat), 2)
            dice = options.get("dice", ())
            if dice is None or (isinstance(dice, (tuple, list, np.ndarray)) and len(dice) == 0):
                dice = ()
            else:
                check_dice(dice)
                dice = tuple(int(d) for d in dice)
        super().reset(seed=seed)
        if "position" in options:
            self.state = BackgammonState.from_position_id(options["position"], dice, player=player,
                                                          gammons=self.gammons)
        else:
            self.state = new_game(gammons=self.gammons)
        if self.opponent is not None and hasattr(self.opponent, "reset"):
            self.opponent.reset(1 - self.learner_seat)
        self._done = False
        self._advance()
        self._done = self.state.is_terminal
        return self._obs(), self._info()

    def step(self, action):
        if self.state is None:
            raise PipslabError("call reset() before step()")
        if self._done:
            raise PipslabError("the game is over: call reset()")
        action = check_action(action, NUM_ACTIONS)
        legal = self.state.legal_actions()
        if action not in legal:
            if self.illegal_action == "raise":
                self.state.apply(action)          # raises IllegalActionError with the details
                raise IllegalActionError(f"illegal action {action}")  # pragma: no cover
            self._done = True
            penalty = -3.0 if self.gammons else -1.0
            return self._obs(), penalty, True, False, self._info(illegal_action=True)
        self.state.apply(action)
        self._advance()
        reward = 0.0
        if self.state.is_terminal:
            self._done = True
            reward = float(self.state.returns()[self.learner_seat])
        return self._obs(), reward, self._done, False, self._info()

    def render(self):
        if self.render_mode == "ansi":
            require_reset(self.state, "render()")
            return render(self.state)
        return None
