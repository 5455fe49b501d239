"""Domino variants as data: the engine is one, the variant says how it is played.

Every rule the sources leave open (a **Decision** in RULES.md) is a named field here,
so it can be changed without touching the engine.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from envs.errors import PipslabError

from .tiles import N_TILES


@dataclass(frozen=True)
class Variant:
    """How a domino game is played.

    name:           short name used in position strings (``happy-block``).
    players:        seats, 2..4.
    hand_size:      tiles dealt to each seat; the rest is the boneyard.
    draw:           True: a seat with no placement draws from the boneyard, one tile at a
                    time, until it can place or the boneyard is empty (then it passes).
                    False (block): it passes; the boneyard is out of play.
    opening:        ``"highest_double"`` — the holder of the highest double dealt opens with
                    it; with no double dealt, the holder of the heaviest tile opens with it
                    (RULES §2 Decision, §3); ``"any"`` — the first seat may open with any
                    tile; or a tile id that must open (Troshin's 120-point deal: 0-0).
    lone_blank_double: what a hand holding only 0-0 counts (Troshin: 10; Happy: 0).
    n_ends:         end slots in the action encoding (2 for a line).
    """

    name: str
    players: int = 2
    hand_size: int = 7
    draw: bool = False
    opening: object = "highest_double"
    lone_blank_double: int = 0
    n_ends: int = 2

    def __post_init__(self):
        if not 2 <= self.players <= 4:
            raise PipslabError(f"variant {self.name!r}: players must be 2..4, got {self.players}")
        if self.players * self.hand_size > N_TILES:
            raise PipslabError(
                f"variant {self.name!r}: {self.players} hands of {self.hand_size} need more than 28 tiles")

    # --- the action encoding (one per variant, documented in envs.dominoes.engine) ---
    @property
    def num_actions(self) -> int:
        return N_TILES * self.n_ends + 2

    @property
    def draw_action(self) -> int:
        return N_TILES * self.n_ends

    @property
    def pass_action(self) -> int:
        return N_TILES * self.n_ends + 1

    def with_(self, **changes) -> "Variant":
        return replace(self, **changes)


HAPPY_BLOCK = Variant(name="happy-block", players=2, hand_size=7, draw=False)
HAPPY_DRAW = Variant(name="happy-draw", players=2, hand_size=7, draw=True)

VARIANTS = {v.name: v for v in (HAPPY_BLOCK, HAPPY_DRAW)}


def happy(mode: str) -> Variant:
    """Happy Games 2-player dominoes in ``"block"`` or ``"draw"`` mode."""
    if mode not in ("block", "draw"):
        raise PipslabError(f"unknown Happy dominoes mode {mode!r}: expected 'block' or 'draw'")
    return HAPPY_BLOCK if mode == "block" else HAPPY_DRAW


def variant_by_name(name: str) -> Variant:
    try:
        return VARIANTS[name]
    except KeyError:
        raise PipslabError(f"unknown domino variant {name!r}; known: {', '.join(sorted(VARIANTS))}") from None
