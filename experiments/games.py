"""The one game loop every experiment uses, over the games of :data:`pipslab.envs.GAMES`.

What a game is — options, seats and teams, deals, positions, what a finished game
records — is its :class:`pipslab.envs.game.Game` definition, in the game's own module
(:mod:`pipslab.envs.dominoes.games`, :mod:`pipslab.envs.backgammon.games`, or any module
that calls :func:`pipslab.envs.register_game`).  ``GAMES`` here *is* that registry.

The loop (:func:`play_game`) drives any state with the engines' protocol
(:class:`pipslab.envs.game.State`): ``is_terminal``, ``is_chance``/``apply_chance(rng)``,
``current_player``, ``legal_actions()``, ``apply()``, ``observe(player)``, ``num_actions``.

Randomness is split in two streams so duplicate games replay the same luck: the *deal*
stream (shuffle, dice) comes from ``deal_seed``; the agents' choices from ``agent_seed``.
"""
from __future__ import annotations

import numbers
import time
from typing import Callable, Dict, List, Optional, Sequence

import numpy as np

from pipslab.agents.base import Agent, Observation
from pipslab.envs.errors import Forfeit, PipslabError, excerpt
from pipslab.envs.game import GAMES, Game, Outcome

__all__ = ["GAMES", "Game", "game_spec", "play_game", "seat_names", "add_option_flags", "flag_options_given",
           "parse_option_items"]


def game_spec(name: str):
    """The :class:`~pipslab.envs.game.Game` named ``name`` (one line naming the known games
    if there is none).  A duck-typed spec put straight into ``GAMES`` (the harness tests'
    fakes: ``players``, ``teams``, ``new_state``, ``variant_label``, ``render``,
    ``action_name``, ``stats`` and states with a ``result()`` dict) is wrapped so it reads
    like a Game."""
    try:
        spec = GAMES[name]
    except KeyError:
        raise PipslabError(f"unknown game {excerpt(name)}; known: {', '.join(sorted(GAMES))}") from None
    if isinstance(spec, Game):
        return spec
    wrapped = _LEGACY.get(id(spec))
    if wrapped is None or wrapped.spec is not spec:
        wrapped = _LEGACY[id(spec)] = _LegacySpec(spec)
    return wrapped


_SCALARS = (numbers.Number, np.bool_, str, type(None))
_SKIP_RESULT_KEYS = {"winner", "draw", "pips_left", "points", "returns", "winners"}
_LEGACY: Dict[int, "_LegacySpec"] = {}


class _LegacySpec:
    """A spec of the old shape read through the Game interface: options unchecked, the
    outcome from the state's ``result()`` dict and the spec's ``stats``."""

    options_spec = ()
    option_names = ()
    family = ""

    def __init__(self, spec):
        self.spec = spec
        self.name = spec.name
        for attr in ("players", "new_state", "variant_label", "render", "action_name", "stats"):
            setattr(self, attr, getattr(spec, attr))

    def teams(self, options):
        teams = getattr(self.spec, "teams", None)
        return teams(options) if callable(teams) else tuple(range(self.players(options)))

    def resolve(self, options=None) -> dict:
        return dict(options or {})

    def options_for(self, given=None) -> dict:
        return dict(given or {})

    def outcome(self, state) -> Outcome:
        result = state.result()
        returns = result.get("returns")
        returns = tuple(state.returns() if returns is None else returns)
        best = max(returns)
        winners = () if best == min(returns) else tuple(s for s, r in enumerate(returns) if r == best)
        points = result.get("points")
        if isinstance(points, (numbers.Number, np.bool_)):   # one number for the game (backgammon-like)
            points = tuple(points if s in winners else (-points if winners else 0) for s in range(len(returns)))
        elif points is not None:
            points = tuple(points)
        pips = result.get("pips_left")
        extra = {k: v for k, v in result.items() if k not in _SKIP_RESULT_KEYS and isinstance(v, _SCALARS)}
        extra.update(self.spec.stats(state))
        return Outcome(returns=returns, winners=winners, winner=winners[0] if len(winners) == 1 else None,
                       draw=not winners, points=points, pips_left=None if pips is None else tuple(pips), extra=extra)


def play_game(spec, options: dict, seat_agents: Sequence[Agent], deal_seed,
              agent_seed, on_move: Callable[[object, int, int], None] | None = None):
    """Play one game; returns ``(final_state, moves, seconds)``.

    ``on_move(state_before, player, action)`` is called before each action is applied.
    An agent that returns an action that is not legal raises :class:`Forfeit` (the
    tournament records the game as forfeited by that seat; elsewhere it is one line).
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
        if action not in legal:
            raise Forfeit(f"agent {agent.name!r} (seat {p}) chose {action!r}, not a legal action "
                          f"(legal: {', '.join(map(str, legal))}): the game is forfeited",
                          state, p, action, moves, time.perf_counter() - start)
        if on_move is not None:
            on_move(state, p, action)
        state.apply(action)
        moves += 1
    return state, moves, time.perf_counter() - start


def seat_names(agents: List[Agent]) -> List[str]:
    return [a.name for a in agents]


# ------------------------------------------------------------------ option flags of the CLI
def add_option_flags(parser) -> List[str]:
    """``--NAME`` for every option a registered game marks ``flag`` (``--mode``, ``--players``,
    ``--pairs``, ``--match`` for the built-in games): a switch for a true/false option, else a
    typed value (with the allowed values when every game with that option lists them).
    Given or not is told by ``None``; each game checks its own options when the run starts.
    Returns the flags' names."""
    import argparse
    added = []
    for name, entries in GAMES.flag_options().items():
        opt = entries[0][1]
        games = ", ".join(g for g, _ in entries)
        texts = []
        for _, o in entries:
            text = o.describe()
            if text not in texts:
                texts.append(text)
        help_text = f"{games}: {'; '.join(texts)}"
        kwargs: dict = dict(default=None, dest=name, help=help_text.replace("%", "%%"))
        if opt.type is bool:
            kwargs["action"] = "store_true"
        else:
            kwargs["type"] = opt.type
            if all(o.choices is not None for _, o in entries):
                kwargs["choices"] = list(dict.fromkeys(c for _, o in entries for c in o.choices))
            else:
                kwargs["metavar"] = name.upper()
        try:
            parser.add_argument(f"--{name.replace('_', '-')}", **kwargs)
        except argparse.ArgumentError:   # the command has its own flag of that name
            continue
        added.append(name)
    return added


def flag_options_given(ns, config: Optional[dict] = None) -> Dict[str, object]:
    """The game options given with ``--NAME`` flags (or, failing that, a config file's
    ``NAME = …`` keys), each checked by the option's type (the first game's that has it)."""
    out: Dict[str, object] = {}
    for name, entries in GAMES.flag_options().items():
        value = getattr(ns, name, None)
        if value is None and config:
            value = config.get(name)
        if value is not None:
            out[name] = entries[0][1].validate(value)
    return out


def parse_option_items(items) -> Dict[str, object]:
    """``["gammons=false", "players=3"]`` (``--option KEY=VALUE``) -> ``{"gammons": False, "players": 3}``."""
    from pipslab.agents.registry import parse_value
    out: Dict[str, object] = {}
    for item in items or []:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise PipslabError(f"bad --option {excerpt(item)}: expected KEY=VALUE")
        out[key.strip()] = parse_value(value.strip())
    return out
