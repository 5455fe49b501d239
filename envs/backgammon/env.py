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
* **Observation space**: ``Dict(observation=Box(0, 7.5, (223,), float32),
  action_mask=Box(0, 1, (151,), int8))``.  ``observation``, from the learner's side
  (:func:`pipslab.envs.backgammon.features.observation`):

  ========= =============================================================
  0:198     Tesauro's 198 inputs (:mod:`pipslab.envs.backgammon.features`)
  198:222   the dice the learner has left to play this turn: for face
            d = 1..6, four units at 198 + 4 * (d - 1) — at least 1, 2, 3, 4
            dice showing d (6-4: one unit of 6 and one of 4; 5-5 before
            any move: all four units of 5, after two moves two of them)
  222       checker moves left in the turn / 4 (fewer than the dice when
            not all of them can be played)
  ========= =============================================================

  so the observation says which dice remain and how many moves of a double: with the
  position it fixes the legal moves and the rest of the turn (it is Markov).
  ``action_mask`` marks the legal actions; the same mask is in ``info["action_mask"]``
  and ``action_masks()`` (int8).
* **Afterstates** (TD learners): :meth:`BackgammonEnv.afterstates` lists every distinct
  legal (rest of the) play of the learner's roll with the position it leads to, that
  position's encoding and the checker moves that make it; :meth:`BackgammonEnv.step_play`
  makes one of them (all its checker moves, one ``step`` each) and returns the last
  step's result.  The game API has the same: ``BackgammonState.legal_plays()``.
* ``info`` — the same keys and types on every step (the common ones are listed in
  :mod:`pipslab.envs.base_env`): ``action_mask``, ``legal_actions``, ``illegal_action``,
  ``winner`` (−1 while on), ``winning_team``, ``draw`` (always False), ``points_0``,
  ``points_1`` (±1/2/3 at the end, else 0.0), ``pips_left_0``, ``pips_left_1`` (at the
  end, else −1), ``gammon``, ``backgammon`` (bool) and ``turns`` (rolls made; False/0
  until the end); live: ``position_id`` (str, from the learner's side), ``roll_0``,
  ``roll_1`` (this turn's roll, 0 when none), ``dice_0`` .. ``dice_3`` (the learner's
  dice left to play, larger first, 0 for none and off its turn) and ``moves_left``.
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
  ``render_mode`` (``"ansi"``: :meth:`render` returns the board as text; ``"rgb_array"``:
  the board drawn, ``uint8[640, 960, 3]``; ``"human"`` is refused in one line), ``reveal``
  (accepted for uniformity with the other envs: backgammon hides nothing).
  The plumbing is :class:`pipslab.envs.base_env.SeatEnv`'s, shared by every env.
* **reset options**: ``{"position": "<GNU BG Position ID>"}`` starts from that position
  with the learner on roll (``"player"`` may name the seat on roll instead, ``"dice"``
  gives its roll; without dice the roll is made with ``np_random``).  Without a position:
  the start position and the opening roll.

Version history: v0 — first version.  v0, issue 14 — the observation grew from 198 to 223
inputs: Tesauro's 198 unchanged, then the dice left to play and the moves left (it was
not Markov inside a turn: nothing told which dice remained); ``afterstates()`` and
``step_play()``; ``info`` has fixed keys and flat types on every step (``result``, only at
the end, became the result fields; the tuples ``dice`` and ``roll`` became ``dice_0..3``
and ``roll_0..1``; ``moves_left`` added); ``action_masks()`` is int8; an unsupported
``render_mode`` warns.  Actions and rewards are unchanged.  v0, frames —
``render_mode="rgb_array"`` draws the board; ``"human"`` is refused.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np

from pipslab.envs.base_env import UNSET, SeatEnv, opponents_argument
from pipslab.envs.checks import check_flag, check_seat
from pipslab.envs.errors import IllegalActionError, PipslabError

from .features import OBS_SIZE, observation
from .game import NUM_ACTIONS, BackgammonState, new_game
from .moves import Play, check_dice


def render(state: BackgammonState) -> str:
    """The board of a game state as text (X = seat 0 at the bottom), with whose turn it
    is, the dice, and the Position ID."""
    return state.render()


@dataclass(frozen=True)
class Afterstates:
    """The legal plays of the learner's roll (what is left of it, mid-turn) and where
    they lead, one row per distinct resulting position, in the order of
    :func:`pipslab.envs.backgammon.moves.legal_plays` (by notation).  When nothing can
    move there is one row: the pass, the position unchanged.

    ``plays``: the :class:`~pipslab.envs.backgammon.moves.Play` objects (``notation``,
    ``steps``; a pass has no steps); ``actions``: per play, the env's checker-move action
    ids that make it, in an order the mask accepts (``(PASS,)`` for a pass);
    ``positions``: int8[k, 26], each afterstate from the learner's side (its checkers
    positive), before the turn passes; ``position_ids``: their GNU BG Position IDs (from
    the learner's side); ``features``: float32[k, 223], the env's observation of each
    afterstate from the learner's side with the opponent to roll (Tesauro's inputs,
    unit 197 "he is on roll" set, the dice block zero) — the input of a value function
    V(afterstate) as TD-Gammon learned it.  (For GNU BG's convention, the position from
    the side of the player on roll, encode the swapped rows with
    :func:`pipslab.envs.backgammon.features.encode`.)  ``finished``: bool[k], the play
    bears off the learner's last checker (the game ends with it)."""

    plays: Tuple[Play, ...]
    actions: Tuple[Tuple[int, ...], ...]
    positions: np.ndarray
    position_ids: Tuple[str, ...]
    features: np.ndarray
    finished: np.ndarray

    def __len__(self) -> int:
        return len(self.plays)


class BackgammonEnv(SeatEnv):
    __doc__ = __doc__

    reset_keys = ("position", "dice", "player")

    def __init__(self, learner_seat: int = 0, opponents=None, illegal_action: str = "raise",
                 gammons: bool = True, render_mode: Optional[str] = None, reveal: bool = False, *,
                 opponent=UNSET):
        opponents = opponents_argument(opponents, opponent)
        self.gammons = check_flag("gammons", gammons)
        self._setup(players=2, num_actions=NUM_ACTIONS, obs_size=OBS_SIZE, obs_low=0.0, obs_high=7.5,
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
        return observation(s.position_from(self.learner_seat), on_roll, s.dice if on_roll else (),
                           s.moves_left if on_roll else 0)

    def public_info(self) -> dict:
        s = self.state
        mine = s.current_player == self.learner_seat and not s.is_terminal
        dice = tuple(s.dice) if mine else ()
        roll = tuple(s.roll) + (0, 0)
        info = {"position_id": s.position_from(self.learner_seat).id, "roll_0": int(roll[0]), "roll_1": int(roll[1])}
        info.update((f"dice_{i}", int(dice[i]) if i < len(dice) else 0) for i in range(4))
        info["moves_left"] = int(s.moves_left) if mine else 0
        return info

    def end_columns(self) -> dict:
        return {"gammon": False, "backgammon": False, "turns": 0}

    # ------------------------------------------------------------------ afterstates
    def afterstates(self) -> Afterstates:
        """The learner's legal plays of this roll with their afterstates (see
        :class:`Afterstates`); a :class:`PipslabError` when the learner is not to move."""
        if self.state is None:
            raise PipslabError("call reset() before afterstates()")
        if not self._learner_to_move():
            raise PipslabError("afterstates(): the learner is not to move (the episode is over: call reset())")
        s = self.state
        plays = s.legal_plays()
        if not plays:
            plays = [Play((), s.position)]
        positions = np.array([p.position for p in plays], dtype=np.int8).reshape(-1, 26)
        features = np.stack([observation(p.position, False) for p in plays])
        return Afterstates(plays=tuple(plays),
                           actions=tuple(tuple(s.play_actions(p)) for p in plays),
                           positions=positions,
                           position_ids=tuple(p.position.id for p in plays),
                           features=features,
                           finished=np.array([p.position.borne_off == 15 for p in plays], dtype=bool))

    def step_play(self, index: int):
        """Make afterstate ``index`` of :meth:`afterstates` — each of its checker moves as
        one :meth:`step` — and return the last step's ``(obs, reward, terminated,
        truncated, info)`` (the reward comes only at the end of the game, so the last
        step's is the play's)."""
        after = self.afterstates()
        if isinstance(index, (bool, np.bool_)) or not isinstance(index, (int, np.integer)) \
                or not 0 <= index < len(after):
            raise PipslabError(f"step_play: index must be 0..{len(after) - 1} (one of afterstates()), got {index!r}")
        result = None
        for action in after.actions[int(index)]:
            result = self.step(action)
        return result

    def illegal_action_error(self, action: int) -> IllegalActionError:
        try:
            self.state.clone().apply(action)      # the rules' message names the legal moves
        except IllegalActionError as err:
            return err
        return super().illegal_action_error(action)   # pragma: no cover

    def render_text(self) -> str:
        return render(self.state)   # backgammon hides nothing
