"""Helpers shared by the tests that drive the harness: the ``pipslab`` command in a
subprocess, and one game through the harness's loop with its record checked."""
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np

from pipslab.experiments.games import play_game

TESTS = Path(__file__).resolve().parent         # tests/: the shared helper modules (harness_fakes …)
ROOT = TESTS.parent                             # the repository


def pipslab(*args):
    """``pipslab ARGS...`` run from the repository root; the CompletedProcess (text)."""
    return subprocess.run([sys.executable, "-m", "pipslab.experiments.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


# what a plain ``python`` run does not show (its default warning filters)
_HIDDEN_WARNINGS = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)


def pipslab_here(capfd, *args):
    """``pipslab ARGS...`` run in this process through the CLI's ``main``, returned like
    :func:`pipslab`'s CompletedProcess: the exit status (main's, or argparse's SystemExit)
    and what reached stdout and stderr, at the file-descriptor level too (``capfd``), with
    every warning raised on the way written to stderr as a plain ``python`` run shows it.

    Why: each ``pipslab`` subprocess spends two to three seconds importing torch and the
    package before it reads its first flag; a test that checks many bad inputs runs them
    here and keeps one real process (:func:`pipslab`) for what only a process shows (its
    imports' output, the console exit status)."""
    from pipslab.experiments.cli import main
    capfd.readouterr()                       # what the test printed before is not this run's
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            code = main(list(args))
        except SystemExit as exc:            # argparse's own errors: status 2 and its message
            code = exc.code
    out, err = capfd.readouterr()
    if code is None:
        code = 0
    elif not isinstance(code, int):          # SystemExit("text"): Python prints it, status 1
        err, code = err + f"{code}\n", 1
    for w in caught:
        if not issubclass(w.category, _HIDDEN_WARNINGS):
            err += warnings.formatwarning(w.message, w.category, w.filename, w.lineno, w.line)
    return subprocess.CompletedProcess(["pipslab", *args], code, out, err)


def play_checked(spec, options, agents, deal_seed, agent_seed):
    """``play_game``, and what its finished game must satisfy: every move was legal where
    it was made, the returns add up to zero, and the recorded moves replayed on a fresh
    deal from the same seed reach the same end.  Returns ``(final_state, moves)``."""
    record = []

    def on_move(state, player, action):
        assert state.current_player == player and action in state.legal_actions()
        record.append((player, action))

    state, moves, _ = play_game(spec, options, agents, deal_seed, agent_seed, on_move=on_move)
    assert moves == len(record) > 0
    assert abs(sum(state.returns())) < 1e-9
    deal_rng = np.random.default_rng(deal_seed)
    replay = spec.new_state(deal_rng, options)
    for player, action in record:
        while replay.is_chance:
            replay.apply_chance(deal_rng)
        assert replay.current_player == player
        replay.apply(action)
    assert replay.is_terminal and replay.result() == state.result()
    return state, moves
