"""Helpers shared by the tests that drive the harness: the ``pipslab`` command in a
subprocess, and one game through the harness's loop with its record checked."""
import subprocess
import sys
from pathlib import Path

import numpy as np

from pipslab.experiments.games import play_game

TESTS = Path(__file__).resolve().parent         # tests/: the shared helper modules (harness_fakes …)
ROOT = TESTS.parent                             # the repository


def pipslab(*args):
    """``pipslab ARGS...`` run from the repository root; the CompletedProcess (text)."""
    return subprocess.run([sys.executable, "-m", "pipslab.experiments.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


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
