"""A Gymnasium env for any game of :data:`pipslab.envs.GAMES`, from its definition alone.

``GameEnv("toy-race", target=30)`` — or ``gymnasium.make(ID)`` for a game registered with
an ``env_id`` and no ``env_entry`` — plays one learner seat; every other seat is played by
an agent.  The built-in games keep their own hand-written envs
(``pipslab/HappyDominoes-v0`` …); this adapter is what a new game gets for free.

Contract
--------
* **Arguments**: ``game`` (a name in ``GAMES`` or a :class:`~pipslab.envs.game.Game`);
  ``learner_seat=0``; ``opponents`` — an agent, an agent name (default ``"random"``) or
  one entry per seat (the learner's ignored; ``opponent=`` is the deprecated old name);
  ``render_mode=None|"ansi"|"rgb_array"``; ``illegal_action="raise"|"lose"``; ``reveal=False``
  (debugging: ``info["position"]`` and the render show hidden state); ``options`` and any
  other keyword: the game's options (checked by the game: an unknown one is refused).
  The plumbing is :class:`pipslab.envs.base_env.SeatEnv`'s, shared by every env.
* **Action space**: ``Discrete(game.actions(options))``, the game's action ids.
* **Observation**: ``{"observation": float32[size], "action_mask": int8[actions]}`` where
  the vector is the game's :class:`~pipslab.envs.game.Encoder` of the learner's view
  (``state.observe(learner_seat)``); the mask is also in ``info["action_mask"]`` and
  :meth:`action_masks`.
* **Reward**: 0 until the end, then the learner's return.  An illegal action with
  ``illegal_action="lose"`` ends the episode with −1 and ``info["illegal_action"] = True``.
* **Reset**: ``reset(seed=..., options={"position": "..."})`` starts from a position (games
  with a notation); otherwise a new game from ``self.np_random``, which also rolls every
  chance outcome and feeds the opponents, so a seed and the learner's actions fix the
  whole trajectory.
* ``info``: the same keys and types on every step (:mod:`pipslab.envs.base_env` lists
  them): ``action_mask``, ``legal_actions``, ``illegal_action``, ``winner``,
  ``winning_team``, ``draw``, ``points_<s>``, ``pips_left_<s>`` (−1 in a game without
  pips); the game's own outcome columns are not in ``info`` (a generic game declares no
  types for them): :meth:`outcome` gives the whole typed
  :class:`~pipslab.envs.game.Outcome` of the finished game.  With ``reveal=True`` also
  ``position`` (games with a notation).
* **Render** (``"ansi"``): the game's ``render``; when it takes a ``viewer`` keyword (a game
  with hidden information should), the learner's seat is the viewer while the game is on
  (``viewer=None``, everything, at the end or with ``reveal=True``).  ``"rgb_array"``: that
  same text drawn as monospace lines on a fixed-size ``uint8[H, W, 3]`` frame (a game of
  the ``dominoes`` or ``backgammon`` family gets its table drawn:
  :mod:`pipslab.envs.render_env`).  ``"human"`` is refused in one line.

Version history: v0 — first release.  v0, issue 14 — ``info`` has fixed keys and types on
every step (Gymnasium's vector envs): ``info["outcome"]`` (an object present only at the
end) became the flat result fields and :meth:`outcome`; ``action_masks()`` is int8; an
unsupported ``render_mode`` warns.
"""
from __future__ import annotations

import inspect
from typing import Optional

import numpy as np

from pipslab.envs.base_env import UNSET, SeatEnv, opponents_argument
from pipslab.envs.checks import check_seat
from pipslab.envs.errors import PipslabError
from pipslab.envs.game import GAMES, Game


class GameEnv(SeatEnv):
    """One learner seat of any registered game (see the module docstring)."""

    def __init__(self, game, learner_seat: int = 0, opponents=None, render_mode: Optional[str] = None,
                 illegal_action: str = "raise", options: Optional[dict] = None, reveal: bool = False, *,
                 opponent=UNSET, **game_options):
        opponents = opponents_argument(opponents, opponent)
        self.game = GAMES.get_game(game) if isinstance(game, str) else game
        if not isinstance(self.game, Game):
            raise PipslabError(f"GameEnv plays a Game definition, got {type(self.game).__name__}")
        given = dict(options or {})
        given.update(game_options)
        self.options = self.game.resolve(given)
        players = self.game.players(self.options)
        check_seat("learner_seat", learner_seat, players)
        self.encoder = self.game.observation_encoder(self.options)
        self.reset_keys = ("position",) if self.game.parse_position is not None else ()
        self._setup(players=players, num_actions=self.game.actions(self.options), obs_size=self.encoder.size,
                    obs_low=self.encoder.low, obs_high=self.encoder.high, learner_seat=learner_seat,
                    opponents=opponents, render_mode=render_mode, illegal_action=illegal_action,
                    reveal=reveal, agent_game=self.game.name)

    # ------------------------------------------------------------------ hooks
    def new_state(self):
        return self.game.new_state(self.np_random, self.options)

    def state_from_position(self, text: str, options: dict):
        return self.game.parse(text, self.options, self.np_random)

    def encode(self) -> np.ndarray:
        return self.encoder.encode(self.state.observe(self.learner_seat))

    def game_outcome(self, state):
        return self.game.outcome(state)

    def revealed_info(self) -> dict:
        if self.game.format_position is None:
            return {}
        return {"position": self.game.format(self.state)}

    def render_game(self) -> Game:
        return self.game

    def render_text(self) -> str:
        render = self.game.render
        if _takes_viewer(render):
            shown = self.reveal or self.state.is_terminal
            return render(self.state, viewer=None if shown else self.learner_seat)
        return render(self.state)


def _takes_viewer(fn) -> bool:
    try:
        return "viewer" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
