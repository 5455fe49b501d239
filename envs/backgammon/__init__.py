"""Backgammon (RULES §5): positions, move generation, GNU BG Position IDs, game state, env.

The rules modules (``board``, ``moves``, ``game``) import no gymnasium/torch/pandas; the
Gymnasium env is ``pipslab/Backgammon-v1`` (``env.BackgammonEnvMixin``).  The names below are
imported on first use (the move generator compiles with numba), so ``import pipslab``
stays quick: ``from pipslab.envs.backgammon import BackgammonState`` works as ever.
"""
import importlib

_EXPORTS = {
    "board": ("Position", "position_id", "render_position"),
    "game": ("CHANCE_OUTCOMES", "ROLLS", "ROLL_PROBABILITIES", "NUM_ACTIONS", "PASS", "BackgammonState",
             "BackgammonView", "action_name", "decode_action", "encode_action", "game_stats", "new_game",
             "sample_world"),
    "moves": ("Play", "find_play", "format_play", "legal_checker_moves", "legal_plays", "parse_play"),
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = [
    "Position", "position_id", "render_position", "CHANCE_OUTCOMES", "ROLLS", "ROLL_PROBABILITIES",
    "NUM_ACTIONS", "PASS",
    "BackgammonState", "BackgammonView", "action_name", "decode_action", "encode_action",
    "game_stats", "new_game", "sample_world", "Play", "find_play", "format_play", "legal_checker_moves", "legal_plays",
    "parse_play",
]


def __getattr__(name):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
