"""``pipslab bench … --compare REF`` (another checkout's benchmark interleaved with this
one's) and the compiled rows of ``pipslab bench dominoes`` and ``ismcts``.  Benchmarks are
not tests: nothing here asserts a speed, only the shape of what is reported."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pipslab.experiments.bench_compare import bench_argv, compare_table, flatten, merge

ROOT = Path(__file__).resolve().parents[2]


def pipslab(*argv, timeout=900):
    return subprocess.run([sys.executable, "-m", "pipslab.experiments.cli", *argv], capture_output=True, text=True,
                          timeout=timeout)


def test_merge_takes_medians_and_flatten_names_every_number():
    runs = [{"a": 1.0, "peers": {"x": 10, "y": None}, "n": "ours", "ok": True},
            {"a": 3.0, "peers": {"x": 30, "y": None}, "n": "ours", "ok": True, "new": 5},
            {"a": 2.0, "peers": {"x": 20, "y": None}, "n": "ours", "ok": True}]
    m = merge(runs)
    assert m == {"a": 2.0, "peers": {"x": 20, "y": None}, "n": "ours", "ok": True, "new": 5}
    assert flatten(m) == {"a": 2.0, "peers.x": 20, "new": 5}
    table, ratios = compare_table({"a": 4.0, "only_here": 1.0}, {"a": 2.0, "only_there": 3}, "HEAD~1", 3)
    assert ratios == {"a": 2.0}
    assert "only_here" in table and "only_there" in table and "HEAD~1" in table and "3 run(s)" in table


def test_bench_argv_passes_the_benchmarks_own_flags_only():
    class Args:
        game, seconds, seed, deals, moves, agents, bench_game, mode, players, pairs = \
            "agents", 0.5, 3, None, 4, "heaviest", "troshin", None, 4, True
        compare, rounds, out, json = "HEAD", 2, "/tmp/x", True
    argv = bench_argv(Args)
    assert argv[3:] == ["bench", "agents", "--json", "--seconds", "0.5", "--seed", "3", "--moves", "4", "--agents",
                        "heaviest", "--game", "troshin", "--players", "4", "--pairs"]


def test_rounds_needs_compare_and_a_bad_ref_is_one_line():
    r = pipslab("bench", "dominoes", "--rounds", "2", "--seconds", "0.1")
    assert r.returncode == 2 and "--rounds applies to --compare" in r.stderr
    if shutil.which("git") and (ROOT / ".git").exists():
        r = pipslab("bench", "dominoes", "--compare", "no-such-ref-anywhere", "--seconds", "0.1")
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "no-such-ref" in r.stderr


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("git") or not (ROOT / ".git").exists(), reason="needs a git checkout")
def test_compare_runs_both_checkouts_and_reports_ratios(tmp_path):
    r = pipslab("bench", "dominoes", "--seconds", "0.05", "--compare", "HEAD", "--rounds", "1", "--json",
                "--out", str(tmp_path / "b"))
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout.strip().splitlines()[-1])
    assert data["ours_games_per_s"] > 0 and data["compiled_games_per_s"] > 0
    cmp = data["compare"]
    assert cmp["ref"] == "HEAD" and len(cmp["commit"]) == 40 and cmp["rounds"] == 1
    assert cmp["ref_result"]["ours_games_per_s"] > 0 and cmp["ratio"]["ours_games_per_s"] > 0
    assert "this/ref" in r.stdout and (tmp_path / "b" / "bench_dominoes_compare.json").is_file()
    worktrees = subprocess.run(["git", "worktree", "list"], cwd=ROOT, capture_output=True, text=True).stdout
    assert "pipslab-compare-" not in worktrees


@pytest.mark.peers
@pytest.mark.slow
def test_bench_dominoes_reports_the_compiled_rows_beside_the_peers():
    r = pipslab("bench", "dominoes", "--json", "--seconds", "0.1")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout.strip().splitlines()[-1])
    for key in ("ours_games_per_s", "ours_draw_games_per_s", "ours_troshin4_pairs_games_per_s",
                "ours_triple4_games_per_s", "compiled_games_per_s", "compiled_draw_games_per_s",
                "compiled_troshin4_pairs_games_per_s", "compiled_triple4_games_per_s",
                "compiled_per_call_games_per_s", "compiled_rollout_from_state_per_s", "clone_us", "compiled_clone_us"):
        assert data[key] > 0, key
    os_rate = data["peers"]["openspiel_block_dominoes"]
    assert data["speedup_vs_openspiel"] == pytest.approx(data["compiled_games_per_s"] / os_rate)
    assert data["speedup_vs_openspiel_engine_api"] == pytest.approx(data["ours_games_per_s"] / os_rate)
    assert data["triple4_speedup_vs_dominoes_pkg"] > 0


@pytest.mark.peers
@pytest.mark.slow
def test_bench_ismcts_reports_the_python_loop_beside_the_compiled_one():
    r = pipslab("bench", "ismcts", "--json", "--moves", "4")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout.strip().splitlines()[-1])
    assert data["ours_s_per_move"] > 0 and data["python_loop_s_per_move"] > 0
    assert data["moves_timed"] == 4 and data["python_loop_moves_timed"] == 3
    assert data["speedup_vs_openspiel"] > 0 and data["speedup_vs_python_loop"] > 0
