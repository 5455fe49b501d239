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

from dataclasses import dataclass
from typing import Iterator, Tuple

import numpy as np

from .engine import DominoView
from .tiles import IS_DOUBLE, N_TILES, OTHER_HALF, PIPS, TILES, tiles_of

__all__ = ["HAPPY_SIZE", "TROSHIN_SIZE", "TRIPLE_SIZE", "TileLayout", "HAPPY_LAYOUT", "TROSHIN_LAYOUT",
           "TRIPLE_LAYOUT", "relative_seats", "encode_tiles", "encode_other_seats",
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


def _tile_tables():
    """``(T, M, P)``: ``T[t, k]`` 1 when tile ``t`` carries number ``k``; ``M[t, n]`` the
    number tile ``t`` leaves open when placed on an end showing ``n`` (one-hot; ``n = 7``,
    the empty table: both its numbers); ``P[t]`` its pips / 12 and whether a double."""
    T = np.zeros((N_TILES, 7), np.float32)
    M = np.zeros((N_TILES, 8, 7), np.float32)
    for t, (a, b) in enumerate(TILES):
        T[t, a] = T[t, b] = 1.0
        for n in range(7):
            if OTHER_HALF[t][n] >= 0:
                M[t, n, OTHER_HALF[t][n]] = 1.0
        M[t, 7] = T[t]
    P = np.array([[PIPS[t] / 12.0, float(IS_DOUBLE[t])] for t in range(N_TILES)], np.float32)
    return T, M, P


_T, _M, _P = _tile_tables()
# a tile's numbers, pips and double; minus its numbers, to take from the hand's counts
_TILE = np.concatenate([_T, _P, -_T / 7], 1)


@dataclass(frozen=True)
class TileLayout:
    """Where a domino encoder keeps the tiles: the viewer's hand at ``x[0:28]``, the tiles
    each relative seat placed at ``placed`` (28 slots each), each open end's number at
    ``ends`` (8-slot one-hots, 7 = empty, in the actions' end order), the next seat's
    voids at ``next_voids`` (7 slots).

    :meth:`placement_features` turns that into one row of :data:`PLACEMENT_FEATURES`
    numbers per placement action ``tile * n_ends + end``: the facts a player weighs when
    choosing where a tile goes (the number it leaves open, how many of it the hand holds
    and the other hands may hold, whether the next seat is void in it, the other ends),
    so a net can score every placement with one shared function of them instead of
    learning each action's logit apart."""

    placed: Tuple[int, ...]
    ends: Tuple[int, ...]
    next_voids: int

    @property
    def n_ends(self) -> int:
        return len(self.ends)

    def mirror_inputs(self, size: int) -> np.ndarray:
        """The index permutation of an observation of ``size`` floats that swaps the two
        ends' one-hots (a line of two ends only): the same view seen with the line turned
        round.  Nothing else an encoder writes depends on which end is which."""
        if self.n_ends != 2:
            raise ValueError(f"the mirror turns a line of two ends round; this one has {self.n_ends}")
        perm = np.arange(size)
        a, b = self.ends
        perm[a:a + 8], perm[b:b + 8] = np.arange(b, b + 8), np.arange(a, a + 8)
        return perm

    def mirror_actions(self, actions: int) -> np.ndarray:
        """The permutation of ``actions`` action ids that puts every placement on the
        other end (``tile * 2 + end -> tile * 2 + 1 - end``); DRAW and PASS stay."""
        perm = np.arange(actions)
        perm[:2 * N_TILES] = np.arange(2 * N_TILES) ^ 1
        return perm

    def mirrored(self, x):
        """Which rows of ``x`` the canonical form turns round: those whose first end shows
        a higher number than the second (7, the empty table, counts highest).  ``x`` a
        numpy array or a torch tensor, answered in kind and on its device (the training
        pass asks of its batch where it lies)."""
        a, b = self.ends
        return x[:, a:a + 8].argmax(1) > x[:, b:b + 8].argmax(1)

    def held_tiles(self, x: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """``(rows, tiles)``: every tile in the viewer's hand, row by row — the only tiles
        a placement can take, so the only ones :meth:`placement_features` is asked of."""
        return np.nonzero(np.asarray(x)[:, 0:N_TILES] > 0.5)

    def placement_features(self, x: np.ndarray, rows: np.ndarray, tiles: np.ndarray) -> np.ndarray:
        """``(len(rows), n_ends, PLACEMENT_FEATURES)`` float32: for tile ``tiles[i]`` of
        observation row ``x[rows[i]]``, the features of placing it on each end."""
        x = np.asarray(x, dtype=np.float32)
        own = x[:, 0:N_TILES]
        placed = sum(x[:, p:p + N_TILES] for p in self.placed)
        unseen = 1.0 - own - placed                      # in another hand or the boneyard
        held, out, gone = own @ _T / 7, unseen @ _T / 7, placed @ _T / 7
        void = x[:, self.next_voids:self.next_voids + 7]
        ends = np.stack([x[:, e:e + 8] for e in self.ends], 1)                 # (B, n_ends, 8)
        others = ends.sum(1, keepdims=True) - ends                             # the other ends, summed
        o7 = others[:, :, :7]
        per_row = np.concatenate([ends, others, (o7 * held[:, None]).sum(2, keepdims=True),
                                  (o7 * out[:, None]).sum(2, keepdims=True), (o7 * void[:, None]).sum(2, keepdims=True),
                                  np.broadcast_to(held[:, None], (len(x), len(self.ends), 7))], 2)[rows]
        left = np.matmul(ends[rows], _M[tiles])                                 # the number each placement leaves open
        scalars = [(left * v[rows][:, None]).sum(2, keepdims=True) for v in (held, out, void, gone)]
        scalars.append((left * o7[rows]).sum(2, keepdims=True))
        tile = np.broadcast_to(_TILE[tiles][:, None], (len(rows), len(self.ends), _TILE.shape[1]))
        return np.concatenate([left, tile, per_row] + scalars, 2).astype(np.float32, copy=False)


# 7 (number left open) + 16 (the tile's numbers, pips, double, minus its numbers from the
# hand's counts) + 26 (the end, the other ends, their counts, the hand's counts) + 5
PLACEMENT_FEATURES = 54

HAPPY_LAYOUT = TileLayout(placed=(28, 56), ends=(84, 92), next_voids=103)
TROSHIN_LAYOUT = TileLayout(placed=(28, 56, 84, 112), ends=(140, 148), next_voids=161)
TRIPLE_LAYOUT = TileLayout(placed=(28, 56, 84, 112), ends=(140, 148, 156, 164), next_voids=198)


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
