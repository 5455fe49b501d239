"""One game of a fish study: replay it, keep its last placements, solve them.

A fish (``рыба``, a blocked game) is decided in its last few placements.  For one game of
a tournament this module

* replays the game from its record (:class:`~pipslab.experiments.seedplan.GameRunner`, the
  same agents and seeds the tournament used) and checks the replay against the record, so
  every study row is a position the recorded game really reached;
* keeps the positions just before each of the last ``K`` placements (``k = 1`` is the
  state before the last placement, ``k = K`` the earliest kept one); passes and draws are
  not decisions and are not kept;
* solves each kept position exactly with every hand open (:class:`~pipslab.agents.solver.Solver`):
  the value of every legal move for the side to move, the best moves, the move the agent
  played and what it cost (regret in outcome and in pips);
* marks **closing moves**: a placement after which the game ends blocked with no further
  placement (the forced passes, and in draw mode the forced draws from the known boneyard,
  played out);
* values the position from the mover's own view: the average, over ``view_samples``
  worlds drawn by :func:`~pipslab.envs.dominoes.engine.sample_world`, of the solver's
  result of every move — what a seat could expect knowing only what it sees — so a
  study separates a move that was bad from one that was unlucky;
* summarises the game at its end: tile counts and pip counts of every seat and side, the
  winner, the margin.

Values come from the solver in its units, ``outcome * 1000 + margin`` for the side to
move (with pairs: the mover's pair), split here into ``outcome`` (+1 / 0 / −1) and
``margin`` (pips for Happy and Troshin for two: the opponent's count minus one's own at a
block, the loser's count when a hand goes out; Troshin pairs: the pair's points of the
hand minus the opponents').

Every random choice (which games without a block are kept for comparison, the view
samples) comes from the study seed and the game id alone, so a row never depends on how
many games were studied or in which order.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import numpy as np

from pipslab.agents.solver import BIG, Solver
from pipslab.envs.dominoes.common import action_name
from pipslab.envs.dominoes.engine import world_sampler
from pipslab.envs.dominoes.notation import format_position
from pipslab.envs.dominoes.tiles import OTHER_HALF, count
from pipslab.envs.errors import PipslabError
from pipslab.envs.game import get_game

from .seedplan import GameRunner, Task

DEFAULT_BEFORE = 8
DEFAULT_COMPARE = 0.1
DEFAULT_VIEW_SAMPLES = 8


def variant_of(game: str, options: dict, label: str):
    """The domino variant a study of ``game`` with ``options`` plays, checked to have a solver."""
    spec = get_game(game)
    if options.get("match"):
        raise PipslabError("a fish study plays single hands: drop --match")
    if getattr(spec, "family", "") != "dominoes":
        raise PipslabError(f"no exact solver for {label}: fish studies are about domino games")
    refusal = spec.solver_support(options)
    if refusal:
        raise PipslabError(refusal)
    return spec.new_state(np.random.default_rng(0), options).variant


def split_value(value: int) -> Tuple[int, int]:
    """``(outcome, margin)`` of a solver value ``outcome * 1000 + margin``."""
    outcome = (value > BIG // 2) - (value < -BIG // 2)
    return outcome, value - outcome * BIG


def play_forced(state) -> None:
    """Play the forced draws and passes of ``state`` until a placement is legal or the game ends."""
    placement_ids = state.variant.draw_action
    while not state.is_terminal:
        acts = state.legal_actions()
        if acts[0] < placement_ids:
            return
        state.apply(acts[0])


def closes(state, action: int) -> bool:
    """Whether placing ``action`` ends the game blocked before anyone places again."""
    after = state.clone()
    after.apply(action)
    play_forced(after)
    return after.is_terminal and bool(after.blocked)


def distinct_moves(state, actions) -> Dict[Tuple[int, int, int], List[int]]:
    """Legal placements grouped by what they lead to: the same tile at either end is one
    move when the open ends come out the same (RULES §1 keeps both ids; a study counts one)."""
    groups: Dict[Tuple[int, int, int], List[int]] = {}
    left, right = state.left, state.right
    for a in actions:
        tile, end = a >> 1, a & 1
        if left < 0:
            key = (tile, -1, -1)
        else:
            nl, nr = (left, OTHER_HALF[tile][right]) if end else (OTHER_HALF[tile][left], right)
            key = (tile, min(nl, nr), max(nl, nr))
        groups.setdefault(key, []).append(a)
    return groups


@dataclass(frozen=True)
class StudySettings:
    before: int = DEFAULT_BEFORE            # K: placements kept before the end
    compare: float = DEFAULT_COMPARE        # share of games without a block studied beside them
    view_samples: int = DEFAULT_VIEW_SAMPLES
    seed: int = 0                           # the study's seed (the tournament's)


def keep_game(settings: StudySettings, game_id: int, blocked: bool) -> bool:
    """Every blocked game is studied; a game that ended with a hand out is, with
    probability ``compare``, drawn from ``[seed, 4, game_id]`` alone."""
    if blocked:
        return True
    if settings.compare <= 0:
        return False
    return bool(np.random.default_rng([settings.seed, 4, game_id]).random() < settings.compare)


class GameStudy:
    """Replays and studies games of one tournament (a :class:`Task`); one per worker.  Its
    solver's transposition table is reused from game to game (keys hold whole hands, so
    that is exact)."""

    def __init__(self, task: Task, settings: StudySettings):
        self.runner = GameRunner(task)
        self.settings = settings
        self.solver = Solver("margin", max_table=2_000_000)
        self.view_solver = Solver("margin", max_table=2_000_000)

    def replay(self, game_id: int, recorded: Optional[dict] = None):
        """``(record, placements, final_state)``: placements are ``(state_before, seat, action)``."""
        placements = []

        def on_move(state, seat, action):
            if action < state.variant.draw_action:
                placements.append((state.clone(), seat, action))

        record, state, _agents = self.runner.play(game_id, on_move)
        if recorded is not None:
            for key in ("moves", "result", "winner_seat"):
                if str(record[key]) != str(recorded[key]):
                    raise PipslabError(f"game {game_id} does not replay as recorded ({key}: {record[key]} here, "
                                       f"{recorded[key]} in the record); was the tournament played by another "
                                       "version of pipslab or with other --import modules?")
        return record, placements, state

    # ------------------------------------------------------------------ one game
    def study(self, game_id: int, recorded: Optional[dict] = None) -> Tuple[dict, List[dict]]:
        """The game's row and its kept positions' rows."""
        record, placements, final = self.replay(game_id, recorded)
        v = final.variant
        teams = v.teams
        names = [record[f"seat{s}"] for s in range(v.players)]
        game_row = self._game_row(record, final, names)
        rows = []
        kept = placements[-self.settings.before:]
        for k, (state, seat, action) in zip(range(len(kept), 0, -1), kept):
            rows.append(self._position_row(game_id, k, state, seat, action, names, teams, game_row))
        if rows:
            game_row.update(self._decided(rows, game_row))
        return game_row, rows

    def _game_row(self, record: dict, final, names) -> dict:
        v = final.variant
        n_teams = v.n_teams
        tiles = [count(h) for h in final.hands]
        pips = final.pips_left()
        side_tiles = [sum(tiles[s] for s in range(v.players) if v.teams[s] == t) for t in range(n_teams)]
        side_pips = final.team_counts()
        winners = final.winners()
        win_team = v.teams[winners[0]] if winners else -1
        row = {"game_id": record["game_id"], "deal_id": record["deal_id"], "variant": record["variant"],
               "pairing": pairing(names, v), "end": "fish" if final.blocked else "out", "moves": record["moves"],
               "winner_side": win_team, "draw": win_team < 0}
        for s in range(v.players):
            row[f"agent_{s}"] = names[s]
            row[f"tiles_{s}"] = tiles[s]
            row[f"pips_{s}"] = pips[s]
        for t in range(n_teams):
            row[f"side_tiles_{t}"] = side_tiles[t]
            row[f"side_pips_{t}"] = side_pips[t]
        row["margin"] = _final_margin(final, win_team)
        return row

    def _position_row(self, game_id, k, state, seat, action, names, teams, game_row) -> dict:
        v = state.variant
        values = self.solver.move_values(state)
        legal = list(values)
        best_value = max(values.values())
        best = [a for a in legal if values[a] == best_value]
        outcome, margin = split_value(best_value)
        played_outcome, played_margin = split_value(values[action])
        closing = [a for a in legal if closes(state, a)]
        groups = distinct_moves(state, legal)
        side = teams[seat]
        row = {
            "game_id": game_id, "k": k, "end": game_row["end"], "pairing": game_row["pairing"],
            "seat": seat, "side": side, "agent": names[seat],
            "tiles_in_hands": sum(count(h) for h in state.hands), "boneyard": state.boneyard_size,
            "choices": len(groups), "position": format_position(state),
            "value": best_value, "outcome": outcome, "margin": margin,
            "best": " ".join(action_name(v, a) for a in best),
            "played": action_name(v, action), "played_value": values[action],
            "played_outcome": played_outcome, "played_margin": played_margin,
            "regret_outcome": outcome - played_outcome, "regret_pips": margin - played_margin,
            "closing_available": bool(closing),
            "closing_optimal": any(values[a] == best_value for a in closing),
            "closed": action in closing,
            # the perfect-play result as seen from side 0 (to compare positions of one game)
            "outcome_side0": outcome if side == 0 else -outcome,
        }
        row.update(self._view_values(game_id, k, state, seat, action, legal))
        row["luck"] = outcome - row["view_value"]   # nan without view samples
        return row

    def _view_values(self, game_id, k, state, seat, action, legal) -> dict:
        """The mover's expected results from its own view: each move's average outcome over
        ``view_samples`` sampled worlds (solved exactly), drawn from ``[seed, 3, game_id, k]``."""
        m = self.settings.view_samples
        nan = float("nan")
        if m <= 0:
            return {"view_value": nan, "view_played": nan, "view_best": "", "view_regret": nan}
        rng = np.random.default_rng([self.settings.seed, 3, game_id, k])
        view = state.observe(seat)
        totals = dict.fromkeys(legal, 0.0)
        expected = 0.0
        worlds = world_sampler(view)
        for _ in range(m):
            world = worlds(rng)
            mv = self.view_solver.move_values(world)
            expected += split_value(max(mv.values()))[0]
            for a in legal:
                totals[a] += split_value(mv[a])[0]
        means = {a: totals[a] / m for a in legal}
        top = max(means.values())
        return {"view_value": expected / m, "view_played": means[action],
                "view_best": " ".join(action_name(state.variant, a) for a in legal if means[a] == top),
                "view_regret": top - means[action]}

    @staticmethod
    def _decided(rows: List[dict], game_row: dict) -> dict:
        """``decided_k``: the largest k such that from every kept position j ≤ k the
        perfect-play result (seen from side 0) is the game's actual result (0: not even
        at the last placement)."""
        final = 0 if game_row["draw"] else (1 if game_row["winner_side"] == 0 else -1)
        by_k = {r["k"]: r["outcome_side0"] for r in rows}
        decided = 0
        for k in range(1, max(by_k) + 1):
            if by_k.get(k) != final:
                break
            decided = k
        return {"result_side0": final, "decided_k": decided, "kept": len(rows)}


def _final_margin(final, win_team: int) -> int:
    """The winning side's margin at the end (0 for a draw): at a block the losers' count
    minus the winners'; when a hand went out, the losers' count."""
    if win_team < 0:
        return 0
    totals = final.team_counts()
    losers = sum(c for t, c in enumerate(totals) if t != win_team)
    return losers - totals[win_team] if final.blocked else losers


def pairing(names, variant) -> str:
    """The table's agents by side, sides sorted: ``heaviest vs suits``, ``partner+partner vs suits+suits``."""
    sides = {}
    for s, name in enumerate(names):
        sides.setdefault(variant.teams[s], []).append(name)
    return " vs ".join(sorted("+".join(members) for members in sides.values()))
