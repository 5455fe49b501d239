"""Rules engines (pure Python) and their Gymnasium adapters.

``GAMES`` (:mod:`pipslab.envs.game`) is the one registry of what a game is: importing
``envs`` registers the built-in games (:mod:`pipslab.envs.dominoes.games`,
:mod:`pipslab.envs.backgammon.games`) and, for every game with an ``env_id``, its
Gymnasium id — also for games registered later with :func:`register_game` (a game with
an ``env_id`` but no ``env_entry`` gets the generic adapter,
:class:`pipslab.envs.generic_env.GameEnv`).  The rules modules (``pipslab.envs.game``,
``pipslab.envs.dominoes.engine``, ``pipslab.envs.backgammon.board`` …) import no gymnasium,
torch, pandas or matplotlib; only the ``env`` modules do.
"""
from gymnasium.envs.registration import register as _gym_register
from gymnasium.envs.registration import registry as _gym_registry

from .game import GAMES, Encoder, Game, Option, Outcome, State, View, get_game, register_game
from .dominoes import games as _dominoes_games  # noqa: F401  (registers happy, troshin, triple)
from .backgammon import games as _backgammon_games  # noqa: F401  (registers backgammon)

__all__ = ["GAMES", "Encoder", "Game", "Option", "Outcome", "State", "View", "get_game", "register_game"]


def _register_env(game: Game) -> None:
    if not game.env_id or game.env_id in _gym_registry:
        return
    if game.env_entry:
        _gym_register(id=game.env_id, entry_point=game.env_entry)
    else:
        _gym_register(id=game.env_id, entry_point="pipslab.envs.generic_env:GameEnv", kwargs={"game": game.name})


GAMES.on_register(_register_env)
