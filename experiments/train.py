"""``pipslab train GAME ...``: self-play training of a neural agent for one game.

* ``pipslab train backgammon`` -- TD(λ) of the ``td`` value network
  (:mod:`pipslab.experiments.train_backgammon`);
* ``pipslab train happy|troshin|triple`` -- masked PPO of the ``net`` policy in a league
  (:mod:`pipslab.experiments.train_dominoes`).

Each game's trainer has its own flags (``pipslab train backgammon --help``).
"""
from __future__ import annotations

import importlib

# game -> (module, one-line help)
TRAINERS = {
    "backgammon": ("pipslab.experiments.train_backgammon", "TD(λ) self-play of the td value network"),
    "happy": ("pipslab.experiments.train_dominoes", "masked PPO of the net policy in a league (Happy)"),
    "troshin": ("pipslab.experiments.train_dominoes", "masked PPO of the net policy in a league (Troshin)"),
    "triple": ("pipslab.experiments.train_dominoes", "masked PPO of the net policy in a league (Triple)"),
}


def add_arguments(parser) -> None:
    sub = parser.add_subparsers(dest="game", metavar="GAME", parser_class=type(parser))
    sub.required = True
    for name, (module_name, help_text) in TRAINERS.items():
        module = importlib.import_module(module_name)
        p = sub.add_parser(name, help=help_text, description=module.__doc__,
                           formatter_class=__import__("argparse").RawDescriptionHelpFormatter)
        if module_name.endswith("train_dominoes"):
            module.add_arguments(p, name)
        else:
            module.add_arguments(p)


def run(ns) -> int:
    return importlib.import_module(TRAINERS[ns.game][0]).run(ns)
