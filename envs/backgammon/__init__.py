"""Backgammon (RULES §5): positions, move generation, GNU BG Position IDs, game state, env.

The rules modules (``board``, ``moves``, ``game``) import no gymnasium/torch/pandas; the
Gymnasium adapter is ``pipslab.envs.backgammon.env.BackgammonEnv``.
"""
from .board import Position, position_id, render_position
from .game import (CHANCE_OUTCOMES, NUM_ACTIONS, PASS, BackgammonState, BackgammonView,
                   action_name, decode_action, encode_action, game_stats,
                   new_game, sample_world)
from .moves import Play, find_play, format_play, legal_checker_moves, legal_plays, parse_play

__all__ = [
    "Position", "position_id", "render_position", "CHANCE_OUTCOMES", "NUM_ACTIONS", "PASS",
    "BackgammonState", "BackgammonView", "action_name", "decode_action", "encode_action",
    "game_stats", "new_game", "sample_world", "Play", "find_play", "format_play", "legal_checker_moves", "legal_plays",
    "parse_play",
]
