"""The pipslab CLI (one-line errors, exit codes) and the first tournament."""
import json

import pandas as pd
import pytest

from pipslab.agents.registry import make_agent, parse_spec
from pipslab.envs.errors import PipslabError
from pipslab.experiments.cli import main
from pipslab.experiments.cliargs import split_agent_list
from pipslab.experiments.ratings import wilson_interval
from pipslab.experiments.tournament import TournamentArgs, run_tournament

from harness_helpers import pipslab, pipslab_here


# in a real process too: one refusal of argparse's, one of pipslab's own
BAD_INPUT_IN_A_PROCESS = (["tournament", "--agents", "grandmaster,random"], ["tournament", "--bogus"])


@pytest.mark.parametrize("args, message", [
    pytest.param(["tournament", "--agents", "grandmaster,random"], "unknown agent 'grandmaster'",
                 marks=pytest.mark.slow),
    pytest.param(["tournament", "--bogus"], "unrecognized arguments: --bogus", marks=pytest.mark.slow),
    (["tournament", "--games", "0"], "--games must be at least 1"),
    (["tournament", "chess"], "unknown game 'chess'"),
    (["play", "happy", "--agents", "random,random", "--position", "happy-block; ends=1|9; hands=1-1 / 2-2"],
     "expected two numbers"),
    (["play", "happy", "--agents", "random"], "give 2 agents"),
    (["bench", "checkers"], "invalid choice"),
])
def test_bad_input_is_one_line_and_nonzero_exit(capfd, args, message):
    """Each through the CLI's main in this process (its exit status and stderr, warnings
    included, as a process gives them, without a start-up each); the two in
    BAD_INPUT_IN_A_PROCESS through a real ``pipslab`` process as well."""
    runs = [pipslab_here(capfd, *args)] + ([pipslab(*args)] if args in BAD_INPUT_IN_A_PROCESS else [])
    for r in runs:
        assert r.returncode == 2
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1, r.stderr
        assert message in lines[0]
        assert "Traceback" not in r.stderr


def test_play_prints_a_game(capsys):
    assert main(["play", "happy", "--agents", "heaviest,suits", "--seed", "4"]) == 0
    out = capsys.readouterr().out
    assert "seat 0 (heaviest)" in out and "game over" in out


@pytest.mark.slow
def test_tournament_cli_writes_tables(tmp_path, capsys):
    out = tmp_path / "t"
    assert main(["tournament", "happy", "--mode", "block", "--agents", "heaviest,random", "--games", "40",
                 "--seed", "3", "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "heaviest" in printed and "win_rate" in printed
    games = pd.read_csv(out / "games.csv")
    summary = pd.read_csv(out / "summary.csv")
    assert len(games) == 40 and games["game_id"].is_unique
    for col in ["agent", "games", "wins", "draws", "losses", "win_rate", "avg_pips_left"]:
        assert col in summary.columns
    assert set(summary["agent"]) == {"heaviest", "random"}
    assert (summary["wins"] + summary["draws"] + summary["losses"] == summary["games"]).all()
    assert summary["games"].sum() == 80  # two seats a game
    # seats alternate: each agent sits in seat 0 in half the games
    assert (games["seat0"] == "heaviest").sum() == 20
    assert (out / "summary.md").exists() and (out / "pairings.csv").exists()


def test_duplicate_twins_share_the_deal_with_seats_swapped(tmp_path):
    games, summary, _ = run_tournament(TournamentArgs(agents=["heaviest", "suits"], games=20, seed=5,
                                                      out=str(tmp_path), progress=False))
    for k in range(0, 20, 2):
        a, b = games.iloc[k], games.iloc[k + 1]
        assert a["deal_seed"] == b["deal_seed"]
        assert (a["seat0"], a["seat1"]) == (b["seat1"], b["seat0"])


def test_identical_agents_split_duplicate_pairs_exactly(tmp_path):
    # two copies of a deterministic agent on duplicate deals: every twin pair is one win each (or two draws)
    from pipslab.agents import registry
    registry.register("heaviest2", games=["happy"])(lambda game: make_agent("heaviest", game))
    games, summary, _ = run_tournament(TournamentArgs(agents=["heaviest", "heaviest2"], games=200, seed=1,
                                                      out=str(tmp_path), progress=False))
    s = summary.set_index("agent")
    assert s.loc["heaviest", "wins"] == s.loc["heaviest2", "wins"]
    assert s.loc["heaviest", "score"] == pytest.approx(0.5)


def test_same_seed_same_records(tmp_path):
    args = dict(agents=["random", "suits"], games=30, seed=9, progress=False)
    a, _, _ = run_tournament(TournamentArgs(out=str(tmp_path / "a"), **args))
    b, _, _ = run_tournament(TournamentArgs(out=str(tmp_path / "b"), **args))
    pd.testing.assert_frame_equal(a.drop(columns="duration_s"), b.drop(columns="duration_s"))


def test_wilson_interval_matches_hand_computed_values():
    # 8 of 10 at 95%: (0.4902, 0.9433) — e.g. Newcombe (1998), table I
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4) and high == pytest.approx(0.9433, abs=1e-4)
    low, high = wilson_interval(0, 10)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)


def test_agent_specs_parse():
    assert split_agent_list("pimc:samples=50,time=1,random") == ["pimc:samples=50,time=1", "random"]
    assert parse_spec("x:a=1,b=0.5,c=true,d=pubeval") == ("x", {"a": 1, "b": 0.5, "c": True, "d": "pubeval"})
    with pytest.raises(PipslabError, match="expected key=value"):
        parse_spec("x:a")
    with pytest.raises(PipslabError, match="bad parameters"):
        make_agent("heaviest:depth=3", "happy")


@pytest.mark.peers
@pytest.mark.slow
def test_bench_reports_ours_and_peers_in_one_json():
    r = pipslab("bench", "dominoes", "--json", "--seconds", "0.2")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout.strip().splitlines()[-1])
    assert data["ours_games_per_s"] > 0
    assert set(data["peers"]) == {"openspiel_block_dominoes", "dominoes_pkg"}
    assert all(v and v > 0 for v in data["peers"].values()), data
    assert data["clone_us"] > 0


def test_match_flag_plays_troshin_matches_to_100(tmp_path):
    out = tmp_path / "m"
    assert main(["tournament", "troshin", "--players", "2", "--match", "--agents", "suits,random", "--games", "2",
                 "--out", str(out), "--no-progress", "--workers", "1", "--no-plots"]) == 0
    games = pd.read_csv(out / "games.csv")
    assert (games["variant"] == "troshin-2-match").all()
    assert len(games) == 2


def test_gauntlet_pairings_list_only_pairs_that_met(tmp_path):
    games, summary, pairings = run_tournament(TournamentArgs(agents=["heaviest", "suits", "random"], games=12,
                                                             fmt="gauntlet", out=str(tmp_path), progress=False,
                                                             plots=False))
    assert set(map(tuple, pairings[["agent", "opponent"]].values)) == {("heaviest", "suits"), ("heaviest", "random")}
