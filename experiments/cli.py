"""The ``pipslab`` command line.

Each subcommand lives in its own module with ``add_arguments(parser)`` and
``run(args) -> int``; this file only wires them together and turns user errors
(``PipslabError``, bad flags) into one line on stderr and a non-zero exit.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from pipslab import interrupts

from .cliargs import guarded

# subcommand -> (module, one-line help)
SUBCOMMANDS = {
    "tournament": ("pipslab.experiments.tournament", "play many games between agents and tabulate the results"),
    "play": ("pipslab.experiments.play", "play and print games between agents"),
    "bench": ("pipslab.experiments.bench", "throughput benchmarks against peers, side by side"),
    "moves": ("pipslab.experiments.moves", "list every legal play of a position"),
    "solve": ("pipslab.experiments.solve", "exact result of a domino position with every hand open"),
    "calibrate": ("pipslab.experiments.calibrate", "fit the search's state value for a backgammon ranking evaluator"),
    "train": ("pipslab.experiments.train", "self-play training of a neural agent (backgammon: TD(λ); domino games: masked PPO)"),
    "serve": ("pipslab.experiments.serve", "a play page in the browser: a person against any agents"),
    "analyze": ("pipslab.experiments.analyze", "error rates: every decision of a tournament's games valued by a reference"),
    "fish": ("pipslab.experiments.fish", "fish research: solve the endings of blocked games; only-move puzzles"),
    "exploitability": ("pipslab.experiments.exploitability", "exact exploitability of domino agents on a tiny Happy game (OpenSpiel)"),
}


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad flag as one line, without the usage block."""

    def error(self, message: str):  # noqa: D401 - argparse API
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


def build_parser(argv=()) -> argparse.ArgumentParser:
    """The parser of every subcommand; only the module of the subcommand named in
    ``argv`` (all of them when none is named) is imported, so ``pipslab play`` does not
    pay for torch, which only training needs."""
    chosen = next((a for a in argv if not a.startswith("-")), None)
    parser = _Parser(prog="pipslab", description="pipslab: self-play lab for dominoes and backgammon")
    from pipslab import __version__
    parser.add_argument("--version", action="version", version=f"pipslab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        if chosen in SUBCOMMANDS and name != chosen:
            sub.add_parser(name, help=help_text)
            continue
        module = importlib.import_module(module_name)
        p = sub.add_parser(name, help=help_text, description=module.__doc__)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def main(argv=None) -> int:
    """Run one subcommand (:func:`~pipslab.experiments.cliargs.guarded`: a user error 2, Ctrl-C 130, a
    closed stdout 141)."""
    argv = sys.argv[1:] if argv is None else list(argv)

    def run() -> int:
        parser = build_parser(argv)
        interrupts.check()
        args = parser.parse_args(argv)
        interrupts.check()
        return args._run(args)
    return guarded("pipslab", run)


if __name__ == "__main__":
    raise SystemExit(main())
