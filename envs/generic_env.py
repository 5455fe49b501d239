"""A Gymnasium env for any game of :data:`pipslab.envs.GAMES`, from its definition alone.

``GameEnv("toy-race", target=30)`` — or ``gymnasium.make(ID)`` for a game registered with
an ``env_id`` and no ``env_entry`` — plays one learner seat; every other seat is played by
an agent.  The built-in games keep their own hand-written envs
(``pipslab/HappyDominoes-v0`` …); this adapter is what a new game gets for free.

Contract
--------
* **Arguments**: ``game`` (a name in ``GAMES`` or a :class:`~pipslab.envs.game.Game`);
  ``learner_seat=0``; ``opponents`` — an agent, an agent name (default ``"random"``) or
  one entry per seat (the learner's ignored); ``render_mode=None|"ansi"``;
  ``illegal_action="raise"|"lose"``; ``options`` and any other keyword: the game's options
  (checked by the game: an unknown one is refused).
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
* ``info``: ``action_mask``, ``legal_actions`` and, at the end, ``outcome`` (the game's
  :class:`~pipslab.envs.game.Outcome`).

Version history: v0 — first release.
"""
from __future__ import annotations

from typing import Optional

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from pipslab.envs.checks import check_action, check_choice, check_seat, require_reset, reset_options
from pipslab.envs.errors import IllegalActionError, PipslabError, excerpt
from pipslab.envs.game import GAMES, Game
from pipslab.envs.observation import Observation
from pipslab.envs.opponents import is_agent, resolve_opponent


class GameEnv(gym.Env):
    """One learner seat of any registered game (see the module docstring)."""

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(self, game, learner_seat: int = 0, opponents=None, render_mode: Optional[str] = None,
                 illegal_action: str = "raise", options: Optional[dict] = None, **game_options):
        self.game = GAMES.get_game(game) if isinstance(game, str) else game
        if not isinstance(self.game, Game):
            raise PipslabError(f"GameEnv plays a Game definition, got {type(self.game).__name__}")
        given = dict(options or {})
        given.update(game_options)
        self.options = self.game.resolve(given)
        self.players = self.game.players(self.options)
        self.learner_seat = check_seat("learner_seat", learner_seat, self.players)
        self.illegal_action = check_choice("illegal_action", illegal_action, ("raise", "lose"))
        self.render_mode = check_choice("render_mode", render_mode, (None, "ansi"))
        self.encoder = self.game.observation_encoder(self.options)
        self.num_actions = self.game.actions(self.options)
        self.action_space = spaces.Discrete(self.num_actions)
        self.observation_space = spaces.Dict({
            "observation": spaces.Box(self.encoder.low, self.encoder.high, shape=(self.encoder.size,), dtype=np.float32),
            "action_mask": spaces.Box(0, 1, shape=(self.num_actions,), dtype=np.int8),
        })
        if opponents is None or isinstance(opponents, str) or is_agent(opponents):
            opponents = [opponents] * self.players
        if not isinstance(opponents, (list, tuple)):
            raise PipslabError(f"opponents: give an agent, an agent name or a list of {self.players} (one per "
                               f"seat), got {excerpt(opponents)} ({type(opponents).__name__})")
        opponents = list(opponents)
        if len(opponents) != self.players:
            raise PipslabError(f"opponents: give one agent or a list of {self.players} (one per seat), "
                               f"got {len(opponents)}")
        self.seat_agents = [None if s == self.learner_seat else resolve_opponent(o, self.game.name)
                            for s, o in enumerate(opponents)]
        self.state = None
        self._forfeit = False

    # ------------------------------------------------------------------ helpers
    def _over(self) -> bool:
        return self._forfeit or self.state.is_terminal

    def _mask(self) -> np.ndarray:
        mask = np.zeros(self.num_actions, dtype=np.int8)
        s = self.state
        if not self._over() and not s.is_chance and s.current_player == self.learner_seat:
            mask[list(s.legal_actions())] = 1
        return mask

    def action_masks(self) -> np.ndarray:
        """The learner's legal-action mask (sb3-contrib's MaskablePPO convention)."""
        require_reset(self.state, "action_masks()")
        return self._mask().astype(bool)

    def _obs(self):
        x = np.asarray(self.encoder.encode(self.state.observe(self.learner_seat)), dtype=np.float32)
        return {"observation": x, "action_mask": self._mask()}

    def _info(self, **extra):
        mask = self._mask()
        info = {"action_mask": mask, "legal_actions": [int(a) for a in np.flatnonzero(mask)]}
        if self.state.is_terminal:
            info["outcome"] = self.game.outcome(self.state)
        info.update(extra)
        return info

    def _advance(self) -> None:
        """Roll the chance outcomes and let the other seats play until the learner must act."""
        s, rng = self.state, self.np_random
        while not s.is_terminal:
            if s.is_chance:
                s.apply_chance(rng)
                continue
            p = s.current_player
            if p == self.learner_seat:
                return
            agent = self.seat_agents[p]
            obs = Observation(p, s.observe(p), s.legal_actions(), self.num_actions,
                              s.clone() if agent.sees_hidden_state else None)
            s.apply(agent.act(obs, rng))

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        options = reset_options(options, ("position",) if self.game.parse_position is not None else ())
        super().reset(seed=seed)
        self._forfeit = False
        if options.get("position"):
            self.state = self.game.parse(options["position"], self.options, self.np_random)
        else:
            self.state = self.game.new_state(self.np_random, self.options)
        for seat, agent in enumerate(self.seat_agents):
            if agent is not None:
                agent.reset(seat)
        self._advance()
        return self._obs(), self._info()

    def step(self, action):
        if self.state is None:
            raise PipslabError("call reset() before step()")
        if self._over():
            raise PipslabError("the episode is over: call reset()")
        action = check_action(action, self.num_actions)
        if not self._mask()[action]:
            if self.illegal_action == "raise":
                legal = [int(a) for a in np.flatnonzero(self._mask())]
                raise IllegalActionError(f"action {action} is not legal here; legal: {legal}")
            self._forfeit = True
            return self._obs(), -1.0, True, False, self._info(illegal_action=True)
        self.state.apply(action)
        self._advance()
        done = self.state.is_terminal
        reward = float(self.state.returns()[self.learner_seat]) if done else 0.0
        return self._obs(), reward, done, False, self._info()

    def render(self):
        if self.render_mode == "ansi":
            require_reset(self.state, "render()")
            return self.game.render(self.state)
        return None
