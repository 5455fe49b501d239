"""Gymnasium adapter for the domino engine: ``pipslab/HappyDominoes-v0``.

Contract
--------
* **Arguments**: ``mode="block"|"draw"``; ``learner_seat=0``; ``opponents`` — an agent
  (``pipslab.agents.base.Agent``) or an agent name (default ``"random"``) playing the other
  seat, or a list with one per seat (the learner's entry ignored); ``opponent=`` is its
  deprecated old name (it warns); ``render_mode=None|"ansi"|"rgb_array"``;
  ``illegal_action="raise"|"lose"``; ``auto_forced=False`` — when True, the learner's
  forced moves (a single legal action) are played for it; ``reveal=False`` — debugging
  only: ``info["position"]`` and the render show the hidden tiles.
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
* ``info`` (the same keys and types on every step, reset included; the common ones are
  listed in :mod:`pipslab.envs.base_env`): ``action_mask``, ``legal_actions``,
  ``illegal_action``, ``winner`` (−1 while on or in a draw), ``winning_team``, ``draw``,
  ``points_0``/``points_1`` (±1/0 at the end, else 0.0), ``pips_left_0``/``pips_left_1``
  (−1 until the hands are counted at the end), and this game's columns ``blocked``
  (bool), ``passes`` and ``draws`` (int; False/0 until the end).  Nothing hidden: with
  ``reveal=True`` also ``position`` (the full position string, every hand and the
  boneyard; for debugging).
* **Render** (``"ansi"``): the table, the learner's hand, the other hand's size and the
  boneyard's size; every hand once the game is over; every hand always with ``reveal=True``.
  ``"rgb_array"``: the same, drawn (``uint8[640, 960, 3]``, the other hand face down);
  ``"human"`` is refused in one line.

Version history: v0 — first release (``info["position"]`` only with ``reveal=True`` since
the hidden-information fix; ``opponent=`` renamed ``opponents=``).  v0, issue 14 — ``info``
has fixed keys and types on every step (Gymnasium's vector envs): ``info["result"]`` (a
dict present only at the end, ``winner`` None in a draw) became the flat fields above,
``illegal_action`` is always there; ``action_masks()`` is int8 (was bool); an
unsupported ``render_mode`` warns instead of raising.  Observation, actions and rewards
are unchanged.  v0, frames — ``render_mode="rgb_array"`` draws the table; ``"human"`` is
refused.

The env plumbing (masks, opponents per seat, reset from a position, illegal actions,
info, rendering) lives in :class:`pipslab.envs.base_env.SeatEnv` (every env's base) and
:class:`DominoEnvBase` (the domino envs'), shared with ``pipslab/TroshinDominoes-v0``
(``pipslab.envs.dominoes.troshin_env``) and ``pipslab/TripleDominoes-v0`` (``pipslab.envs.dominoes.triple_env``).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from pipslab.envs.base_env import UNSET, SeatEnv, opponents_argument
from pipslab.envs.errors import IllegalActionError, PipslabError

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


class DominoEnvBase(SeatEnv):
    """One learner seat of a domino game; the other seats are played by agents
    (:class:`pipslab.envs.base_env.SeatEnv`: ``opponents``, masks, reset, illegal actions,
    the hidden-information rule of ``info`` and ``render``).

    Subclasses set ``game`` (the agent registry's name), ``obs_size`` and implement
    :meth:`encode_view` (a view -> float32 vector in [0, 1]); they may override
    :meth:`new_state` (a fresh deal from ``self.np_random``), :meth:`parse` (a position
    string) and :meth:`extra_info` (public facts only).

    ``info`` never holds another seat's tiles nor the boneyard's while the game is on
    (``position``, the full position string, only with ``reveal=True``); the ``ansi``
    render shows the learner's hand and the other hands' sizes, and every hand once the
    game is over (they are turned up and counted), the boneyard's size only.
    """

    game = "happy"
    obs_size = OBS_SIZE

    def __init__(self, variant: Variant, learner_seat: int = 0, opponents=None,
                 render_mode: Optional[str] = None, illegal_action: str = "raise",
                 auto_forced: bool = False, reveal: bool = False, *, opponent=UNSET):
        opponents = opponents_argument(opponents, opponent)
        self.variant = variant
        self._setup(players=variant.players, num_actions=variant.num_actions, obs_size=self.obs_size,
                    learner_seat=learner_seat, opponents=opponents, render_mode=render_mode,
                    illegal_action=illegal_action, reveal=reveal, agent_game=self.game, auto_forced=auto_forced)

    # ------------------------------------------------------------------ hooks
    def encode_view(self, view) -> np.ndarray:
        raise NotImplementedError

    def encode(self) -> np.ndarray:
        return self.encode_view(self.state.observe(self.learner_seat))

    def new_state(self):
        return deal(self.variant, self.np_random)

    def parse(self, text: str):
        state = parse_position(text)
        if state.variant != self.variant:
            raise PipslabError(f"position is {state.variant.name} but this env plays {self.variant.name}")
        return state

    def state_from_position(self, text: str, options: dict):
        return self.parse(text)

    def extra_info(self) -> dict:
        """The game's live public ``info`` fields (flat; the same keys every step)."""
        return {}

    def end_columns(self) -> dict:
        return {"blocked": False, "passes": 0, "draws": 0}

    def public_info(self) -> dict:
        return self.extra_info()

    def revealed_info(self) -> dict:
        return {"position": format_position(self.state)}

    def illegal_action_error(self, action: int) -> IllegalActionError:
        try:
            self.state.clone().apply(action)      # the engine's message names the legal actions
        except IllegalActionError as err:
            return err
        return super().illegal_action_error(action)   # pragma: no cover

    def render_text(self) -> str:
        shown = self.reveal or self.state.is_terminal
        return render(self.state, viewer=None if shown else self.learner_seat)


class HappyDominoesEnv(DominoEnvBase):
    """Happy Games 2-player dominoes (RULES §2), block or draw mode.  See the module docstring."""

    game = "happy"
    obs_size = OBS_SIZE

    def __init__(self, mode: str = "block", learner_seat: int = 0, opponents=None,
                 render_mode: Optional[str] = None, illegal_action: str = "raise",
                 auto_forced: bool = False, reveal: bool = False, *, opponent=UNSET):
        opponents = opponents_argument(opponents, opponent)
        super().__init__(happy(mode), learner_seat=learner_seat, opponents=opponents,
                         render_mode=render_mode, illegal_action=illegal_action, auto_forced=auto_forced,
                         reveal=reveal)

    def encode_view(self, view) -> np.ndarray:
        return encode_view(view)
