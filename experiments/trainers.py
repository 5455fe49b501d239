"""Which trainer trains a game: each game family's trainer module (its ``TRAINER`` class
trains every registered game of the family).  A new family's trainer is one line here."""
from __future__ import annotations

from typing import Dict

from pipslab.envs.errors import PipslabError

# the trainer module of a game family (its TRAINER class trains every game of the family)
FAMILY_TRAINERS = {"backgammon": "pipslab.experiments.train_backgammon",
                   "dominoes": "pipslab.experiments.train_dominoes"}


def trainers() -> Dict[str, str]:
    """Game name -> trainer module, for every registered game of a family with a trainer."""
    from pipslab.envs.game import GAMES
    out = {}
    for family, module in FAMILY_TRAINERS.items():
        for name in GAMES.family(family):
            out[name] = module
    return out


def trainer_for(game: str):
    """The :class:`~pipslab.experiments.trainer.Trainer` class that trains ``game``."""
    known = trainers()
    if game not in known:
        raise PipslabError(f"no trainer for {game!r}; games with one: {', '.join(known)}")
    import importlib
    return importlib.import_module(known[game]).TRAINER
