"""Gymnasium adapter for the domino engine: ``pipslab/HappyDominoes-v0``.

Contract
--------
* **Arguments**: ``mode="block"|"draw"``; ``learner_seat=0``; ``opponent`` — an agent
  (``pipslab.agents.base.Agent``) or an agent name (default ``"random"``) playing every other seat;
  ``render_mode=None|"ansi"``; ``illegal_action="raise"|"lose"``; ``auto_forced=False`` —
  when True, the learner's forced moves (a single legal action) are played for it.
* **Action space**: ``Discrete(58)`` — ``tile * 2 + end`` places tile ``tile`` (0..27,
  ``pipslab.envs.dominoes.tiles.TILES``) at the left (0) or right (1) end, 56 is DRAW, 57 is PASS.
* **Observation**: ``{"observation": float32[111], "action_mask": int8[58]}``.  The same
  mask is in ``info["action_mask"]`` and ``action_masks()``.  The vector, from the
  learner's seat (seat ``s``; "opponent" is the other seat), is:

  ====== ===========================================================
  0:28   own hand (1 if the tile is held)
  28:56  tiles the learner placed on the table
  56:84  tiles the opponent placed on the table
  84:92  left open end, one-hot 0..6, slot 7 = empty table
  92:100 right open end, one-hot 0..6, slot 7 = empty table
  100    opponent's hand size / 28
  101    boneyard size / 28
  102    passes in a row / 2
  103:110 numbers the opponent is known to lack (passes since its last draw)
  110    1.0 in draw mode, 0.0 in block mode
  ====== ===========================================================

  Nothing hidden is encoded: never the opponent's tiles nor the boneyard's.
* **Reward**: at the end of the game, +1 win / 0 draw / −1 loss from the learner's seat;
  0 on every other step.  An illegal action with ``illegal_action="lose"`` ends the episode
  with −1 and ``info["illegal_action"] = True``; with ``"raise"`` it raises
  ``IllegalActionError`` naming the action and the legal ones.
* **Reset**: ``reset(seed=..., options={"position": "<position string>"})`` starts from a
  position (``pipslab.envs.dominoes.notation``); otherwise a fresh deal from ``self.np_random``.
  The opponent's choices also draw from ``self.np_random``, so a seed and the learner's
  actions fix the whole trajectory.
* ``info``: ``action_mask``, ``legal_actions``, ``position`` (the full position string — it
  shows hidden tiles, for logging only), and at the end ``result`` (winner, blocked,
  pips_left).

Version history: v0 — first release.

The env plumbing (masks, opponents per seat, reset from a position, illegal actions,
rendering) lives in :class:`DominoEnvBase`, shared with ``pipslab/TroshinDominoes-v0``
(``pipslab.envs.dominoes.troshin_env``) and ``pipslab/TripleDominoes-v0`` (``pipslab.envs.dominoes.triple_env``).
"""
from __future__ import annotations

from typing import Optional

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from pipslab.envs.checks import check_action, check_choice, check_flag, check_seat, require_reset, reset_options
from pipslab.envs.errors import IllegalActionError, PipslabError, excerpt
from pipslab.envs.observation import Observation
from pipslab.envs.opponents import is_agent, resolve_opponent

from .engine import DominoView, deal
from .notation import format_position, parse_position, render
from .tiles import N_TILES, tiles_of
from .variants import Variant, happy

OBS_SIZE = 111


def encode_tiles(view: DominoView, x: np.ndarray) -> None:
    """The part every domino observation shares: ``x[0:28]`` the viewer's own hand, then for
    each seat ``k`` places after the viewer (the viewer is ``k = 0``), ``x[28 + 28*k + t]``
    set when that seat placed tile ``t``."""
    me, n = view.player, view.variant.players
    for t in tiles_of(view.hand):
        x[t] = 1.0
    for kind, p, tile, _e, _l, _r in view.history:
        if kind == 0:
            x[28 + 28 * ((p - me) % n) + tile] = 1.0


def encode_view(view: DominoView) -> np.ndarray:
    """The 111-float observation vector of a 2-player view (see the module docstring)."""
    x = np.zeros(OBS_SIZE, dtype=np.float32)
    me = view.player
    encode_tiles(view, x)
    x[84 + (view.left if view.left >= 0 else 7)] = 1.0
    x[92 + (view.right if view.right >= 0 else 7)] = 1.0
    opp = 1 - me
    x[100] = view.hand_sizes[opp] / N_TILES
    x[101] = view.boneyard_size / N_TILES
    x[102] = view.passes / 2.0
    void = view.voids(opp)
    for n in range(7):
        if void >> n & 1:
            x[103 + n] = 1.0
    x[110] = 1.0 if view.variant.draw else 0.0
    return x


class DominoEnvBase(gym.Env):
    """One learner seat of a domino game; the other seats are played by agents.

    Subclasses set ``game`` (the agent registry's name), ``obs_size`` and implement
    :meth:`encode` (a view -> float32 vector in [0, 1]); they may override
    :meth:`new_state` (a fresh deal from ``self.np_random``), :meth:`parse` (a position
    string) and :meth:`extra_info`.

    ``opponents``: an agent, an agent name, or a list with one entry per seat (the
    learner's entry is ignored; ``None`` entries mean ``"random"``).  A name makes a fresh
    agent per seat (``pipslab.envs.opponents``: the factory pipslab.agents installs); one
    agent object given for several seats plays all of them.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}
    game = "happy"
    obs_size = OBS_SIZE

    def __init__(self, variant: Variant, learner_seat: int = 0, opponents=None,
                 render_mode: Optional[str] = None, illegal_action: str = "raise",
                 auto_forced: bool = False):
        self.variant = variant
        self.learner_seat = check_seat("learner_seat", learner_seat, variant.players)
        self.illegal_action = check_choice("illegal_action", illegal_action, ("raise", "lose"))
        self.auto_forced = check_flag("auto_forced", auto_forced)
        self.render_mode = check_choice("render_mode", render_mode, (None, "ansi"))
        self.seat_agents = self._make_opponents(opponents)
        k = variant.num_actions
        self.action_space = spaces.Discrete(k)
        self.observation_space = spaces.Dict({
            "observation": spaces.Box(0.0, 1.0, shape=(self.obs_size,), dtype=np.float32),
            "action_mask": spaces.Box(0, 1, shape=(k,), dtype=np.int8),
        })
        self.state = None
        self._forfeit = False

    def _make_opponents(self, opponents):
        n = self.variant.players
        if opponents is None or isinstance(opponents, str) or is_agent(opponents):
            opponents = [opponents] * n
        if not isinstance(opponents, (list, tuple)):
            raise PipslabError(f"opponents: give an agent, an agent name or a list of {n} (one per seat), "
                               f"got {excerpt(opponents)} ({type(opponents).__name__})")
        opponents = list(opponents)
        if len(opponents) != n:
            raise PipslabError(f"opponents: give one agent or a list of {n} (one per seat), got {len(opponents)}")
        seats = []
        for seat, opp in enumerate(opponents):
            if seat == self.learner_seat:
                seats.append(None)
                continue
            seats.append(resolve_opponent(opp, self.game))
        return seats

    # ------------------------------------------------------------------ hooks
    def encode(self, view) -> np.ndarray:
        raise NotImplementedError

    def new_state(self):
        return deal(self.variant, self.np_random)

    def parse(self, text: str):
        state = parse_position(text)
        if state.variant != self.variant:
            raise PipslabError(f"position is {state.variant.name} but this env plays {self.variant.name}")
        return state

    def extra_info(self) -> dict:
        return {}

    # ------------------------------------------------------------------ helpers
    def _mask(self) -> np.ndarray:
        mask = np.zeros(self.variant.num_actions, dtype=np.int8)
        if not self._over() and self.state.current_player == self.learner_seat:
            mask[self.state.legal_actions()] = 1
        return mask

    def _over(self) -> bool:
        return self._forfeit or self.state.is_terminal

    def action_masks(self) -> np.ndarray:
        """The legal-action mask of the learner (sb3-contrib's MaskablePPO convention)."""
        require_reset(self.state, "action_masks()")
        return self._mask().astype(bool)

    def _obs(self):
        return {"observation": self.encode(self.state.observe(self.learner_seat)),
                "action_mask": self._mask()}

    def _info(self, **extra):
        mine = not self._over() and self.state.current_player == self.learner_seat
        info = {"action_mask": self._mask(),
                "legal_actions": self.state.legal_actions() if mine else [],
                "position": format_position(self.state)}
        info.update(self.extra_info())
        if self.state.is_terminal:
            info["result"] = self.state.result()
        info.update(extra)
        return info

    def _reward(self) -> float:
        return float(self.state.returns()[self.learner_seat]) if self.state.is_terminal else 0.0

    def _advance(self) -> None:
        """Let the other seats (and, if asked, forced learner moves) play until the learner must choose."""
        s = self.state
        while not s.is_terminal:
            p = s.current_player
            if p != self.learner_seat:
                agent = self.seat_agents[p]
                obs = Observation(p, s.observe(p), s.legal_actions(), self.variant.num_actions,
                                  s.clone() if agent.sees_hidden_state else None)
                s.apply(agent.act(obs, self.np_random))
                continue
            if self.auto_forced:
                legal = s.legal_actions()
                if len(legal) == 1:
                    s.apply(legal[0])
                    continue
            break

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        options = reset_options(options, ("position",))
        super().reset(seed=seed)
        self._forfeit = False
        if "position" in options:
            self.state = self.parse(options["position"])
        else:
            self.state = self.new_state()
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
        action = check_action(action, self.variant.num_actions)
        try:
            self.state.apply(action)
        except IllegalActionError:
            if self.illegal_action == "raise":
                raise
            self._forfeit = True
            return self._obs(), -1.0, True, False, self._info(illegal_action=True)
        self._advance()
        return self._obs(), self._reward(), self.state.is_terminal, False, self._info()

    def render(self):
        if self.render_mode == "ansi":
            require_reset(self.state, "render()")
            return render(self.state, viewer=None)
        return None


class HappyDominoesEnv(DominoEnvBase):
    """Happy Games 2-player dominoes (RULES §2), block or draw mode.  See the module docstring."""

    game = "happy"
    obs_size = OBS_SIZE

    def __init__(self, mode: str = "block", learner_seat: int = 0, opponent=None,
                 render_mode: Optional[str] = None, illegal_action: str = "raise",
                 auto_forced: bool = False):
        check_seat("learner_seat", learner_seat, 2)
        if not (opponent is None or isinstance(opponent, str) or is_agent(opponent)):
            raise PipslabError(f"opponent must be an agent or an agent name, got {excerpt(opponent)} "
                               f"({type(opponent).__name__})")
        super().__init__(happy(mode), learner_seat=learner_seat, opponents=opponent,
                         render_mode=render_mode, illegal_action=illegal_action, auto_forced=auto_forced)
        self.opponent = self.seat_agents[1 - self.learner_seat]

    def encode(self, view) -> np.ndarray:
        return encode_view(view)
