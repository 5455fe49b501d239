"""``pipslab analyze``: positions whose best choice is known by hand get it, with the exact
loss of the others; a replayed game's analysis is the live game's; ``--resume`` finishes
what an interrupted run left; every bad input is one line, exit 2, nothing written; and
``tournament --analyze`` adds the error-rate columns."""
from __future__ import annotations

import csv
import importlib.util
import io
import re
import shutil
import sys

import numpy as np
import pandas as pd
import pytest

from pipslab.envs.backgammon import Position, legal_plays
from pipslab.envs.backgammon.moves import dice_to_play
from pipslab.envs.dominoes.notation import parse_position
from pipslab.envs.errors import PipslabError
from pipslab.experiments.analyze import (Decision, DecisionRecorder, analyze_record, game_rows, make_reference,
                                         parse_games, reference_for, sees_every_tile, summarize_decisions,
                                         summarize_phases)
from pipslab.experiments.cli import main
from pipslab.envs.game import get_game
from pipslab.experiments.games import play_game
from pipslab.experiments.play import read_records
from pipslab.experiments.seedplan import new_seat_agents

HAS_GNUBG = importlib.util.find_spec("gnubg_nn") is not None


def cli(argv, capsys):
    capsys.readouterr()
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as exc:
        rc = exc.code
    out, err = capsys.readouterr()
    return rc, out, err


def refused(argv, capsys, match, untouched):
    """Exit 2, one short line on stderr naming the problem, ``untouched`` as it was."""
    before = sorted(str(p) for p in untouched.rglob("*")) if untouched.exists() else None
    rc, _, err = cli(argv, capsys)
    lines = err.splitlines()
    assert rc == 2 and len(lines) == 1 and "Traceback" not in err, (argv, rc, err)
    assert re.search(match, lines[0]), lines[0]
    after = sorted(str(p) for p in untouched.rglob("*")) if untouched.exists() else None
    assert after == before, f"{argv} wrote {set(after or ()) - set(before or ())}"


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """Small tournaments as a user makes them: Happy block and backgammon."""
    root = tmp_path_factory.mktemp("tournaments")
    for game, agents, n in (("happy", "heaviest,random", 4), ("backgammon", "pubeval,random", 2)):
        assert main(["tournament", game, "--agents", agents, "--games", str(n), "--seed", "3", "--workers", "1",
                     "--no-progress", "--no-plots", "--out", str(root / game)]) == 0
    return root


# ------------------------------------------------------------------ known positions
def test_bearoff_known_best_play_and_the_bad_ones_loss():
    """X (on roll): one checker on his 6-point, three on his 1-point; O: three on his
    1-point; X rolls 6-1.  ``6/off 1/off`` leaves two checkers (X wins unless O rolls a
    double: 30/36, equity 2/3); ``6/5 5/off`` leaves three (X wins only when O rolls no
    double and X does: 5/36, equity -13/18): a loss of 25/18 of a point."""
    start = Position.from_points({6: 1, 1: 3}, {24: 3})
    plays = {p.notation: p.position for p in legal_plays(start, dice_to_play((6, 1)))}
    assert set(plays) == {"6/off 1/off", "6/5 5/off"}
    specs = ["pubeval", "expectimax:plies=1,eval=pubeval"] + (["gnubg:plies=0", "gnubg:plies=2"] if HAS_GNUBG else [])
    for spec in specs:
        ref = make_reference("backgammon", spec)
        good = ref.judge(Decision(0, 0, "a", start, plays["6/off 1/off"], (6, 1)), np.random.default_rng(0))
        bad = ref.judge(Decision(0, 0, "a", start, plays["6/5 5/off"], (6, 1)), np.random.default_rng(0))
        assert good["best"] == bad["best"] == "6/off 1/off", spec
        assert good["loss"] == 0.0 and bad["loss"] > 0.2, (spec, bad)
        if spec.startswith("gnubg"):   # two-sided bear-offs are exact in GNU BG
            assert bad["loss"] == pytest.approx(25 / 18, abs=1e-3)


@pytest.mark.slow   # loads torch and the TD net
def test_default_backgammon_reference_without_gnubg_says_so(monkeypatch):
    monkeypatch.setitem(sys.modules, "gnubg_nn", None)   # gnubg-nn missing
    ref = make_reference("backgammon")
    assert ref.spec == "expectimax:plies=2,eval=td" and "gnubg-nn is not installed" in ref.label


def test_forced_plays_are_not_decisions():
    ref = make_reference("backgammon", "pubeval")
    start = Position.from_points({6: 2}, {24: 3})   # 6-5 from two checkers on the 6: 6/off 6/1, one play
    (only,) = legal_plays(start, dice_to_play((6, 5)))
    rows = game_rows(0, [Decision(0, 0, "a", start, only.position, (6, 5))], ref, seed=0)
    assert rows[0]["forced"] and rows[0]["loss"] == "" and rows[0]["choice"] == only.notation


def test_domino_ending_solved_by_hand():
    """Ends 0|6, black holds 0-5 and 1-6, white only 5-5 (every other tile on the table:
    black sees everything).  1-6 right leaves 0|1: white passes, black goes out with 0-5
    (+1).  0-5 left opens a 5 for white's last tile (-1): a loss of exactly 2."""
    state = parse_position("happy-block; turn=0; ends=0|6; hands=0-5 1-6 / 5-5")
    assert sees_every_tile(state.observe(0))
    ref = make_reference("dominoes", "pimc:samples=3")
    best, bad = (ref.judge(Decision(0, 0, "a", state, a), np.random.default_rng(0)) for a in (25, 10))
    assert best["choice"] == "1-6@right" and best["best"] == "1-6@right" and best["loss"] == 0
    assert bad["choice"] == "0-5@left" and bad["best"] == "1-6@right" and bad["loss"] == 2
    assert best["how"] == bad["how"] == "exact"


def test_domino_hidden_tiles_are_sampled_and_a_forced_move_is_not_counted():
    # RULES §2 scenario 3: black's only move is 2-3 right
    forced = parse_position("happy-block; turn=0; ends=6|3; hands=4-4 2-3 / 0-1 1-1 2-2")
    ref = make_reference("dominoes", "pimc:samples=5")
    rows = game_rows(0, [Decision(0, 0, "a", forced, forced.legal_actions()[0])], ref, seed=0)
    assert rows[0]["forced"] and rows[0]["loss"] == ""
    # a deal: the opponent's tiles are hidden among the 21 unseen ones
    spec = get_game("happy")
    state = spec.new_state(np.random.default_rng(5), spec.options_for({"mode": "block"}))
    while len(state.legal_actions()) < 3:   # on to a choice between distinct moves
        state.apply(state.legal_actions()[0])
    assert not sees_every_tile(state.observe(state.current_player))
    d = Decision(1, state.current_player, "a", state, state.legal_actions()[0])
    r1, r2 = (ref.judge(d, np.random.default_rng(s)) for s in (1, 1))
    assert r1 == r2 and r1["how"] == "sampled 5" and 0 <= r1["loss"] <= 2


def test_solver_less_variants_are_refused_in_one_line():
    for game, options, what in (("triple", {}, "line game|spinner"), ("troshin", {"players": 3}, "two sides"),
                                ("troshin", {"match": True}, "match")):
        with pytest.raises(PipslabError, match=what):
            reference_for(game, options)


def test_summary_counts_unforced_decisions_only():
    df = pd.DataFrame({"game": [0, 0, 1, 1, 1], "agent": ["a", "a", "a", "b", "b"],
                       "forced": [False, True, False, False, False], "loss": ["0.1", "", "0.0", "0.6", "0.2"]})
    s = summarize_decisions(df, ["a", "b"], blunder=0.5).set_index("agent")
    assert s.loc["a", "decisions"] == 2 and s.loc["a", "forced"] == 1
    assert s.loc["a", "error_rate"] == pytest.approx(50.0) and s.loc["b", "error_rate"] == pytest.approx(400.0)
    assert s.loc["b", "blunders"] == 1 and s.loc["b", "blunder_rate"] == 0.5
    assert s.loc["a", "error_rate_low"] <= 50.0 <= s.loc["a", "error_rate_high"]


def test_phases_split_each_agents_loss_and_come_in_the_order_of_play():
    df = pd.DataFrame({"game": [0, 0, 0, 1, 1, 1, 1], "turn": [0, 1, 5, 0, 4, 6, 7],
                       "agent": ["a", "a", "a", "a", "b", "b", "a"],
                       "forced": [False, False, False, True, False, False, False],
                       "loss": ["0.1", "0.0", "0.4", "", "0.6", "0.2", "0.3"],
                       "phase": ["early", "early", "late", "early", "late", "late", "late"]})
    p = summarize_phases(df, ["a", "b"])
    assert list(p["phase"][p["agent"] == "a"]) == ["early", "late"]      # early's mean turn is lower
    a = p[p["agent"] == "a"].set_index("phase")
    assert a.loc["early", "decisions"] == 2 and a.loc["late", "decisions"] == 2     # the forced one is not counted
    assert a.loc["early", "error_rate"] == pytest.approx(50.0) and a.loc["late", "error_rate"] == pytest.approx(350.0)
    assert a.loc["late", "loss_per_game"] == pytest.approx(0.7 / 2)                 # a played 2 games
    assert a["loss_share"].sum() == pytest.approx(1.0) and a.loc["early", "loss_share"] == pytest.approx(0.1 / 0.8)
    b = p[p["agent"] == "b"]
    assert list(b["phase"]) == ["late"] and b["loss_per_game"].iloc[0] == pytest.approx(0.8)


def test_recorded_decisions_carry_the_games_phase():
    """Happy draw: the phase is how full the boneyard is, from the mover's view; block: his
    tiles in hand; backgammon: the mover's contact, race or bear-off."""
    draw = get_game("happy")
    for text, phase in (("happy-draw; turn=0; ends=0|6; hands=0-5 1-6 / 5-5 2-2; boneyard=3-3", "boneyard 1-4"),
                        ("happy-draw; turn=0; ends=0|6; hands=0-5 1-6 / 5-5 2-2", "boneyard empty")):
        assert draw.phase_of(parse_position(text)) == phase, text
    state = draw.new_state(np.random.default_rng(1), {"mode": "draw"})
    assert draw.phase_of(state) == "boneyard 10+"
    block = draw.new_state(np.random.default_rng(1), {"mode": "block"})
    assert draw.phase_of(block) == "5+ in hand"
    assert draw.phase_of(parse_position("happy-block; turn=0; ends=0|6; hands=0-5 1-6 / 5-5")) == "1-2 in hand"
    bg = get_game("backgammon")
    for points, opp, phase in (({24: 2, 13: 5, 8: 3, 6: 5}, {1: 2, 12: 5, 17: 3, 19: 5}, "contact"),
                               ({10: 2, 6: 13}, {24: 15}, "race"), ({6: 2, 1: 13}, {24: 15}, "bear-off")):
        pos = Position.from_points(points, opp)
        assert bg.phase_of(bg.parse(pos.id)) == phase, phase
    recorder = DecisionRecorder(draw, ["a", "b"])
    play_game(draw, {"mode": "draw"}, new_seat_agents(["heaviest", "random"], "happy"), 3, 4, recorder.on_move)
    seen = [d.phase for d in recorder.decisions]
    assert seen[0] == "boneyard 10+" and set(seen) <= {"boneyard 10+", "boneyard 5-9", "boneyard 1-4",
                                                       "boneyard empty"}
    rows = game_rows(0, recorder.decisions, make_reference("dominoes", "pimc:samples=2"), seed=0)
    assert [r["phase"] for r in rows] == seen


def test_parse_games():
    assert parse_games("0,5-7, 2") == [0, 2, 5, 6, 7]
    for bad in ("x", "3-1", "1,,2", "-1", "1-"):
        with pytest.raises(PipslabError, match="--games"):
            parse_games(bad)


# ------------------------------------------------------------------ replay = live
@pytest.mark.parametrize("game,reference", [("happy", "pimc:samples=4"), ("backgammon", "pubeval")])
def test_replayed_game_analysis_equals_the_live_one(folders, game, reference, capsys):
    records, path = read_records(folders / game)
    record = records[1]
    ref = make_reference(get_game(game).family, reference)
    spec = get_game(record["game"])
    live = DecisionRecorder(spec, record["names"])
    play_game(spec, record["options"], new_seat_agents(record["names"], game), record["deal_seed"],
              record["agent_seed"], live.on_move)
    rows = game_rows(1, live.decisions, ref, seed=4)
    assert rows == analyze_record(record, 1, path, ref, seed=4)
    assert any(not r["forced"] for r in rows)
    # and the command writes the same rows
    out = folders / f"{game}-an"
    rc, printed, _ = cli(["analyze", "--from", folders / game, "--games", "1", "--reference", reference,
                          "--seed", "4", "--workers", "1", "--no-progress", "--no-plots", "--out", out], capsys)
    assert rc == 0 and "error_rate" in printed
    written = pd.read_csv(out / "decisions.csv", keep_default_na=False)
    assert list(written["choice"]) == [r["choice"] for r in rows]
    assert np.allclose(pd.to_numeric(written["loss"], errors="coerce").fillna(-1),
                       [-1 if r["loss"] == "" else r["loss"] for r in rows])
    summary = pd.read_csv(out / "analysis.csv")
    assert {"agent", "decisions", "error_rate", "error_rate_low", "error_rate_high", "blunders",
            "blunder_rate"} <= set(summary.columns)
    assert "Worst decisions" in (out / "analysis.md").read_text()
    phases = pd.read_csv(out / "phases.csv")           # the phases' losses add up to each agent's
    for agent, row in summary.set_index("agent").iterrows():
        mine = phases[phases["agent"] == agent]
        assert mine["decisions"].sum() == row["decisions"]
        games = written.loc[written["agent"] == agent, "game"].nunique()
        assert (mine["loss_per_game"] * games).sum() == pytest.approx(row["error_rate"] * row["decisions"] / 1000)
    assert set(written["phase"]) <= {"contact", "race", "bear-off", "5+ in hand", "3-4 in hand", "1-2 in hand"}
    assert "By phase of the game" in (out / "analysis.md").read_text()


def test_resume_finishes_an_interrupted_analysis(folders, tmp_path, capsys):
    argv = ["analyze", "--from", folders / "happy", "--reference", "pimc:samples=3", "--workers", "1",
            "--no-progress", "--no-plots"]
    assert cli(argv + ["--out", tmp_path / "full"], capsys)[0] == 0
    full = (tmp_path / "full" / "decisions.csv").read_text()
    part = tmp_path / "part"
    shutil.copytree(tmp_path / "full", part)
    lines = full.splitlines(keepends=True)
    (part / "decisions.csv").write_text("".join(lines[:len(lines) // 2]))   # a run killed midway
    (part / "decisions.csv.sums").unlink()
    rc, _, err = cli(argv + ["--out", part, "--resume"], capsys)
    assert rc == 0 and "unfinished game" in err, err
    assert (part / "decisions.csv").read_text() == full
    (part / "decisions.csv").write_text("")   # killed before the first game was written
    assert cli(argv + ["--out", part, "--resume"], capsys)[0] == 0
    assert (part / "decisions.csv").read_text() == full


# ------------------------------------------------------------------ bad input
def test_bad_input_is_one_line_and_writes_nothing(folders, tmp_path, capsys, monkeypatch):
    bg, happy = folders / "backgammon", folders / "happy"
    out = tmp_path / "out"
    empty = tmp_path / "empty"
    empty.mkdir()
    refused(["analyze", "--from", empty, "--out", out], capsys, "no games.csv", tmp_path)
    header_only = tmp_path / "header-only"
    header_only.mkdir()
    (header_only / "games.csv").write_text((happy / "games.csv").read_text().splitlines()[0] + "\n")
    refused(["analyze", "--from", header_only, "--out", out], capsys, "no records", tmp_path)
    refused(["analyze", "--from", happy, "--reference", "nonsense", "--out", out], capsys, "unknown domino", tmp_path)
    refused(["analyze", "--from", bg, "--reference", "nonsense", "--out", out], capsys, "unknown backgammon", tmp_path)
    refused(["analyze", "--from", bg, "--reference", "gnubg:plies=3", "--out", out], capsys, "plies", tmp_path)
    refused(["analyze", "--from", happy, "--games", "2-x", "--out", out], capsys, "--games", tmp_path)
    refused(["analyze", "--from", happy, "--games", "99", "--out", out], capsys, "no game 99", tmp_path)
    monkeypatch.setitem(sys.modules, "gnubg_nn", None)   # gnubg-nn missing
    refused(["analyze", "--from", bg, "--reference", "gnubg:plies=2", "--out", out], capsys, "gnubg-nn", tmp_path)
    refused(["tournament", "backgammon", "--agents", "pubeval,random", "--games", "2", "--out", out,
             "--analyze", "gnubg:plies=1"], capsys, "gnubg-nn", tmp_path)


def test_damaged_record_is_refused_and_nothing_is_written(folders, tmp_path, capsys):
    damaged = tmp_path / "damaged"
    shutil.copytree(folders / "happy", damaged)
    rows = list(csv.DictReader(io.StringIO((damaged / "games.csv").read_text())))
    rows[2]["moves"] = str(int(rows[2]["moves"]) + 1)
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    (damaged / "games.csv").write_text(text.getvalue())
    refused(["analyze", "--from", damaged, "--reference", "pimc:samples=2", "--workers", "1", "--no-progress"],
            capsys, "differs from its record", damaged)


# ------------------------------------------------------------------ tournament --analyze
def test_tournament_analyze_adds_the_error_rate_columns(tmp_path, capsys):
    out = tmp_path / "t"
    rc, printed, err = cli(["tournament", "happy", "--agents", "heaviest,random", "--games", "4", "--seed", "1",
                            "--workers", "1", "--no-progress", "--no-plots", "--out", out,
                            "--analyze", "pimc:samples=3"], capsys)
    assert rc == 0, err
    summary = pd.read_csv(out / "summary.csv")
    for col in ("error_rate", "error_rate_low", "error_rate_high", "blunder_rate"):
        assert col in summary.columns and summary[col].notna().all()
        assert col in printed.splitlines()[1]
    assert "error_rate" in (out / "summary.md").read_text()
    assert (out / "analysis" / "decisions.csv").is_file()
