"""The ``pipslab`` command line.

Each subcommand lives in its own module with ``add_arguments(parser)`` and
``run(args) -> int``; this file only wires them together and turns user errors
(``PipslabError``, bad flags) into one line on stderr and a non-zero exit.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys

from pipslab import interrupts
from pipslab.envs.errors import PipslabError

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


def _quiet_stdout() -> None:
    """stdout's reader went away (``pipslab … | head``): send what is left to /dev/null, so
    neither the rest of the output nor Python's flush at exit raises again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def main(argv=None) -> int:
    """Run one subcommand; every way it can end is an exit status and at most one line on
    stderr: a user error 2, Ctrl-C (also while the subcommands load) 130, a closed stdout
    pipe 141 (as a process killed by SIGPIPE) — never a traceback for these."""
    try:
        try:
            argv = sys.argv[1:] if argv is None else list(argv)
            parser = build_parser(argv)
            interrupts.check()
            args = parser.parse_args(argv)
            interrupts.check()
            code = int(args._run(args) or 0)
            sys.stdout.flush()
            return code
        except PipslabError as exc:
            sys.stdout.flush()
            sys.stderr.write(f"pipslab: error: {exc}\n")
            return 2
        except KeyboardInterrupt:
            sys.stderr.write("pipslab: interrupted\n")
            return 130
        except Exception:
            if not interrupts.noted():   # Ctrl-C inside a compiled module's import surfaces as another error
                raise
            sys.stderr.write("pipslab: interrupted\n")
            return 130
    except BrokenPipeError:
        _quiet_stdout()
        return 141
    except KeyboardInterrupt:   # a second Ctrl-C while the first was being reported
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
