"""``pipslab serve``: a play page where a person plays any game against any agents, and an
analysis board.

``pipslab serve [--host 127.0.0.1] [--port 8000] [--from DIR] [--review-reference SPEC |
--no-review]``: the page (``experiments/web/``) draws the person's own view and offers the
legal moves as buttons; each game runs the one game loop
(:func:`pipslab.experiments.games.play_game`) in a thread of its own, the person's seat a
:class:`WebHuman`.  The analysis board values positions with the solver or an evaluator.
Why Bottle, what the person is sent, the JSON API and the limits: docs/serve.md.

**The review.**  When a game ends, its thread values the person's own decisions (only
the seat played by ``human``; one review at a time, :class:`Reviewer`) as ``pipslab
analyze`` does, with a reference quick enough for the page: ``pimc:samples=20`` for the
domino line games (20 worlds from the person's view, each solved exactly; ``pipslab
analyze`` takes 50), ``gnubg:plies=0`` for backgammon (``td`` without gnubg-nn);
``--review-reference SPEC`` (once per game family) sets another, ``--no-review`` none.
``GET /api/games/ID`` then carries ``review`` (``null`` while the game is on):
``{"status": "running"|"done"|"error"|"unavailable", "reference", "decisions",
"error_rate", "error_rate_low", "error_rate_high", "blunders", "blunder_threshold",
"worst": [{"turn", "move", "played", "best", "loss"} + the position as the person saw it:
"line", "ends", "hand" (dominoes; never the hidden tiles) or "position_id", "dice"], …}``,
at most :data:`REVIEW_WORST` worst first.  Its random draws come from the game's seed S
as ``pipslab analyze --seed S`` draws them for a game 0 (the page's game is game 0 of
``pipslab play GAME --seed S``): decision ``turn``'s worlds from ``[S, 6, 0, turn]``, the
interval's bootstrap (over the person's decisions: one game) from ``[S, 7]``.  A variant
the reference cannot play (Triple, Troshin for 3 or 4, a Troshin match) is
``unavailable``, with a one-line ``reason``.
"""
from __future__ import annotations

import argparse
import errno
import json
import socket
import socketserver
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from pipslab.agents.base import Agent, Observation
from pipslab.agents.registry import agent_names, make_agent
from pipslab.envs.errors import PipslabError, excerpt
from pipslab.envs.game import GAMES, get_game

from .games import play_game

__all__ = ["add_arguments", "run", "make_app", "start_server", "analyze", "GameSession", "WebHuman", "Reviewer",
           "MAX_GAMES", "SOLVE_MAX_NODES", "SOLVE_SECONDS", "MAX_PLAYOUTS", "REVIEW_SAMPLES", "REVIEW_WORST"]

WEB = Path(__file__).resolve().parent / "web"
MAX_GAMES = 64
MAX_BODY = 64 * 1024          # bytes of a request body
WAIT_S = 20.0                 # how long a request waits for the agents before answering "waiting"
SEAT_NAMES_BACKGAMMON = ("X", "O")
SOLVE_MAX_NODES = 20_000_000  # the analysis board's solver stops here (a few seconds) …
SOLVE_SECONDS = 20.0          # … or here; the position is then refused (422)
MAX_PLAYOUTS = 2_000          # games a rollout evaluator may play out for one request
DEFAULT_EVAL = "td"
MAX_REPLAYS = 16              # replayed tournament games kept in memory
REVIEW_SAMPLES = 20           # the review's worlds per domino decision (pipslab analyze: 50)
REVIEW_WORST = 5              # the worst decisions a review lists


class ApiError(Exception):
    """A request the API refuses: an HTTP status and one line for the person."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


# ------------------------------------------------------------------ views as JSON
def _domino_view(view) -> Dict[str, Any]:
    from pipslab.envs.dominoes.tiles import tile_name, tiles_of
    v = view.variant
    line = None if view.line is None else [f"{a}-{b}" for a, b in view.line]
    out = {"kind": "dominoes", "variant": v.name, "layout": v.layout, "seat": view.player,
           "hand": [tile_name(t) for t in tiles_of(view.hand)], "hand_sizes": list(view.hand_sizes),
           "boneyard": view.boneyard_size, "draw_game": bool(v.draw), "line": line,
           "ends": [view.left, view.right], "current_player": view.current_player,
           "teams": list(v.teams)}
    if v.layout != "line":
        out["ends"] = list(view.ends)
        out["spinner"] = view.spinner
        out["arms"] = [[f"{a}-{b}" for a, b in arm] for arm in view.arms]
        out["winnings"] = list(view.winnings)
        out["penalties"] = list(view.penalties)
    if view.match is not None:
        m = view.match
        out["match"] = {"target": m.target, "scores": list(m.scores), "hand": m.hand_index + 1}
    return out


def _domino_move(view, action: int) -> Dict[str, Any]:
    from pipslab.envs.dominoes.common import END_NAMES, action_name, decode
    kind, tile, end = decode(view.variant, action)
    out = {"action": int(action), "name": action_name(view.variant, action), "kind": kind}
    if kind == "place":
        from pipslab.envs.dominoes.tiles import tile_name
        out["tile"], out["end"] = tile_name(tile), END_NAMES[end]
    return out


def _backgammon_view(view) -> Dict[str, Any]:
    p = view.position            # from the person's side: his checkers positive, moving 24 -> 1
    me = view.player
    return {"kind": "backgammon", "seat": me, "you": SEAT_NAMES_BACKGAMMON[me],
            "them": SEAT_NAMES_BACKGAMMON[1 - me], "points": [int(x) for x in p[1:25]],
            "bar": int(p[25]), "opp_bar": int(-p[0]), "off": int(p.borne_off), "opp_off": int(p.opp_borne_off),
            "pips": [int(p.pip_count()), int(p.opp_pip_count())], "dice": list(view.dice), "roll": list(view.roll),
            "on_roll": view.current_player, "gammons": bool(view.gammons)}


def _backgammon_move(view, action: int) -> Dict[str, Any]:
    from pipslab.envs.backgammon.game import decode_action, sample_world
    out = {"action": int(action), "name": sample_world(view).action_name(action)}
    move = decode_action(action)
    if move is None:
        out["kind"] = "pass"
    else:
        s, d = move
        out.update(kind="move", **{"from": s, "to": max(s - d, 0)})
    return out


def _generic_view(view) -> Dict[str, Any]:
    return {"kind": "text", "seat": getattr(view, "player", None), "text": repr(view)}


def _generic_move(view, action: int) -> Dict[str, Any]:
    return {"action": int(action), "name": str(action), "kind": "move"}


_FAMILIES = {"dominoes": (_domino_view, _domino_move), "backgammon": (_backgammon_view, _backgammon_move)}


def _family(spec):
    return _FAMILIES.get(getattr(spec, "family", ""), (_generic_view, _generic_move))


def _log_entry(spec, state, player: int, action: int, agent: str) -> Dict[str, Any]:
    """One public line of the log, from the state just before ``action``: the move's name
    (the game's own; a domino draw is never named by its tile) and, for backgammon's first
    checker of a turn, the roll — public in both games."""
    entry = {"seat": player, "agent": agent, "move": spec.action_name(state, action)}
    roll = getattr(state, "roll", None)
    if roll and getattr(state, "turn_start", None) == getattr(state, "position", ()):
        entry["roll"] = [int(d) for d in roll]
    return entry


def _final_hands(state) -> Optional[List[List[str]]]:
    """Every seat's tiles left, turned up at the end (dominoes; None for other games)."""
    hand = getattr(state, "hand", state)          # a Troshin match: its last hand
    hands = getattr(hand, "hands", None)
    if hands is None or not getattr(state, "is_terminal", False):
        return None
    from pipslab.envs.dominoes.tiles import tile_name, tiles_of
    return [[tile_name(t) for t in tiles_of(h)] for h in hands]


def _plain(value):
    """A JSON-able copy of an outcome field (numpy scalars, tuples)."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "item"):
        return value.item()
    return value if isinstance(value, (bool, int, float, str, type(None))) else str(value)


def _number(x) -> Optional[float]:
    """A float for JSON (NaN, as of no decisions, is null)."""
    x = float(x)
    return None if x != x else x


# ------------------------------------------------------------------ the review
def default_review_references() -> Dict[str, str]:
    """The review's reference for each game family: ``pimc:samples=20`` for dominoes,
    ``gnubg:plies=0`` for backgammon (``td`` without gnubg-nn)."""
    import importlib.util
    return {"dominoes": f"pimc:samples={REVIEW_SAMPLES}",
            "backgammon": "gnubg:plies=0" if importlib.util.find_spec("gnubg_nn") else "td"}


class Reviewer:
    """The review of the person's decisions after a game (module docstring): the reference
    of each game family (``references``: specs over the defaults, each routed to its
    family — ``pimc:…`` dominoes, anything else backgammon — and built here, so a bad one
    is one line now), each built once and used by one review at a time."""

    def __init__(self, references: Sequence[str] = ()):
        from .analyze import make_reference
        self.specs = default_review_references()
        self._built: Dict[str, Any] = {}
        self._lock = threading.Lock()
        given: Dict[str, str] = {}
        for spec in references:
            text = str(spec).strip()
            family = "dominoes" if text.partition(":")[0].strip() == "pimc" else "backgammon"
            if family in given:
                raise PipslabError(f"--review-reference {excerpt(text)}: {family} already has {given[family]!r} "
                                   "(give one reference per game family)")
            try:
                self._built[family] = make_reference(family, text)
            except PipslabError as exc:
                raise PipslabError(f"--review-reference {excerpt(text)}: {exc}") from None
            given[family] = text
            self.specs[family] = self._built[family].spec

    def plan(self, spec, options) -> Dict[str, Any]:
        """The review a game of ``spec`` with ``options`` will get: ``{"reference"}``, or
        with ``"reason"`` when the reference cannot play it (checked now: it is cheap)."""
        from .analyze import make_reference
        family = getattr(spec, "family", "")
        reference = self.specs.get(family)
        if reference is None:
            return {"reference": None, "reason": f"no review for {spec.variant_label(options)}: the review knows "
                                                 "backgammon and the domino line games"}
        try:   # a backgammon reference plays every backgammon game; a domino one, the solver's variants
            if family == "dominoes":
                make_reference(family, reference).check_game(spec, options)
        except PipslabError as exc:
            return {"reference": reference, "reason": str(exc).splitlines()[0]}
        return {"reference": reference}

    def review(self, session: "GameSession", decisions: Sequence[Any], progress) -> Optional[Dict[str, Any]]:
        """The person's ``decisions`` valued (``progress(done, total)`` after each); None
        when the session ends meanwhile."""
        import pandas as pd

        from .analyze import game_rows, make_reference, summarize_decisions
        family = getattr(session.spec, "family", "")
        with self._lock:
            if session.ended:
                return None
            reference = self._built.get(family)
            if reference is None:
                reference = self._built[family] = make_reference(family, self.specs[family])
            rows = []
            for k, decision in enumerate(decisions):
                if session.ended:
                    return None
                rows += game_rows(0, [decision], reference, session.seed)
                progress(k + 1, len(decisions))
        unforced = [r for r in rows if not r["forced"]]
        frame = pd.DataFrame(rows or None, columns=["game", "agent", "forced", "loss"])
        frame["game"] = [r["turn"] for r in rows]   # the interval: a bootstrap over the person's decisions
        summary = summarize_decisions(frame, [session.names[session.human]], reference.blunder, session.seed)
        row = summary.iloc[0]
        views = {d.turn: d for d in decisions}
        worst = sorted((r for r in unforced if r["loss"] > 0), key=lambda r: (-r["loss"], r["turn"]))[:REVIEW_WORST]
        return {"status": "done", "reference": reference.spec, "reference_label": reference.label,
                "unit": reference.unit, "decisions": len(unforced), "forced": len(rows) - len(unforced),
                "error_rate": _number(row["error_rate"]), "error_rate_low": _number(row["error_rate_low"]),
                "error_rate_high": _number(row["error_rate_high"]), "blunders": int(row["blunders"]),
                "blunder_threshold": reference.blunder,
                "worst": [session._worst_json(r, views[r["turn"]]) for r in worst]}


# ------------------------------------------------------------------ a game in progress
class _Ended(Exception):
    """Raised in a game's thread when the server drops the game (too many games)."""


class WebHuman(Agent):
    """The person's seat: ``act`` hands the observation to the session and waits for the
    move the page posts.  Draws nothing from ``rng`` (a person's choice is not random)."""

    name = "human"

    def __init__(self, session: "GameSession"):
        self._session = session

    def act(self, observation: Observation, rng) -> int:
        return self._session._ask(observation)


class GameSession:
    """One game: its thread runs :func:`play_game`; requests read and move under ``_cond``."""

    def __init__(self, gid: str, game: str, options: Dict[str, Any], agents: Sequence[str], seed: int,
                 reviewer: Optional[Reviewer] = None):
        self.id = gid
        self.game = game
        self.spec = get_game(game)
        self.options = self.spec.options_for(options)
        self.seed = seed
        players = self.spec.players(self.options)
        names = [str(a).strip() for a in agents]
        if len(names) != players:
            raise ApiError(400, f"{self.spec.variant_label(self.options)} has {players} seats: "
                                f"give {players} agents, got {len(names)}")
        humans = [s for s, n in enumerate(names) if n == "human"]
        if len(humans) != 1:
            raise ApiError(400, f"exactly one seat must be \"human\" (the person), got {len(humans)}")
        self.human = humans[0]
        self.names = names
        self.agents: List[Agent] = [WebHuman(self) if s == self.human else make_agent(n, game)
                                    for s, n in enumerate(names)]
        if "position" in self.options:
            start = self.spec.new_state(None, self.options)   # a malformed position fails here, as a 400
            if start.is_terminal:
                raise ApiError(400, f"the position {excerpt(self.options['position'])} is already over")
        self._view_json, self._move_json = _family(self.spec)
        self._cond = threading.Condition()
        self._pending: Optional[Observation] = None     # the person's decision, while it is open
        self._choice: Optional[int] = None
        self._view: Optional[Dict[str, Any]] = None     # the person's last view, as JSON
        self._log: List[Dict[str, Any]] = []
        self._result: Optional[Dict[str, Any]] = None
        self._error: Optional[str] = None
        self._ended = False
        # the review: the person's decisions, recorded as the game goes, valued once it is over
        from .analyze import DecisionRecorder
        self._reviewer = reviewer
        self._review_plan = None if reviewer is None else reviewer.plan(self.spec, self.options)
        self._recorder = DecisionRecorder(self.spec, names)
        self._decision_moves: Dict[int, int] = {}     # a decision's turn -> its first line of the log (1-based)
        self._turn_first = 0
        self._review: Optional[Dict[str, Any]] = None
        self.touched = time.monotonic()
        self._thread = threading.Thread(target=self._play, name=f"pipslab-serve-{gid}", daemon=True)

    def start(self) -> "GameSession":
        self._thread.start()
        return self

    # -------------------------------------------------------------- the game's thread
    def _play(self) -> None:
        try:
            state, _moves, _ = play_game(self.spec, self.options, self.agents, [self.seed, 0, 0],
                                         [self.seed, 1, 0], self._on_move)
            result = self._outcome(state)
            view = self._view_json(state.observe(self.human))
            plan = self._review_plan
            review = None if plan is None else {"status": "unavailable" if "reason" in plan else "running", **plan}
            with self._cond:
                self._view, self._result, self._review = view, result, review
                self._cond.notify_all()
        except _Ended:
            return
        except Exception as exc:   # an agent or engine failure: the page says so, the server goes on
            with self._cond:
                self._error = f"the game stopped: {type(exc).__name__}: {str(exc)[:300]}"
                self._cond.notify_all()
            return
        if review is not None and review["status"] == "running":
            self._run_review()

    def _run_review(self) -> None:
        """Value the person's decisions (in the game's thread, after the game: it blocks no request)."""
        mine = [d for d in self._recorder.decisions if d.seat == self.human]

        def progress(done: int, total: int) -> None:
            with self._cond:
                self._review = dict(self._review, progress=[done, total])

        try:
            review = self._reviewer.review(self, mine, progress)
        except Exception as exc:   # the page says so; the game and the server are fine
            review = {"status": "error", "reference": self._review_plan["reference"],
                      "reason": f"{type(exc).__name__}: {str(exc)[:300]}".splitlines()[0]}
        if review is not None:
            with self._cond:
                self._review = review
                self._cond.notify_all()

    def _worst_json(self, row: Dict[str, Any], decision) -> Dict[str, Any]:
        """One of the worst decisions: where it was (as the person saw it), the play, the best one, the loss."""
        out: Dict[str, Any] = {"turn": int(row["turn"]), "move": self._decision_moves.get(int(row["turn"]))}
        if getattr(self.spec, "family", "") == "backgammon":
            out["position_id"] = row["position"]
            out["dice"] = [int(d) for d in decision.roll]
        else:   # the person's view then: the line, the ends, his hand (never the full position: the boneyard)
            view = _domino_view(decision.state.observe(self.human))
            out.update({k: view[k] for k in ("line", "ends", "hand", "hand_sizes", "boneyard")})
        out.update(played=row["choice"], best=row["best"], loss=float(row["loss"]))
        return out

    @property
    def ended(self) -> bool:
        return self._ended

    def _on_move(self, state, player: int, action: int) -> None:
        entry = _log_entry(self.spec, state, player, action, self.names[player])
        with self._cond:
            self._log.append(entry)
            line = len(self._log)
        if self._review_plan is None or "reason" in self._review_plan:
            return
        if "roll" in entry or getattr(self.spec, "family", "") != "backgammon":
            self._turn_first = line
        count = len(self._recorder.decisions)
        self._recorder.on_move(state, player, action)
        if len(self._recorder.decisions) > count:
            self._decision_moves[self._recorder.decisions[-1].turn] = self._turn_first

    def _ask(self, observation: Observation) -> int:
        view = self._view_json(observation.view)
        with self._cond:
            self._view, self._pending, self._choice = view, observation, None
            self._cond.notify_all()
            while self._choice is None and not self._ended:
                self._cond.wait()
            if self._ended:
                raise _Ended
            choice, self._choice = self._choice, None
            return choice

    def _outcome(self, state) -> Dict[str, Any]:
        out = self.spec.outcome(state)
        seats = len(out.returns)
        teams = list(self.spec.teams(self.options)) if hasattr(self.spec, "teams") else list(range(seats))
        if out.draw or not out.winners:
            text = "a draw"
        else:
            who = ", ".join(f"seat {s} ({self.names[s]})" for s in out.winners)
            text = f"{who} {'wins' if len(out.winners) == 1 else 'win'}"
        you = "you win" if self.human in out.winners else "a draw" if not out.winners else "you lose"
        return {"winners": [int(s) for s in out.winners], "draw": bool(out.draw), "text": text, "you": you,
                "returns": _plain(out.returns), "points": _plain(out.points),
                "pips_left": _plain(out.pips_left), "teams": _plain(teams),
                "extra": {k: _plain(v) for k, v in out.extra.items()},
                "hands": _final_hands(state)}

    # -------------------------------------------------------------- requests
    def end(self) -> None:
        with self._cond:
            self._ended = True
            self._cond.notify_all()

    def move(self, action: Any, wait: float = WAIT_S) -> Dict[str, Any]:
        if isinstance(action, bool) or not isinstance(action, int):
            raise ApiError(400, f"\"action\" must be an action id (a whole number), got {excerpt(json.dumps(action))}")
        with self._cond:
            if self._result is not None or self._error is not None:
                raise ApiError(409, "the game is over: start a new one")
            if self._pending is None:
                raise ApiError(409, "it is not your turn: the other seats are playing (GET the game to wait)")
            legal = list(self._pending.legal_actions)
            if action not in legal:
                names = ", ".join(f"{m['action']} ({m['name']})" for m in self._legal_json())
                raise ApiError(400, f"action {action} is not legal now; legal: {names}")
            self._pending, self._choice = None, int(action)
            self._cond.notify_all()
        return self.snapshot(wait)

    def snapshot(self, wait: float = WAIT_S) -> Dict[str, Any]:
        """The game as the person sees it, once it is the person's turn or the game is over
        (or after ``wait`` seconds: ``status`` is then ``waiting``)."""
        self.touched = time.monotonic()
        with self._cond:
            self._cond.wait_for(lambda: self._pending is not None or self._result is not None
                                or self._error is not None, timeout=wait)
            if self._error is not None:
                status = "error"
            elif self._result is not None:
                status = "over"
            elif self._pending is not None:
                status = "your-turn"
            else:
                status = "waiting"
            return {"id": self.id, "game": self.game, "label": self.spec.variant_label(self.options),
                    "options": {k: _plain(v) for k, v in self.options.items()}, "seed": self.seed,
                    "human": self.human, "agents": list(self.names), "status": status,
                    "moves": len(self._log), "view": self._view,
                    "legal": self._legal_json() if status == "your-turn" else [],
                    "log": list(self._log), "result": self._result, "error": self._error,
                    "review": None if self._review is None else dict(self._review)}

    def _legal_json(self) -> List[Dict[str, Any]]:
        obs = self._pending
        return [self._move_json(obs.view, a) for a in obs.legal_actions]


# ------------------------------------------------------------------ the analysis board
_SOLVER_LOCK = threading.Lock()   # one solve at a time: each may use a core and its table ~100 MB
ANALYZE_HELP = ('give {"position": "<domino position>"} or {"position_id": "<GNU BG Position ID>", '
                '"dice": [a, b], "eval": "td"}')


def analyze(body: Dict[str, Any]) -> Dict[str, Any]:
    """``POST /api/analyze``: a domino position solved, or a backgammon roll's plays ranked."""
    from .moves import PlayValue, list_plays, rank_plays
    from .solve import solve_position
    if "position" in body:
        _only(body, {"position"})
        text = body["position"]
        if not isinstance(text, str) or not text.strip():
            raise ApiError(400, "\"position\" must be a domino position string, e.g. "
                                "\"happy-block; turn=0; ends=1|0; hands=2-2 / 0-0 0-2\"")
        with _SOLVER_LOCK:
            data = solve_position(text, time_limit=SOLVE_SECONDS, max_nodes=SOLVE_MAX_NODES)
        if not data["complete"]:
            raise ApiError(422, f"the position is too large for the analysis board: the solver was {data['stopped']} "
                                f"after {data['moves_proven']} of {data['moves_total']} moves "
                                "(pipslab solve takes any limit)")
        return data
    if "position_id" in body:
        _only(body, {"position_id", "dice", "eval"})
        pid, dice, spec = body["position_id"], body.get("dice"), body.get("eval", DEFAULT_EVAL)
        if not isinstance(pid, str):
            raise ApiError(400, "\"position_id\" must be a GNU BG Position ID, e.g. \"4HPwATDgc/ABMA\"")
        if not (isinstance(dice, list) and len(dice) == 2
                and all(isinstance(d, int) and not isinstance(d, bool) for d in dice)):
            raise ApiError(400, f"\"dice\" must be two dice 1-6, e.g. [3, 1], got {excerpt(json.dumps(dice))}")
        if not isinstance(spec, str) or not spec.strip():
            raise ApiError(400, f"\"eval\" must name an evaluator, e.g. \"{DEFAULT_EVAL}\"")
        plays = list_plays(pid, dice)
        value = PlayValue(spec.strip())
        if value.playouts * len(plays) > MAX_PLAYOUTS:
            raise ApiError(422, f"eval {excerpt(spec)} would play out {value.playouts * len(plays):,} games for the "
                                f"{len(plays)} plays; the analysis board plays at most {MAX_PLAYOUTS:,}")
        return {"position_id": _id(pid), "dice": dice, "eval": spec.strip(), "plays": rank_plays(plays, value),
                "board": _backgammon_board(pid, dice)}
    raise ApiError(400, ANALYZE_HELP)


def _only(body: Dict[str, Any], fields: set) -> None:
    unknown = sorted(set(body) - fields)
    if unknown:
        raise ApiError(400, f"unknown field(s) {', '.join(map(repr, unknown))}; {ANALYZE_HELP}")


def _id(position_id: str) -> str:
    from pipslab.envs.backgammon import Position
    return Position.from_id(position_id).id


def _backgammon_board(position_id: str, dice) -> str:
    """The position as text, the player on roll as X (seat 0)."""
    from pipslab.envs.backgammon.game import BackgammonState
    return BackgammonState.from_position_id(position_id, dice).render()


def _evaluator_menu() -> Dict[str, Any]:
    """The backgammon evaluators the page offers (``gnubg`` only with gnubg-nn installed)."""
    import importlib.util
    from pipslab.agents.evaluators import evaluator_names
    names = [n for n in evaluator_names("backgammon") if n != "gnubg" or importlib.util.find_spec("gnubg_nn")]
    names.sort(key=lambda n: n != DEFAULT_EVAL)
    return {"backgammon": names + ["expectimax:plies=1,eval=td", "expectimax:plies=2,eval=td"],
            "default": DEFAULT_EVAL}


def _step_recorder(spec, names: Sequence[str], steps: List[Dict[str, Any]]):
    """``on_move`` for :func:`play_game` that appends the game's steps: each move with the
    position to analyze (dominoes: the position string, every hand in it), or each
    backgammon turn with its Position ID, roll and the Position ID the play led to."""
    family = getattr(spec, "family", "")

    def on_move(state, player: int, action: int) -> None:
        if family == "backgammon":
            if not steps or "played_id" in steps[-1]:    # the turn's first checker
                steps.append({"seat": player, "agent": names[player], "roll": [int(d) for d in state.roll],
                              "position_id": state.position.id, "board": spec.render(state)})
            after = state.clone()
            after.apply(action)
            if after.is_terminal or after.current_player != player:
                steps[-1]["played_id"] = after.position_from(player).id
            return
        step = {"seat": player, "agent": names[player], "move": spec.action_name(state, action),
                "action": int(action), "board": spec.render(state)}
        if family == "dominoes":
            from pipslab.envs.dominoes.notation import format_position
            step["position"] = format_position(getattr(state, "hand", state))   # a match: the hand in play
        steps.append(step)
    return on_move


class _Records:
    """A tournament folder's games (``--from DIR``), listed from games.csv; each is replayed
    on request with fresh agents and its seeds and checked against its record (as
    ``pipslab play --replay ID --from DIR``), the last :data:`MAX_REPLAYS` kept."""

    def __init__(self, folder):
        self.folder = Path(folder)
        path = self.folder / "games.csv"
        if not self.folder.is_dir():
            raise PipslabError(f"--from {excerpt(str(folder))} is not a folder")
        if not path.is_file():
            raise PipslabError(f"--from {excerpt(str(folder))}: no games.csv in it (a tournament's output folder)")
        from .tournament import read_games
        try:
            rows = read_games(path).to_dict("records")
            self.games = [{"id": int(r["game_id"]), "game": str(r["game"]), "variant": str(r.get("variant", "")),
                           "agents": [str(r[f"seat{s}"]) for s in range(int(r["players"]))],
                           "moves": _plain(r.get("moves")), "result": str(r.get("result", "")),
                           "winner": str(r.get("winner", ""))} for r in rows]
        except (KeyError, ValueError, TypeError, OSError) as exc:
            raise PipslabError(f"{path} is not a tournament's games.csv ({type(exc).__name__}: "
                               f"{excerpt(str(exc))})") from None
        self._ids = {g["id"] for g in self.games}
        self._lock = threading.Lock()
        self._replays: "OrderedDict[int, Dict[str, Any]]" = OrderedDict()

    def listing(self) -> Dict[str, Any]:
        return {"from": str(self.folder), "games": self.games}

    def game(self, text: str) -> Dict[str, Any]:
        gid = int(text) if text.isdigit() else None
        if gid not in self._ids:
            raise ApiError(404, f"no game {excerpt(text)} in {self.folder / 'games.csv'} "
                                f"(ids {min(self._ids, default=0)}..{max(self._ids, default=0)})")
        with self._lock:
            if gid in self._replays:
                self._replays.move_to_end(gid)
                return self._replays[gid]
        out = self._replay(gid)
        with self._lock:
            self._replays[gid] = out
            while len(self._replays) > MAX_REPLAYS:
                self._replays.popitem(last=False)
        return out

    def _replay(self, gid: int) -> Dict[str, Any]:
        from .moves import list_plays
        from .play import check_replay, read_record, record_spec
        from .seedplan import new_seat_agents
        record, path = read_record(self.folder, gid)
        spec = record_spec(record, gid, path)
        names, options = record["names"], record["options"]
        steps: List[Dict[str, Any]] = []
        state, moves, _ = play_game(spec, options, new_seat_agents(names, record["game"]), record["deal_seed"],
                                    record["agent_seed"], _step_recorder(spec, names, steps))
        check_replay(record, gid, spec, state, moves)
        for step in steps:
            if "played_id" in step:   # backgammon: the play's name, from the roll's legal plays
                plays = list_plays(step["position_id"], step["roll"])
                step["move"] = next(p["move"] for p in plays if p["position_id"] == step["played_id"])
        return {"id": gid, "game": record["game"], "label": spec.variant_label(options),
                "family": getattr(spec, "family", ""), "agents": names, "moves": moves, "result": record["result"],
                "winner_seat": record["winner_seat"], "winner": record["winner"], "steps": steps,
                "end": spec.render(state)}


# ------------------------------------------------------------------ the app
def _games_catalogue() -> List[Dict[str, Any]]:
    out = []
    for name, spec in sorted(GAMES.items()):
        options = []
        for o in getattr(spec, "options_spec", ()):
            if o.name == "position":
                continue
            options.append({"name": o.name, "type": o.type.__name__, "default": _plain(o.default),
                            "choices": _plain(o.choices) if o.choices is not None else None,
                            "low": o.low, "high": o.high, "help": o.help})
        try:
            players = spec.players({})
        except PipslabError:
            players = None
        out.append({"name": name, "description": getattr(spec, "description", ""), "options": options,
                    "players": players, "family": getattr(spec, "family", ""), "agents": agent_names(name)})
    return out


def _read_json(request) -> Dict[str, Any]:
    length = request.content_length
    if length is not None and length > MAX_BODY:
        raise ApiError(413, f"the request body is {length:,} bytes; at most {MAX_BODY:,}")
    raw = request.body.read(MAX_BODY + 1)
    if len(raw) > MAX_BODY:
        raise ApiError(413, f"the request body is over {MAX_BODY:,} bytes")
    try:
        data = json.loads(raw.decode("utf-8")) if raw.strip() else None
    except (UnicodeDecodeError, ValueError) as exc:
        raise ApiError(400, f"the request body is not valid JSON ({str(exc)[:80]})") from None
    if not isinstance(data, dict):
        raise ApiError(400, f"the request body must be a JSON object, got {type(data).__name__ if data is not None else 'nothing'}")
    return data


class _Games:
    """The games in memory by id (least recently used first)."""

    def __init__(self, limit: int = MAX_GAMES, reviewer: Optional[Reviewer] = None):
        self.limit = limit
        self.reviewer = reviewer
        self._lock = threading.Lock()
        self._games: "OrderedDict[str, GameSession]" = OrderedDict()
        self._next = 1

    def new(self, body: Dict[str, Any]) -> GameSession:
        unknown = sorted(set(body) - {"game", "options", "agents", "seed"})
        if unknown:
            raise ApiError(400, f"unknown field(s) {', '.join(map(repr, unknown))}; expected game, options, agents, seed")
        game = body.get("game")
        if not isinstance(game, str) or not game:
            raise ApiError(400, f"\"game\" must name a game: {', '.join(sorted(GAMES))}")
        try:
            get_game(game)
        except PipslabError as exc:
            raise ApiError(400, str(exc)) from None
        options = body.get("options") or {}
        if not isinstance(options, dict):
            raise ApiError(400, "\"options\" must be a JSON object of option names and values")
        agents = body.get("agents")
        if not isinstance(agents, list) or not all(isinstance(a, str) for a in agents):
            raise ApiError(400, "\"agents\" must be a list of agent specs, one per seat, one of them \"human\"")
        seed = body.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2 ** 63:
            raise ApiError(400, f"\"seed\" must be a whole number 0 or more, got {excerpt(json.dumps(seed))}")
        with self._lock:
            gid = str(self._next)
            self._next += 1
        session = GameSession(gid, game, options, agents, seed, self.reviewer)
        with self._lock:
            self._games[gid] = session
            while len(self._games) > self.limit:
                _, old = self._games.popitem(last=False)
                old.end()
        return session.start()

    def get(self, gid: str) -> GameSession:
        with self._lock:
            session = self._games.get(gid)
            if session is None:
                raise ApiError(404, f"no game {excerpt(gid)} (games live in memory; start a new one)")
            self._games.move_to_end(gid)
            return session

    def end_all(self) -> None:
        with self._lock:
            for session in self._games.values():
                session.end()
            self._games.clear()


def make_app(wait: float = WAIT_S, from_dir=None, review: Optional[Sequence[str]] = ()):
    """The WSGI app (Bottle): the pages, their assets and the JSON API of the module
    docstring.  ``app.games`` holds the games; ``from_dir``: a tournament folder whose
    games the analysis board steps through (``--from``); ``review``: the review's reference
    specs over the defaults (``--review-reference``), None for no review (``--no-review``)."""
    import bottle

    app = bottle.Bottle()
    games = _Games(reviewer=None if review is None else Reviewer(review))
    app.games = games
    records = None if from_dir is None else _Records(from_dir)

    def api(handler):
        """JSON in and out; ApiError and PipslabError (bad options, agent specs,
        positions) become ``{"error": …}`` with a 4xx status."""
        def wrapped(*args, **kwargs):
            bottle.response.content_type = "application/json"
            bottle.response.set_header("Cache-Control", "no-store")
            try:
                status, body = handler(*args, **kwargs)
            except ApiError as exc:
                status, body = exc.status, {"error": exc.message}
            except PipslabError as exc:
                status, body = 400, {"error": str(exc)}
            bottle.response.status = status
            return json.dumps(body)
        return wrapped

    @app.get("/")
    def index():
        return bottle.static_file("index.html", root=str(WEB))

    @app.get("/analyze")
    def analyze_page():
        return bottle.static_file("analyze.html", root=str(WEB))

    @app.get("/static/<name>")
    def static(name):
        return bottle.static_file(name, root=str(WEB))

    @app.get("/api/games")
    @api
    def catalogue():
        return 200, {"games": _games_catalogue()}

    @app.post("/api/games")
    @api
    def new_game():
        session = games.new(_read_json(bottle.request))
        return 201, session.snapshot(wait)

    @app.get("/api/games/<gid>")
    @api
    def show(gid):
        return 200, games.get(gid).snapshot(wait)

    @app.post("/api/games/<gid>/move")
    @api
    def move(gid):
        session = games.get(gid)
        body = _read_json(bottle.request)
        if set(body) != {"action"}:
            raise ApiError(400, "the body must be {\"action\": ID}, an action id of the legal moves")
        return 200, session.move(body["action"], wait)

    @app.post("/api/analyze")
    @api
    def analysis():
        return 200, analyze(_read_json(bottle.request))

    @app.get("/api/evaluators")
    @api
    def evaluator_menu():
        return 200, _evaluator_menu()

    def tournament():
        if records is None:
            raise ApiError(404, "no tournament folder: start pipslab serve --from DIR to step through its games")
        return records

    @app.get("/api/records")
    @api
    def record_list():
        return 200, tournament().listing()

    @app.get("/api/records/<gid>")
    @api
    def record(gid):
        return 200, tournament().game(gid)

    def error_page(res):
        bottle.response.content_type = "application/json"
        if res.status_code == 404:
            message = f"no such page or API route: {bottle.request.method} {excerpt(bottle.request.path)}"
        elif res.status_code == 405:
            message = f"{bottle.request.method} is not allowed on {excerpt(bottle.request.path)}"
        else:
            message = f"{res.status_line}" + (": the server failed; see its log" if res.status_code >= 500 else "")
        return json.dumps({"error": message})

    for code in (400, 404, 405, 413, 500):
        app.error(code)(error_page)
    return app


# ------------------------------------------------------------------ the server
class _ThreadingServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args):   # noqa: A002 - the stdlib's name
        pass


def start_server(host: str = "127.0.0.1", port: int = 0, wait: float = WAIT_S, from_dir=None,
                 review: Optional[Sequence[str]] = ()):
    """Bind and serve in a daemon thread; returns ``(server, url)``.  ``server.shutdown()``
    stops it.  A port in use, a host that cannot be bound, a ``from_dir`` without a
    tournament's games.csv or a bad ``review`` reference is a :class:`PipslabError`."""
    server = _bind(host, port, wait, from_dir, review)
    threading.Thread(target=server.serve_forever, name="pipslab-serve", daemon=True).start()
    return server, _url(host, server.server_port)


def _bind(host: str, port: int, wait: float, from_dir=None, review: Optional[Sequence[str]] = ()):
    server_class = _ThreadingServer
    if ":" in host:
        server_class = type("_ThreadingServer6", (_ThreadingServer,), {"address_family": socket.AF_INET6})
    app = make_app(wait, from_dir, review)
    try:
        server = make_server(host, port, app, server_class=server_class, handler_class=_QuietHandler)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise PipslabError(f"port {port} on {host} is in use (--port 0 picks a free one)") from None
        if exc.errno == errno.EACCES:
            raise PipslabError(f"no permission to listen on port {port} of {host} (ports under 1024 need root)") from None
        raise PipslabError(f"cannot listen on {excerpt(host)} port {port}: {exc.strerror or exc}") from None
    server.app = app
    return server


def _url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (0-65535)") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port number (0-65535)")
    return port


def add_arguments(parser) -> None:
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=_port, default=8000, help="port (default 8000; 0 picks a free one)")
    parser.add_argument("--from", dest="from_dir", default=None, metavar="DIR",
                        help="a tournament's output folder (its games.csv): the analysis board (/analyze) steps "
                             "through its games, replayed and checked against their records, every move annotated")
    review = parser.add_mutually_exclusive_group()
    review.add_argument("--review-reference", action="append", default=[], metavar="SPEC",
                        help="the reference of the review after each game (the person's decisions valued as "
                             f"pipslab analyze does), once per game family: dominoes pimc:samples=N (default "
                             f"{REVIEW_SAMPLES}, quick for the page), backgammon gnubg:plies=0|1|2 (default 0, with "
                             "gnubg-nn) or an evaluator (default without gnubg-nn: td)")
    review.add_argument("--no-review", action="store_true", help="no review after the games")


def run(ns) -> int:
    server = _bind(ns.host, ns.port, WAIT_S, ns.from_dir, None if ns.no_review else ns.review_reference)
    url = _url(ns.host, server.server_port)
    print(f"pipslab serve: play at {url}, analysis board at {url}analyze (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    finally:
        server.app.games.end_all()
        server.server_close()
    return 0
