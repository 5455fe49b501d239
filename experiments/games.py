"""The one game loop every experiment uses, over the games of :data:`pipslab.envs.GAMES`.

What a game is — options, seats and teams, deals, positions, what a finished game
records — is its :class:`pipslab.envs.game.Game` definition, in the game's own module
(:mod:`pipslab.envs.dominoes.games`, :mod:`pipslab.envs.backgammon.games`, or any module
that calls :func:`pipslab.envs.register_game`), found by name with
:func:`pipslab.envs.get_game`.

The loop (:func:`play_game`) deals a state from a ``Game`` and drives it with the engines'
protocol (:class:`pipslab.envs.game.State`): ``is_terminal``, ``is_chance``/
``apply_chance(rng)``, ``current_player``, ``legal_actions()``, ``apply()``,
``observe(player)``, ``num_actions``.

Randomness is split in two streams so duplicate games replay the same luck: the *deal*
stream (shuffle, dice, a Troshin match's next hands at its chance nodes) comes from
``deal_seed``; the agents' choices from ``agent_seed``.  A match draws one number from the
deal stream per hand, whatever the moves, so hand ``k`` of a game is the same deal for any
agents.
"""
from __future__ import annotations

import time
from typing import Callable, Sequence

import numpy as np

from pipslab.agents.base import Agent, Observation
from pipslab.envs.errors import Forfeit

__all__ = ["play_game"]


def play_game(game, options: dict, seat_agents: Sequence[Agent], deal_seed,
              agent_seed, on_move: Callable[[object, int, int], None] | None = None):
    """Play one game; returns ``(final_state, moves, seconds)``.

    ``on_move(state_before, player, action)`` is called before each action is applied.
    An agent that returns an action that is not legal raises :class:`Forfeit` (the
    tournament records the game as forfeited by that seat; elsewhere it is one line).
    """
    deal_rng = np.random.default_rng(deal_seed)
    agent_rng = np.random.default_rng(agent_seed)
    start = time.perf_counter()
    state = game.new_state(deal_rng, options)
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
