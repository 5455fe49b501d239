"""Inference: weigh the worlds ``sample_world`` deals by how likely the other seats' own
moves were in each of them.

``sample_world(view, rng)`` deals the unseen tiles uniformly among the deals the public
facts allow (passes, draws, the opening rule).  But a seat's placements say more than
that: a seat that holds 6-6 rarely leads 1-0.  Skat and bridge programs weigh their
sampled worlds by an opponent model's likelihood of the play seen (Buro et al. 2009;
Solinas et al. 2019).  Here the opponent model is any domino evaluator with a ``prior``
(``net``: the variant's policy network): a world's weight is the product, over the other
seats' past placements whose hand at that moment the world fixes, of the model's
probability of the placement made, floored at ``floor / legal moves`` so that one
surprising move lowers a world without ruling it out.

Only the weighting is here: worlds still come from ``sample_world``'s road
(``world_sampler``), which stays the only road to hidden tiles.
"""
from __future__ import annotations

from dataclasses import replace
from typing import List, NamedTuple, Sequence

import numpy as np

from pipslab.envs.dominoes.engine import DRAW, LAYOUTS, PASS, PLACE, encode_place, linked_history
from pipslab.envs.dominoes.tiles import count
from pipslab.envs.errors import PipslabError

from .evaluators import as_evaluator, has_prior, make_evaluator


class PastMove(NamedTuple):
    """One other seat's placement the worlds can be weighed by: the mover's view just
    before it with no hand (each world fills its own in), the action taken and, per seat,
    the tiles placed from then on (added back to a world's hand: the hand held then)."""

    seat: int
    action: int
    view: object
    placed_since: tuple


def past_moves(view) -> List[PastMove]:
    """The other seats' placements in ``view``'s history that a world's hands fix: on a
    line (the spinner layout and match views are not weighed), from the deal, not the
    opening placement (the opening rule forces it), and with no draw by that seat since
    (a draw since would leave which of its tiles it held then unknown)."""
    v = view.variant
    if v.layout != "line" or not view.from_deal or view.match is not None:
        return []
    history = view.history
    n = v.players
    # per event index i, per seat: the tiles it placed and the draws it made from i on
    placed_from, drawn_from = [()] * len(history), [()] * len(history)
    placed, drawn = [0] * n, [0] * n
    for i in range(len(history) - 1, -1, -1):
        kind, p, tile, *_ = history[i]
        if kind == PLACE:
            placed[p] |= 1 << tile
        elif kind == DRAW:
            drawn[p] += 1
        placed_from[i], drawn_from[i] = tuple(placed), tuple(drawn)
    out: List[PastMove] = []
    table, passes, placed_any = 0, 0, False
    for i, (kind, p, tile, end, left, right) in enumerate(history):
        if kind == PLACE and placed_any and p != view.player and not drawn_from[i][p]:
            since, drew = placed_from[i], drawn_from[i]
            sizes = tuple(view.hand_sizes[q] + count(since[q]) - drew[q] for q in range(n))
            before = replace(view, player=p, hand=0, hand_sizes=sizes, boneyard_size=view.boneyard_size + sum(drew),
                             left=left, right=right, table=table, line=None, current_player=p,
                             passes=passes, history=tuple(history[:i]), is_terminal=False)
            out.append(PastMove(p, encode_place(v, tile, end), before, since))
        if kind == PLACE:
            table |= 1 << tile
            placed_any = True
            passes = 0
        elif kind == PASS:
            passes += 1
    return out


def _template(move: PastMove):
    """The state just before ``move`` with the mover's hand still to be filled in: what
    the prior reads — the mover's view and legal moves — is exact once it is; the other
    hands are placeholders of the right sizes and the boneyard is its size's worth of
    placeholders (the mover's view shows only their sizes)."""
    view = move.view
    hands = [(1 << size) - 1 for size in view.hand_sizes]
    return LAYOUTS[view.variant.layout].from_view(view, hands, [0] * view.boneyard_size,
                                                  linked_history(view.history))


def check_floor(floor) -> float:
    """``floor`` as a float, or one line: a share of a uniform choice, in [0, 1)."""
    if not 0.0 <= floor < 1.0:
        raise PipslabError(f"infer: floor is a share from 0 to 1 (not 1), got {floor}")
    return float(floor)


class Belief:
    """Weights for worlds of one view under an opponent model (module docstring):
    ``Belief(model, floor)(view, worlds) -> weights`` summing to 1.  ``model``: an evaluator
    spec or object with a ``prior``; ``floor`` in [0, 1): the share of a uniform choice
    mixed into the model's probabilities."""

    def __init__(self, model="net", floor: float = 0.1):
        self.model = make_evaluator("dominoes", model) if isinstance(model, str) else as_evaluator("dominoes", model)
        if not has_prior(self.model):
            raise PipslabError(f"infer: the opponent model needs a prior (eval=net), got {model!r}")
        self.floor = check_floor(floor)

    def log_weights(self, view, worlds: Sequence) -> np.ndarray:
        """Per world (a state dealt from ``view``, or its hands by seat: all the weight
        reads), the log of its (unnormalised) weight: 0 for every world when no past move
        can be weighed."""
        worlds = [getattr(world, "hands", world) for world in worlds]
        moves = past_moves(view)
        logw = np.zeros(len(worlds))
        if not moves or len(worlds) < 2:
            return logw
        keys, probs = [], []
        for move in moves:
            held_of = {}         # worlds that agree on the mover's hand share its prior
            for world in worlds:
                held = world[move.seat] | move.placed_since[move.seat]
                keys.append(held_of.setdefault(held, len(probs) + len(held_of)))
            probs += [(1.0 - self.floor) * policy.get(move.action, 0.0) + self.floor / max(1, len(policy))
                      for policy in self.model.hand_priors(_template(move), list(held_of))]
        p = np.array(probs)
        with np.errstate(divide="ignore"):      # floor 0: a world the model rules out is -inf
            logp = np.log(p)
        n = len(worlds)
        for k in range(len(moves)):
            logw += logp[keys[k * n:(k + 1) * n]]
        return logw

    def __call__(self, view, worlds: Sequence) -> np.ndarray:
        """The worlds' weights, summing to 1 (equal when the model rules every world out:
        then it is the model that is wrong)."""
        logw = self.log_weights(view, worlds)
        if not len(logw) or logw.max() == -np.inf:
            return np.full(len(logw), 1.0 / max(1, len(logw)))
        w = np.exp(logw - logw.max())
        return w / w.sum()


__all__ = ["Belief", "PastMove", "past_moves"]
