"""Gymnasium adapter for Triple domino for luck (RULES §4): ``pipslab/TripleDominoes-v0``.

Contract
--------
* **Arguments**: ``players=2|3|4``; ``learner_seat=0``; ``opponents`` — an agent, an agent
  name, or a list with one per seat (the learner's entry is ignored), default
  ``"random"`` (``opponent=``: the deprecated old name, it warns);
  ``render_mode=None|"ansi"|"rgb_array"``; ``illegal_action="raise"|"lose"``; ``auto_forced=False``;
  ``reveal=False`` (debugging: ``info["position"]`` and the render show the hidden tiles).
* **Action space**: ``Discrete(114)`` — ``tile * 4 + end`` places tile ``tile`` (0..27) at
  end ``end``: 0 left, 1 right, 2 and 3 the spinner's two side lines; 112 is DRAW (for
  luck: up to 5 a turn, allowed whether or not a placement exists), 113 is PASS.  The mask
  enforces the 5-draw limit, "pass only without a legal placement" (and, while the
  boneyard lasts, only after a draw this turn), and after a lucky draw only the lucky
  tile's scoring placements.
* **Observation**: ``{"observation": float32[220], "action_mask": int8[114]}``; seats
  relative to the learner, ``r = (seat - learner_seat) % players``:

  ======= ==============================================================
  0:28    own hand
  28:140  tiles each relative seat r placed (28 per seat, r = 0..3)
  140:172 the four ends (left, right, side 1, side 2), one-hot 0..6 each, slot 7 = not open
  172:180 the spinner's number, one-hot 0..6, slot 7 = no spinner yet
  180:183 hand sizes of relative seats 1..3, / 28
  183     boneyard size / 28
  184     passes in a row / players (capped at 1)
  185     draws this turn / 5
  186     1.0 when the learner must place a lucky tile
  187:191 winnings of relative seat r / 300 (capped at 1)
  191:195 penalties of relative seat r / 300 (capped at 1)
  195:198 players one-hot (2, 3, 4)
  198:219 numbers relative seats 1..3 are known to lack (7 each)
  219     the count of the open ends / 24
  ======= ==============================================================

  Both score columns of every seat are there; nothing hidden is.
* **Reward**: rank-based and zero-sum (RULES §4): at the end the top seat(s) share +1 and
  the others share −1 (a tie of every seat: 0); 0 on every other step.
* **Reset**: ``reset(seed=..., options={"position": ...})`` or a fresh deal (first player
  by lot) from ``self.np_random``, which also drives the opponents.
* ``info`` (the same keys and types on every step; the common ones are listed in
  :mod:`pipslab.envs.base_env`): ``action_mask``, ``legal_actions``, ``illegal_action``,
  ``winner`` (the one seat ranked first; −1 while on, in a tie of every seat, or when
  several seats share the top), ``winning_team``, ``draw``, and per seat ``s``:
  ``winnings_<s>``, ``penalties_<s>`` (int, live), ``points_<s>`` (float, winnings −
  penalties, live), ``pips_left_<s>`` and ``rank_<s>`` (−1 and 0 until the end); and
  ``blocked``, ``passes``, ``draws`` (False/0 until the end).  Nothing hidden
  (``position``, the full position string, only with ``reveal=True``).  The ``ansi`` render shows the learner's hand and the other hands'
  sizes (every hand once the game is over, or with ``reveal=True``).

Version history: v0 — first release.  v0, issue 14 — ``info`` has fixed keys and flat
types on every step (Gymnasium's vector envs): the lists ``winnings`` and ``penalties``
became ``winnings_<s>`` and ``penalties_<s>``, ``result`` (only at the end) became the
flat result fields (settlement and the winners' string are in :meth:`outcome`);
``action_masks()`` is int8; an unsupported ``render_mode`` warns.  Observation, actions
and rewards are unchanged.  v0, frames — ``render_mode="rgb_array"`` draws the table
(:mod:`pipslab.envs.render_env`); ``"human"`` is refused.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from pipslab.envs.base_env import UNSET, opponents_argument

from .engine import DominoView
from .env import DominoEnvBase, encode_tiles
from .tiles import N_TILES
from .variants import triple

OBS_SIZE = 220


def encode_triple_view(view: DominoView) -> np.ndarray:
    """The 220-float observation vector of a Triple view (see the module docstring)."""
    v = view.variant
    n = v.players
    me = view.player
    x = np.zeros(OBS_SIZE, dtype=np.float32)
    encode_tiles(view, x)
    total = 0
    for k, e in enumerate(view.ends):
        x[140 + 8 * k + (e if e >= 0 else 7)] = 1.0
        total += max(e, 0)
    x[172 + (view.spinner if view.spinner >= 0 else 7)] = 1.0
    for r in range(1, n):
        p = (me + r) % n
        x[179 + r] = view.hand_sizes[p] / N_TILES
        void = view.voids(p)
        for num in range(7):
            if void >> num & 1:
                x[198 + 7 * (r - 1) + num] = 1.0
    x[183] = view.boneyard_size / N_TILES
    x[184] = min(1.0, view.passes / n)
    x[185] = view.turn_draws / v.luck_draws
    x[186] = 1.0 if view.lucky >= 0 and view.current_player == me else 0.0
    for r in range(n):
        p = (me + r) % n
        x[187 + r] = min(1.0, view.winnings[p] / 300)
        x[191 + r] = min(1.0, view.penalties[p] / 300)
    x[195 + n - 2] = 1.0
    x[219] = total / 24
    return x


class TripleDominoesEnv(DominoEnvBase):
    """Triple domino for luck (RULES §4).  See the module docstring."""

    game = "triple"
    obs_size = OBS_SIZE

    def __init__(self, players: int = 2, learner_seat: int = 0, opponents=None,
                 render_mode: Optional[str] = None, illegal_action: str = "raise", auto_forced: bool = False,
                 reveal: bool = False, *, opponent=UNSET):
        opponents = opponents_argument(opponents, opponent)
        super().__init__(triple(players), learner_seat=learner_seat, opponents=opponents,
                         render_mode=render_mode, illegal_action=illegal_action, auto_forced=auto_forced,
                         reveal=reveal)

    def encode_view(self, view) -> np.ndarray:
        return encode_triple_view(view)

    def extra_info(self) -> dict:
        s = self.state
        info = {}
        for seat in range(self.players):
            info[f"winnings_{seat}"] = int(s.winnings[seat])
            info[f"penalties_{seat}"] = int(s.penalties[seat])
            info[f"points_{seat}"] = float(s.winnings[seat] - s.penalties[seat])
        return info

    def end_columns(self) -> dict:
        out = super().end_columns()
        for seat in range(self.players):
            out.update({f"winnings_{seat}": 0, f"penalties_{seat}": 0, f"rank_{seat}": 0})
        return out
