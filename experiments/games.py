"""Games the harness can run, and the one game loop every experiment uses.

A :class:`GameSpec` tells the harness how to start a game of that kind, how to draw it,
and what to record about a finished game.  The loop (:func:`play_game`) drives any state
with the engines' protocol: ``is_terminal``, ``is_chance``/``apply_chance(rng)``,
``current_player``, ``legal_actions()``, ``apply()``, ``observe(player)``, ``returns()``,
``result()``.

Randomness is split in two streams so duplicate games replay the same luck: the *deal*
stream (shuffle, dice) comes from ``deal_seed``; the agents' choices from ``agent_seed``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from pipslab.agents.base import Agent, Observation
from pipslab.envs.errors import PipslabError


@dataclass(frozen=True)
class GameSpec:
    """How the harness runs a game.  ``options`` is a dict of the game's options (Happy:
    ``mode``; Troshin: ``players``, ``pairs``, ``match``; Triple: ``players``; any domino
    game: ``position``).  ``teams(options)`` maps seat -> side (partners share one; the
    default is one side per seat).  A finished state's ``result()`` gives ``winner``,
    ``winners``, ``draw``, ``blocked``, ``pips_left`` and ``points`` per seat (Troshin: the
    points of the hand or, in a match, the cumulative score of the seat's side; Triple:
    winnings − penalties) and ``returns``; ``stats(state)`` adds flat per-game columns."""

    name: str
    players: Callable[[dict], int]                 # seats for these options
    new_state: Callable[[np.random.Generator, dict], object]
    variant_label: Callable[[dict], str]
    render: Callable[[object], str]
    action_name: Callable[[object, int], str]
    stats: Callable[[object], dict]                # extra per-game record fields
    teams: Optional[Callable[[dict], Tuple[int, ...]]] = None   # seat -> team

    def __post_init__(self):
        if self.teams is None:
            players = self.players
            object.__setattr__(self, "teams", lambda options: tuple(range(players(options))))


def _happy_new_state(rng, options):
    from pipslab.envs.dominoes.engine import deal
    from pipslab.envs.dominoes.variants import happy
    variant = happy(options.get("mode", "block"))
    if options.get("position"):
        from pipslab.envs.dominoes.notation import parse_position
        state = parse_position(options["position"])
        if state.variant != variant:
            raise PipslabError(f"the position is {state.variant.name}, not {variant.name} (see --mode)")
        return state
    return deal(variant, rng)


def _domino_stats(state) -> dict:
    from pipslab.envs.dominoes.engine import DRAW, PASS
    events = state.events()
    return {
        "blocked": bool(state.blocked),
        "passes": sum(1 for e in events if e[0] == PASS),
        "draws": sum(1 for e in events if e[0] == DRAW),
    }


def _domino_render(state) -> str:
    from pipslab.envs.dominoes.notation import render
    return render(state)


def _domino_action_name(state, action) -> str:
    return state.action_name(action)


def _happy_label(options) -> str:
    mode = options.get("mode", "block")
    if mode not in ("block", "draw"):
        raise PipslabError(f"unknown Happy dominoes mode {mode!r}: expected 'block' or 'draw'")
    return f"happy-{mode}"


def _int_option(options, key, default):
    value = options.get(key, default)
    try:
        return int(value)
    except (TypeError, ValueError):
        raise PipslabError(f"option {key}={value!r} is not a whole number") from None


def _troshin_variant(options):
    from pipslab.envs.dominoes.variants import troshin
    return troshin(_int_option(options, "players", 2), bool(options.get("pairs", False)))


def _triple_variant(options):
    from pipslab.envs.dominoes.variants import triple
    return triple(_int_option(options, "players", 2))


def _from_position(options, variant, rng):
    from pipslab.envs.dominoes.notation import parse_position
    state = parse_position(options["position"], rng=rng)
    if state.variant != variant:
        raise PipslabError(f"the position is {state.variant.name}, not {variant.name} (see --players/--pairs)")
    return state


def _troshin_new_state(rng, options):
    from pipslab.envs.dominoes.engine import deal
    from pipslab.envs.dominoes.match import TroshinMatch, new_match
    variant = _troshin_variant(options)
    match = bool(options.get("match", False))
    if options.get("position"):
        state = _from_position(options, variant, rng if rng is not None else np.random.default_rng(0))
        if isinstance(state, TroshinMatch) != match:
            raise PipslabError("a match position (match=…) goes with --match, and --match needs one")
        return state
    return new_match(variant, rng) if match else deal(variant, rng)


def _troshin_label(options) -> str:
    return _troshin_variant(options).name + ("-match" if options.get("match") else "")


def _troshin_stats(state) -> dict:
    out = _domino_stats(state)
    r = state.result()
    for seat, p in enumerate(r["points"]):
        out[f"points_{seat}"] = p
    if r.get("match"):
        out["hands"] = r["hands"]
        for team, score in enumerate(r["scores"]):
            out[f"score_team{team}"] = score
    return out


def _triple_new_state(rng, options):
    from pipslab.envs.dominoes.engine import deal
    variant = _triple_variant(options)
    if options.get("position"):
        return _from_position(options, variant, rng)
    return deal(variant, rng)


def _triple_stats(state) -> dict:
    out = _domino_stats(state)
    r = state.result()
    for seat in range(len(r["points"])):
        out[f"winnings_{seat}"] = r["winnings"][seat]
        out[f"penalties_{seat}"] = r["penalties"][seat]
        out[f"points_{seat}"] = r["points"][seat]
        out[f"rank_{seat}"] = r["ranks"][seat]
    out["winners"] = "+".join(map(str, r["winners"]))
    return out


def _backgammon_gammons(options) -> bool:
    value = options.get("gammons", True)
    if isinstance(value, str):
        if value.lower() not in ("true", "false", "1", "0", "yes", "no"):
            raise PipslabError(f"gammons={value!r}: expected true or false")
        value = value.lower() in ("true", "1", "yes")
    return bool(value)


def _backgammon_new_state(rng, options):
    from pipslab.envs.backgammon import BackgammonState, new_game
    gammons = _backgammon_gammons(options)
    if options.get("position"):
        return BackgammonState.from_position_id(options["position"], gammons=gammons)
    return new_game(rng, gammons=gammons)


def _backgammon_render(state) -> str:
    from pipslab.envs.backgammon.env import render
    return render(state)


def _backgammon_stats(state) -> dict:
    from pipslab.envs.backgammon import game_stats
    stats = game_stats(state)
    return {"gammon": stats["gammon"], "backgammon": stats["backgammon"], "turns": stats["turns"]}


GAMES: Dict[str, GameSpec] = {
    "happy": GameSpec(
        name="happy",
        players=lambda options: 2,
        new_state=_happy_new_state,
        variant_label=_happy_label,
        render=_domino_render,
        action_name=_domino_action_name,
        stats=_domino_stats,
    ),
    "troshin": GameSpec(
        name="troshin",
        players=lambda options: _troshin_variant(options).players,
        new_state=_troshin_new_state,
        variant_label=_troshin_label,
        render=_domino_render,
        action_name=_domino_action_name,
        stats=_troshin_stats,
        teams=lambda options: _troshin_variant(options).teams,
    ),
    "triple": GameSpec(
        name="triple",
        players=lambda options: _triple_variant(options).players,
        new_state=_triple_new_state,
        variant_label=lambda options: _triple_variant(options).name,
        render=_domino_render,
        action_name=_domino_action_name,
        stats=_triple_stats,
    ),
    "backgammon": GameSpec(
        name="backgammon",
        players=lambda options: 2,
        new_state=_backgammon_new_state,
        variant_label=lambda options: "backgammon" if _backgammon_gammons(options) else "backgammon-nogammons",
        render=_backgammon_render,
        action_name=_domino_action_name,
        stats=_backgammon_stats,
    ),
}


def game_spec(name: str) -> GameSpec:
    try:
        return GAMES[name]
    except KeyError:
        raise PipslabError(f"unknown game {name!r}; known: {', '.join(sorted(GAMES))}") from None


def play_game(spec: GameSpec, options: dict, seat_agents: Sequence[Agent], deal_seed,
              agent_seed, on_move: Callable[[object, int, int], None] | None = None):
    """Play one game; returns ``(final_state, moves, seconds)``.

    ``on_move(state_before, player, action)`` is called before each action is applied.
    """
    deal_rng = np.random.default_rng(deal_seed)
    agent_rng = np.random.default_rng(agent_seed)
    start = time.perf_counter()
    state = spec.new_state(deal_rng, options)
    for seat, agent in enumerate(seat_agents):
        agent.reset(seat)
    moves = 0
    num_actions = state.num_actions
    while not state.is_terminal:
        if state.is_chance:
            state.apply_chance(deal_rng)
            continue
        p = state.current_player
        legal = state.legal_actions()
        agent = seat_agents[p]
        truth = state.clone() if agent.sees_hidden_state else None
        action = agent.act(Observation(p, state.observe(p), legal, num_actions, truth), agent_rng)
        if on_move is not None:
            on_move(state, p, action)
        state.apply(action)
        moves += 1
    return state, moves, time.perf_counter() - start


def seat_names(agents: List[Agent]) -> List[str]:
    return [a.name for a in agents]
