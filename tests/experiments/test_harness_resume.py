"""The harness under interruption, for real: a tournament process killed mid-run (SIGKILL)
or stopped with Ctrl-C (SIGINT) and resumed gives exactly the records of an uninterrupted
run; and the Ray backend plays the same records as the serial one."""
import os
import shlex
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

from pipslab.experiments.tournament import TournamentArgs, read_games, run_tournament

from harness_fakes import fakes_installed  # noqa: F401  (autouse: the fake games, this module only)
from harness_helpers import ROOT, TESTS

pytestmark = pytest.mark.slow   # real processes killed and resumed, and a Ray cluster: tens of seconds each

GAMES = 240
AGENTS = "slow,random,suits"


def records(df):
    return df.drop(columns="duration_s").sort_values("game_id").reset_index(drop=True)


def _env(delay):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(ROOT), env.get("PYTHONPATH", "")])
    env["PIPSLAB_TEST_DELAY"] = str(delay)
    return env


def _start(out, workers, delay=0.004):
    cmd = [sys.executable, "-m", "pipslab.experiments.cli", "tournament", "happy", "--agents", AGENTS,
           "--games", str(GAMES), "--seed", "8", "--out", str(out), "--workers", str(workers),
           "--import", "harness_fakes", "--no-plots", "--no-progress"]
    # a session of its own, so the signal reaches the parent and its workers like a Ctrl-C at a terminal
    return subprocess.Popen(cmd, cwd=ROOT, env=_env(delay), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def _rows(path):
    try:
        return max(0, path.read_text().count("\n") - 1)
    except FileNotFoundError:
        return 0


def _wait_for_rows(proc, path, n, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        if _rows(path) >= n:
            return
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"the tournament ended before {n} games were written: {proc.returncode}\n{err}")
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    pytest.fail(f"no {n} games in {path} after {timeout} s")


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The uninterrupted run, in this process (the slow agent without its pause)."""
    os.environ["PIPSLAB_TEST_DELAY"] = "0"
    try:
        out = tmp_path_factory.mktemp("reference")
        res = run_tournament(TournamentArgs(agents=AGENTS.split(","), games=GAMES, seed=8, out=str(out),
                                            workers=1, progress=False, plots=False, imports=("harness_fakes",)))
    finally:
        os.environ.pop("PIPSLAB_TEST_DELAY", None)
    return records(res.games)


def _resume(out, workers=1):
    cmd = [sys.executable, "-m", "pipslab.experiments.cli", "tournament", "happy", "--agents", AGENTS, "--games", str(GAMES),
           "--seed", "8", "--out", str(out), "--workers", str(workers), "--import", "harness_fakes",
           "--no-plots", "--no-progress", "--resume"]
    return subprocess.run(cmd, cwd=ROOT, env=_env(0), capture_output=True, text=True, timeout=120)


def test_sigkill_mid_run_then_resume_equals_an_uninterrupted_run(tmp_path, reference):
    out = tmp_path / "killed"
    proc = _start(out, workers=2)
    _wait_for_rows(proc, out / "games.csv", 25)
    os.killpg(proc.pid, signal.SIGKILL)           # parent and workers, no chance to clean up
    proc.wait(timeout=10)
    on_disk = _rows(out / "games.csv")
    assert 25 <= on_disk < GAMES, "the run was not interrupted midway"
    r = _resume(out, workers=2)
    assert r.returncode == 0, r.stderr
    assert "the rest resumed" in r.stdout
    games, in_order = read_games(out / "games.csv", with_order=True)
    assert len(games) == GAMES and games["game_id"].is_unique and in_order
    pd.testing.assert_frame_equal(records(games), reference)


def test_ctrl_c_stops_cleanly_and_the_printed_command_resumes(tmp_path, reference):
    out = tmp_path / "interrupted"
    proc = _start(out, workers=1)
    _wait_for_rows(proc, out / "games.csv", 15)
    os.killpg(proc.pid, signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    assert lines[0].startswith("interrupted after ") and "; resume with: pipslab tournament" in lines[0]
    done = int(lines[0].split()[2])
    games = pd.read_csv(out / "games.csv")
    assert len(games) == done and 15 <= done < GAMES          # every counted game is on disk
    command = shlex.split(lines[0].split("resume with: ", 1)[1])
    assert command[:2] == ["pipslab", "tournament"] and command[-1] == "--resume"
    r = subprocess.run([sys.executable, "-m", "pipslab.experiments.cli", *command[1:], "--no-progress"], cwd=ROOT,
                       env=_env(0), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    pd.testing.assert_frame_equal(records(read_games(out / "games.csv")), reference)


@pytest.mark.xdist_group("ray")   # one local Ray instance at a time under xdist (test.sh)
def test_ray_backend_plays_the_same_records(tmp_path):
    import ray  # noqa: F401  (in the dev extra: a missing ray fails this test, it does not skip)
    common = dict(agents=["random", "heaviest", "suits"], games=120, seed=12, progress=False, plots=False)
    serial = run_tournament(TournamentArgs(out=str(tmp_path / "serial"), workers=1, **common))
    # in a process of its own: a local Ray instance starts and stops there, not in the test runner
    r = subprocess.run([sys.executable, "-m", "pipslab.experiments.cli", "tournament", "happy", "--agents",
                        "random,heaviest,suits", "--games", "120", "--seed", "12", "--out", str(tmp_path / "ray"),
                        "--backend", "ray", "--workers", "2", "--no-plots", "--no-progress"],
                       cwd=ROOT, env=_env(0), capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr
    assert "happy-block: 120 games" in r.stdout
    pd.testing.assert_frame_equal(records(read_games(tmp_path / "ray" / "games.csv")), records(serial.games))
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "ray" / "summary.csv"),
                                  pd.read_csv(tmp_path / "serial" / "summary.csv"))
