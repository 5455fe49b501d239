"""Only-move puzzles from the endings of real games, with their solutions.

``pipslab fish puzzles GAME [game options] --n N --seed S --out DIR [--agents A,B] [--before K]``

Plays games (the tournament's seed plan with fresh deals: game ``i`` of seed ``S``
between ``--agents``, default ``heaviest,suits``) and looks at the positions before each game's last ``K``
placements (default 8), earliest first.  A position is a puzzle when, with every hand open
(and in draw mode the boneyard's order known):

* the side to move has at least two distinct moves (the same tile at either end counts
  once when the ends come out the same),
* its best result under perfect play is a win, or a draw it can save,
* and exactly one distinct move reaches that result: every other move does worse;
* and the hands still hold ``--min-tiles`` tiles or more (default 6), so it is not trivial.

At most one puzzle comes from a game (its earliest qualifying position, the deepest).
Writes, atomically, ``DIR/puzzles.json`` — each puzzle with its ``position`` string (``pipslab
solve`` checks it), the side to move, the goal, the answer, the solution line (perfect
play to the end), every wrong move with the result it leads to, and where it came from
(game id, seed, agents) — and ``DIR/puzzles.md``, a readable puzzle book with the
solutions folded away.

``pipslab play --puzzle FILE|NAME [--number I]`` lets a person try them on the terminal
(``NAME``: a shipped book, e.g. ``happy-block``; see :data:`SHIPPED`).

Variants: those of the exact solver — Happy block and draw, Troshin for 2 and Troshin for
4 in pairs (``--players 4 --pairs``).
"""
from __future__ import annotations

import json
import shlex
import sys
import time
from pathlib import Path
from typing import List, Optional

from pipslab.envs.dominoes.common import action_name
from pipslab.envs.dominoes.notation import format_position, parse_position, render
from pipslab.envs.dominoes.tiles import format_tiles
from pipslab.envs.errors import PipslabError, excerpt
from pipslab.envs.game import get_game

from .checks import check_out_dir, count_arg, seed_arg, writing_out
from .files import atomic_write_json, atomic_write_text
from .cliargs import add_option_flags, flag_options_given, parse_option_items, split_agent_list
from .fish_positions import GameStudy, StudySettings, distinct_moves, split_value, variant_of
from .seedplan import Task, options_json

FORMAT = "pipslab-puzzles"
VERSION = 1
SHIPPED = Path(__file__).resolve().parent / "puzzle_books"
RESULT = {1: "win", 0: "draw", -1: "loss"}
DEFAULT_AGENTS = ("heaviest", "suits")


def add_arguments(parser) -> None:
    parser.add_argument("game", nargs="?", default="happy", help="happy (default) or troshin")
    parser.add_argument("--n", type=count_arg(1), required=True, help="puzzles to find")
    parser.add_argument("--seed", type=seed_arg, default=0, help="seed of the games (default 0)")
    parser.add_argument("--out", required=True, help="output folder: puzzles.json and puzzles.md")
    parser.add_argument("--agents", default=None, help="agents that play the games (default heaviest,suits)")
    parser.add_argument("--before", type=count_arg(1), default=8, metavar="K",
                        help="placements before the end searched for a puzzle (default 8)")
    parser.add_argument("--min-tiles", type=count_arg(2), default=6,
                        help="tiles left in the hands at least, so a puzzle is not trivial (default 6)")
    parser.add_argument("--max-games", type=count_arg(1), default=None,
                        help="give up after this many games (default 200 per puzzle)")
    add_option_flags(parser)
    parser.add_argument("--option", action="append", metavar="KEY=VALUE", help="another game option (repeatable)")


def run(ns) -> int:
    check_out_dir(ns.out)
    spec = get_game(ns.game)
    given = flag_options_given(ns)
    given.update(parse_option_items(ns.option or []))
    options = spec.options_for(given)
    label = spec.variant_label(options)
    variant_of(ns.game, options, label)
    agents = tuple(split_agent_list(ns.agents)) if ns.agents else DEFAULT_AGENTS
    from pipslab.agents.registry import make_agent
    for name in agents:
        make_agent(name, ns.game).check_table(ns.game, options)
    command = shlex.join(["pipslab"] + sys.argv[1:]) if sys.argv[1:2] == ["fish"] else "pipslab fish puzzles"
    t0 = time.perf_counter()
    book = find_puzzles(ns.game, options, agents, ns.seed, ns.n, ns.before, ns.max_games or 200 * ns.n,
                        ns.min_tiles)
    book["command"] = command
    out = Path(ns.out)
    with writing_out(out):
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_json(out / "puzzles.json", book)
        atomic_write_text(out / "puzzles.md", puzzle_book_md(book))
    found = len(book["puzzles"])
    print(f"{found} puzzle{'s' if found != 1 else ''} of {label} from {book['games_played']} games "
          f"({time.perf_counter() - t0:.1f} s): wrote {out}/puzzles.json, puzzles.md")
    if found < ns.n:
        sys.stderr.write(f"pipslab: note: only {found} of the {ns.n} puzzles asked for were found in "
                         f"{book['games_played']} games (raise --max-games)\n")
    return 0


def find_puzzles(game: str, options: dict, agents, seed: int, n: int, before: int, max_games: int,
                 min_tiles: int = 6) -> dict:
    spec = get_game(game)
    # fresh deals: the tournament's duplicate deals would give the same ending twice
    task = Task(game, options_json(options), tuple(agents), seed, duplicate=False)
    study = GameStudy(task, StudySettings(before=before, view_samples=0, seed=seed))
    puzzles: List[dict] = []
    played = 0
    for game_id in range(max_games):
        if len(puzzles) >= n:
            break
        record, placements, _final = study.replay(game_id)
        played += 1
        names = [record[f"seat{s}"] for s in range(spec.players(options))]
        for k, (state, seat, action) in zip(range(len(placements[-before:]), 0, -1), placements[-before:]):
            if sum(bin(h).count("1") for h in state.hands) < min_tiles:
                break
            puzzle = make_puzzle(study.solver, state)
            if puzzle is not None:
                puzzle["id"] = len(puzzles) + 1
                puzzle["source"] = {"game_id": game_id, "seed": seed, "agents": names, "k": k,
                                    "played": action_name(state.variant, action)}
                puzzles.append(puzzle)
                break
    return {"format": FORMAT, "version": VERSION, "game": game, "options": options,
            "variant": spec.variant_label(options), "seed": seed, "agents": list(agents), "duplicate": False,
            "before": before,
            "min_tiles": min_tiles, "games_played": played, "puzzles": puzzles}


def make_puzzle(solver, state) -> Optional[dict]:
    """The puzzle of ``state`` when exactly one distinct move reaches its best result (a
    win or a draw); ``None`` otherwise."""
    legal = state.legal_actions()
    if len(legal) < 2:
        return None
    groups = distinct_moves(state, legal)
    if len(groups) < 2:
        return None
    values = solver.move_values(state)
    group_value = {key: max(values[a] for a in acts) for key, acts in groups.items()}
    outcomes = {key: split_value(v)[0] for key, v in group_value.items()}
    best = max(outcomes.values())
    winners = [key for key, o in outcomes.items() if o == best]
    if best < 0 or len(winners) != 1:
        return None
    v = state.variant
    answer = groups[winners[0]]
    result = solver.solve(state)
    wrong = []
    for key, acts in groups.items():
        if key == winners[0]:
            continue
        o, m = split_value(group_value[key])
        wrong.append({"move": action_name(v, acts[0]), "ids": acts, "result": RESULT[o], "margin": m})
    wrong.sort(key=lambda w: (-{"win": 1, "draw": 0, "loss": -1}[w["result"]], -w["margin"]))
    outcome, margin = split_value(group_value[winners[0]])
    return {"position": format_position(state), "to_move": state.current_player,
            "side": v.teams[state.current_player], "goal": RESULT[outcome], "margin": margin,
            "answer": action_name(v, answer[0]), "answer_ids": answer,
            "line": [action_name(v, a) for a in result.line], "wrong": wrong,
            "tiles_in_hands": sum(bin(h).count("1") for h in state.hands)}


# ------------------------------------------------------------------ the book
def _goal_text(p: dict, variant) -> str:
    who = f"pair {p['side']}+{p['side'] + 2} (seat {p['to_move']})" if variant.pairs else f"seat {p['to_move']}"
    return (f"{who} to move — find the only move that "
            + ("wins" if p["goal"] == "win" else "saves the draw"))


def _picture(state) -> str:
    text = render(state)
    if state.variant.draw and state.bpos < len(state.boneyard):
        text += "\nboneyard, in the order it is drawn: " + format_tiles(state.boneyard[state.bpos:])
    return text


def puzzle_book_md(book: dict) -> str:
    lines = [f"# Fish puzzles: {book['variant']}", "",
             f"{len(book['puzzles'])} positions from the endings of real games ({', '.join(book['agents'])}, seed "
             f"{book['seed']}), every hand open. In each exactly one move reaches the best result; every other "
             "move does worse. Check any of them with `pipslab solve \"<position>\"`, or try them with "
             f"`pipslab play --puzzle FILE`.", ""]
    if book.get("command"):
        lines += [f"Made by `{book['command']}`.", ""]
    for p in book["puzzles"]:
        state = parse_position(p["position"])
        lines += [f"## Puzzle {p['id']}", "", "```", _picture(state), "```", "",
                  _goal_text(p, state.variant) + ".", "", f"`{p['position']}`", "",
                  "<details><summary>Solution</summary>", "",
                  f"**{p['answer']}** — {p['goal']}" + (f" by {p['margin']}" if p["goal"] == "win" else "") + ".", "",
                  "Perfect play: " + ", ".join(p["line"]) + ".", ""]
        lines += ["| other move | result | margin |", "|---|---|---:|"]
        lines += [f"| {w['move']} | {w['result']} | {w['margin']} |" for w in p["wrong"]]
        src = p["source"]
        lines += ["", f"From game {src['game_id']} (seed {src['seed']}: {', '.join(src['agents'])}), {src['k']} "
                      f"placement{'s' if src['k'] != 1 else ''} before the end; {src['played']} was played.", "",
                  "</details>", ""]
    return "\n".join(lines)


def load_book(spec: str) -> dict:
    """A puzzle file (or a shipped book's name), checked: one line on what is wrong with it."""
    path = Path(spec)
    if not path.exists() and (SHIPPED / f"{spec}.json").is_file():
        path = SHIPPED / f"{spec}.json"
    if not path.is_file():
        shipped = ", ".join(sorted(p.stem for p in SHIPPED.glob("*.json"))) or "none"
        raise PipslabError(f"--puzzle {excerpt(spec)}: no such file (shipped books: {shipped})")
    try:
        book = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PipslabError(f"{path} is not a puzzle file: {exc.__class__.__name__} ({exc})") from None
    if not isinstance(book, dict) or book.get("format") != FORMAT:
        raise PipslabError(f"{path} is not a puzzle file (no \"format\": \"{FORMAT}\")")
    puzzles = book.get("puzzles")
    if not isinstance(puzzles, list) or not puzzles:
        raise PipslabError(f"{path} holds no puzzles")
    for i, p in enumerate(puzzles, 1):
        where = f"{path}: puzzle {i}"
        if not isinstance(p, dict):
            raise PipslabError(f"{where} is not an object")
        for key, kind in (("position", str), ("answer", str), ("goal", str), ("line", list), ("wrong", list)):
            if not isinstance(p.get(key), kind):
                raise PipslabError(f"{where} has no {key!r} ({kind.__name__})")
        try:
            state = parse_position(p["position"])
        except PipslabError as exc:
            raise PipslabError(f"{where}: {exc}") from None
        names = {action_name(state.variant, a) for a in state.legal_actions()}
        if state.is_terminal or p["answer"] not in names:
            raise PipslabError(f"{where}: the answer {excerpt(p['answer'])} is not a legal move of its position")
        if p["goal"] not in ("win", "draw"):
            raise PipslabError(f"{where}: goal must be win or draw, got {excerpt(p['goal'])}")
    return book


def play_puzzles(spec: str, number: Optional[int] = None, read=input, write=print) -> int:
    """Pose the puzzles of a book (or puzzle ``number``) on the terminal; returns how many
    were solved.  The end of the input ends the session with one line."""
    from pipslab.agents.human import ask
    book = load_book(spec)
    puzzles = book["puzzles"]
    if number is not None:
        if not 1 <= number <= len(puzzles):
            raise PipslabError(f"--number {number}: the book holds puzzles 1..{len(puzzles)}")
        puzzles = [puzzles[number - 1]]
    solved = 0
    for i, p in enumerate(puzzles, 1):
        state = parse_position(p["position"])
        v = state.variant
        legal = state.legal_actions()
        names = {}
        for a in legal:
            names.setdefault(action_name(v, a), a)
        groups = distinct_moves(state, legal)
        group_of = {a: key for key, acts in groups.items() for a in acts}
        answer_group = group_of[names[p["answer"]]]
        write(f"== puzzle {p.get('id', i)} of {book.get('variant', v.name)}")
        write(_picture(state))
        write(_goal_text(p, v) + ".")
        write("moves: " + ", ".join(f"{a} = {n}" for n, a in names.items()))
        while True:
            try:
                answer = ask(read, "your move (id or name): ", state.current_player).strip()
            except PipslabError:   # the end of the input: stop here, as a person closing the book
                write(f"the input ended: solved {solved} of {i - 1}")
                return solved
            if answer in names:
                chosen = names[answer]
                break
            if answer.isascii() and answer.isdigit() and int(answer) in legal:
                chosen = int(answer)
                break
            write(f"{answer!r} is not a move here")
        if group_of[chosen] == answer_group:
            solved += 1
            write(f"right: {p['answer']} " + ("wins" if p["goal"] == "win" else "saves the draw") + ".")
        else:
            name = action_name(v, chosen)
            wrong = next((w for w in p["wrong"] if chosen in w.get("ids", ()) or w.get("move") == name), None)
            what = f"it leads to a {wrong['result']} ({wrong['margin']:+d})" if wrong else "it does worse"
            write(f"not this one: {name} — {what}. The answer is {p['answer']}.")
        write("perfect play: " + ", ".join(p["line"]))
        write("")
    write(f"solved {solved} of {len(puzzles)}")
    return solved
