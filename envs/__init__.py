"""Rules engines (pure Python) and their adapters.

``GAMES`` (:mod:`pipslab.envs.game`) is the one registry of what a game is: importing
``envs`` registers the built-in games (:mod:`pipslab.envs.dominoes.games`,
:mod:`pipslab.envs.backgammon.games`) and, for every game — also one registered later with
:func:`register_game` — its Gymnasium id (``Game.gym_id()``: the one env class,
:class:`pipslab.envs.generic_env.GameEnv`, with ``game=NAME``) and its old ids
(``Game.env_aliases``) as deprecated aliases that warn.  The rules modules
(``pipslab.envs.game``, ``pipslab.envs.dominoes.engine``, ``pipslab.envs.backgammon.board`` …)
import no gymnasium, torch, pandas or matplotlib; only the ``*env`` modules do.
"""
import re as _re

from gymnasium.envs.registration import register as _gym_register
from gymnasium.envs.registration import registry as _gym_registry

from .game import GAMES, Encoder, Game, Option, Outcome, State, View, get_game, register_game
from .dominoes import games as _dominoes_games  # noqa: F401  (registers happy, troshin, triple)
from .backgammon import games as _backgammon_games  # noqa: F401  (registers backgammon)

__all__ = ["GAMES", "Encoder", "Game", "Option", "Outcome", "State", "View", "get_game", "register_game"]

_GYM_ID = _re.compile(r"^[\w:.-]+/[\w:.-]+-v\d+$")


def _register_env(game: Game) -> None:
    env_id = game.gym_id()
    if _GYM_ID.match(env_id) and env_id not in _gym_registry:
        _gym_register(id=env_id, entry_point="pipslab.envs.generic_env:GameEnv", kwargs={"game": game.name})
    for alias in game.env_aliases:
        if alias not in _gym_registry:
            _gym_register(id=alias, entry_point="pipslab.envs.generic_env:deprecated_env",
                          kwargs={"game": game.name, "deprecated_id": alias})


GAMES.on_register(_register_env)
