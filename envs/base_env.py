"""The Gymnasium contract of every pipslab env: :class:`SeatEnv`, the base of the one env
class :class:`pipslab.envs.generic_env.GameEnv` (every Gym id; ``docs/envs.md`` has each
game's observation layout and extra ``info``).

Every env plays **one learner seat**; the other seats are played by agents given to the
env.  Everything else comes from the game's :class:`~pipslab.envs.game.Game`:

* **Arguments** (every env): ``learner_seat=0``; ``opponents`` — the agents of the other
  seats: one agent (``act(observation, rng)``, see :mod:`pipslab.agents.base`) or agent
  name (``"heaviest"``, ``"pimc:samples=50"``) for every other seat, or a list (or tuple)
  with one entry per seat, the learner's entry ignored.  ``None`` (the default, also as a
  list entry) means ``"random"``.  A name makes a fresh agent per seat; one agent object
  given for several seats plays all of them.  ``opponent=`` is the old name of the same
  argument: it still works and warns (``DeprecationWarning``).
  ``render_mode=None|"ansi"|"rgb_array"``; ``illegal_action="raise"|"lose"``;
  ``reveal=False`` (see below); ``auto_forced=False`` (the learner's forced moves — a
  single legal action — are played for it).  Every other keyword is an option of the
  game (``Game.options_spec``: ``mode``, ``players``, ``gammons`` …), of its Python type;
  an unknown one or a wrong type is refused in one line.
* **Action space**: ``Discrete(Game.actions(options))``, the game's action ids.
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
  or ends the episode with the game's worst return (``Game.utility_bounds``) and
  ``info["illegal_action"] = True`` (``"lose"``).  Then the other seats (and chance) play until the learner must choose.
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
  (the game's own)       flat numbers and strings of the game (``Game.info``;
                         ``docs/envs.md`` lists each game's): its live info
                         (scores, dice) on every step, and its info columns — the
                         outcome's (``blocked``, ``gammon`` …) — with a fixed "not
                         over" default (0, False, −1) until the end
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

The one Gymnasium class is :class:`pipslab.envs.generic_env.GameEnv` (every Gym id, built
from the game's :class:`~pipslab.envs.game.Game` alone); it calls :meth:`SeatEnv._setup`
with the game and its options, and a game's env mixin (``Game.env_mixin``) may override
the hooks: :meth:`new_state`, :meth:`state_from_position`, :meth:`check_reset_options`,
:meth:`encode`, :meth:`public_info`, :meth:`revealed_info`, :meth:`render_text`,
:meth:`resolve_agent`, :meth:`opponent_action`, :meth:`illegal_action_error` and
``reset_keys``.  The observation layouts and each game's extra ``info`` keys are in
``docs/envs.md``.
"""
from __future__ import annotations

import inspect
import warnings
from typing import Optional, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from .checks import (check_action, check_choice, check_flag, check_render_mode, check_seat, require_reset,
                     reset_options)
from .errors import IllegalActionError, PipslabError, excerpt
from .game import Game, Outcome
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
    #: the reward of an episode lost to an illegal action (``illegal_action="lose"``): the
    #: game's worst return (``Game.utility_bounds``)
    illegal_penalty: float = -1.0

    # ------------------------------------------------------------------ construction
    def _setup(self, *, game: Game, options: dict, learner_seat, opponents, render_mode, illegal_action,
               reveal, auto_forced=False) -> None:
        self.game = game
        self.options = options
        self.players = game.players(options)
        self.num_actions = game.actions(options)
        self.encoder = game.observation_encoder(options)
        self.obs_size = self.encoder.size
        self.illegal_penalty = game.utility_bounds(options)[0]
        self.learner_seat = check_seat("learner_seat", learner_seat, self.players)
        self.illegal_action = check_choice("illegal_action", illegal_action, ("raise", "lose"))
        self.render_mode = check_render_mode(render_mode, self.metadata["render_modes"], type(self).__name__)
        self.reveal = check_flag("reveal", reveal)
        self.auto_forced = check_flag("auto_forced", auto_forced)
        self.agent_game = game.name
        self.seat_agents = self._make_seat_agents(opponents)
        self.action_space = spaces.Discrete(self.num_actions)
        self.observation_space = spaces.Dict({
            "observation": spaces.Box(self.encoder.low, self.encoder.high, shape=(self.obs_size,), dtype=np.float32),
            "action_mask": spaces.Box(0, 1, shape=(self.num_actions,), dtype=np.int8),
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

    def opponent_action(self, seat: int) -> int:
        """The action of the agent in ``seat`` (not the learner's), shown what it may see."""
        s = self.state
        agent = self.seat_agents[seat]
        legal = s.legal_actions()
        obs = Observation(seat, s.observe(seat), legal, self.num_actions,
                          s.clone() if getattr(agent, "sees_hidden_state", False) else None)
        return agent.act(obs, self.np_random)

    def new_state(self):
        """A fresh game from ``self.np_random`` (or the ``position`` option's)."""
        return self.game.new_state(self.np_random, self.options)

    def state_from_position(self, text: str, options: dict):
        """The state of a ``reset`` position (and the other reset options)."""
        return self.game.parse(text, self.options, self.np_random)

    def check_reset_options(self, options: dict) -> None:
        """Check the reset options together (before the env is reseeded)."""

    def encode(self) -> np.ndarray:
        """The learner's observation vector (float32), from its seat's view only."""
        return self.encoder.encode(self.state.observe(self.learner_seat))

    def public_info(self) -> dict:
        """The game's live ``info`` entries (``Game.live_info`` of the learner's seat):
        public facts only, flat, the same keys and types on every step."""
        return self.game.seat_info(self.state, self.learner_seat)

    def end_info(self) -> dict:
        """``info`` entries at the end of the game (``Game.end_info``): the outcome's result
        fields and columns, cast to the types of :meth:`info_defaults`."""
        return self.game.end_info(self.state, self.options)

    def info_defaults(self) -> dict:
        """The result fields and the game's info columns while the game is on
        (``Game.info_defaults``): their keys and types are those of every step."""
        return self.game.info_defaults(self.options)

    def outcome(self) -> Optional[Outcome]:
        """The typed outcome of the finished game (None while it is on, or after an
        episode lost to an illegal action)."""
        require_reset(self.state, "outcome()")
        return self.game.outcome(self.state) if self.state.is_terminal else None

    def revealed_info(self) -> dict:
        """``info`` entries only ``reveal=True`` adds: ``position``, the full position
        string (hidden state, for debugging), in a game with a notation."""
        if self.game.format_position is None:
            return {}
        return {"position": self.game.format(self.state)}

    def render_text(self) -> str:
        """The game's ``render``; when it takes a ``viewer`` (hidden information), the
        learner's seat while the game is on (:meth:`render_viewer`)."""
        render = self.game.render
        if _takes_viewer(render):
            return render(self.state, viewer=self.render_viewer())
        return render(self.state)

    def render_viewer(self) -> Optional[int]:
        """Whose hidden information the render shows: the learner's seat while the game is
        on; None (every hand, turned up) at the end or with ``reveal=True``."""
        return None if self.reveal or self.state.is_terminal else self.learner_seat

    def render_frame(self) -> np.ndarray:
        """The ``rgb_array`` frame: the table from the learner's view (its seat at the
        bottom), drawn as :mod:`pipslab.envs.render_env` draws the game."""
        return render_env.render_frame(self.game, self.state, viewer=self.render_viewer(), seat=self.learner_seat)

    def illegal_action_error(self, action: int) -> IllegalActionError:
        """The error an illegal action raises: the engine's own message (it names the
        legal actions) when it refuses the action, else one listing them."""
        try:
            self.state.clone().apply(action)
        except IllegalActionError as err:
            return err
        except Exception:   # noqa: BLE001  (an engine that does not check: the generic message)
            pass
        legal = [int(a) for a in np.flatnonzero(self._mask())]
        return IllegalActionError(f"action {action} is not legal here; legal: {legal}")

    # ------------------------------------------------------------------ helpers
    def _over(self) -> bool:
        return self._forfeit or self.state.is_terminal

    def learner_to_move(self) -> bool:
        """Whether the learner must choose now (the episode is on and it is its decision)."""
        s = self.state
        return not self._over() and not getattr(s, "is_chance", False) and s.current_player == self.learner_seat

    def _legal(self) -> list:
        return [int(a) for a in self.state.legal_actions()] if self.learner_to_move() else []

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
                s.apply(self.opponent_action(p))
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


def _takes_viewer(fn) -> bool:
    try:
        return "viewer" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
