"""The one Gymnasium env of pipslab: :class:`GameEnv`, built from a game's
:class:`~pipslab.envs.game.Game` alone.

Every Gym id is this class with ``game=NAME`` (:mod:`pipslab.envs` registers ``Game.env_id``
for each game of :data:`~pipslab.envs.game.GAMES`, and ``Game.env_aliases`` as deprecated
aliases that warn); ``GameEnv("happy", mode="draw")`` and
``gymnasium.make("pipslab/HappyDominoes-v0", mode="draw")`` are the same env.  A game's
extras (backgammon's ``afterstates()``/``step_play()``) are a mixin the game names
(``Game.env_mixin``), composed in when the env is made.

Contract (the common one is :mod:`pipslab.envs.base_env`'s; each game's observation
layout and extra ``info`` keys are in ``docs/envs.md``):

* **Arguments**: ``game`` (a name in ``GAMES`` or a :class:`~pipslab.envs.game.Game`);
  ``learner_seat=0``; ``opponents`` (``opponent=``: deprecated); ``render_mode``;
  ``illegal_action="raise"|"lose"``; ``options`` (a dict) and any other keyword: the
  game's options, each of its Python type (``players=4``, ``pairs=True``; an unknown one
  or a wrong type is refused in one line); ``reveal=False``; ``auto_forced=False`` (the
  learner's forced moves are played for it).
* **Spaces**: ``Discrete(game.actions(options))``; ``{"observation": Box(low, high,
  (size,), float32), "action_mask": Box(0, 1, (actions,), int8)}`` from the game's
  :class:`~pipslab.envs.game.Encoder` of the learner's view.
* **Reward**: 0 until the end, then the learner's return; an illegal action with
  ``illegal_action="lose"`` costs the game's worst return (``Game.utility_bounds``).
* **info**: ``action_mask``, ``legal_actions``, ``illegal_action``, then
  ``Game.info`` — the result fields, the game's info columns and its live info — and with
  ``reveal=True`` ``position``.
"""
from __future__ import annotations

import importlib
import warnings
from typing import Dict, Optional

from pipslab.envs.base_env import UNSET, SeatEnv, opponents_argument
from pipslab.envs.errors import PipslabError
from pipslab.envs.game import GAMES, Game, get_game

__all__ = ["GameEnv", "deprecated_env", "env_class"]

_COMPOSED: Dict[str, type] = {}


def _game(game) -> Game:
    game = get_game(game) if isinstance(game, str) else game
    if not isinstance(game, Game):
        raise PipslabError(f"GameEnv plays a Game definition, got {type(game).__name__}")
    return game


def env_class(game) -> type:
    """The class of ``game``'s env: :class:`GameEnv`, with the game's ``env_mixin`` composed
    in when it names one."""
    ref = _game(game).env_mixin
    if not ref:
        return GameEnv
    cls = _COMPOSED.get(ref)
    if cls is None:
        module, _, name = ref.partition(":")
        mixin = getattr(importlib.import_module(module), name)
        name = f"GameEnv_{mixin.__name__}"   # found by pickle through the module's __getattr__
        cls = type(name, (mixin, GameEnv), {"__module__": __name__, "__qualname__": name,
                                            "__doc__": GameEnv.__doc__})
        _COMPOSED[ref] = cls
    return cls


def __getattr__(name: str):
    """The composed classes (``GameEnv_<Mixin>``) by name, made on first use (unpickling)."""
    if name.startswith("GameEnv_"):
        for game in list(GAMES.values()):
            ref = getattr(game, "env_mixin", None)
            if ref and ref.rpartition(":")[2] == name[len("GameEnv_"):]:
                return env_class(game)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class GameEnv(SeatEnv):
    """One learner seat of any registered game (see the module docstring)."""

    def __new__(cls, game=None, *args, **kwargs):
        if cls is GameEnv and game is not None:
            cls = env_class(game)
        return super().__new__(cls)

    def __init__(self, game, learner_seat: int = 0, opponents=None, render_mode: Optional[str] = None,
                 illegal_action: str = "raise", options: Optional[dict] = None, reveal: bool = False, *,
                 auto_forced: bool = False, opponent=UNSET, **game_options):
        opponents = opponents_argument(opponents, opponent)
        game = _game(game)
        given = dict(options or {})
        given.update(game_options)
        self._setup(game=game, options=game.resolve(given, strict=True), learner_seat=learner_seat,
                    opponents=opponents, render_mode=render_mode, illegal_action=illegal_action, reveal=reveal,
                    auto_forced=auto_forced)

    @property
    def reset_keys(self):
        """``position`` in a game with a notation; none otherwise (a mixin may add more)."""
        return ("position",) if self.game.parse_position is not None else ()


def deprecated_env(game: str, deprecated_id: str, **kwargs) -> GameEnv:
    """The env of an old Gym id of ``game`` (``Game.env_aliases``): it warns, then makes the
    current one."""
    current = _game(game).gym_id()
    warnings.warn(f"{deprecated_id} is deprecated: use {current} (the same game; see docs/envs.md "
                  "for what changed)", DeprecationWarning, stacklevel=3)
    return GameEnv(game, **kwargs)
