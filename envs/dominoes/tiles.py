"""The double-six set: 28 tiles, numbered 0..27, and hands as 28-bit masks.

Tile ids run through the pairs ``a-b`` with ``0 <= a <= b <= 6`` in order:
``0-0`` is 0, ``0-1`` is 1, … ``0-6`` is 6, ``1-1`` is 7, … ``6-6`` is 27.
A hand (or any set of tiles) is an ``int`` whose bit ``t`` is set when tile ``t`` is in it.
"""
from __future__ import annotations

from typing import Iterator, List, Tuple

from pipslab.envs.errors import PositionError, excerpt

NUMBERS = range(7)
TILES: Tuple[Tuple[int, int], ...] = tuple((a, b) for a in NUMBERS for b in range(a, 7))
N_TILES = len(TILES)  # 28
FULL_SET = (1 << N_TILES) - 1
TILE_ID = {pair: i for i, pair in enumerate(TILES)}
TILE_ID.update({(b, a): i for (a, b), i in list(TILE_ID.items())})

PIPS: Tuple[int, ...] = tuple(a + b for a, b in TILES)
IS_DOUBLE: Tuple[bool, ...] = tuple(a == b for a, b in TILES)
DOUBLES_MASK = sum(1 << t for t in range(N_TILES) if IS_DOUBLE[t])
# SUIT[n]: every tile carrying the number n.
SUIT: Tuple[int, ...] = tuple(sum(1 << t for t, (a, b) in enumerate(TILES) if n in (a, b)) for n in NUMBERS)
# OTHER_HALF[t][n]: the half of tile t that is not n (for a double, n itself); -1 if t lacks n.
OTHER_HALF: Tuple[Tuple[int, ...], ...] = tuple(
    tuple((b if n == a else a) if n in (a, b) else -1 for n in NUMBERS) for a, b in TILES)
# Heaviness order (RULES §2): more pips first; equal pips -> the higher half wins (6-3 beats 5-4).
HEAVINESS: Tuple[int, ...] = tuple(PIPS[t] * 8 + max(TILES[t]) for t in range(N_TILES))


def tile_name(t: int) -> str:
    a, b = TILES[t]
    return f"{a}-{b}"


def parse_oriented(text: str) -> Tuple[int, int]:
    """``"3-5"``, ``"3:5"`` or ``"35"`` -> ``(3, 5)``, the halves in the order written."""
    if not isinstance(text, str):
        raise PositionError(f"a tile is text like '3-5', got {type(text).__name__}")
    s = text.strip()
    for sep in ("-", ":", "|"):
        if sep in s:
            parts = s.split(sep)
            break
    else:
        parts = list(s) if len(s) == 2 else [s]
    # ASCII digits only: str.isdigit() also takes '²' and other digits int() refuses
    if len(parts) != 2 or not all(p.strip().isascii() and p.strip().isdigit() for p in parts):
        raise PositionError(f"malformed tile {excerpt(text)}: expected two numbers 0-6 like '3-5'")
    a, b = int(parts[0]), int(parts[1])
    if not (0 <= a <= 6 and 0 <= b <= 6):
        raise PositionError(f"tile {excerpt(text)} is not in the double-six set (numbers 0-6)")
    return a, b


def parse_tile(text: str) -> int:
    """``"3-5"``, ``"5-3"``, ``"5:3"`` or ``"53"`` -> tile id."""
    return TILE_ID[parse_oriented(text)]


def tiles_of(mask: int) -> Iterator[int]:
    """The tile ids in a mask, ascending."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


# the tile ids of each byte of a mask, by byte position: tile_list is four lookups
_BYTE_TILES = [[tuple(8 * k + b for b in range(8) if m >> b & 1) for m in range(256)] for k in range(4)]
_B0, _B1, _B2, _B3 = _BYTE_TILES


def tile_list(mask: int) -> List[int]:
    """The tile ids in a mask, ascending, as a list (:func:`tiles_of` without the generator:
    the world samplers list the unseen tiles thousands of times per decision)."""
    return list(_B0[mask & 255] + _B1[mask >> 8 & 255] + _B2[mask >> 16 & 255] + _B3[mask >> 24 & 255])


def mask_of(tiles) -> int:
    m = 0
    for t in tiles:
        m |= 1 << t
    return m


def count(mask: int) -> int:
    return bin(mask).count("1")


def pip_sum(mask: int) -> int:
    return sum(PIPS[t] for t in tiles_of(mask))


def format_tiles(tiles: List[int] | Iterator[int]) -> str:
    return " ".join(tile_name(t) for t in tiles)
