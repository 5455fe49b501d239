"""The domino games' observation encoders: a seat's view -> ``float32`` vector in [0, 1].

Rules side (numpy only): the games' definitions (:mod:`pipslab.envs.dominoes.games`) name
these encoders, and every adapter — the Gymnasium env, PettingZoo, OpenSpiel, the nets —
reads them through ``Game.observation_encoder``.  The layouts are tabulated in
``docs/envs.md``.  Nothing hidden is encoded: never another hand's tiles nor the boneyard's.

Seats are relative to the viewer, ``r = (seat - viewer) % players`` (``r = 1`` moves next;
``r = 2`` is the partner in pairs): :func:`relative_seats` is the one rotation every
encoder uses; slots of seats that do not exist stay 0.
"""
from __future__ import annotations

from typing import Iterator, Tuple

import numpy as np

from .engine import DominoView
from .tiles import N_TILES, tiles_of

__all__ = ["HAPPY_SIZE", "TROSHIN_SIZE", "TRIPLE_SIZE", "relative_seats", "encode_tiles", "encode_other_seats",
           "encode_view", "encode_troshin_view", "encode_triple_view"]

HAPPY_SIZE = 111
TROSHIN_SIZE = 191
TRIPLE_SIZE = 220


def relative_seats(view: DominoView, start: int = 0) -> Iterator[Tuple[int, int]]:
    """``(r, seat)`` for ``r = start .. players-1``: the seat ``r`` places after the viewer."""
    me, n = view.player, view.variant.players
    for r in range(start, n):
        yield r, (me + r) % n


def encode_tiles(view: DominoView, x: np.ndarray) -> None:
    """``x[0:28]`` the viewer's own hand; ``x[28 + 28*r + t]`` set when relative seat ``r``
    placed tile ``t`` (the viewer is ``r = 0``)."""
    me, n = view.player, view.variant.players
    for t in tiles_of(view.hand):
        x[t] = 1.0
    for kind, p, tile, _e, _l, _r in view.history:
        if kind == 0:
            x[28 + 28 * ((p - me) % n) + tile] = 1.0


def encode_other_seats(view: DominoView, x: np.ndarray, sizes: int, voids: int) -> None:
    """For relative seats ``r = 1 ..``: ``x[sizes + r - 1]`` its hand size / 28, and
    ``x[voids + 7*(r-1) + k]`` set when it is known to lack number ``k``."""
    for r, p in relative_seats(view, 1):
        x[sizes + r - 1] = view.hand_sizes[p] / N_TILES
        void = view.voids(p)
        for num in range(7):
            if void >> num & 1:
                x[voids + 7 * (r - 1) + num] = 1.0


def _end(x: np.ndarray, at: int, number: int) -> None:
    x[at + (number if number >= 0 else 7)] = 1.0


def encode_view(view: DominoView) -> np.ndarray:
    """Happy's 111 floats (``docs/envs.md``): own hand, tiles placed by each seat, the open
    ends, the other hand's size, the boneyard's, passes, the other seat's known voids, mode."""
    x = np.zeros(HAPPY_SIZE, dtype=np.float32)
    encode_tiles(view, x)
    _end(x, 84, view.left)
    _end(x, 92, view.right)
    encode_other_seats(view, x, sizes=100, voids=103)
    x[101] = view.boneyard_size / N_TILES
    x[102] = view.passes / 2.0
    x[110] = 1.0 if view.variant.draw else 0.0
    return x


def encode_troshin_view(view: DominoView) -> np.ndarray:
    """Troshin's 191 floats (``docs/envs.md``), a hand or a match."""
    v = view.variant
    n = v.players
    x = np.zeros(TROSHIN_SIZE, dtype=np.float32)
    encode_tiles(view, x)
    _end(x, 140, view.left)
    _end(x, 148, view.right)
    encode_other_seats(view, x, sizes=156, voids=161)
    x[159] = view.boneyard_size / N_TILES
    x[160] = min(1.0, view.passes / n)
    x[182 + n - 2] = 1.0
    x[185] = 1.0 if v.pairs else 0.0
    if view.match is not None:
        info = view.match
        for r, p in relative_seats(view):
            x[186 + r] = min(1.0, info.scores[v.teams[p]] / info.target)
        x[190] = 1.0
    return x


def encode_triple_view(view: DominoView) -> np.ndarray:
    """Triple's 220 floats (``docs/envs.md``): the four ends, the spinner, both score columns
    of every seat."""
    v = view.variant
    n = v.players
    me = view.player
    x = np.zeros(TRIPLE_SIZE, dtype=np.float32)
    encode_tiles(view, x)
    total = 0
    for k, e in enumerate(view.ends):
        _end(x, 140 + 8 * k, e)
        total += max(e, 0)
    _end(x, 172, view.spinner)
    encode_other_seats(view, x, sizes=180, voids=198)
    x[183] = view.boneyard_size / N_TILES
    x[184] = min(1.0, view.passes / n)
    x[185] = view.turn_draws / v.spinner.luck_draws
    x[186] = 1.0 if view.lucky >= 0 and view.current_player == me else 0.0
    for r, p in relative_seats(view):
        x[187 + r] = min(1.0, view.winnings[p] / 300)
        x[191 + r] = min(1.0, view.penalties[p] / 300)
    x[195 + n - 2] = 1.0
    x[219] = total / 24
    return x
