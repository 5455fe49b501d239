"""``pipslab train``: self-play training, one game or a whole recipe.

    pipslab train backgammon --games 200000 --out DIR        # TD(λ) of the td net
    pipslab train happy --mode block --hands 300000 --out DIR # masked PPO of the net policy
    pipslab train --recipe happy-block --out DIR [--scale F] [--resume]
    pipslab train --recipes                                   # the recipes and their stages

Every trainer runs on one skeleton (:mod:`pipslab.experiments.trainer`); its flags are
generated from its args dataclass and its game's options.  docs/training.md tells the
whole story.
"""
from __future__ import annotations

import argparse
import importlib

from pipslab.envs.errors import PipslabError

from .trainers import FAMILY_TRAINERS, trainer_for, trainers

HELP = {"backgammon": "TD(λ) self-play of the td value network",
        "dominoes": "masked PPO of the net policy in a league (optionally guided by a teacher)"}


def add_arguments(parser) -> None:
    from . import trainer as skeleton
    from .checks import out_arg
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--recipe", default=None, metavar="NAME",
                        help="run a recipe (experiments/recipes/NAME.toml, or a .toml file): every stage of a "
                             "shipped net's plan, then its evaluation and model card")
    parser.add_argument("--recipes", action="store_true", help="list the recipes with their stages and budgets")
    parser.add_argument("--scale", type=float, default=None, metavar="F",
                        help="--recipe: multiply every stage's budget and evaluation by F (e.g. 0.002: a smoke test)")
    parser.add_argument("--out", dest="recipe_out", type=out_arg, default=None, metavar="DIR",
                        help="--recipe: the run folder")
    parser.add_argument("--resume", dest="recipe_resume", action="store_true", default=False,
                        help="--recipe: continue the run in --out where it stopped")
    for name in ("workers", "threads"):
        parser.add_argument(f"--{name}", dest=f"recipe_{name}", type=int, default=None, metavar="N",
                            help=f"--recipe: {skeleton.field_help(skeleton.TrainArgs)[name]}")
    parser.add_argument("--backend", dest="recipe_backend", choices=skeleton.BACKENDS, default=None,
                        help="--recipe: " + skeleton.field_help(skeleton.TrainArgs)["backend"])
    parser.add_argument("--device", dest="recipe_device", choices=skeleton.DEVICES, default=None,
                        help="--recipe: " + skeleton.field_help(skeleton.TrainArgs)["device"])
    parser.add_argument("--tensorboard", dest="recipe_tensorboard", action="store_true", default=None,
                        help="--recipe: " + skeleton.field_help(skeleton.TrainArgs)["tensorboard"])
    parser.add_argument("--no-progress", dest="recipe_progress", action="store_false", default=True)
    sub = parser.add_subparsers(dest="game", metavar="GAME", parser_class=type(parser))
    for game, module_name in trainers().items():
        module = importlib.import_module(module_name)
        family = next(f for f, m in FAMILY_TRAINERS.items() if m == module_name)
        p = sub.add_parser(game, help=HELP[family], description=(module.__doc__ or "").split("\n\n")[0],
                           epilog="docs/training.md: what each setting does and why.")
        skeleton.add_arguments(p, module.TRAINER.Args, game=game)
        p.add_argument("--import", dest="imports", action="append", default=None, metavar="MODULE",
                       help="import a module or .py file first (it may register agents for --league and the like)")


def run(ns) -> int:
    from . import recipe
    if ns.recipes:
        print(recipe.describe_all())
        return 0
    if ns.recipe is not None:
        if ns.game is not None:
            raise PipslabError("give a GAME or --recipe, not both")
        return recipe.run_command(ns)
    if ns.game is None:
        raise PipslabError("name a GAME to train (pipslab train happy --help), or --recipe NAME, or --recipes")
    if ns.scale is not None:
        raise PipslabError("--scale applies to --recipe only")
    if ns.recipe_out is not None:
        raise PipslabError(f"--out before the game belongs to --recipe; put it after {ns.game}")
    from .trainer import run_trainer
    return run_trainer(trainer_for(ns.game), ns, ns.game)
