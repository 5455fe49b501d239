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

from .checks import out_arg, seed_arg


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
    parser.add_argument("--seed", type=seed_arg, default=0, help="unused (no randomness)")
    parser.add_argument("--out", type=out_arg, default=None, help="unused")


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
