"""List every legal play of a backgammon position.

``pipslab moves backgammon --position-id ID --dice A B [--json]``

ID is a GNU Backgammon Position ID, read from the side of the player on roll (who plays
A-B).  Each line gives a play in standard notation (``8/5 6/5``, ``bar/22``, ``6/off``,
``13/7*``; points numbered from the mover's side) and the Position ID of the position it
leads to, **still seen from the player who moved** (he is "on roll" in that ID, as in
GNU BG's move list); ``next_position_id`` is the same position with the sides swapped,
the opponent on roll.  No legal play: one line ``pass`` with the unchanged position.
"""
from __future__ import annotations

import json

from pipslab.envs.backgammon import Position, legal_plays
from pipslab.envs.backgammon.board import CHECKERS
from pipslab.envs.backgammon.moves import check_dice, dice_to_play
from pipslab.envs.errors import PipslabError


def add_arguments(parser) -> None:
    parser.add_argument("game", choices=["backgammon"], help="the game (only backgammon for now)")
    parser.add_argument("--position-id", required=True, metavar="ID",
                        help="GNU BG Position ID, from the side of the player on roll "
                             "(e.g. 4HPwATDgc/ABMA, the start)")
    parser.add_argument("--dice", required=True, nargs=2, type=int, metavar=("A", "B"),
                        help="the roll to play, two dice 1-6")
    parser.add_argument("--json", action="store_true",
                        help="print a JSON list of {move, position_id, next_position_id}: "
                             "position_id is the result with the mover still on roll, "
                             "next_position_id the same with the opponent on roll")


def list_plays(position_id: str, dice) -> list:
    """``[{"move", "position_id", "next_position_id"}]`` for every legal play."""
    check_dice(dice)
    pos = Position.from_id(position_id)
    if pos.borne_off == CHECKERS or pos.opp_borne_off == CHECKERS:
        who = "the player on roll" if pos.borne_off == CHECKERS else "the opponent"
        raise PipslabError(f"the game is over in {pos.id}: {who} has borne off all {CHECKERS} checkers, "
                           "so there is nothing to play")
    plays = legal_plays(pos, dice_to_play(dice))
    if not plays:
        return [{"move": "pass", "position_id": pos.id, "next_position_id": pos.swap().id}]
    return [{"move": p.notation, "position_id": p.position.id, "next_position_id": p.position.swap().id}
            for p in plays]


def run(args) -> int:
    rows = list_plays(args.position_id, args.dice)
    if args.json:
        print(json.dumps(rows))
        return 0
    a, b = args.dice
    print(f"{len(rows) if rows[0]['move'] != 'pass' else 0} legal plays of {a}-{b} "
          f"from {Position.from_id(args.position_id).id}")
    width = max(len(r["move"]) for r in rows)
    for i, r in enumerate(rows, 1):
        print(f"{i:4d}. {r['move']:<{width}}  {r['position_id']}")
    return 0


class PlayValue:
    """The cubeless money equity, for the player who just moved, of afterstates (``k x 26``
    boards from his side, as the ``position_id`` of :func:`list_plays`): a backgammon
    evaluator by name (``td``, ``pubeval``, ``gnubg``, ``rollout:N`` …, see
    :mod:`pipslab.agents.evaluators`: its ``values`` of the position with the opponent on
    roll, for ``OPPONENT``), or the searched value of an ``expectimax:plies=N,eval=E`` agent
    (``ExpectimaxAgent.value``).  ``playouts``: the games a rollout evaluator plays out per
    afterstate (0 for none), to bound the work before it starts."""

    def __init__(self, spec: str = "td"):
        from pipslab.agents.evaluators import make_evaluator
        from pipslab.envs.backgammon.game import ROLLS
        self.spec = spec
        self.search = None
        self.plies = 0
        if spec.partition(":")[0].strip() == "expectimax":
            from pipslab.agents.registry import make_agent
            self.search = make_agent(spec, "backgammon")
            self.evaluator, self.plies = self.search.evaluator, self.search.plies
        else:
            self.evaluator = make_evaluator("backgammon", spec)
        self.playouts = getattr(self.evaluator, "rollouts", 0) * len(ROLLS) ** self.plies

    def __call__(self, rows):
        import numpy as np
        from pipslab.agents.backgammon_value import swap
        from pipslab.agents.evaluators import OPPONENT
        rows = np.asarray(rows, dtype=np.int64).reshape(-1, 26)
        if self.search is not None:
            return np.asarray(self.search.values(rows, self.plies), dtype=float)
        return np.asarray(self.evaluator.values(swap(rows), OPPONENT), dtype=float)


def rank_plays(rows: list, value) -> list:
    """:func:`list_plays`'s rows, each with the ``equity`` ``value`` (a :class:`PlayValue`)
    gives its ``position_id``, best first (equal equities in the order of the list)."""
    boards = [Position.from_id(r["position_id"]) for r in rows]
    ranked = [dict(r, equity=float(e)) for r, e in zip(rows, value(boards))]
    return sorted(ranked, key=lambda r: -r["equity"])
