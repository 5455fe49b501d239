"""The domino rules engine's front door: :func:`deal` and :func:`sample_world` for every
variant, and the names the rest of pipslab imports.

Pure Python, no gymnasium/torch import.  Hands are 28-bit masks (``pipslab.envs.dominoes.tiles``).
Each layout's rules live in one module — ``line`` (:class:`DominoState`: Happy and
Troshin, whose differences are data, ``variants.Variant``) and ``triple``
(:class:`TripleState`: the spinner of Triple for luck) — on the shared helpers of
``common`` (events, the view, the action encoding, the deal, unseen tiles); ``match``
plays Troshin's hands one after another.  This module picks the layout's state class
from :data:`LAYOUTS` by ``variant.layout``.

Imports inside ``envs/dominoes`` flow one way: tiles → variants → common → line, triple →
match → engine → notation → the Gymnasium adapters.

Action encoding (one per variant, ``variant.n_ends`` end slots; 2 for a line)
--------------------------------------------------------------------------------
* ``tile * n_ends + end`` places tile ``tile`` (0..27, see ``tiles.TILES``) at open end
  ``end`` — 0 is the **left** end, 1 the **right** end; with a spinner (``n_ends = 4``,
  Triple, ``pipslab.envs.dominoes.triple``) 2 and 3 are the spinner's two side lines.  The two ends are different moves
  even when they show the same number (RULES §1).  The opening tile, placed on the empty
  table, uses end 0.
* ``28 * n_ends`` is **DRAW** (take the next boneyard tile; the turn goes on).
* ``28 * n_ends + 1`` is **PASS**.
For a line (``n_ends = 2``: Happy, Troshin): placements 0..55, DRAW 56, PASS 57, 58
actions.  With a spinner (Triple): placements 0..111, DRAW 112, PASS 113, 114 actions.

Every non-terminal state has at least one legal action: a placement when one exists
(placement has priority), else DRAW when the variant draws and the boneyard is not empty,
else PASS.

Chance
------
The deal is the only chance event: :func:`deal` shuffles with the RNG it is given (any
object with ``shuffle(list)``: ``random.Random`` or ``numpy.random.Generator``), and
shuffles again while a hand calls for a redeal (Troshin, :func:`needs_redeal`).  With
``opening="any"`` (Triple) the first player is drawn by lot from the same RNG.  The
boneyard keeps its shuffled order; a DRAW takes the next tile.  A hand is never a chance
node (``is_chance`` False): its deal happens before it exists.  A Troshin match
(:mod:`~pipslab.envs.dominoes.match`) is a chance node between its hands:
``apply_chance(rng)`` deals the next hand from the caller's ``rng``.

Results
-------
``result()`` gives ``winner`` (a seat, None for a draw), ``winners`` (every seat that won:
both partners in pairs), ``draw``, ``blocked``, ``pips_left`` (each hand's count, RULES
§3's lone 0-0 rule included), ``points`` (what each seat's side scored in this hand —
Troshin's scoring; for Happy the win/draw/loss) and ``returns`` (zero-sum: +1 shared by
the winners, −1 shared by the others).

Public history
--------------
Each state keeps the public events (who placed what where, who drew — not what —, who
passed and which numbers that proves it lacks, and the open ends at that moment) as a
shared linked list, so ``clone`` copies no history (``common.Event``).
``observe(player)`` gives a seat exactly what it may see (RULES §1), and
:func:`sample_world` deals the unseen tiles consistently with such a view
(:func:`packed_world_sampler`: the same deal for compiled search, as arrays).

Compiled rules
--------------
``compiled`` is the same engine for numba: a state as one ``int64`` array, the legal
moves, ``apply``, a deal and a random playout of every variant, run end to end in
compiled code (rollouts, ``ismcts``, the trainer's self-play); this Python engine is its
reference, checked move by move.

State protocol: ``current_player``, ``is_terminal`` (plain attributes), ``is_chance``,
``legal_actions()``, ``apply(action)``, ``clone()``, ``observe(player)``, ``returns()``,
``result()``, ``num_actions``.
"""
from __future__ import annotations

from typing import Dict, Type, Union

from .common import (  # noqa: F401  (re-exported: the names other layers import from here)
    DRAW, END_NAMES, EVENT_NAMES, OUTRANKING, PASS, PLACE, DominoView, Event, MatchInfo,
    UnseenDeal, action_name, deal_hands, deal_slots, deal_unseen, decode, encode_place, linked_history,
    match_slots, needs_redeal, opening_tile, zero_sum_returns,
)
from .line import DominoState
from .match import TroshinMatch
from .triple import TripleState
from .variants import Variant

# variant.layout -> the state class that implements its rules
LAYOUTS: Dict[str, Type[Union[DominoState, TripleState]]] = {"line": DominoState, "spinner": TripleState}


def deal(variant: Variant, rng) -> Union[DominoState, TripleState]:
    """Shuffle the 28 tiles with ``rng`` and deal a new game under ``variant``'s rules
    (a :class:`TripleState` for a spinner layout, else a :class:`DominoState`)."""
    return LAYOUTS[variant.layout].deal(variant, rng)


def sample_world(view: DominoView, rng, attempts: int = 20):
    """A full state consistent with ``view``: the unseen tiles dealt to the other hands
    and the boneyard so that no hand holds a tile its passes and draws ruled out.

    Depends only on the view and ``rng`` (``shuffle(list)``), never on the true state.
    For a match view (Troshin) it returns a :class:`TroshinMatch` with the view's scores
    (its later hands are chance nodes: ``apply_chance(rng)`` deals them); for Triple a
    :class:`TripleState`.

    What it leaves out (the samples are consistent with the view, but not every public fact
    narrows them): Troshin's redeal rule (no dealt hand held 5 doubles or 6 of a number),
    and in Triple the proof an unlucky draw gives that the drawn tile scores nowhere.
    """
    return world_sampler(view, attempts)(rng)


def world_sampler(view: DominoView, attempts: int = 20):
    """``sample_world`` for many worlds of one view: what the view's history proves about
    the hidden hands (``constraint_groups``) is worked out once, and each call
    ``sampler(rng)`` deals one world — the same world ``sample_world(view, rng)`` would
    deal from the same ``rng`` state.  Search samples dozens of worlds per decision."""
    cls = LAYOUTS[view.variant.layout]
    unseen = UnseenDeal(view, cls.constraint_groups(view), attempts)

    def sample(rng):
        hands, boneyard, history = unseen(rng)
        state = cls.from_view(view, hands, boneyard, history)
        if view.match is not None:
            return TroshinMatch.from_view(view, state)
        return state

    return sample


def packed_world_sampler(view: DominoView, attempts: int = 20):
    """``world_sampler`` for compiled search: the same deal of the unseen tiles — the
    constraints worked out once from the view alone, as for :func:`world_sampler` — as
    arrays the compiled code deals worlds from (:class:`~pipslab.envs.dominoes.compiled.PackedWorlds`),
    with the compiled generator instead of ``rng``: the same distribution of worlds, other
    samples.  None for a match view (Troshin's match goes on past the hand: Python only)."""
    if view.match is not None:
        return None
    from . import compiled
    cls = LAYOUTS[view.variant.layout]
    return compiled.packed_worlds(view, UnseenDeal(view, cls.constraint_groups(view), attempts))


__all__ = [
    "DRAW", "END_NAMES", "EVENT_NAMES", "LAYOUTS", "OUTRANKING", "PASS", "PLACE", "DominoState", "DominoView",
    "Event", "MatchInfo", "TripleState", "TroshinMatch", "action_name", "deal", "deal_hands", "deal_unseen",
    "deal_slots", "decode", "encode_place", "linked_history", "match_slots", "needs_redeal", "opening_tile",
    "packed_world_sampler", "sample_world", "world_sampler",
    "zero_sum_returns",
]
