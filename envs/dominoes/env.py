"""Gymnasium adapter for the domino engine: ``pipslab/HappyDominoes-v0``.

Contract
--------
* **Arguments**: ``mode="block"|"draw"``; ``learner_seat=0``; ``opponent`` — an agent
  (``agents.base.Agent``) or an agent name (default ``"random"``) playing every other seat;
  ``render_mode=None|"ansi"``; ``illegal_action="raise"|"lose"``; ``auto_forced=False`` —
  when True, the learner's forced moves (a single legal action) are played for it.
* **Action space**: ``Discrete(58)`` — ``tile * 2 + end`` places tile ``tile`` (0..27,
  ``envs.dominoes.tiles.TILES``) at the left (0) or right (1) end, 56 is DRAW, 57 is PASS.
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
  position (``envs.dominoes.notation``); otherwise a fresh deal from ``self.np_random``.
  The opponent's choices also draw from ``self.np_random``, so a seed and the learner's
  actions fix the whole trajectory.
* ``info``: ``action_mask``, ``legal_actions``, ``position`` (the full position string — it
  shows hidden tiles, for logging only), and at the end ``result`` (winner, blocked,
  pips_left).

Version history: v0 — first release.
"""
from __future__ import annotations

from typing import Optional

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from agents.base import Agent, Observation
from envs.errors import IllegalActionError, PipslabError

from .engine import DominoState, DominoView, deal
from .notation import format_position, parse_position, render
from .tiles import N_TILES, tiles_of
from .variants import happy

OBS_SIZE = 111


def encode_view(view: DominoView) -> np.ndarray:
    """The 111-float observation vector of a 2-player view (see the module docstring)."""
    x = np.zeros(OBS_SIZE, dtype=np.float32)
    me = view.player
    for t in tiles_of(view.hand):
        x[t] = 1.0
    for kind, p, tile, _e, _l, _r in view.history:
        if kind == 0:
            x[(28 if p == me else 56) + tile] = 1.0
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


class HappyDominoesEnv(gym.Env):
    """Happy Games 2-player dominoes (RULES §2), block or draw mode.  See the module docstring."""

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(self, mode: str = "block", learner_seat: int = 0, opponent=None,
                 render_mode: Optional[str] = None, illegal_action: str = "raise",
                 auto_forced: bool = False):
        self.variant = happy(mode)
        if learner_seat not in (0, 1):
            raise PipslabError(f"learner_seat must be 0 or 1, got {learner_seat!r}")
        if illegal_action not in ("raise", "lose"):
            raise PipslabError(f"illegal_action must be 'raise' or 'lose', got {illegal_action!r}")
        if render_mode not in (None, "ansi"):
            raise PipslabError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.learner_seat = learner_seat
        self.illegal_action = illegal_action
        self.auto_forced = auto_forced
        self.render_mode = render_mode
        if opponent is None or isinstance(opponent, str):
            from agents.registry import make_agent
            opponent = make_agent(opponent or "random", "happy")
        if not isinstance(opponent, Agent):
            raise PipslabError(f"opponent must be an agent or an agent name, got {opponent!r}")
        self.opponent = opponent
        n = self.variant.num_actions
        self.action_space = spaces.Discrete(n)
        self.observation_space = spaces.Dict({
            "observation": spaces.Box(0.0, 1.0, shape=(OBS_SIZE,), dtype=np.float32),
            "action_mask": spaces.Box(0, 1, shape=(n,), dtype=np.int8),
        })
        self.state: Optional[DominoState] = None

    # ------------------------------------------------------------------ helpers
    def _mask(self) -> np.ndarray:
        mask = np.zeros(self.variant.num_actions, dtype=np.int8)
        if not self.state.terminal and self.state.current == self.learner_seat:
            mask[self.state.legal_actions()] = 1
        return mask

    def action_masks(self) -> np.ndarray:
        """The legal-action mask of the learner (sb3-contrib's MaskablePPO convention)."""
        return self._mask().astype(bool)

    def _obs(self):
        return {"observation": encode_view(self.state.observe(self.learner_seat)),
                "action_mask": self._mask()}

    def _info(self, **extra):
        info = {"action_mask": self._mask(),
                "legal_actions": self.state.legal_actions() if self.state.current == self.learner_seat else [],
                "position": format_position(self.state)}
        if self.state.terminal:
            info["result"] = self.state.result()
        info.update(extra)
        return info

    def _reward(self) -> float:
        return float(self.state.returns()[self.learner_seat]) if self.state.terminal else 0.0

    def _advance(self) -> None:
        """Let the opponent (and, if asked, forced learner moves) play until the learner must choose."""
        s = self.state
        while not s.terminal:
            if s.current != self.learner_seat:
                p = s.current
                obs = Observation(p, s.observe(p), s.legal_actions(), self.variant.num_actions)
                s.apply(self.opponent.act(obs, self.np_random))
                continue
            if self.auto_forced:
                legal = s.legal_actions()
                if len(legal) == 1:
                    s.apply(legal[0])
                    continue
            break

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        options = options or {}
        if "position" in options:
            self.state = parse_position(options["position"])
            if self.state.variant != self.variant:
                raise PipslabError(f"position is {self.state.variant.name} but this env plays {self.variant.name}")
        else:
            self.state = deal(self.variant, self.np_random)
        self.opponent.reset(1 - self.learner_seat)
        self._advance()
        return self._obs(), self._info()

    def step(self, action):
        if self.state is None:
            raise PipslabError("call reset() before step()")
        if self.state.terminal:
            raise PipslabError("the episode is over: call reset()")
        action = int(action)
        try:
            self.state.apply(action)
        except IllegalActionError:
            if self.illegal_action == "raise":
                raise
            self.state.terminal = True
            self.state.winner = 1 - self.learner_seat
            return self._obs(), -1.0, True, False, self._info(illegal_action=True)
        self._advance()
        return self._obs(), self._reward(), self.state.terminal, False, self._info()

    def render(self):
        if self.render_mode == "ansi":
            return render(self.state, viewer=None)
        return None
