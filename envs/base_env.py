"""The one base of pipslab's Gymnasium adapters: :class:`SeatEnv`.

Every env plays **one learner seat**; the other seats are played by agents given to the
env.  What they all share lives here, so each adapter keeps only its game's specifics:

* **Arguments** (every env): ``learner_seat=0``; ``opponents`` — the agents of the other
  seats: one agent (``act(observation, rng)``, see :mod:`pipslab.agents.base`) or agent
  name (``"heaviest"``, ``"pimc:samples=50"``) for every other seat, or a list (or tuple)
  with one entry per seat, the learner's entry ignored.  ``None`` (the default, also as a
  list entry) means ``"random"``.  A name makes a fresh agent per seat; one agent object
  given for several seats plays all of them.  ``opponent=`` is the old name of the same
  argument: it still works and warns (``DeprecationWarning``).
  ``render_mode=None|"ansi"|"rgb_array"``; ``illegal_action="raise"|"lose"``;
  ``reveal=False`` (see below).
* **Observation**: ``{"observation": float32[size], "action_mask": int8[actions]}``
  (PettingZoo's convention) from the learner's seat; the same mask is
  ``info["action_mask"]`` and :meth:`SeatEnv.action_masks` (int8 too: sb3-contrib's
  MaskablePPO reads any 0/1 array; through ``gym.make``'s wrappers call it as
  ``env.unwrapped.action_masks()`` or ``env.get_wrapper_attr("action_masks")()`` —
  Gymnasium 1.x wrappers forward no other attributes).  The mask is all zero once the
  episode is over, and only then: whenever the episode is on, the learner has at least
  one legal action.  (A fresh deal always reaches a learner's decision; only a ``reset``
  to a finished position, or one that ``auto_forced`` plays to its end, returns an
  all-zero mask from ``reset`` — check ``env.state.is_terminal`` when you reset to
  positions.)
* **Reset**: ``reset(seed=..., options={"position": "..."})``; ``self.np_random`` is the
  only randomness (deals, dice, the other seats' choices), so a seed and the learner's
  actions fix the whole trajectory.  Options are checked by :mod:`pipslab.envs.checks`:
  an unknown key is refused with one line naming the keys the env takes.
* **Step**: the action is checked (:func:`~pipslab.envs.checks.check_action`); an illegal
  one raises :class:`~pipslab.envs.errors.IllegalActionError` (``illegal_action="raise"``,
  the default: a policy that ignores the mask is a bug to see at once, not a silent loss)
  or ends the episode with the env's worst reward and ``info["illegal_action"] = True``
  (``"lose"``).  Then the other seats (and chance) play until the learner must choose.
  Checkers that step random actions without the mask (``gymnasium``'s and
  ``stable_baselines3``'s ``check_env``) need ``illegal_action="lose"``.
* **info** — the same keys with the same types on every step, reset included, so that
  Gymnasium's vector envs (which stack each key into an array typed by its first value)
  can hold it:

  =====================  ======================================================
  ``action_mask``        int8[actions], as in the observation
  ``legal_actions``      list of int, the learner's (empty when it is not its turn)
  ``illegal_action``     bool, True only on the step lost to an illegal action
  ``winner``             int, the one seat that won; −1 while the game is on, in a
                         draw, and when several seats share the win
  ``winning_team``       int, the team that won (a seat's team in
                         :meth:`Game.teams`); −1 likewise
  ``draw``               bool, True only at the end of a drawn game
  ``points_<s>``         float per seat ``s``: the game's points (the outcome's at
                         the end; before it, the env's running score or 0)
  ``pips_left_<s>``      int per seat: pips left when the game ends (hands are
                         counted then); −1 while it is on, or in a game without pips
  (the env's own)        flat numbers of the game, listed in each env's docstring:
                         live ones (scores, dice) on every step, and the outcome's
                         columns (``blocked``, ``gammon`` …) with a fixed "not over"
                         default (0, False, −1) until the end
  =====================  ======================================================

  The typed :class:`~pipslab.envs.game.Outcome` of a finished game is
  :meth:`SeatEnv.outcome`.  An episode lost to an illegal action did not finish the
  game: its result fields keep their defaults.
* **Vector envs** (``gymnasium.make_vec(ID, num_envs=N)``, sync or async): every row the
  learner must act on has at least one legal action in its mask.  Under Gymnasium's
  default autoreset (``AutoresetMode.NEXT_STEP``) the row of a sub-env whose previous
  step ended the episode holds that final observation — mask all zero, no legal action —
  and the action given for it is ignored (the sub-env resets instead): skip those rows
  (``done = terminated | truncated`` of the previous step; e.g. sample from an all-ones
  mask there) or make the vector env with
  ``vector_kwargs={"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP}``, where
  every returned row is one to act on (the final observation and info are then in
  ``info["final_obs"]`` / ``info["final_info"]``).
* **Render**: ``render_mode=None|"ansi"|"rgb_array"``.  ``"ansi"``: :meth:`render`
  returns the table as text; ``"rgb_array"``: as an RGB picture, ``uint8[H, W, 3]`` of one
  fixed size per game (:mod:`pipslab.envs.render_env`: drawn with matplotlib's Agg backend,
  a game of the generic env as its text), so ``gymnasium.wrappers.RecordVideo`` records an
  episode (with moviepy) and ``stable_baselines3``'s ``make_vec_env``, which asks for
  ``"rgb_array"``, gets frames.  ``"human"`` is refused at construction in one line (no
  window: ``gymnasium.make(ID, render_mode="human")`` shows the frames with Gymnasium's
  ``HumanRendering`` wrapper, which needs pygame); any other mode warns, as Gymnasium's
  envs do, and :meth:`render` returns None.
* **Hidden information**: neither ``info`` nor a render (text or frame) shows what the
  learner's seat cannot see — the tiles in other seats' hands, the boneyard's tiles or
  order — while the game is on.  At the end the hands are turned up and counted (RULES):
  the result's pips left per seat are public, and the render shows the hands.  The
  boneyard is never shown.  ``reveal=True`` is for debugging: the render shows every hand
  and ``info["position"]`` carries the full position string (every hand, the boneyard in
  draw order) on every step.

Subclasses call :meth:`SeatEnv._setup` from their ``__init__`` and implement
:meth:`new_state`, :meth:`encode`; they may override :meth:`state_from_position`,
:meth:`check_reset_options`, :meth:`public_info`, :meth:`end_columns`, :meth:`end_info`,
:meth:`game_outcome`, :meth:`revealed_info`,
:meth:`render_text`, :meth:`render_game`, :meth:`render_viewer`, :meth:`render_frame`,
:meth:`resolve_agent`, :meth:`illegal_action_error` and
:attr:`illegal_penalty`.
"""
from __future__ import annotations

import warnings
from typing import Optional, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from .checks import (check_action, check_choice, check_flag, check_render_mode, check_seat, require_reset,
                     reset_options)
from .errors import IllegalActionError, PipslabError, excerpt
from .game import GAMES, Outcome
from .observation import Observation
from .opponents import is_agent, resolve_opponent
from . import render_env

__all__ = ["SeatEnv", "UNSET", "opponents_argument"]


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET = _Unset()   # "argument not given" (None is a meaningful opponents value)


def opponents_argument(opponents, opponent=UNSET, stacklevel: int = 3):
    """The ``opponents`` value of a constructor that also takes the deprecated ``opponent``."""
    if opponent is UNSET:
        return opponents
    warnings.warn("the opponent= argument is deprecated: use opponents= (one agent or name for every "
                  "other seat, or a list with one per seat)", DeprecationWarning, stacklevel=stacklevel)
    if opponents is not None:
        raise PipslabError("give opponents= only (opponent= is its deprecated old name), not both")
    return opponent


class SeatEnv(gym.Env):
    """One learner seat of a game; the other seats are played by agents (module docstring)."""

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 1}
    #: the keys ``reset(options=...)`` takes
    reset_keys: Sequence[str] = ("position",)
    #: the reward of an episode lost to an illegal action (``illegal_action="lose"``)
    illegal_penalty: float = -1.0

    # ------------------------------------------------------------------ construction
    def _setup(self, *, players: int, num_actions: int, obs_size: int, learner_seat, opponents,
               render_mode, illegal_action, reveal, agent_game: str, obs_low=0.0, obs_high=1.0,
               auto_forced=False) -> None:
        self.players = players
        self.num_actions = num_actions
        self.learner_seat = check_seat("learner_seat", learner_seat, players)
        self.illegal_action = check_choice("illegal_action", illegal_action, ("raise", "lose"))
        self.render_mode = check_render_mode(render_mode, self.metadata["render_modes"], type(self).__name__)
        self.reveal = check_flag("reveal", reveal)
        self.auto_forced = check_flag("auto_forced", auto_forced)
        self.agent_game = agent_game
        self.seat_agents = self._make_seat_agents(opponents)
        self.action_space = spaces.Discrete(num_actions)
        self.observation_space = spaces.Dict({
            "observation": spaces.Box(obs_low, obs_high, shape=(obs_size,), dtype=np.float32),
            "action_mask": spaces.Box(0, 1, shape=(num_actions,), dtype=np.int8),
        })
        self.state = None
        self._forfeit = False
        self._info_defaults = None

    def _make_seat_agents(self, opponents) -> list:
        n = self.players
        if opponents is None or isinstance(opponents, str) or is_agent(opponents):
            opponents = [opponents] * n
        if not isinstance(opponents, (list, tuple)):
            raise PipslabError(f"opponents: give an agent, an agent name or a list of {n} (one per seat), "
                               f"got {excerpt(opponents)} ({type(opponents).__name__})")
        opponents = list(opponents)
        if len(opponents) != n:
            raise PipslabError(f"opponents: give one agent or a list of {n} (one per seat), got {len(opponents)}")
        return [None if seat == self.learner_seat else self.resolve_agent(o)
                for seat, o in enumerate(opponents)]

    @property
    def opponent(self):
        """The agent of the other seat (two-player envs)."""
        if self.players != 2:
            raise AttributeError("opponent is the other seat's agent of a 2-player env: use seat_agents")
        return self.seat_agents[1 - self.learner_seat]

    # ------------------------------------------------------------------ hooks
    def resolve_agent(self, spec):
        """An opponents entry (agent, name or None) as the agent that plays its seat."""
        return resolve_opponent(spec, self.agent_game)

    def new_state(self):
        """A fresh game from ``self.np_random``."""
        raise NotImplementedError

    def state_from_position(self, text: str, options: dict):
        """The state of a ``reset`` position (and the other reset options)."""
        raise NotImplementedError

    def check_reset_options(self, options: dict) -> None:
        """Check the reset options together (before the env is reseeded)."""

    def encode(self) -> np.ndarray:
        """The learner's observation vector (float32), from its seat's view only."""
        raise NotImplementedError

    def public_info(self) -> dict:
        """The env's own live ``info`` entries, on every step: public facts only (scores,
        dice …), flat, each always of one type (int, float, bool or str)."""
        return {}

    def end_columns(self) -> dict:
        """The game's own numeric outcome columns (``Outcome.extra``: ``blocked``,
        ``gammon`` …) that ``info`` carries, each with its "not over" default, whose type
        is the column's type on every step."""
        return {}

    def game_outcome(self, state) -> Outcome:
        """The :class:`~pipslab.envs.game.Outcome` of a finished state (the game's
        definition in :data:`~pipslab.envs.game.GAMES` says it)."""
        return GAMES.get_game(self.agent_game).outcome(state)

    def end_info(self) -> dict:
        """``info`` entries at the end of the game: the outcome's result fields and
        columns, cast to the types of :meth:`info_defaults`."""
        o = self.game_outcome(self.state)
        out = {"winner": -1 if o.winner is None else int(o.winner),
               "winning_team": -1 if o.team is None else int(o.team), "draw": bool(o.draw)}
        for seat in range(self.players):
            if o.points is not None:
                out[f"points_{seat}"] = float(o.points[seat])
            if o.pips_left is not None:
                out[f"pips_left_{seat}"] = int(o.pips_left[seat])
        for key, default in self.end_columns().items():
            out[key] = type(default)(o.extra[key])
        return out

    def info_defaults(self) -> dict:
        """The result fields of ``info`` while the game is on (module docstring): their
        keys and types are those of every step."""
        out = {"winner": -1, "winning_team": -1, "draw": False}
        out.update((f"points_{seat}", 0.0) for seat in range(self.players))
        out.update((f"pips_left_{seat}", -1) for seat in range(self.players))
        out.update(self.end_columns())
        return out

    def outcome(self) -> Optional[Outcome]:
        """The typed outcome of the finished game (None while it is on, or after an
        episode lost to an illegal action)."""
        require_reset(self.state, "outcome()")
        return self.game_outcome(self.state) if self.state.is_terminal else None

    def revealed_info(self) -> dict:
        """``info`` entries only ``reveal=True`` adds (hidden state, for debugging)."""
        return {}

    def render_text(self) -> str:
        raise NotImplementedError

    def render_game(self):
        """The :class:`~pipslab.envs.game.Game` whose frames ``rgb_array`` draws."""
        return GAMES.get_game(self.agent_game)

    def render_viewer(self) -> Optional[int]:
        """Whose hidden information the render shows: the learner's seat while the game is
        on; None (every hand, turned up) at the end or with ``reveal=True``."""
        return None if self.reveal or self.state.is_terminal else self.learner_seat

    def render_frame(self) -> np.ndarray:
        """The ``rgb_array`` frame: the table from the learner's view (its seat at the
        bottom), drawn as :mod:`pipslab.envs.render_env` draws the game."""
        return render_env.render_frame(self.render_game(), self.state, viewer=self.render_viewer(),
                                       seat=self.learner_seat)

    def illegal_action_error(self, action: int) -> IllegalActionError:
        legal = [int(a) for a in np.flatnonzero(self._mask())]
        return IllegalActionError(f"action {action} is not legal here; legal: {legal}")

    # ------------------------------------------------------------------ helpers
    def _over(self) -> bool:
        return self._forfeit or self.state.is_terminal

    def _learner_to_move(self) -> bool:
        s = self.state
        return not self._over() and not getattr(s, "is_chance", False) and s.current_player == self.learner_seat

    def _legal(self) -> list:
        return [int(a) for a in self.state.legal_actions()] if self._learner_to_move() else []

    def _mask(self) -> np.ndarray:
        mask = np.zeros(self.num_actions, dtype=np.int8)
        legal = self._legal()
        if legal:
            mask[legal] = 1
        return mask

    def action_masks(self) -> np.ndarray:
        """The learner's legal-action mask, int8 as in the observation (sb3-contrib's
        MaskablePPO takes any 0/1 array: it casts to bool)."""
        require_reset(self.state, "action_masks()")
        return self._mask()

    def _obs(self) -> dict:
        return {"observation": np.asarray(self.encode(), dtype=np.float32), "action_mask": self._mask()}

    def _info(self, **extra) -> dict:
        if self._info_defaults is None:
            self._info_defaults = self.info_defaults()
        info = {"action_mask": self._mask(), "legal_actions": self._legal(), "illegal_action": False}
        info.update(self._info_defaults)
        info.update(self.public_info())
        if self.state.is_terminal:
            info.update(self.end_info())
        if self.reveal:
            info.update(self.revealed_info())
        info.update(extra)
        return info

    def _reward(self) -> float:
        return float(self.state.returns()[self.learner_seat]) if self.state.is_terminal else 0.0

    def _agent_action(self, seat: int) -> int:
        s = self.state
        agent = self.seat_agents[seat]
        legal = s.legal_actions()
        obs = Observation(seat, s.observe(seat), legal, self.num_actions,
                          s.clone() if getattr(agent, "sees_hidden_state", False) else None)
        return agent.act(obs, self.np_random)

    def _advance(self) -> None:
        """Roll chance and let the other seats (and, with ``auto_forced``, the learner's
        forced moves) play until the learner must choose or the game ends."""
        s, rng = self.state, self.np_random
        while not s.is_terminal:
            if getattr(s, "is_chance", False):
                s.apply_chance(rng)
                continue
            p = s.current_player
            if p != self.learner_seat:
                s.apply(self._agent_action(p))
                continue
            if self.auto_forced:
                legal = s.legal_actions()
                if len(legal) == 1:
                    s.apply(legal[0])
                    continue
            return

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        options = reset_options(options, self.reset_keys)
        self.check_reset_options(options)
        super().reset(seed=seed)
        self._forfeit = False
        if options.get("position"):
            self.state = self.state_from_position(options["position"], options)
        else:
            self.state = self.new_state()
        for seat, agent in enumerate(self.seat_agents):
            if agent is not None and callable(getattr(agent, "reset", None)):
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
                raise self.illegal_action_error(action)
            self._forfeit = True
            return self._obs(), float(self.illegal_penalty), True, False, self._info(illegal_action=True)
        self.state.apply(action)
        self._advance()
        return self._obs(), self._reward(), self.state.is_terminal, False, self._info()

    def render(self):
        """The table as ``ansi`` text or an ``rgb_array`` frame (``uint8[H, W, 3]``); None in
        any other render mode."""
        if self.render_mode == "ansi":
            require_reset(self.state, "render()")
            return self.render_text()
        if self.render_mode == "rgb_array":
            require_reset(self.state, "render()")
            return self.render_frame()
        return None
