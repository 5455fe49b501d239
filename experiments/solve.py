"""Solve a domino position exactly, every hand open.

``pipslab solve "<position>" [--json] [--objective margin|wdl] [--time-limit S] [--max-nodes N]``

The position is in the domino notation (``pipslab.envs.dominoes.notation``), e.g.::

    pipslab solve "happy-block; turn=0; ends=1|0; hands=2-2 / 0-0 0-2"

Prints the game-theoretic result for the seat to move (win / draw / loss), the optimal
final pip margin (the opponent's count minus one's own at the end), the value of every
legal move, the best move(s) and a principal line.  Values are ``outcome * 1000 +
margin`` from the mover's side.  Line games with two sides and one hand to play: Happy
block and draw, Troshin for two, and Troshin's four in pairs (``troshin-4-pairs``: the
values are the mover's pair's, the margin the other pair's count minus this pair's, or
the other pair's count when a hand went out — Troshin's score of the hand, signed); not a
match position.  Three players, or four each for themselves, are refused (not two-sided:
see :mod:`pipslab.agents.solver`).  In draw mode the boneyard order in the position is
taken as known.

The search is the solver's compiled one (a few million nodes a second): the hardest
2-player positions — full hands, draw mode, a full boneyard — take about a second.
``--time-limit`` and ``--max-nodes`` stop the search with one line on stderr, the moves
proven so far and the best result among them (a lower bound on the position's value),
exit status 3; ``--max-table`` bounds the memory (the transposition table holds the
largest power of two of entries not above it, 24 bytes each, and replaces entries once
full: slower, never wrong).  Long solves show their progress on stderr; Ctrl-C stops at
once (exit status 130).
"""
from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import sys
import threading
import time

from pipslab.agents.solver import BIG, SearchStopped, Solver, SolveResult
from pipslab.envs.dominoes.games import solver_refusal
from pipslab.envs.dominoes.match import TroshinMatch
from pipslab.envs.dominoes.notation import parse_position
from pipslab.envs.errors import PipslabError

from .checks import check_out_dir, count_arg, out_arg, seconds_arg, writing_out
from .files import atomic_write_json

OUTCOME = {1: "win", 0: "draw", -1: "loss"}
STOPPED = 3          # exit status of a solve stopped by --time-limit or --max-nodes
_TICK = 0.02         # seconds between two looks at the clock, the node budget and the table


def add_arguments(parser) -> None:
    parser.add_argument("position", help="domino position string (quote it)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    parser.add_argument("--objective", choices=["margin", "wdl"], default="margin",
                        help="margin (default): best result, then best pip margin; wdl: result only")
    parser.add_argument("--time-limit", type=seconds_arg, default=None, metavar="SECONDS",
                        help="stop after this many seconds with the moves proven so far (exit status 3)")
    parser.add_argument("--max-nodes", type=count_arg(1), default=None, metavar="N",
                        help="stop after searching N nodes, likewise")
    parser.add_argument("--max-table", type=count_arg(1000), default=4_000_000, metavar="ENTRIES",
                        help="bound the transposition table (24 bytes an entry; default 4,000,000)")
    parser.add_argument("--out", type=out_arg, default=None, help="also write solve.json to this folder")


class SolveStopped(Exception):
    """A limit stopped the search; ``values`` holds the root moves proven before it."""

    def __init__(self, reason: str, values: dict, total: int):
        super().__init__(reason)
        self.reason, self.values, self.total = reason, values, total


class BoundedSolver(Solver):
    """The exact solver with a clock, a node budget, a bounded table and progress reports.

    The search itself is untouched: it is the compiled one, which runs without the GIL,
    and a watcher thread looks at the clock every ``_TICK`` seconds (sooner when the time
    limit is nearer), asks the search to stop at the time limit
    (:meth:`Solver.request_stop`) and calls ``progress``.  The node budget is the
    solver's ``node_limit`` (the search stops at it exactly) and ``max_table`` bounds the
    table (full, it replaces entries: slower, never wrong).  A Ctrl-C stops the search at
    once too (in the main thread: the signal wakes the watcher through
    ``signal.set_wakeup_fd``), so Python's handler can raise ``KeyboardInterrupt``."""

    def __init__(self, objective: str, max_table: int, time_limit=None, max_nodes=None, progress=None):
        super().__init__(objective, max_table=max_table)
        self.time_limit, self.max_nodes, self.progress = time_limit, max_nodes, progress
        self.node_limit = max_nodes
        self.start = time.perf_counter()
        self.proven: dict = {}
        self.total_moves = 0
        self.line_cut = False
        self._why = None   # "an interrupt" once Ctrl-C stopped the search

    def _stopped(self, reason: str) -> SolveStopped:
        return SolveStopped(reason, dict(self.proven), self.total_moves)

    def _reason(self, exc: SearchStopped) -> str:
        if exc.reason == "nodes":
            return f"the node limit ({self.max_nodes:,} nodes)"
        return self._why or f"the time limit ({self.time_limit:g} s)"

    def _check_clock(self) -> None:
        if self.time_limit is not None and time.perf_counter() - self.start >= self.time_limit:
            raise self._stopped(f"the time limit ({self.time_limit:g} s)")

    def _watch(self, done: threading.Event, wake) -> None:
        """The watcher thread: the time limit, progress reports, Ctrl-C."""
        while not done.is_set():
            elapsed = time.perf_counter() - self.start
            wait = _TICK
            if self.time_limit is not None:
                left = self.time_limit - elapsed
                if left <= 0:
                    self.request_stop()
                else:
                    wait = min(wait, left)
            if self.progress is not None:
                self.progress(self.live_nodes(), elapsed, len(self.proven), self.total_moves)
            if wake is None:
                done.wait(wait)
                continue
            ready, _, _ = select.select([wake], [], [], wait)
            if ready and not done.is_set():
                try:
                    data = os.read(wake, 64)
                except OSError:
                    data = b""
                if bytes([signal.SIGINT]) in data:
                    self._why = "an interrupt"
                    self.request_stop()

    @contextlib.contextmanager
    def _watching(self):
        done = threading.Event()
        wake = old_fd = None
        if threading.current_thread() is threading.main_thread() and hasattr(signal, "set_wakeup_fd"):
            wake, write = os.pipe()
            os.set_blocking(write, False)
            try:
                old_fd = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
            except (ValueError, OSError):
                os.close(wake)
                os.close(write)
                wake = None
        watcher = threading.Thread(target=self._watch, args=(done, wake), daemon=True)
        watcher.start()
        try:
            yield
        finally:
            done.set()
            if wake is not None:
                os.write(write, b"\0")   # wake the watcher now
            watcher.join()
            if wake is not None:
                signal.set_wakeup_fd(old_fd)
                os.close(wake)
                os.close(write)

    def move_values(self, state):
        """As :meth:`Solver.move_values`, one root move at a time, keeping each root move's
        value as it is proven."""
        self._prepare(state)
        legal = state.legal_actions()
        self.proven, self.total_moves = {}, len(legal)
        for a in legal:
            self._check_clock()
            child = state.clone()
            child.apply(a)
            try:
                self.proven[a] = self._child_value(state, child)
            except SearchStopped as exc:
                raise self._stopped(self._reason(exc)) from None
        return dict(self.proven)

    def solve(self, state, line_length: int = 60) -> SolveResult:
        """As :meth:`Solver.solve`; a limit met while the principal line is worked out (the
        value of every move already proven) only cuts the line short (``line_cut``)."""
        self.nodes = 0
        self.line_cut = False
        with self._watching():
            values = self.move_values(state)
            best_value = max(values.values())
            line, s = [], state.clone()
            try:
                while not s.is_terminal and len(line) < line_length:
                    mv = Solver.move_values(self, s)
                    top = max(mv.values())
                    a = min(a for a, v in mv.items() if v == top)
                    line.append(a)
                    s.apply(a)
            except SearchStopped:
                self.line_cut = True
        outcome, margin = _describe(best_value, self.objective)
        outcome = {"win": 1, "draw": 0, "loss": -1}[outcome]
        return SolveResult(best_value, outcome, margin, values, [a for a, v in values.items() if v == best_value],
                           line, self.nodes, time.perf_counter() - self.start)


class _Progress:
    """Progress of a long solve on stderr: nothing for the first 2 s, then a line every
    2 s (rewritten in place on a terminal)."""

    def __init__(self):
        self.tty = sys.stderr.isatty()
        self.shown = False
        self.next = 2.0

    def __call__(self, nodes, elapsed, done, total):
        if elapsed < self.next:
            return
        self.next = elapsed + (2.0 if self.tty else 10.0)
        text = f"solving: {done} of {total} moves proven, {nodes:,} nodes, {elapsed:.0f} s"
        sys.stderr.write(f"\r{text}\033[K" if self.tty else text + "\n")
        sys.stderr.flush()
        self.shown = True

    def close(self):
        if self.shown and self.tty:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def _describe(value: int, objective: str):
    if objective == "margin":
        outcome = (value > 0) - (value < 0)
        return OUTCOME[outcome], value - outcome * BIG
    return OUTCOME[value], None


def _solvable(text: str):
    """The position, once it is known to be one the solver plays."""
    if ";" not in text and len(text.strip()) == 14:
        from pipslab.envs.backgammon import Position
        try:
            Position.from_id(text)
        except PipslabError:
            pass
        else:
            raise PipslabError("no exact solver for backgammon: pipslab solve takes a domino position "
                               "(try pipslab moves backgammon --position-id ID --dice A B)")
    state = parse_position(text)
    if isinstance(state, TroshinMatch):
        raise PipslabError("pipslab solve takes one hand, not a match position: drop the match=, hand= "
                           "and target= fields to solve the hand being played")
    v = state.variant
    if v.layout != "line":
        raise PipslabError(f"no exact solver for {v.name}: pipslab solve handles line games with two sides "
                           "(happy-block, happy-draw, troshin-2, troshin-4-pairs)")
    refusal = solver_refusal(v)   # what the games' solver_support checks: sides, scoring rule
    if refusal:
        raise PipslabError(refusal)
    if state.is_terminal:
        raise PipslabError("the position is already over: nothing to solve")
    return state


def solve_position(text: str, objective: str = "margin", max_table: int = 4_000_000, time_limit=None,
                   max_nodes=None, progress=None) -> dict:
    """What ``pipslab solve TEXT --json`` prints, as a dict: the result, every move's value,
    the best moves and the principal line; ``complete`` is False when ``time_limit`` or
    ``max_nodes`` stopped the search (then the moves proven so far, ``stopped`` naming the
    limit).  A position the solver does not play is a :class:`PipslabError`."""
    state = _solvable(text)
    solver = BoundedSolver(objective, max_table, time_limit, max_nodes, progress)
    names = state.action_name
    mover = state.current_player
    try:
        r = solver.solve(state)
    except SolveStopped as exc:
        return _stopped_data(text, state, exc, solver.nodes, time.perf_counter() - solver.start, objective)
    outcome, margin = _describe(r.value, objective)
    data = {
        "position": text, "to_move": mover, "result": outcome, "margin": margin, "value": r.value,
        "best_moves": [names(a) for a in r.best_actions],
        "moves": _moves_data(names, r.move_values, objective),
        "line": [], "nodes": r.nodes, "seconds": r.seconds, "complete": True,
    }
    if state.variant.pairs:
        data["side"] = _pair(mover)
    if solver.line_cut:
        data["line_cut"] = True
    s = state.clone()
    for a in r.line:
        data["line"].append(f"seat {s.current_player}: {names(a)}")
        s.apply(a)
    if s.is_terminal:
        res = s.result()
        data["end"] = {"winner": res["winner"], "winners": res["winners"], "blocked": res["blocked"],
                       "pips_left": res["pips_left"]}
    return data


def _moves_data(names, values: dict, objective: str) -> list:
    return [{"action": a, "move": names(a), "value": v, "result": _describe(v, objective)[0],
             "margin": _describe(v, objective)[1]} for a, v in sorted(values.items())]


def run(ns) -> int:
    if ns.out is not None:
        check_out_dir(ns.out)
    progress = _Progress()
    try:
        data = solve_position(ns.position, ns.objective, ns.max_table, ns.time_limit, ns.max_nodes, progress)
    finally:
        progress.close()
    _write(ns, data)
    if not data["complete"]:
        return _report_stopped(ns, data)
    if ns.json:
        print(json.dumps(data))
        return 0
    outcome, margin = data["result"], data["margin"]
    margin_text = "" if margin is None else f", final margin {margin:+d} pips"
    side = f" (for {data['side']}: values are that pair's)" if "side" in data else ""
    print(f"seat {data['to_move']} to move{side}: {outcome}{margin_text} with best play")
    _print_moves(data)
    print("best: " + ", ".join(data["best_moves"]))
    print("line: " + "; ".join(data["line"]) + (" … (cut short by the limit)" if data.get("line_cut") else ""))
    if "end" in data:
        e = data["end"]
        how = "blocked" if e["blocked"] else "went out"
        who = "draw" if e["winner"] is None else f"seat {e['winner']} wins"
        if e["winner"] is not None and "side" in data:
            who = (f"seat {e['winner']} went out, " if not e["blocked"] else "") + f"{_pair(e['winner'])} wins"
        print(f"end:  {how}, {who}, pips left {e['pips_left']}")
    print(f"({data['nodes']} nodes, {data['seconds'] * 1e3:.1f} ms)")
    return 0


def _pair(seat: int) -> str:
    """The pair of ``seat`` with Troshin's pairs: partners sit opposite."""
    return f"pair {seat % 2}+{seat % 2 + 2}"


def _write(ns, data) -> None:
    if ns.out:
        from pathlib import Path
        out = Path(ns.out)
        with writing_out(out):
            out.mkdir(parents=True, exist_ok=True)
            atomic_write_json(out / "solve.json", data)


def _print_moves(data) -> None:
    print("moves:")
    for m in data["moves"]:
        extra = "" if m["margin"] is None else f" {m['margin']:+d}"
        print(f"  {m['move']:<12} {m['result']}{extra}")


def _stopped_data(text: str, state, stopped: SolveStopped, nodes: int, seconds: float, objective: str) -> dict:
    """The moves proven before a limit stopped the search and the best among them (a lower
    bound on the position's value)."""
    names = state.action_name
    values = stopped.values
    data = {"position": text, "to_move": state.current_player, "complete": False,
            "stopped": f"stopped by {stopped.reason}", "moves_proven": len(values), "moves_total": stopped.total,
            "moves": _moves_data(names, values, objective), "nodes": nodes, "seconds": seconds}
    if values:
        best = max(values.values())
        outcome, margin = _describe(best, objective)
        data.update(at_least={"result": outcome, "margin": margin, "value": best},
                    best_so_far=[names(a) for a, v in values.items() if v == best])
    return data


def _report_stopped(ns, data: dict) -> int:
    """A stopped solve: the moves proven on stdout; one line on stderr; exit status 3."""
    proven, total = data["moves_proven"], data["moves_total"]
    if "at_least" in data:
        least = data["at_least"]
        summary = (f"best proven so far: {', '.join(data['best_so_far'])}, at least a {least['result']}"
                   + ("" if least["margin"] is None else f" {least['margin']:+d}"))
    else:
        summary = "no move was proven"
    if ns.json:
        print(json.dumps(data))
    else:
        print(f"seat {data['to_move']} to move: {proven} of {total} moves proven "
              f"({data['nodes']:,} nodes, {data['seconds']:.1f} s)")
        if proven:
            _print_moves(data)
            print(summary)
    sys.stderr.write(f"pipslab: solve {data['stopped']} after {proven} of {total} moves; {summary}\n")
    return STOPPED
