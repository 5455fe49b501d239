"""Gymnasium adapter for Troshin's draw game (RULES §3): ``pipslab/TroshinDominoes-v0``.

Contract
--------
* **Arguments**: ``players=2|3|4``; ``pairs=False`` (4 players only: seats 0+2 against
  1+3); ``match=False`` — when True an episode is a whole match to 100 (hand after hand,
  each dealt afresh), otherwise a single hand; ``learner_seat=0``; ``opponents`` — an agent
  (``pipslab.agents.base.Agent``), an agent name, or a list with one per seat (the learner's entry
  is ignored), default ``"random"`` — the partner in pairs is one of them (``opponent=``:
  the deprecated old name, it warns); ``render_mode=None|"ansi"|"rgb_array"``;
  ``illegal_action="raise"|"lose"``; ``auto_forced=False``; ``reveal=False`` (debugging:
  ``info["position"]`` and the render show the hidden tiles).
* **Action space**: ``Discrete(58)`` — ``tile * 2 + end`` places tile ``tile`` (0..27,
  ``pipslab.envs.dominoes.tiles.TILES``) at the left (0) or right (1) end; 56 is DRAW (one tile
  from the boneyard; the turn goes on), 57 is PASS.  The mask holds the placements when
  any exist, else DRAW while the boneyard lasts, else PASS.
* **Observation**: ``{"observation": float32[191], "action_mask": int8[58]}`` (the mask is
  also ``info["action_mask"]`` and ``action_masks()``).  Seats are relative to the
  learner: ``r = (seat - learner_seat) % players`` (r = 1 moves next; r = 2 is the partner
  in pairs); slots of seats that do not exist stay 0.

  ======= ==============================================================
  0:28    own hand
  28:140  tiles each relative seat r placed (28 per seat, r = 0..3)
  140:148 left open end, one-hot 0..6, slot 7 = empty table
  148:156 right open end, likewise
  156:159 hand sizes of relative seats 1..3, / 28
  159     boneyard size / 28
  160     passes in a row / players
  161:182 numbers relative seats 1..3 are known to lack (7 each)
  182:185 players one-hot (2, 3, 4)
  185     1.0 with pairs
  186:190 match score of relative seat r's side / target (0 outside a match)
  190     1.0 in match play
  ======= ==============================================================

  Nothing hidden is encoded: never another hand's tiles nor the boneyard's.
* **Reward**: at the end, the win/draw/loss of the hand — or, with ``match=True``, of the
  match — from the learner's seat: +1 win (partners share it), 0 draw, a loss is −1 in
  pairs and −1/(players−1) otherwise (zero-sum); 0 on every other step.  Illegal actions
  as in ``HappyDominoesEnv``.
* **Reset**: ``reset(seed=..., options={"position": "<position string>"})`` (a ``match=``
  field starts mid-match); otherwise a fresh deal (redealt when a hand calls for it) from
  ``self.np_random``, which also drives the opponents and the match's later deals.
* ``info`` (the same keys and types on every step; the common ones are listed in
  :mod:`pipslab.envs.base_env`): ``action_mask``, ``legal_actions``, ``illegal_action``,
  ``winner`` (a seat; −1 while on, in a draw, and for a pair's win — see
  ``winning_team``), ``winning_team``, ``draw``, ``points_<s>`` (float per seat: the
  hand's Troshin points of the seat's side, 0 until the hand ends — in a match the
  cumulative score of the seat's side, live), ``pips_left_<s>`` (−1 until the end),
  ``blocked``, ``passes``, ``draws`` (False/0 until the end); in a match also ``match``
  (True), ``hands`` (hands started, live), ``score_team<t>`` (per side, live) and
  ``match_winner`` (a team, −1 until the end).  Nothing hidden (``position``, the full
  position string, only with ``reveal=True``).  The ``ansi`` render shows the learner's
  hand and the other hands' sizes (every hand once the game is over, or with
  ``reveal=True``), never the boneyard's tiles.

Version history: v0 — first release.  v0, issue 14 — ``info`` has fixed keys and flat
types on every step (Gymnasium's vector envs): the lists ``points`` and ``scores`` became
``points_<s>`` and ``score_team<t>``, ``hand_points`` (a growing list) left ``info`` (the
state keeps it), ``result`` (only at the end) became the flat result fields;
``action_masks()`` is int8; an unsupported ``render_mode`` warns.  Observation, actions
and rewards are unchanged.  v0, frames — ``render_mode="rgb_array"`` draws the table
(:mod:`pipslab.envs.render_env`); ``"human"`` is refused.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from pipslab.envs.base_env import UNSET, opponents_argument
from pipslab.envs.checks import check_flag
from pipslab.envs.errors import PipslabError

from .engine import DominoView
from .env import DominoEnvBase, encode_tiles
from .match import TroshinMatch, new_match
from .notation import parse_position
from .tiles import N_TILES
from .variants import troshin

OBS_SIZE = 191


def encode_troshin_view(view: DominoView) -> np.ndarray:
    """The 191-float observation vector of a Troshin view (see the module docstring)."""
    v = view.variant
    n = v.players
    me = view.player
    x = np.zeros(OBS_SIZE, dtype=np.float32)
    encode_tiles(view, x)
    x[140 + (view.left if view.left >= 0 else 7)] = 1.0
    x[148 + (view.right if view.right >= 0 else 7)] = 1.0
    for r in range(1, n):
        p = (me + r) % n
        x[155 + r] = view.hand_sizes[p] / N_TILES
        void = view.voids(p)
        for num in range(7):
            if void >> num & 1:
                x[161 + 7 * (r - 1) + num] = 1.0
    x[159] = view.boneyard_size / N_TILES
    x[160] = min(1.0, view.passes / n)
    x[182 + n - 2] = 1.0
    x[185] = 1.0 if v.pairs else 0.0
    if view.match is not None:
        info = view.match
        for r in range(n):
            x[186 + r] = min(1.0, info.scores[v.teams[(me + r) % n]] / info.target)
        x[190] = 1.0
    return x


class TroshinDominoesEnv(DominoEnvBase):
    """Troshin's draw game (RULES §3), a hand or a match to 100.  See the module docstring."""

    game = "troshin"
    obs_size = OBS_SIZE

    def __init__(self, players: int = 2, pairs: bool = False, match: bool = False, learner_seat: int = 0,
                 opponents=None, render_mode: Optional[str] = None, illegal_action: str = "raise",
                 auto_forced: bool = False, reveal: bool = False, *, opponent=UNSET):
        opponents = opponents_argument(opponents, opponent)
        self.match = check_flag("match", match)
        super().__init__(troshin(players, pairs), learner_seat=learner_seat, opponents=opponents,
                         render_mode=render_mode, illegal_action=illegal_action, auto_forced=auto_forced,
                         reveal=reveal)

    def encode_view(self, view) -> np.ndarray:
        return encode_troshin_view(view)

    def new_state(self):
        return new_match(self.variant, self.np_random) if self.match else super().new_state()

    def parse(self, text: str):
        state = parse_position(text, rng=self.np_random)
        if state.variant != self.variant:
            raise PipslabError(f"position is {state.variant.name} but this env plays {self.variant.name}")
        if isinstance(state, TroshinMatch) and not self.match:
            raise PipslabError("this position is a match (it has match=…): make the env with match=True")
        if self.match and not isinstance(state, TroshinMatch):
            raise PipslabError("match=True needs a match position: add match=SCORES (one per side)")
        return state

    def extra_info(self) -> dict:
        s = self.state
        if not isinstance(s, TroshinMatch):
            return {f"points_{seat}": float(p) for seat, p in enumerate(s.points())}
        teams = self.variant.teams
        info = {f"points_{seat}": float(s.scores[teams[seat]]) for seat in range(self.players)}
        info.update((f"score_team{t}", int(score)) for t, score in enumerate(s.scores))
        info["hands"] = int(s.hand_index)
        return info

    def end_columns(self) -> dict:
        out = super().end_columns()
        if self.match:
            out.update(match=True, hands=0, match_winner=-1)
            out.update((f"score_team{t}", 0) for t in range(self.variant.n_teams))
        return out
