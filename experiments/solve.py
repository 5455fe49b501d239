"""Solve a domino position exactly, every hand open.

``pipslab solve "<position>" [--json] [--objective margin|wdl]``

The position is in the domino notation (``pipslab.envs.dominoes.notation``), e.g.::

    pipslab solve "happy-block; turn=0; ends=1|0; hands=2-2 / 0-0 0-2"

Prints the game-theoretic result for the seat to move (win / draw / loss), the optimal
final pip margin (the opponent's count minus one's own at the end), the value of every
legal move, the best move(s) and a principal line.  Values are ``outcome * 1000 +
margin`` from the mover's side.  2-player games (Happy block and draw); in draw mode the
boneyard order in the position is taken as known.
"""
from __future__ import annotations

import json

from pipslab.agents.solver import BIG, Solver
from pipslab.envs.dominoes.notation import parse_position
from pipslab.envs.errors import PipslabError

from .files import atomic_write_json

OUTCOME = {1: "win", 0: "draw", -1: "loss"}


def add_arguments(parser) -> None:
    parser.add_argument("position", help="domino position string (quote it)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    parser.add_argument("--objective", choices=["margin", "wdl"], default="margin",
                        help="margin (default): best result, then best pip margin; wdl: result only")
    parser.add_argument("--seed", type=int, default=0, help="unused (the solver is deterministic)")
    parser.add_argument("--out", default=None, help="also write solve.json to this folder")


def _describe(value: int, objective: str):
    if objective == "margin":
        outcome = (value > 0) - (value < 0)
        return OUTCOME[outcome], value - outcome * BIG
    return OUTCOME[value], None


def run(ns) -> int:
    state = parse_position(ns.position)
    if state.is_terminal:
        raise PipslabError("the position is already over: nothing to solve")
    r = Solver(ns.objective).solve(state)
    mover = state.current_player
    names = state.action_name
    outcome, margin = _describe(r.value, ns.objective)
    data = {
        "position": ns.position, "to_move": mover, "result": outcome, "margin": margin, "value": r.value,
        "best_moves": [names(a) for a in r.best_actions],
        "moves": [{"action": a, "move": names(a), "value": v, "result": _describe(v, ns.objective)[0],
                   "margin": _describe(v, ns.objective)[1]} for a, v in sorted(r.move_values.items())],
        "line": [], "nodes": r.nodes, "seconds": r.seconds,
    }
    s = state.clone()
    for a in r.line:
        data["line"].append(f"seat {s.current_player}: {names(a)}")
        s.apply(a)
    if s.is_terminal:
        res = s.result()
        data["end"] = {"winner": res["winner"], "blocked": res["blocked"], "pips_left": res["pips_left"]}
    if ns.out:
        from pathlib import Path
        out = Path(ns.out)
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_json(out / "solve.json", data)
    if ns.json:
        print(json.dumps(data))
        return 0
    margin_text = "" if margin is None else f", final margin {margin:+d} pips"
    print(f"seat {mover} to move: {outcome}{margin_text} with best play")
    print("moves:")
    for m in data["moves"]:
        extra = "" if m["margin"] is None else f" {m['margin']:+d}"
        print(f"  {m['move']:<12} {m['result']}{extra}")
    print("best: " + ", ".join(data["best_moves"]))
    print("line: " + "; ".join(data["line"]))
    if "end" in data:
        e = data["end"]
        how = "blocked" if e["blocked"] else "went out"
        who = "draw" if e["winner"] is None else f"seat {e['winner']} wins"
        print(f"end:  {how}, {who}, pips left {e['pips_left']}")
    print(f"({r.nodes} nodes, {r.seconds * 1e3:.1f} ms)")
    return 0
