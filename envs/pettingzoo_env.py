"""PettingZoo AEC environments for every game of :data:`pipslab.envs.GAMES`.

``env("happy", mode="block")``, ``env("troshin", players=4, pairs=True)``,
``env("triple", players=3)``, ``env("backgammon")`` — one factory for every game and
player count, built on the game contract (:mod:`pipslab.envs.game`) alone, so a game added
with :func:`~pipslab.envs.game.register_game` gets an AEC env for free.  Every seat is an
agent (nobody plays for the env); the classic conventions of PettingZoo's board and card
games (``tictactoe_v3``, ``leduc_holdem_v4`` …) hold:

Contract
--------
* **Factories**: :func:`env` is :func:`raw_env` wrapped as PettingZoo's classic envs are
  (``TerminateIllegalWrapper``, ``AssertOutOfBoundsWrapper``, ``OrderEnforcingWrapper``);
  :func:`raw_env` is the bare :class:`PipslabAECEnv`.  Arguments: ``game`` (a name in
  ``GAMES`` or a :class:`~pipslab.envs.game.Game`);
  ``render_mode=None|"ansi"|"rgb_array"|"human"``; ``viewer=None`` (whose hand the render
  shows, below); the game's options as
  keywords or ``options={...}`` (checked by the game: an unknown one is refused with one
  line).  :func:`env` also takes ``illegal_reward`` (below).
* **Agents**: ``player_0 … player_{n-1}``, ``player_i`` in seat ``i``; all of them in
  ``possible_agents`` and ``agents`` from the start (nobody leaves before the end).
  ``agent_selection`` is the seat to move.  In backgammon a turn is one checker move at a
  time, so the same agent is selected for several steps in a row; a domino DRAW keeps the
  turn too.
* **Action space**: ``Discrete(game.actions(options))``, the game's own action ids — the
  same as the Gymnasium envs' (dominoes: ``tile * 2 + end``, DRAW, PASS; backgammon:
  ``(from - 1) * 6 + (die - 1)``, bar = 25, PASS = 150).
* **Observation**: ``{"observation": float32[size], "action_mask": int8[actions]}``.  The
  vector is the game's :class:`~pipslab.envs.game.Encoder` (``game.encoder(options)``, the
  one the Gymnasium envs use) of ``state.observe(seat)`` — the seat's own view and nothing
  else, so another hand's tiles, the boneyard's order or a future roll never reach it.  The
  mask marks the legal actions of the agent to move and is **all zero for every other
  agent** and for everyone once the game is over.
* **Chance**: deals, redeals (a Troshin match's next hand) and dice are rolled by the env
  from ``self.np_random`` between agents' steps; no agent ever acts for chance.
* **Rewards**: 0 until the game ends; then every agent gets its seat's return,
  ``state.returns()`` (partners in pairs share their side's: +1 or −1 each; Happy ±1/0;
  Troshin and Triple zero-sum as in the Gymnasium envs; backgammon ±1/2/3).  A game that
  ends ends for every agent at once: ``terminations`` all True, never truncated.
* **Illegal actions**: :func:`env` (``TerminateIllegalWrapper``) ends the game for
  everyone, ``illegal_reward`` to the agent that made it and 0 to the others, with a
  warning — the classic envs' rule; ``illegal_reward`` defaults to the game's worst return
  (``Game.utility_bounds``: −1; backgammon −3, or −1 with ``gammons=False``, as
  ``illegal_action="lose"`` in the Gymnasium envs).  :func:`raw_env` raises
  :class:`~pipslab.envs.errors.IllegalActionError` naming the legal actions.
* **Reset**: ``reset(seed=None, options=None)``.  ``seed`` reseeds ``self.np_random``
  (Gymnasium's seeding), the only randomness of the env: a seed and the agents' actions fix
  the whole game.  Without a seed the generator goes on (a fresh one from the OS's entropy
  on the first reset).  ``options={"position": "<position string>"}`` starts from a
  position (games with a notation: the domino position strings, a GNU BG Position ID with
  seat 0 to roll); any other key is ignored with a warning (PettingZoo's ``api_test``
  passes one).
* **infos**: every agent's, on every step, the same keys as the Gymnasium env's ``info``
  without its three learner keys (``action_mask``, ``legal_actions``, ``illegal_action``):
  ``Game.info`` of the agent's seat — ``winner``, ``winning_team``, ``draw``,
  ``points_<s>``, ``pips_left_<s>`` (the "not over" defaults until the end), the game's
  info columns (``blocked``, ``gammon`` …) and its live public info as that seat sees it
  (scores, dice).  At the end also ``outcome``, the game's
  :class:`~pipslab.envs.game.Outcome` (returns, points and pips left per seat — the hands
  are turned up and counted at the end, RULES — and the game's own columns).
* **Render**: ``"ansi"`` returns the text, the game's ``render``; ``"rgb_array"`` the same
  table as an RGB picture, ``uint8[H, W, 3]`` of one fixed size per game
  (:mod:`pipslab.envs.render_env`; a game without a drawing of its own: its text, drawn);
  ``"human"`` prints the text to stdout and returns None (no window: PettingZoo's
  ``render_test`` builds every env with ``"human"`` first).  A game with hidden
  information takes a ``viewer``; while the game is on, the env shows the hand of the
  seat given as ``viewer=`` (``"player_2"`` or ``2``: e.g. the seat a human plays) and no
  other, and by default (``viewer=None``) **no hand at all** — only the table, the hands'
  sizes and the boneyard's size, what every seat sees.  The render is the env's, not an
  agent's: showing the hand of the agent to move would, between two agents' turns, show a
  screen with one hand and then another, so a fixed viewer is the safe choice.  Once the
  game is over every hand is shown (they are turned up).  Backgammon hides nothing.
* ``state()`` is not offered (it raises, as :class:`pettingzoo.AECEnv`'s): a global state
  would hold the hidden tiles.  The game state itself is ``env.unwrapped.game_state`` (the
  engine's object, every hand in it: for tests and debugging, never an agent's input).

Version history: v0 — first release.  Since then, still v0: ``infos`` carry the Gymnasium
env's result fields, info columns and live info on every step (were ``{}`` until the end);
the default ``illegal_reward`` is ``Game.utility_bounds``' minimum (the same values).
"""
from __future__ import annotations

import inspect
import warnings
from typing import Any, Dict, Mapping, Optional

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from pipslab.envs.checks import check_action, check_choice, require_reset
from pipslab.envs.errors import IllegalActionError, PipslabError, excerpt
from pipslab.envs.game import Game, get_game
from pipslab.envs.render_env import render_frame

__all__ = ["PipslabAECEnv", "env", "raw_env", "worst_return"]

#: reset options this env reads
RESET_KEYS = ("position",)


def worst_return(game: Game, options: Mapping[str, Any]) -> float:
    """The lowest return a seat can get in ``game`` with ``options`` (the default
    ``illegal_reward``): ``game.utility_bounds(options)[0]``."""
    return game.utility_bounds(options)[0]


class PipslabAECEnv(AECEnv):
    """Every seat of a pipslab game as a PettingZoo AEC agent (see the module docstring)."""

    metadata = {"render_modes": ["ansi", "rgb_array", "human"], "name": "pipslab_v0", "is_parallelizable": False,
                "render_fps": 1}

    def __init__(self, game, render_mode: Optional[str] = None, viewer=None, options: Optional[dict] = None,
                 **game_options):
        super().__init__()
        self.game = get_game(game) if isinstance(game, str) else game
        if not isinstance(self.game, Game):
            raise PipslabError(f"the PettingZoo env plays a Game definition, got {type(self.game).__name__}")
        given = dict(options or {})
        given.update(game_options)
        self.options = self.game.resolve(given, strict=True)
        self.render_mode = check_choice("render_mode", render_mode, (None,) + tuple(self.metadata["render_modes"]))
        self.players = self.game.players(self.options)
        self.teams = self.game.teams(self.options)
        self.num_actions = self.game.actions(self.options)
        self.encoder = self.game.observation_encoder(self.options)
        self.info_defaults = self.game.info_defaults(self.options)
        self.possible_agents = [f"player_{seat}" for seat in range(self.players)]
        self.agent_seat = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        self.viewer = self._viewer_seat(viewer)
        self.metadata = dict(self.metadata, name=f"pipslab_{self.game.variant_label(self.options)}_v0"
                             .replace("-", "_"))
        # one space object per agent (seeding one seeds only that agent's)
        self.observation_spaces = {a: _observation_space(self.encoder, self.num_actions)
                                   for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(self.num_actions) for a in self.possible_agents}
        self.game_state = None
        self.np_random: Optional[np.random.Generator] = None
        self.np_random_seed: Optional[int] = None
        self._takes_viewer = _takes_viewer(self.game.render)

    def _viewer_seat(self, viewer) -> Optional[int]:
        if viewer is None:
            return None
        if isinstance(viewer, str) and viewer in self.agent_seat:
            return self.agent_seat[viewer]
        if isinstance(viewer, (int, np.integer)) and not isinstance(viewer, (bool, np.bool_)) \
                and 0 <= viewer < self.players:
            return int(viewer)
        raise PipslabError(f"viewer must be None, an agent (player_0..player_{self.players - 1}) or a seat "
                           f"0..{self.players - 1}, got {excerpt(viewer)}")

    # ------------------------------------------------------------------ spaces
    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ helpers
    def _roll_chance(self) -> None:
        """Roll every chance outcome (dice, a match's next hand) with the env's generator until a
        seat must act."""
        s = self.game_state
        while not s.is_terminal and getattr(s, "is_chance", False):
            s.apply_chance(self.np_random)

    def _select(self) -> None:
        if self.game_state.is_terminal:
            self.agent_selection = self.agents[0]
        else:
            self.agent_selection = self.possible_agents[self.game_state.current_player]

    def _mask(self, agent) -> np.ndarray:
        mask = np.zeros(self.num_actions, dtype=np.int8)
        s = self.game_state
        if not s.is_terminal and agent == self.agent_selection and agent in self.agents:
            legal = list(s.legal_actions())
            if legal:
                mask[legal] = 1
        return mask

    def _update_infos(self) -> None:
        """Every agent's info: ``Game.info`` of its seat (module docstring)."""
        for agent in self.agents:
            self.infos[agent] = self.game.info(self.game_state, self.agent_seat[agent], self.options,
                                               self.info_defaults)

    def _finish(self) -> None:
        """The game is over: every seat's return, an outcome in every info, all terminated."""
        returns = self.game_state.returns()
        outcome = self.game.outcome(self.game_state)
        for agent in self.agents:
            self.rewards[agent] = float(returns[self.agent_seat[agent]])
            self.terminations[agent] = True
            self.infos[agent]["outcome"] = outcome

    # ------------------------------------------------------------------ AEC API
    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None) -> None:
        position = self._reset_position(options)
        if seed is not None or self.np_random is None:
            self.np_random, self.np_random_seed = seeding.np_random(seed)
        if position:
            self.game_state = self.game.parse(position, self.options, self.np_random)
        else:
            self.game_state = self.game.new_state(self.np_random, self.options)
        self._roll_chance()
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: {} for agent in self.agents}
        self._update_infos()
        self._select()
        if self.game_state.is_terminal:   # a position of a finished game
            self._finish()
            self._accumulate_rewards()

    @staticmethod
    def _reset_position(options) -> Optional[str]:
        if options is None:
            return None
        if not isinstance(options, Mapping):
            raise PipslabError(f"reset options must be a dict (like {{'position': ...}}), got {excerpt(options)}")
        unused = sorted(str(k) for k in options if k not in RESET_KEYS)
        if unused:
            warnings.warn(f"reset options {', '.join(unused)} are not used (this env reads: "
                          f"{', '.join(RESET_KEYS)})", stacklevel=3)
        position = options.get("position")
        if position is not None and (not isinstance(position, str) or not position.strip()):
            raise PipslabError(f"reset option position must be a position string, got {excerpt(position)}")
        return position

    def observe(self, agent):
        """``agent``'s observation: its seat's encoded view and its action mask (all zero
        when it is not its turn)."""
        require_reset(self.game_state, "observe()")
        seat = self.agent_seat.get(agent)
        if seat is None:
            raise PipslabError(f"no agent {excerpt(agent)} here (agents: {', '.join(self.possible_agents)})")
        vector = np.asarray(self.encoder.encode(self.game_state.observe(seat)), dtype=np.float32)
        return {"observation": vector, "action_mask": self._mask(agent)}

    def step(self, action) -> None:
        require_reset(self.game_state, "step()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        action = check_action(action, self.num_actions)
        legal = list(self.game_state.legal_actions())
        if action not in legal:
            raise IllegalActionError(f"{agent}: action {action} is not legal here; legal: {sorted(legal)}")
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        self.game_state.apply(action)
        self._roll_chance()
        self._update_infos()
        if self.game_state.is_terminal:
            self._finish()
        self._select()
        self._accumulate_rewards()

    def render(self):
        """The table as text (``ansi``), an RGB frame (``rgb_array``) or printed (``human``),
        showing the hand of ``viewer`` only while the game is on (module docstring)."""
        if self.render_mode is None:
            warnings.warn("render() without a render_mode: make the env with render_mode='ansi' or 'rgb_array'",
                          stacklevel=2)
            return None
        require_reset(self.game_state, "render()")
        if self.render_mode == "rgb_array":
            return render_frame(self.game, self.game_state, viewer=self._render_viewer(), seat=self.viewer)
        if self._takes_viewer:
            text = self.game.render(self.game_state, viewer=self._render_viewer())
        else:
            text = self.game.render(self.game_state)   # no hidden information (backgammon)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def _render_viewer(self) -> Optional[int]:
        """Whose hand the render shows: every hand at the end (and in a game whose render
        takes no viewer), else the env's ``viewer`` seat, or -1: none."""
        if not self._takes_viewer or self.game_state.is_terminal:
            return None
        return -1 if self.viewer is None else self.viewer

    def close(self) -> None:
        """Nothing to release (no window, no file)."""


def _observation_space(encoder, num_actions: int) -> spaces.Dict:
    return spaces.Dict({
        "observation": spaces.Box(encoder.low, encoder.high, shape=(encoder.size,), dtype=np.float32),
        "action_mask": spaces.Box(0, 1, shape=(num_actions,), dtype=np.int8),
    })


def _takes_viewer(fn) -> bool:
    try:
        return "viewer" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def raw_env(game, render_mode: Optional[str] = None, viewer=None, options: Optional[dict] = None,
            **game_options) -> PipslabAECEnv:
    """The bare AEC env of ``game`` (an illegal action raises; see the module docstring)."""
    return PipslabAECEnv(game, render_mode=render_mode, viewer=viewer, options=options, **game_options)


def env(game, render_mode: Optional[str] = None, viewer=None, illegal_reward: Optional[float] = None,
        options: Optional[dict] = None, **game_options):
    """The AEC env of ``game`` wrapped as PettingZoo's classic envs are: an illegal action
    ends the game with ``illegal_reward`` (default :func:`worst_return`) to its agent,
    an action outside the space is an assertion, and calls out of order are refused."""
    base = raw_env(game, render_mode=render_mode, viewer=viewer, options=options, **game_options)
    if illegal_reward is None:
        illegal_reward = worst_return(base.game, base.options)
    wrapped = wrappers.TerminateIllegalWrapper(base, illegal_reward=float(illegal_reward))
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    return wrappers.OrderEnforcingWrapper(wrapped)
