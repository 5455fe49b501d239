"""``pipslab serve``: a play page where a person plays any game against any agents, and an
analysis board.

``pipslab serve [--host 127.0.0.1] [--port 8000] [--from DIR]`` (``--port 0``: a free port,
printed) serves a page (``experiments/web/``) that draws the table or board as SVG from the
person's own view, offers the legal moves as buttons (nothing else can be clicked into a
move), shows the game log and, at the end, the result with every seat's pips left.

**Why Bottle.**  The server is Bottle on the standard library's ``wsgiref`` server (one
thread per request): Bottle is one pure-Python file with no dependencies of its own, and
the games are synchronous code, so an async framework (FastAPI, Starlette) would add an
ASGI server and an event loop that every call would have to leave again; Flask would
bring six packages (Werkzeug, Jinja2, click …) for the same few routes.  All the game logic stays in pipslab: the
server only holds games in memory by id and turns views into JSON.

**One game loop.**  Each game runs :func:`pipslab.experiments.games.play_game` — the loop
of the tournament and ``pipslab play`` — in a thread of its own, with the agents of the
other seats built by the registry (``make_agent``: heuristics, search, trained nets) and,
in the person's seat, a :class:`WebHuman` agent whose ``act`` waits for the move posted by
the page.  So the deal, the dice and every agent's choice come from the seed exactly as in
``pipslab play GAME --seed S`` (game 0: ``deal_seed = [S, 0, 0]``, ``agent_seed = [S, 1, 0]``),
and the game the page shows is the engine's game for that seed and those moves.

**What the person is sent.**  Every response is built from ``state.observe(seat)`` of the
person's seat — never from the full state — plus the public log (each move's name, and
backgammon's rolls) and, once the game is over, the outcome with the pips left and the
hands turned up (as the text render does at the end; the boneyard stays hidden).

**The analysis board** (``/analyze``; :data:`SOLVE_MAX_NODES`, :data:`SOLVE_SECONDS` and
:data:`MAX_PLAYOUTS` bound the work of one request): paste a domino position and see every
legal move's exact value and the principal line — ``pipslab solve --json``'s dict
(:func:`pipslab.experiments.solve.solve_position`), every hand open — or a backgammon
Position ID and dice and see every legal play (``pipslab moves``) ranked by an evaluator's
cubeless equity for the mover (:class:`pipslab.experiments.moves.PlayValue`).  With
``--from DIR`` (a tournament's output folder) it steps through a recorded game, replayed
and checked against its record as ``pipslab play --replay ID --from DIR`` does, with those
annotations at every position and the move played marked.

The JSON API (every error is ``{"error": "one clear line"}`` with a 4xx status):

* ``GET /api/games`` — the games, their options and the agents that play each;
* ``POST /api/games`` ``{"game", "options": {}, "agents": [one spec per seat, exactly one
  "human"], "seed": 0}`` -> 201 and the game as the person sees it (below);
* ``GET /api/games/ID`` -> the game as the person sees it: ``status`` (``your-turn``,
  ``waiting`` while agents think, ``over``, ``error``), ``view``, ``legal`` (action ids with
  their names; only on the person's turn), ``log``, ``result`` (when over);
* ``POST /api/games/ID/move`` ``{"action": id}`` -> the same, once the agents have played up
  to the person's next turn or the end (an action that is not legal now: 400, naming the
  legal ones; not the person's turn, or the game over: 409; no such game: 404);
* ``POST /api/analyze`` ``{"position": "<domino position>"}`` -> what ``pipslab solve
  "<position>" --json`` prints (``moves``: each ``action``, ``move``, ``value``, ``result``,
  ``margin``; ``best_moves``, ``line`` …); a position over the limits: 422;
  ``{"position_id": ID, "dice": [a, b], "eval": "td"}`` -> ``{"position_id", "dice", "eval",
  "plays": [{"move", "position_id", "next_position_id", "equity"}, … best first], "board"}``
  (``eval``: any backgammon evaluator, ``td`` by default, or ``expectimax:plies=N,eval=E``);
* ``GET /api/evaluators`` -> ``{"backgammon": [names], "default": "td"}``;
* ``GET /api/records`` -> ``{"from": DIR, "games": [{"id", "game", "variant", "agents",
  "moves", "result", "winner"}]}`` (404 without ``--from``);
* ``GET /api/records/ID`` -> the game replayed: ``steps``, one per move (backgammon: per
  turn), each with the ``seat``, ``agent``, ``move``, a text ``board`` and what to analyze:
  ``position`` and ``action`` (dominoes), or ``position_id``, ``roll`` and ``played_id``, the
  Position ID the play led to from the mover's side (backgammon).

Games live in memory: at most :data:`MAX_GAMES`; a new game beyond that ends the game
least recently used.
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

from .games import GAMES, game_spec, play_game

__all__ = ["add_arguments", "run", "make_app", "start_server", "analyze", "GameSession", "WebHuman", "MAX_GAMES",
           "SOLVE_MAX_NODES", "SOLVE_SECONDS", "MAX_PLAYOUTS"]

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

    def __init__(self, gid: str, game: str, options: Dict[str, Any], agents: Sequence[str], seed: int):
        self.id = gid
        self.game = game
        self.spec = game_spec(game)
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
            with self._cond:
                self._view, self._result = view, result
                self._cond.notify_all()
        except _Ended:
            return
        except Exception as exc:   # an agent or engine failure: the page says so, the server goes on
            with self._cond:
                self._error = f"the game stopped: {type(exc).__name__}: {str(exc)[:300]}"
                self._cond.notify_all()

    def _on_move(self, state, player: int, action: int) -> None:
        entry = _log_entry(self.spec, state, player, action, self.names[player])
        with self._cond:
            self._log.append(entry)

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
                    "log": list(self._log), "result": self._result, "error": self._error}

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
    for name in sorted(GAMES):
        spec = game_spec(name)
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

    def __init__(self, limit: int = MAX_GAMES):
        self.limit = limit
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
        if game not in GAMES:
            raise ApiError(400, f"unknown game {excerpt(game)}; known: {', '.join(sorted(GAMES))}")
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
        session = GameSession(gid, game, options, agents, seed)
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


def make_app(wait: float = WAIT_S, from_dir=None):
    """The WSGI app (Bottle): the pages, their assets and the JSON API of the module
    docstring.  ``app.games`` holds the games; ``from_dir``: a tournament folder whose
    games the analysis board steps through (``--from``)."""
    import bottle

    app = bottle.Bottle()
    games = _Games()
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


def start_server(host: str = "127.0.0.1", port: int = 0, wait: float = WAIT_S, from_dir=None):
    """Bind and serve in a daemon thread; returns ``(server, url)``.  ``server.shutdown()``
    stops it.  A port in use, a host that cannot be bound or a ``from_dir`` without a
    tournament's games.csv is a :class:`PipslabError`."""
    server = _bind(host, port, wait, from_dir)
    threading.Thread(target=server.serve_forever, name="pipslab-serve", daemon=True).start()
    return server, _url(host, server.server_port)


def _bind(host: str, port: int, wait: float, from_dir=None):
    server_class = _ThreadingServer
    if ":" in host:
        server_class = type("_ThreadingServer6", (_ThreadingServer,), {"address_family": socket.AF_INET6})
    app = make_app(wait, from_dir)
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


def run(ns) -> int:
    server = _bind(ns.host, ns.port, WAIT_S, ns.from_dir)
    url = _url(ns.host, server.server_port)
    print(f"pipslab serve: play at {url}, analysis board at {url}analyze (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    finally:
        server.app.games.end_all()
        server.server_close()
    return 0
