"""Backgammon's extras in the Gymnasium env (``pipslab/Backgammon-v1``):
:class:`BackgammonEnvMixin`, which the game's definition names (``Game.env_mixin``) and the
one env class, :class:`pipslab.envs.generic_env.GameEnv`, composes in.

* **Afterstates** (TD learners): :meth:`BackgammonEnvMixin.afterstates` lists every
  distinct legal (rest of the) play of the learner's roll with the position it leads to,
  that position's encoding and the checker moves that make it;
  :meth:`BackgammonEnvMixin.step_play` makes one of them (all its checker moves, one
  ``step`` each) and returns the last step's result.  The game API has the same:
  ``BackgammonState.legal_plays()``.
* **reset options**: ``{"position": "<GNU BG Position ID>"}`` starts from that position
  with the learner on roll (``"player"`` may name the seat on roll instead, ``"dice"``
  gives its roll; without dice the roll is made with ``np_random``).
* **Opponents**: ``None`` (an entry or the whole argument) plays uniformly at random with
  ``self.np_random`` itself (no agent); a name or an agent as in every env.

The observation, actions, rewards and ``info`` are the game's (``docs/envs.md``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple

import numpy as np

from pipslab.envs.checks import check_seat
from pipslab.envs.errors import PipslabError

from .features import observation
from .game import BackgammonState
from .moves import Play, check_dice

__all__ = ["Afterstates", "BackgammonEnvMixin"]


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


class BackgammonEnvMixin:
    """Backgammon's env methods (module docstring), composed into
    :class:`~pipslab.envs.generic_env.GameEnv` before it."""

    reset_keys = ("position", "dice", "player")

    # ------------------------------------------------------------------ hooks
    def resolve_agent(self, spec):
        # None: uniformly random from self.np_random (no agent); a name is made by pipslab.agents' factory
        return None if spec is None else super().resolve_agent(spec)

    def opponent_action(self, seat: int) -> int:
        if self.seat_agents[seat] is not None:
            return int(super().opponent_action(seat))
        legal = self.state.legal_actions()
        return legal[int(self.np_random.integers(len(legal)))] if len(legal) > 1 else legal[0]

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
                                                gammons=self.options["gammons"])

    # ------------------------------------------------------------------ afterstates
    def afterstates(self) -> Afterstates:
        """The learner's legal plays of this roll with their afterstates (see
        :class:`Afterstates`); a :class:`PipslabError` when the learner is not to move."""
        if self.state is None:
            raise PipslabError("call reset() before afterstates()")
        if not self.learner_to_move():
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
