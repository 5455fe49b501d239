"""Domino variants as data: the engine is one, the variant says how it is played.

Every rule the sources leave open (a **Decision** in RULES.md) is a named field here,
so it can be changed without touching the engine.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np

from pipslab.envs.errors import PipslabError, excerpt

from .tiles import N_TILES, TILES


@dataclass(frozen=True)
class SpinnerRules:
    """The spinner layout's scoring: Triple domino for luck (RULES §4), held by
    ``Variant.spinner`` (None for a line game).

    spinner_score:  points for placing the spinner (8).
    triple_score:   a tile that makes the count a positive multiple of ``count_multiple`` (5).
    double_score:   a double that does so (7 = 5 + 2).
    count_multiple: 3.
    min_scoring_ends: nothing but the spinner scores while fewer ends are open (3).
    luck_draws:     draws allowed per turn (5).
    luck_penalty:   penalty points per drawn tile that gives no scoring placement (5).
    lucky_draw:     points for a drawn tile that gives a scoring placement (10); it must
                    be placed at once, on a scoring end, and ends the turn.
    cancel_penalties: winnings cancel penalty points first, automatically (True).
    """

    spinner_score: int = 8
    triple_score: int = 5
    double_score: int = 7
    count_multiple: int = 3
    min_scoring_ends: int = 3
    luck_draws: int = 5
    luck_penalty: int = 5
    lucky_draw: int = 10
    cancel_penalties: bool = True


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
    max_pip:        the set played with: the double-``max_pip`` set (6: all 28 tiles; 2: the
                    6 tiles 0-0 … 2-2; 3: 10 tiles).  A smaller set keeps the 28-tile ids and
                    the action encoding — only the tiles dealt shrink — so agents, encoders and
                    position strings stay the same; tiles outside the set are in no hand, no
                    boneyard and never on the table.  It exists so that games small enough for
                    exact equilibrium computation (CFR, exploitability) have the same rules.

    Troshin's game (RULES §3):

    pairs:          4 players in two pairs, partners opposite (seats 0+2 against 1+3).
    redeal_doubles: a hand with this many doubles or more is a redeal (0: never).
    redeal_suit:    a hand with this many tiles carrying one number is a redeal (0: never).
    scoring:        ``"result"`` — win/draw/loss only (Happy); ``"troshin"`` — the winner
                    scores the losers' counts (went out) or their counts minus its own
                    (blocked), pairs by pair totals (RULES §3 Decisions).
    match_target:   points that win a match (Troshin: 100).

    layout:         ``"line"`` or ``"spinner"`` (the first double after the opening tile —
                    or a double opening — lies crosswise and opens two side lines).
    spinner:        the spinner's scoring rules (:class:`SpinnerRules`) for the spinner
                    layout (Triple domino for luck, RULES §4; ``scoring="triple"``); None
                    for a line.
    """

    name: str
    players: int = 2
    hand_size: int = 7
    draw: bool = False
    opening: object = "highest_double"
    lone_blank_double: int = 0
    pairs: bool = False
    redeal_doubles: int = 0
    redeal_suit: int = 0
    scoring: str = "result"
    match_target: int = 100
    layout: str = "line"
    spinner: "SpinnerRules | None" = None
    max_pip: int = 6

    def __post_init__(self):
        if not 2 <= self.players <= 4:
            raise PipslabError(f"variant {self.name!r}: players must be 2..4, got {self.players}")
        if isinstance(self.max_pip, bool) or self.max_pip not in range(2, 7):
            raise PipslabError(f"variant {self.name!r}: max_pip must be 2..6, got {excerpt(self.max_pip)}")
        if self.hand_size < 1:
            raise PipslabError(f"variant {self.name!r}: hand_size must be at least 1, got {self.hand_size}")
        if self.players * self.hand_size > self.set_size:
            raise PipslabError(
                f"variant {self.name!r}: {self.players} hands of {self.hand_size} need more than the "
                f"{self.set_size} tiles of the double-{self.max_pip} set")
        if self.max_pip != 6 and self.layout != "line":
            raise PipslabError(f"variant {self.name!r}: a set smaller than double-six is for the line layout")
        if self.pairs and self.players != 4:
            raise PipslabError(f"variant {self.name!r}: pairs need 4 players, got {self.players}")
        if self.scoring not in ("result", "troshin", "triple"):
            raise PipslabError(f"variant {self.name!r}: unknown scoring {self.scoring!r}")
        if self.layout not in ("line", "spinner"):
            raise PipslabError(f"variant {self.name!r}: unknown layout {self.layout!r}")
        if (self.layout == "spinner") != (self.spinner is not None):
            raise PipslabError(f"variant {self.name!r}: the spinner layout needs its SpinnerRules "
                               f"(spinner=...), a line none")

    @property
    def n_ends(self) -> int:
        """End slots in the action encoding, from the layout: 2 for a line, 4 for a spinner."""
        return 4 if self.layout == "spinner" else 2

    @property
    def teams(self) -> tuple:
        """Seat -> team: pairs put seats 0+2 in team 0 and 1+3 in team 1; otherwise one each."""
        return tuple(p % 2 for p in range(self.players)) if self.pairs else tuple(range(self.players))

    @property
    def tile_set(self) -> int:
        """The tiles of the set played with, as a mask over the 28 tile ids."""
        return _TILE_SETS[self.max_pip]

    @property
    def set_size(self) -> int:
        return (self.max_pip + 1) * (self.max_pip + 2) // 2

    @property
    def n_teams(self) -> int:
        return 2 if self.pairs else self.players

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


# the double-n sets as masks over the 28 tile ids (6: every tile)
_TILE_SETS = {n: sum(1 << t for t, (a, b) in enumerate(TILES) if b <= n) for n in range(7)}

HAPPY_BLOCK = Variant(name="happy-block", players=2, hand_size=7, draw=False)
HAPPY_DRAW = Variant(name="happy-draw", players=2, hand_size=7, draw=True)



def _troshin(players: int, pairs: bool = False, **changes) -> Variant:
    name = f"troshin-{players}" + ("-pairs" if pairs else "")
    return Variant(name=name, players=players, hand_size=7 if players == 2 else 5, draw=True,
                   opening="highest_double", lone_blank_double=10, pairs=pairs, redeal_doubles=5,
                   redeal_suit=6, scoring="troshin", match_target=100).with_(**changes)


TROSHIN_2 = _troshin(2)
TROSHIN_3 = _troshin(3)
TROSHIN_4 = _troshin(4)
TROSHIN_4_PAIRS = _troshin(4, pairs=True)
# `004`'s 120-point deal: four each for themselves, all 28 tiles dealt (7 each, no
# boneyard), the game opens with 0-0 (tile id 0).
TROSHIN_120 = _troshin(4, name="troshin-120", hand_size=7, opening=0)


def _triple(players: int) -> Variant:
    return Variant(name=f"triple-{players}", players=players, hand_size=5 if players == 4 else 6,
                   draw=True, opening="any", layout="spinner", spinner=SpinnerRules(),
                   scoring="triple")


TRIPLE_2, TRIPLE_3, TRIPLE_4 = _triple(2), _triple(3), _triple(4)

VARIANTS = {v.name: v for v in (HAPPY_BLOCK, HAPPY_DRAW, TROSHIN_2, TROSHIN_3, TROSHIN_4, TROSHIN_4_PAIRS,
                                TROSHIN_120, TRIPLE_2, TRIPLE_3, TRIPLE_4)}


def register_variant(variant: Variant) -> Variant:
    """Make ``variant`` known by its name (position strings, :func:`variant_by_name`): how
    a game defined as data elsewhere (``troshin6`` in :mod:`pipslab.envs.dominoes.games`)
    adds its variant.  The same name for another variant is refused."""
    old = VARIANTS.get(variant.name)
    if old is not None and old != variant:
        raise PipslabError(f"a domino variant named {variant.name!r} is already known")
    VARIANTS[variant.name] = variant
    return variant


def _players(players, game: str) -> int:
    if isinstance(players, bool) or not isinstance(players, (int, np.integer)) or players not in (2, 3, 4):
        raise PipslabError(f"{game} is for 2, 3 or 4 players, got {excerpt(players)}")
    return int(players)


def default_hand_size(max_pip: int) -> int:
    """Tiles each Happy seat is dealt from the double-``max_pip`` set: 7 from the double-six
    (RULES §2); from a smaller set a third of it (double-2: 2 of 6, double-3: 3 of 10), so a
    third is left in the boneyard, as with the full set (14 of 28)."""
    return 7 if max_pip == 6 else (max_pip + 1) * (max_pip + 2) // 2 // 3


_HAPPY_SMALL: dict = {}


def happy(mode: str, max_pip: int = 6, hand_size: int | None = None) -> Variant:
    """Happy Games 2-player dominoes in ``"block"`` or ``"draw"`` mode, by default with the
    double-six set and 7 tiles each (RULES §2).  ``max_pip`` < 6 plays the same rules with
    the double-``max_pip`` set (``happy-block-d2``: 6 tiles, 2 each); ``hand_size`` changes
    the tiles dealt (default :func:`default_hand_size`; the name then ends ``-h<n>``)."""
    if not isinstance(mode, str) or mode not in ("block", "draw"):
        raise PipslabError(f"unknown Happy dominoes mode {excerpt(mode)}: expected 'block' or 'draw'")
    if isinstance(max_pip, bool) or not isinstance(max_pip, (int, np.integer)) or not 2 <= max_pip <= 6:
        raise PipslabError(f"max_pip is the highest number of the set, 2..6, got {excerpt(max_pip)}")
    max_pip = int(max_pip)
    default = default_hand_size(max_pip)
    if hand_size is None:
        hand_size = default
    if isinstance(hand_size, bool) or not isinstance(hand_size, (int, np.integer)) or hand_size < 1:
        raise PipslabError(f"hand_size is a whole number of tiles, at least 1, got {excerpt(hand_size)}")
    hand_size = int(hand_size)
    base = HAPPY_BLOCK if mode == "block" else HAPPY_DRAW
    if max_pip == 6 and hand_size == default:
        return base
    key = (mode, max_pip, hand_size)
    if key not in _HAPPY_SMALL:
        name = f"{base.name}-d{max_pip}" + ("" if hand_size == default else f"-h{hand_size}")
        _HAPPY_SMALL[key] = base.with_(name=name, max_pip=max_pip, hand_size=hand_size)
    return _HAPPY_SMALL[key]


_HAPPY_NAME = re.compile(r"happy-(block|draw)-d([2-6])(?:-h([0-9]{1,2}))?")


def troshin(players: int = 2, pairs: bool = False) -> Variant:
    """Troshin's draw game (RULES §3) for 2, 3 or 4 players; ``pairs`` only with 4."""
    players = _players(players, "Troshin's dominoes")
    if not isinstance(pairs, (bool, np.bool_)):
        raise PipslabError(f"pairs is true or false, got {excerpt(pairs)}")
    if pairs and players != 4:
        raise PipslabError(f"pairs need 4 players (seats 0+2 against 1+3), got {players}")
    return VARIANTS[f"troshin-{players}" + ("-pairs" if pairs else "")]


def triple(players: int = 2) -> Variant:
    """Triple domino for luck (RULES §4) for 2, 3 or 4 players."""
    players = _players(players, "Triple domino")
    return VARIANTS[f"triple-{players}"]


def variant_by_name(name: str) -> Variant:
    """The variant named ``name``: one of :data:`VARIANTS`, or a Happy game on a smaller set
    or with another hand size (``happy-block-d2``, ``happy-draw-d3-h2``: see :func:`happy`)."""
    try:
        return VARIANTS[name]
    except (KeyError, TypeError):
        m = _HAPPY_NAME.fullmatch(name) if isinstance(name, str) else None
        if m:
            variant = happy(m[1], int(m[2]), int(m[3]) if m[3] else None)
            if variant.name == name:   # one spelling per variant, so positions round-trip
                return variant
        raise PipslabError(f"unknown domino variant {excerpt(name)}; known: {', '.join(sorted(VARIANTS))}") from None
