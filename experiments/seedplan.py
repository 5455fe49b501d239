"""The seed plan of a tournament, and how one game of it is played and recorded.

A tournament is a numbered list of games.  Game ``i`` is fully determined by the
:class:`Plan` (agents, seats or teams, format, duplicate deals) and the tournament seed:

* its **table** — which agents play, one per *unit* (a seat, or a team of partners when
  the game has pairs): round robin takes every combination of agents, a gauntlet the hero
  with every combination of the field (with fewer agents than units the agents are dealt
  round the table cyclically);
* its **rotation** — the units are rotated round the table so every agent plays every
  seat equally (for two units: swapped);
* its **deal** — with duplicate deals, the ``G`` games of a group (``G`` = number of units)
  share one deal: ``deal = i // G``, ``rotation = i % G``; without, every game has its own
  deal and the rotation advances once per cycle of tables;
* its seeds — ``deal_seed = [seed, 0, deal]`` (shuffle, dice, every hand of a match) and
  ``agent_seed = [seed, 1, i]`` (the agents' choices).

Game ``i`` does not depend on the total number of games, so a longer run extends a shorter
one, a resumed run continues the same plan, and any game can be replayed by its id.  Nor
does it depend on the games played before it in the same process: every game gets fresh
agents, built from their spec strings (see :class:`~pipslab.agents.base.Agent`), so an
agent's state — a counter, a cache, a search tree — never carries over from one game to
the next, and serial, process and Ray runs give the same records.
"""
from __future__ import annotations

import itertools
import json
import sys
import time
from dataclasses import dataclass
from typing import Dict, List, Sequence, Tuple

import numpy as np

from pipslab.agents.registry import make_agent
from pipslab.envs.errors import Forfeit, PipslabError
from pipslab.envs.game import get_game

from .games import play_game

FORMATS = ("round-robin", "gauntlet")


def game_units(spec, options: dict) -> List[List[int]]:
    """Seats grouped into units: one per team (partners together, teams in order of their
    first seat) when the spec has teams, else one unit per seat.  ``spec.teams(options)``
    may map seat -> team (``(0, 1, 0, 1)``) or list the teams' seats (``[[0, 2], [1, 3]]``)."""
    players = spec.players(options)
    teams_fn = getattr(spec, "teams", None)
    teams = teams_fn(options) if callable(teams_fn) else None
    if not teams:
        return [[s] for s in range(players)]
    teams = list(teams)
    if all(isinstance(t, (int,)) or hasattr(t, "__index__") for t in teams):   # seat -> team
        if len(teams) != players:
            raise PipslabError(f"{spec.name}: teams {teams} do not give one team per seat ({players} seats)")
        by_team: Dict[int, List[int]] = {}
        for seat, team in enumerate(teams):
            by_team.setdefault(int(team), []).append(seat)
        units = sorted(by_team.values(), key=lambda u: u[0])
    else:
        units = sorted((sorted(int(s) for s in team) for team in teams), key=lambda u: u[0])
    if sorted(s for u in units for s in u) != list(range(players)):
        raise PipslabError(f"{spec.name}: teams {teams} do not cover the {players} seats exactly once")
    return units


class Plan:
    """Which agents sit where, and which deal, in game ``i`` (see the module docstring)."""

    def __init__(self, n_agents: int, units: Sequence[Sequence[int]], fmt: str = "round-robin",
                 duplicate: bool = True, hero: int = 0):
        if fmt not in FORMATS:
            raise PipslabError(f"unknown tournament format {fmt!r}; expected {' or '.join(FORMATS)}")
        if n_agents < 2:
            raise PipslabError("a tournament needs at least two agents (--agents A,B)")
        self.n_agents, self.units, self.fmt, self.duplicate, self.hero = n_agents, [list(u) for u in units], fmt, duplicate, hero
        self.group = len(self.units)                  # rotations, and games per duplicate deal
        self.players = sum(len(u) for u in self.units)
        self.tables = self._tables()
        self._seat_of_unit = [(j, s) for j, unit in enumerate(self.units) for s in unit]

    def _tables(self) -> List[Tuple[int, ...]]:
        u, k = self.group, self.n_agents
        if self.fmt == "round-robin" or k == 2:
            if k >= u:
                return list(itertools.combinations(range(k), u))
            return [tuple(j % k for j in range(u))]
        field_ = [a for a in range(k) if a != self.hero]
        if len(field_) >= u - 1:
            return [(self.hero,) + c for c in itertools.combinations(field_, u - 1)]
        return [(self.hero,) + tuple(field_[j % len(field_)] for j in range(u - 1))]

    def deal_of(self, i: int) -> int:
        return i // self.group if self.duplicate else i

    def game(self, i: int) -> Tuple[int, int, List[int]]:
        """``(deal, rotation, seat_agents)`` of game ``i``; seat_agents[s] is an agent index."""
        g, t = self.group, len(self.tables)
        if self.duplicate:
            deal, rot = i // g, i % g
            table = self.tables[deal % t]
        else:
            deal, rot = i, (i // t) % g
            table = self.tables[i % t]
        seats = [0] * self.players
        for j, s in self._seat_of_unit:
            seats[s] = table[(j + rot) % g]
        return deal, rot, seats


def seeds(seed: int, deal: int, game_id: int) -> Tuple[List[int], List[int]]:
    return [seed, 0, deal], [seed, 1, game_id]


def seed_text(seq: Sequence[int]) -> str:
    return "-".join(map(str, seq))


def parse_seed_text(text: str) -> List[int]:
    return [int(x) for x in str(text).split("-")]


@dataclass(frozen=True)
class Task:
    """Everything a worker needs to play games of a tournament by id (picklable)."""

    game: str
    options_json: str
    agents: Tuple[str, ...]
    seed: int
    fmt: str = "round-robin"
    duplicate: bool = True
    hero: int = 0
    imports: Tuple[str, ...] = ()

    @property
    def options(self) -> dict:
        return json.loads(self.options_json)


def new_seat_agents(seat_names: Sequence[str], game: str) -> list:
    """One game's agents, built afresh from their specs, one object per seat.  Every game
    is played with agents from here (the tournament, ``pipslab play`` and its ``--replay``,
    ``pipslab bench harness``), so no agent state outlives its game."""
    return [make_agent(name, game) for name in seat_names]


class GameRunner:
    """Plays games of a :class:`Task` by id and turns each into a record (one dict).  It
    keeps no agents between games: each game is played by fresh ones
    (:func:`new_seat_agents`), so a game's record is the same whatever the runner played
    before it."""

    def __init__(self, task: Task):
        from .imports import import_user_modules
        import_user_modules(task.imports)
        self.task = task
        self.spec = get_game(task.game)
        self.options = task.options
        self.label = self.spec.variant_label(self.options)
        self.units = game_units(self.spec, self.options)
        self.plan = Plan(len(task.agents), self.units, task.fmt, task.duplicate, task.hero)
        self._seat_names: Dict[tuple, list] = {}
        self.play_seconds = 0.0   # wall time inside play_game (all of it, seeding included)
        self.solo = all(len(u) == 1 for u in self.units) and [u[0] for u in self.units] == list(range(len(self.units)))
        self._keys: Dict[int, dict] = {}
        self._columns = None       # a finished game's columns, blank (a forfeit's record starts from it)

    def keys(self, n: int) -> dict:
        k = self._keys.get(n)
        if k is None:
            k = self._keys[n] = {"seat": [f"seat{s}" for s in range(n)], "return": [f"return_{s}" for s in range(n)],
                                 "pips": [f"pips_left_{s}" for s in range(n)],
                                 "points": [f"points_{s}" for s in range(n)],
                                 "unit_text": [" ".join(map(str, u)) for u in self.units]}
        return k

    def play(self, game_id: int, on_move=None):
        """Play game ``game_id`` with agents built for it alone; returns
        ``(record, final_state, seat_agents)``."""
        deal, rot, seat_idx = self.plan.game(game_id)
        key = tuple(seat_idx)
        seat_names = self._seat_names.get(key)
        if seat_names is None:
            seat_names = self._seat_names[key] = [self.task.agents[k] for k in seat_idx]
        seat_agents = new_seat_agents(seat_names, self.task.game)
        deal_seed, agent_seed = seeds(self.task.seed, deal, game_id)
        t0 = time.perf_counter()
        try:
            state, moves, seconds = play_game(self.spec, self.options, seat_agents, deal_seed, agent_seed, on_move)
        except Forfeit as lost:
            self.play_seconds += time.perf_counter() - t0
            rec = self.forfeit_record(game_id, deal, rot, seat_names, deal_seed, agent_seed, lost)
            return rec, lost.state, seat_agents
        self.play_seconds += time.perf_counter() - t0
        rec = make_record(self, game_id, deal, rot, seat_names, deal_seed, agent_seed, state, moves, seconds)
        if self._columns is None:
            self._columns = _blank(rec)
        return rec, state, seat_agents

    def forfeit_record(self, game_id, deal, rot, seat_names, deal_seed, agent_seed, lost: Forfeit) -> dict:
        """The record of a game forfeited by ``lost.seat`` (an illegal action): ``result``
        is ``"forfeit"``, the seat's side gets the game's worst return and the other sides
        share its opposite; the columns only a finished game has are left empty.  The
        record has every column of a finished game's (the first time, learnt from the same
        deal played by ``random`` seats), so the file's header is the same either way."""
        from pipslab.envs.pettingzoo_env import worst_return
        if self._columns is None:
            template = play_game(self.spec, self.options, new_seat_agents(["random"] * len(seat_names), self.task.game),
                                 deal_seed, agent_seed)
            self._columns = _blank(make_record(self, game_id, deal, rot, seat_names, deal_seed, agent_seed, *template))
        worst = worst_return(self.spec, self.options)
        loser = next(j for j, u in enumerate(self.units) if lost.seat in u)
        share = -worst / (len(self.units) - 1)
        returns = [0.0] * len(seat_names)
        for j, unit in enumerate(self.units):
            for s in unit:
                returns[s] = worst if j == loser else share
        _, top = outcome([returns[u[0]] for u in self.units])
        keys = self.keys(len(seat_names))
        rec = dict(self._columns)
        rec.update({
            "game_id": game_id, "game": self.task.game, "variant": self.label, "options": self.task.options_json,
            "deal_id": deal, "rotation": rot, "deal_seed": f"{deal_seed[0]}-{deal_seed[1]}-{deal_seed[2]}",
            "agent_seed": f"{agent_seed[0]}-{agent_seed[1]}-{agent_seed[2]}", "players": len(seat_names),
            "moves": lost.moves, "result": "forfeit", "duration_s": round(lost.seconds, 6)})
        rec.update(zip(keys["seat"], seat_names))
        winners = [s for j in top for s in self.units[j]]
        rec["winner_seat"] = winners[0] if len(top) == 1 else -1
        rec["winner"] = seat_names[winners[0]] if len(top) == 1 else ""
        rec["winners"] = " ".join(map(str, sorted(winners)))
        rec.update(zip(keys["return"], returns))
        if keys["points"][0] in rec:
            rec.update(zip(keys["points"], returns))
        sys.stderr.write(f"warning: game {game_id}: {lost}\n")
        return rec

    def record(self, game_id: int) -> dict:
        return self.play(game_id)[0]

    def records(self, ids: Sequence[int]) -> List[dict]:
        return [self.play(i)[0] for i in ids]


def _blank(record: dict) -> dict:
    """``record``'s columns with "no value" of each one's type: a number nan, a flag False,
    text empty (what a forfeited game has where a finished one has its result)."""
    return {k: False if isinstance(v, (bool, np.bool_)) else ("" if isinstance(v, str) else float("nan"))
            for k, v in record.items()}


def outcome(unit_returns: Sequence[float]) -> Tuple[str, List[int]]:
    """``("win", [j])`` for a single best unit, ``("draw", [])`` when all are equal,
    ``("shared", [j, ...])`` when several (not all) share the best return."""
    best, worst = max(unit_returns), min(unit_returns)
    if best == worst:
        return "draw", []
    top = [j for j, r in enumerate(unit_returns) if r == best]
    return ("win" if len(top) == 1 else "shared"), top


def make_record(runner: GameRunner, game_id, deal, rot, seat_names, deal_seed, agent_seed, state,
                moves, seconds) -> dict:
    task, units, n = runner.task, runner.units, len(seat_names)
    keys = runner.keys(n)
    out = runner.spec.outcome(state)   # the game's typed Outcome (pipslab.envs.game)
    returns = out.returns
    if runner.solo and n == 2:   # the common case, inline
        r0, r1 = returns
        kind, top = ("win", [0]) if r0 > r1 else (("win", [1]) if r1 > r0 else ("draw", []))
    else:
        kind, top = outcome(returns if runner.solo else [sum(returns[s] for s in u) / len(u) for u in units])
    rec = {
        "game_id": game_id, "game": task.game, "variant": runner.label, "options": task.options_json,
        "deal_id": deal, "rotation": rot, "deal_seed": f"{deal_seed[0]}-{deal_seed[1]}-{deal_seed[2]}",
        "agent_seed": f"{agent_seed[0]}-{agent_seed[1]}-{agent_seed[2]}", "players": n,
    }
    rec.update(zip(keys["seat"], seat_names))
    rec["moves"] = moves
    rec["result"] = kind
    if kind == "win":
        unit = units[top[0]]
        rec["winner_seat"] = unit[0]
        rec["winner"] = seat_names[unit[0]]
        rec["winners"] = keys["unit_text"][top[0]]
    else:
        rec["winner_seat"] = -1
        rec["winner"] = ""
        rec["winners"] = " ".join(map(str, sorted(s for j in top for s in units[j])))
    rec.update(zip(keys["return"], map(float, returns)))
    if out.pips_left is not None:
        rec.update(zip(keys["pips"], out.pips_left))
    if out.points is not None:
        rec.update(zip(keys["points"], out.points))
    rec.update(out.extra)   # the game's own columns; a name already recorded keeps its place
    rec["duration_s"] = round(seconds, 6)
    return rec


def options_json(options: dict) -> str:
    return json.dumps(options, sort_keys=True, separators=(",", ":"))
