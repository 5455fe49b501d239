"""The shared experiment runner (pipslab.experiments.runner) under faults, through
``pipslab tournament`` and ``pipslab calibrate``: table-driven.

* bad input — exit status 2, exactly one line on stderr, no traceback, nothing written;
* damaged folders on ``--resume`` — repaired with a note (and then the records of an
  uninterrupted run), or refused in one line with the folder left as it was; never silent;
* processes — a second run on a folder in use is refused naming the process that holds
  it, a lock left by a SIGKILL does not block ``--resume``, a SIGKILLed calibrate leaves
  no worker behind, Ctrl-C while the command starts is exit 130 and one line, a closed
  stdout pipe (``| head``) ends quietly.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from pipslab.experiments.cli import main
from pipslab.experiments.tournament import TournamentArgs, read_games, run_tournament

from harness_fakes import fakes_installed  # noqa: F401  (autouse: the slow agent, this module only)
from harness_helpers import ROOT, TESTS

GAMES, SEED, AGENTS = 120, 5, "random,suits"
FAST = ["tournament", "happy", "--agents", AGENTS, "--games", str(GAMES), "--seed", str(SEED), "--workers", "1",
        "--no-plots", "--no-progress"]


def run_main(argv, capsys):
    """``pipslab ARGV`` in this process: (exit status, stderr lines)."""
    try:
        code = main(argv)
    except SystemExit as exc:   # argparse's own errors
        code = exc.code
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return code, err.strip().splitlines()


def snapshot(folder: Path) -> dict:
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else "dir")
            for p in sorted(folder.rglob("*"))} if folder.exists() else {}


def records(df):
    return df.drop(columns="duration_s").sort_values("game_id").reset_index(drop=True)


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished reference tournament: its folder and records."""
    out = tmp_path_factory.mktemp("finished") / "t"
    res = run_tournament(TournamentArgs(agents=AGENTS.split(","), games=GAMES, seed=SEED, out=str(out), workers=1,
                                        progress=False, plots=False))
    return out, records(res.games)


# ------------------------------------------------------------------ bad input: exit 2, one line, nothing written
def _config(tmp_path, text):
    path = tmp_path / "c.toml"
    path.write_text(text)
    return ["--config", str(path)]


BAD_INPUT = [
    # (command, extra arguments (OUT = the --out folder), words of the one line)
    ("tournament", ["--seed", "-1"], "--seed must be at least 0"),
    ("tournament", ["--games", str(10 ** 12)], "--games must be at most"),
    ("tournament", ["--games", str(10 ** 30)], "--games must be at most"),
    ("tournament", ["--workers", "-3"], "--workers must be at least 1"),
    ("tournament", ["--backend", "ray", "--workers", "2"], "needs Ray"),
    ("tournament", ["--out", ""], "--out is empty"),
    ("tournament", ["--out", "FILE"], "is a file, not a folder"),
    ("tournament", ["--out", "FILE/x"], "is a file, so no folder can be made below it"),
    ("tournament", ["--out", "/dev/null/x"], "is a file, so no folder can be made below it"),
    ("tournament", ["--out", "/proc/pipslab-nowhere/x"], "cannot be written"),
    ("tournament", ["CONFIG", 'games = "600"\n'], "games must be a whole number, got a string"),
    ("tournament", ["CONFIG", "games = 10.5\n"], "games must be a whole number, got a float"),
    ("tournament", ["CONFIG", 'seed = "1"\n'], "seed must be a whole number"),
    ("tournament", ["CONFIG", 'game = "troshin"\nplayers = "3"\n'], "players must be a whole number"),
    ("tournament", ["CONFIG", "agents = 5\n"], "agents must be a string or a list of strings"),
    ("tournament", ["CONFIG", 'options = "gammons=false"\n'], "options must be a table"),
    ("tournament", ["CONFIG", 'options = ["a"]\n'], "options must be a table"),
    ("tournament", ["CONFIG", "tournament = 3\n"], "[tournament] must be a table"),
    ("tournament", ["CONFIG", ""], "the config is empty"),
    ("tournament", ["CONFIG", "rounds = 3\n"], "unknown keys rounds"),
    ("calibrate", ["--workers", "-3"], "--workers must be at least 0"),
    ("calibrate", ["--games", str(10 ** 15)], "--games must be at most"),
    ("calibrate", ["--seed", "-1"], "--seed must be at least 0"),
    ("calibrate", ["--out", ""], "--out is empty"),
    ("calibrate", ["--out", "FILE"], "is a file, not a folder"),
    ("calibrate", ["--out", "/dev/null/x"], "is a file, so no folder can be made below it"),
    ("calibrate", ["--backend", "ray"], "needs Ray"),
    ("calibrate", ["CONFIG", 'games = "many"\n'], "games must be a whole number"),
]


@pytest.mark.parametrize("command, extra, words", BAD_INPUT,
                         ids=[f"{c}-{' '.join(e)[:40]}" for c, e, _ in BAD_INPUT])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(command, extra, words, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)      # as if Ray were not installed
    monkeypatch.chdir(tmp_path)                        # --out '' must not land in the working folder
    (tmp_path / "FILE").write_text("a file\n")
    out = tmp_path / "out"
    if extra[0] == "CONFIG":
        extra = _config(tmp_path, extra[1]) + ["--out", str(out)]
    elif "--out" not in extra:
        extra = extra + ["--out", str(out)]
    base = ["tournament", "--agents", AGENTS, "--games", "10", "--no-progress"] if command == "tournament" else \
        ["calibrate", "--games", "20", "--workers", "1"]
    before = snapshot(tmp_path)
    code, lines = run_main(base + extra, capsys)
    assert code == 2 and len(lines) == 1, lines
    assert words in lines[0], lines
    assert snapshot(tmp_path) == before            # nothing written (the config and FILE were there before)


# ------------------------------------------------------------------ damaged folders on --resume
@pytest.fixture(scope="module")
def stopped(tmp_path_factory):
    """The same tournament stopped after 80 games, as a kill between two flushes leaves it
    (game i does not depend on the number of games: a run of 80 is the first 80 of 120)."""
    out = tmp_path_factory.mktemp("stopped") / "t"
    run_tournament(TournamentArgs(agents=AGENTS.split(","), games=80, seed=SEED, out=str(out), workers=1,
                                  progress=False, plots=False))
    return out


def _interrupted(stopped, tmp_path):
    out = tmp_path / "t"
    shutil.copytree(stopped, out)
    return out


def _flip(path: Path, offset: int, new: bytes = None):
    data = bytearray(path.read_bytes())
    data[offset] = new[0] if new else data[offset] ^ 0x01
    path.write_bytes(bytes(data))


def _row_offset(path: Path, row: int, column: str) -> int:
    data = path.read_bytes()
    lines = data.split(b"\n")
    header = lines[0].decode().rstrip("\r").split(",")
    start = sum(len(x) + 1 for x in lines[:row + 1])
    fields = lines[row + 1].split(b",")
    return start + sum(len(f) + 1 for f in fields[:header.index(column)])


def damage_header(out):
    _flip(out / "games.csv", 3)


def damage_row(out):
    _flip(out / "games.csv", _row_offset(out / "games.csv", 30, "moves"))


def damage_row_without_sums(out):   # a folder from before the checksums: the seed plan still tells
    (out / "games.csv.sums").unlink()
    _flip(out / "games.csv", _row_offset(out / "games.csv", 30, "deal_seed") + 2, b"7")


def repeat_rows(out):              # what two writers used to leave
    lines = (out / "games.csv").read_bytes().split(b"\n")
    with open(out / "games.csv", "ab") as f:
        f.write(b"\n".join(lines[10:30]) + b"\n")


def damage_header_and_manifest_columns(out):
    _flip(out / "games.csv", 3)
    manifest = json.loads((out / "run.json").read_text())
    del manifest["columns"]
    (out / "run.json").write_text(json.dumps(manifest))


def run_json(text):
    def damage(out):
        (out / "run.json").write_text(text)
    return damage


def drop_plan_key(out):
    manifest = json.loads((out / "run.json").read_text())
    del manifest["seed"]
    (out / "run.json").write_text(json.dumps(manifest))


def run_json_folder(out):
    (out / "run.json").unlink()
    (out / "run.json").mkdir()


def games_folder(out):
    (out / "games.csv").unlink()
    (out / "games.csv").mkdir()


DAMAGE = [
    # (damage, repaired?, words of the note (repaired) or of the one line (refused))
    (damage_header, True, "header was damaged; restored it from run.json"),
    (damage_row, True, "failed games.csv.sums's checksums"),
    (damage_row_without_sums, True, "dropped 1 damaged row (game 30: deal_seed"),
    (repeat_rows, True, "dropped 20 repeated game_ids"),
    (damage_header_and_manifest_columns, False, "header is damaged and run.json does not record the columns"),
    (run_json('{"version": 1, "game": "hap'), False, "run.json is damaged (not valid JSON"),
    (run_json("[1, 2]\n"), False, "run.json is damaged (a list, not a JSON object)"),
    (drop_plan_key, False, "run.json is damaged (no seed)"),
    (run_json_folder, False, "run.json is not a file"),
    (games_folder, False, "games.csv is not a file"),
]


@pytest.mark.parametrize("damage, repaired, words", DAMAGE, ids=[d[0].__name__ for d in DAMAGE])
def test_resume_repairs_with_a_note_or_refuses_in_one_line(damage, repaired, words, finished, stopped, tmp_path,
                                                          capsys):
    out = _interrupted(stopped, tmp_path)
    damage(out)
    before = snapshot(out)
    code, lines = run_main(FAST + ["--out", str(out), "--resume"], capsys)
    if repaired:
        assert code == 0, lines
        assert any(line.startswith("note: ") and words in line for line in lines), lines
        games = read_games(out / "games.csv")
        assert games["game_id"].is_unique and len(games) == GAMES
        pd.testing.assert_frame_equal(records(games), finished[1])
        assert (out / "games.csv").read_bytes().split(b"\n")[0].rstrip(b"\r") == \
            (finished[0] / "games.csv").read_bytes().split(b"\n")[0].rstrip(b"\r")
    else:
        assert code == 2 and len(lines) == 1 and words in lines[0], lines
        assert snapshot(out) == before


def test_the_manifest_records_the_run(finished):
    manifest = json.loads((finished[0] / "run.json").read_text())
    assert manifest["kind"] == "tournament" and manifest["status"] == "done" and manifest["seed"] == SEED
    assert manifest["command"].startswith("pipslab tournament happy --agents random,suits")
    assert {"pipslab_version", "git_commit", "seeds", "started", "ended", "columns"} <= set(manifest)
    assert [s["status"] for s in manifest["sessions"]] == ["done"]
    assert not (finished[0] / ".lock").exists()


# ------------------------------------------------------------------ processes
def _env(**extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(ROOT), env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


def _cli(*args):
    return [sys.executable, "-m", "pipslab.experiments.cli", *args]


def _group(pgid):
    """Live processes of a process group."""
    alive = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = open(f"/proc/{d}/stat").read()
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2:].split()
            if int(fields[2]) == pgid and fields[0] not in "ZX":
                alive.append(int(d))
    return alive


def _rows(path):
    try:
        return max(0, path.read_bytes().count(b"\n") - 1)
    except FileNotFoundError:
        return 0


SLOW = ["tournament", "happy", "--agents", "slow,random,suits", "--games", "240", "--seed", "8", "--workers", "1",
        "--import", "harness_fakes", "--no-plots", "--no-progress"]


@pytest.mark.slow
def test_a_second_run_is_refused_and_a_killed_runs_lock_does_not_block_resume(tmp_path, capsys):
    out = tmp_path / "busy"
    first = subprocess.Popen(_cli(*SLOW, "--out", str(out)), cwd=ROOT, env=_env(PIPSLAB_TEST_DELAY="0.02"),
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        end = time.time() + 60
        while _rows(out / "games.csv") < 10 and first.poll() is None and time.time() < end:
            time.sleep(0.02)
        assert first.poll() is None, first.stderr.read()
        second = subprocess.run(_cli(*SLOW, "--out", str(out), "--resume"), cwd=ROOT, env=_env(PIPSLAB_TEST_DELAY="0"),
                                capture_output=True, text=True, timeout=120)
        lines = second.stderr.strip().splitlines()
        assert second.returncode == 2 and len(lines) == 1 and "Traceback" not in second.stderr, second.stderr
        assert f"is in use by process {first.pid}" in lines[0]
    finally:
        os.killpg(first.pid, signal.SIGKILL)      # no chance to clean up: the lock file stays
        first.wait(timeout=10)
    assert json.loads((out / ".lock").read_text())["pid"] == first.pid
    os.environ["PIPSLAB_TEST_DELAY"] = "0"
    try:
        code, lines = run_main(SLOW + ["--out", str(out), "--resume"], capsys)
        reference = run_tournament(TournamentArgs(agents=["slow", "random", "suits"], games=240, seed=8, workers=1,
                                                  out=str(tmp_path / "ref"), progress=False, plots=False))
    finally:
        os.environ.pop("PIPSLAB_TEST_DELAY", None)
    assert code == 0 and any("taking over the lock" in line and str(first.pid) in line for line in lines), lines
    games = read_games(out / "games.csv")
    assert len(games) == 240 and games["game_id"].is_unique
    pd.testing.assert_frame_equal(records(games), records(reference.games))
    statuses = [s["status"] for s in json.loads((out / "run.json").read_text())["sessions"]]
    assert statuses == ["killed", "done"]


@pytest.mark.slow
def test_calibrate_foreign_chunk_is_refused(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    assert run_main(["calibrate", "--games", "20", "--seed", "3", "--workers", "1", "--out", str(a), "--no-progress",
                     "--json"], capsys)[0] == 0
    assert run_main(["calibrate", "--games", "20", "--seed", "4", "--workers", "1", "--out", str(b), "--no-progress",
                     "--json"], capsys)[0] == 0
    shutil.copy(b / "chunks" / "games-0000000.npz", a / "chunks" / "games-0000000.npz")   # valid, wrong games
    before = snapshot(a)
    code, lines = run_main(["calibrate", "--games", "20", "--seed", "3", "--workers", "1", "--out", str(a),
                            "--resume", "--no-progress"], capsys)
    assert code == 2 and len(lines) == 1 and "holds games of another run (seed: 4 there, 3 here)" in lines[0], lines
    assert snapshot(a) == before


@pytest.mark.slow
def test_sigkill_of_calibrate_leaves_no_worker_behind(tmp_path):
    proc = subprocess.Popen(_cli("calibrate", "--games", "400", "--workers", "2", "--out", str(tmp_path / "c"),
                                 "--no-progress"), cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        end = time.time() + 60
        while len(_group(proc.pid)) < 3 and time.time() < end:    # the command and its worker processes
            time.sleep(0.05)
        time.sleep(1.0)
        assert len(_group(proc.pid)) >= 3 and proc.poll() is None
        os.kill(proc.pid, signal.SIGKILL)                           # the command alone, as `kill -9 PID`
        proc.wait(timeout=10)
        end = time.time() + 15
        while _group(proc.pid) and time.time() < end:
            time.sleep(0.1)
        assert _group(proc.pid) == []
    finally:
        for pid in _group(proc.pid):
            os.kill(pid, signal.SIGKILL)


STARTUP = {
    "tournament": ["tournament", "--agents", AGENTS, "--games", "50", "--no-progress"],
    "calibrate": ["calibrate", "--games", "20", "--workers", "1", "--no-progress"],
}


@pytest.mark.slow
@pytest.mark.parametrize("command", sorted(STARTUP))
def test_ctrl_c_while_starting_is_130_and_one_line(command, tmp_path):
    argv = STARTUP[command] + ["--out", str(tmp_path / "o")]
    # pipslab itself imported, then Ctrl-C the moment main() starts loading the subcommands
    code = ("import os, sys\nfrom pipslab.experiments.cli import main\nos.write(1, b'ready\\n')\n"
            f"sys.exit(main({argv!r}))\n")
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    assert proc.stdout.readline() == b"ready\n"
    time.sleep(0.2)            # into main(): loading the subcommands (torch, pandas …) takes longer than this
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    lines = err.decode().strip().splitlines()
    assert proc.returncode == 130 and len(lines) == 1 and "Traceback" not in err.decode(), err.decode()
    assert lines[0] == "pipslab: interrupted" or " interrupted after " in f" {lines[0]}", lines


@pytest.mark.slow
def test_closed_stdout_pipe_ends_quietly(tmp_path):
    out = tmp_path / "t"
    proc = subprocess.Popen(_cli(*FAST[:5], "40", *FAST[6:], "--out", str(out)), cwd=ROOT, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()                      # `| head` that has already exited
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 141 and err == b"", err.decode()
    assert len(pd.read_csv(out / "games.csv")) == 40


def test_interrupts_held_wait_for_the_block_then_stop_as_before():
    """A signal inside ``interrupts_held`` lets the block finish, then raises as its handler
    would have; none received, nothing raised; the handlers are the old ones after."""
    from pipslab.experiments.runner import interrupts_held
    before = signal.getsignal(signal.SIGINT)
    steps = []
    with pytest.raises(KeyboardInterrupt):
        with interrupts_held():
            steps.append(1)
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)                  # the signal is delivered here, and held
            steps.append(2)
        steps.append(3)
    assert steps == [1, 2] and signal.getsignal(signal.SIGINT) is before
    with interrupts_held():
        steps.append(4)
    assert steps == [1, 2, 4]
