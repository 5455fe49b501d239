"""Ctrl-C at any moment of the ``pipslab`` command's start-up -- while Python imports the
package, while the subcommand loads, or once the run has begun -- ends with one line on
stderr and status 130, never a traceback.  (The first few hundredths of a second belong to
the interpreter and the generated console script, before any pipslab code runs: an
interrupt there is Python's own.)"""
from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).with_name("pipslab")     # the console script, as a user runs it


@pytest.mark.slow
@pytest.mark.parametrize("delay", [0.1, 0.2, 0.35, 0.6, 1.2])
def test_ctrl_c_during_start_up_is_one_line_and_130(tmp_path, delay):
    assert SCRIPT.exists(), SCRIPT
    p = subprocess.Popen([str(SCRIPT), "tournament", "happy", "--games", "3000", "--workers", "1",
                          "--out", str(tmp_path / "run"), "--no-progress"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(delay)
    p.send_signal(signal.SIGINT)
    err = p.communicate(timeout=120)[1]
    assert p.returncode == 130, (p.returncode, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_a_swallowed_interrupt_is_still_honoured_at_the_next_step(monkeypatch, capfd):
    """A SIGINT noted during start-up whose KeyboardInterrupt a library's bare ``except:``
    swallowed: the command still ends with its one line and 130, before the run begins."""
    from pipslab import interrupts
    from harness_helpers import pipslab_here
    monkeypatch.setattr(interrupts, "_NOTED", [signal.SIGINT])
    r = pipslab_here(capfd, "tournament", "happy", "--games", "4", "--no-progress")
    assert r.returncode == 130 and r.stderr.strip() == "pipslab: interrupted", r.stderr
    monkeypatch.setattr(interrupts, "_NOTED", [])
    interrupts.check()                       # nothing noted: nothing raised
