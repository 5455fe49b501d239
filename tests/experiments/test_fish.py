"""`pipslab fish study` and `pipslab fish puzzles`: rows that replay from their records,
answers that follow from the rows, resume, and bad input refused in one line."""
import io
import json
import shutil
import sys

import pandas as pd
import pytest

from pipslab.agents.solver import Solver
from pipslab.envs.dominoes.notation import format_position, parse_position
from pipslab.experiments.cli import main
from pipslab.experiments.fish import read_tournament
from pipslab.experiments.fish_positions import (GameStudy, StudySettings, closes, distinct_moves, keep_game,
                                                split_value)
from pipslab.experiments.puzzles import SHIPPED, load_book, play_puzzles

STUDY = ["fish", "study", "happy", "--agents", "heaviest,suits", "--games", "60", "--seed", "3",
         "--before", "4", "--view-samples", "2", "--compare", "0.3", "--workers", "1", "--no-progress"]


def cli(argv, capsys, monkeypatch=None, stdin=""):
    if monkeypatch is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as exc:
        rc = exc.code
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    out = tmp_path_factory.mktemp("fish") / "study"
    assert main(STUDY + ["--out", str(out), "--no-plots"]) == 0
    return out


def test_study_writes_its_tables(study):
    for name in ("games.csv", "positions.csv", "summary.csv", "summary.md", "run.json", "tournament/games.csv"):
        assert (study / name).is_file(), name
    manifest = json.loads((study / "run.json").read_text())
    assert manifest["kind"] == "fish-study" and manifest["status"] == "done"
    assert manifest["results"]["positions"] == len(pd.read_csv(study / "positions.csv"))


def test_every_blocked_game_is_studied_and_a_seeded_share_of_the_others(study):
    tour = pd.read_csv(study / "tournament" / "games.csv")
    games = pd.read_csv(study / "games.csv")
    settings = StudySettings(seed=3, compare=0.3)
    expected = {int(r.game_id) for r in tour.itertuples() if keep_game(settings, int(r.game_id), bool(r.blocked))}
    assert set(games["game_id"]) == expected
    assert set(tour.loc[tour["blocked"], "game_id"]) <= expected
    assert (games["end"] == "out").any()   # the comparison sample is not empty at 30%
    # the selection depends on the seed and the game id alone
    assert keep_game(settings, 12345, False) == keep_game(StudySettings(seed=3, compare=0.3, before=1), 12345, False)


def test_rows_replay_from_their_records(study):
    """Each kept position is one the recorded game reached: the game replayed from the
    tournament's records (and checked against them) passes through it, and the move
    played there is the row's."""
    task, _, tour = read_tournament(study / "tournament")
    positions = pd.read_csv(study / "positions.csv", keep_default_na=False)
    replayer = GameStudy(task, StudySettings(seed=3, view_samples=0))
    records = tour.set_index("game_id").to_dict("index")
    for game_id, rows in list(positions.groupby("game_id"))[:12]:
        rec = dict(records[game_id], game_id=game_id)
        _, placements, _ = replayer.replay(game_id, rec)
        by_k = {len(placements) - i: (format_position(s), s.action_name(a)) for i, (s, _, a) in enumerate(placements)}
        for row in rows.itertuples():
            assert by_k[row.k] == (row.position, row.played)


def test_row_values_are_the_solvers(study):
    positions = pd.read_csv(study / "positions.csv", keep_default_na=False)
    solver = Solver()
    for row in positions.head(40).itertuples():
        state = parse_position(row.position)
        values = solver.move_values(state)
        best = max(values.values())
        assert best == row.value
        played = next(a for a in values if state.action_name(a) == row.played)
        assert values[played] == row.played_value
        assert row.regret_outcome == split_value(best)[0] - split_value(values[played])[0]
        assert set(row.best.split()) == {state.action_name(a) for a, v in values.items() if v == best}
        assert 0 <= row.view_value + 1 <= 2


def test_the_answers_follow_from_the_rows(study):
    summary = pd.read_csv(study / "summary.csv")
    tour = pd.read_csv(study / "tournament" / "games.csv")
    games = pd.read_csv(study / "games.csv")
    positions = pd.read_csv(study / "positions.csv")

    def answer(question, agent=None, k=None):
        rows = summary[(summary["question"] == question) & (summary["pairing"] == "all")]
        if agent is not None:
            rows = rows[rows["agent"] == agent]
        if k is not None:
            rows = rows[rows["k"] == k]
        assert len(rows) == 1, (question, agent, k)
        return rows.iloc[0]

    fish = answer("fish_share")
    assert fish["n"] == len(tour) and fish["value"] == pytest.approx(tour["blocked"].mean())
    assert fish["low"] <= fish["value"] <= fish["high"]
    assert answer("fewer_pips_side_wins")["value"] == 1.0         # the rule, checked on real games
    blocked = games[games["end"] == "fish"]
    equal = blocked[blocked["side_pips_0"] == blocked["side_pips_1"]]
    assert answer("equal_sums_share")["n"] == len(blocked)
    assert answer("equal_sums_share")["value"] == pytest.approx(len(equal) / len(blocked))
    if len(equal):
        assert answer("equal_sums_draw")["value"] == 1.0
    # decided_k: from every kept position up to it, perfect play gives the final result
    for game_id, rows in positions[positions["end"] == "fish"].groupby("game_id"):
        g = games[games["game_id"] == game_id].iloc[0]
        for r in rows.itertuples():
            if r.k <= g["decided_k"]:
                assert r.outcome_side0 == g["result_side0"]
        if g["decided_k"] < g["kept"]:
            assert rows.loc[rows["k"] == g["decided_k"] + 1, "outcome_side0"].iloc[0] != g["result_side0"]
    d1 = answer("decided_by_k", k=1)
    assert d1["value"] == pytest.approx((blocked["decided_k"] >= 1).mean())
    for agent in ("heaviest", "suits"):
        for end, question in (("fish", "error_rate"), ("out", "error_rate_out")):
            mine = positions[(positions["agent"] == agent) & (positions["end"] == end) & (positions["choices"] >= 2)]
            assert answer(question, agent)["value"] == pytest.approx((mine["regret_outcome"] > 0).mean())


def test_closing_moves():
    # 0-6 on the right makes the ends 1|6: nobody holds a 1 or a 6, so the game is blocked
    state = parse_position("happy-block; turn=0; ends=1|0; hands=0-6 5-5 / 2-3")
    assert closes(state, 2 * 6 + 1)       # 0-6 is tile 6
    # 003's first ending: white's 2-3 on the right does not close (black answers 2-2)
    state = parse_position("happy-block; turn=0; ends=6|3; hands=4-4 2-3 / 0-1 1-1 2-2")
    (a,) = [a for a in state.legal_actions() if state.action_name(a) == "2-3@right"]
    assert not closes(state, a)


def test_distinct_moves_merge_the_same_tile_at_equal_ends():
    state = parse_position("happy-block; turn=0; ends=3|3; hands=3-5 1-1 / 2-2")
    groups = distinct_moves(state, state.legal_actions())
    assert len(state.legal_actions()) == 2 and len(groups) == 1


def test_from_an_existing_tournament_gives_the_same_rows(study, tmp_path, capsys):
    rc, out, err = cli(["fish", "study", "--from", study / "tournament", "--out", tmp_path / "again", "--before", "4",
                        "--view-samples", "2", "--compare", "0.3", "--workers", "2", "--no-plots", "--no-progress"],
                       capsys)
    assert rc == 0, err
    a = pd.read_csv(study / "positions.csv").sort_values(["game_id", "k"]).reset_index(drop=True)
    b = pd.read_csv(tmp_path / "again" / "positions.csv").sort_values(["game_id", "k"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)
    assert "fish_share" in out


def test_resume_skips_finished_blocks_and_refuses_another_plan(study, tmp_path, capsys, monkeypatch):
    import pipslab.experiments.fish as fish
    monkeypatch.setattr(fish, "BLOCK", 20)      # 60 games: three blocks
    out = tmp_path / "copy"
    shutil.copytree(study, out)
    assert not (out / "parts").exists()         # a finished study keeps no blocks
    manifest = json.loads((out / "run.json").read_text())
    manifest.update(tournament=str((out / "tournament").resolve()), status="interrupted")
    (out / "run.json").write_text(json.dumps(manifest))
    # as if killed after blocks 0 and 2 were saved; block 0 carries a mark the study never writes
    games, positions = pd.read_csv(study / "games.csv"), pd.read_csv(study / "positions.csv")
    (out / "parts").mkdir()
    for b in (0, 2):
        keep = lambda t: t[(t["game_id"] >= 20 * b) & (t["game_id"] < 20 * (b + 1))]   # noqa: E731
        part = keep(positions).copy()
        if b == 0:
            part["value"] = 99999
        part.to_csv(out / "parts" / f"positions-{b:05d}.csv", index=False)
        keep(games).to_csv(out / "parts" / f"games-{b:05d}.csv", index=False)
    for name in ("positions.csv", "games.csv", "summary.csv"):
        (out / name).unlink()
    rc, _, err = cli(STUDY + ["--out", out, "--resume", "--no-plots"], capsys)
    assert rc == 0, err
    again = pd.read_csv(out / "positions.csv")
    assert len(again) == len(positions)
    assert (again.loc[again["game_id"] < 20, "value"] == 99999).all()        # block 0 was not redone
    middle = lambda t: t[(t["game_id"] >= 20) & (t["game_id"] < 40)].sort_values(["game_id", "k"])   # noqa: E731
    pd.testing.assert_frame_equal(middle(again).reset_index(drop=True), middle(positions).reset_index(drop=True))
    assert not (out / "parts").exists()
    other = [("5" if a == "4" and STUDY[i - 1] == "--before" else a) for i, a in enumerate(STUDY)]
    rc, _, err = cli(other + ["--out", out, "--resume"], capsys)
    assert rc == 2 and err.count("\n") == 1 and "different fish study" in err


def test_ctrl_c_keeps_the_finished_blocks_and_says_how_to_resume(study, tmp_path, capsys, monkeypatch):
    import pipslab.experiments.fish as fish
    import pipslab.experiments.fish_positions as fp
    monkeypatch.setattr(fish, "BLOCK", 20)
    real = fp.GameStudy.study
    calls = []

    def interrupted(self, game_id, recorded=None):
        calls.append(game_id)
        if game_id >= 40:          # Ctrl-C in the third block
            raise KeyboardInterrupt
        return real(self, game_id, recorded)

    monkeypatch.setattr(fp.GameStudy, "study", interrupted)
    out = tmp_path / "stopped"
    monkeypatch.setattr(sys, "argv", ["pipslab"] + STUDY + ["--out", str(out)])
    rc, _, err = cli(STUDY + ["--out", out, "--no-plots"], capsys)
    assert rc == 130 and err.count("\n") == 1 and "resume with pipslab fish study" in err and "--resume" in err
    assert sorted(p.name for p in (out / "parts").glob("games-*.csv")) == ["games-00000.csv", "games-00001.csv"]
    assert json.loads((out / "run.json").read_text())["status"] == "interrupted"
    monkeypatch.setattr(fp.GameStudy, "study", real)
    rc, _, err = cli(STUDY + ["--out", out, "--no-plots", "--resume"], capsys)
    assert rc == 0, err
    a = pd.read_csv(study / "positions.csv").sort_values(["game_id", "k"]).reset_index(drop=True)
    b = pd.read_csv(out / "positions.csv").sort_values(["game_id", "k"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize("argv, words", [
    (["fish", "study", "troshin", "--players", "3", "--games", "4"], "not two sides"),
    (["fish", "study", "triple", "--games", "4"], "no exact solver"),
    (["fish", "study", "troshin", "--players", "4", "--pairs", "--match", "--games", "4"], "single hands"),
    (["fish", "study", "happy", "--agents", "heaviest,nosuchagent", "--games", "4"], "nosuchagent"),
    (["fish", "study", "happy", "--compare", "2"], "between 0 and 1"),
    (["fish", "puzzles", "happy", "--n", "0"], "at least 1"),
])
def test_bad_flags_one_line_nothing_written(argv, words, tmp_path, capsys):
    out = tmp_path / "out"
    rc, _, err = cli(argv + ["--out", out], capsys)
    assert rc == 2 and err.count("\n") == 1 and words in err, err
    assert not out.exists()


def test_from_a_folder_that_is_not_a_tournament(tmp_path, capsys):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "games.csv").write_text("a,b\n1,2\n")
    for folder, words in ((tmp_path / "notes", "not a tournament folder"), (tmp_path / "missing", "not a folder")):
        rc, _, err = cli(["fish", "study", "--from", folder, "--out", tmp_path / "out"], capsys)
        assert rc == 2 and err.count("\n") == 1 and words in err, err
        assert not (tmp_path / "out").exists()
    (tmp_path / "notes" / "run.json").write_text(json.dumps({"kind": "calibrate", "game": "happy", "options": {},
                                                             "agents": [], "seed": 0}))
    rc, _, err = cli(["fish", "study", "--from", tmp_path / "notes", "--out", tmp_path / "out"], capsys)
    assert rc == 2 and "not a tournament" in err and not (tmp_path / "out").exists()


# ------------------------------------------------------------------ puzzles
def _check_puzzle(p, solver):
    """The puzzle's answer is the only distinct move that reaches its goal, and every wrong
    move's recorded result is the solver's."""
    state = parse_position(p["position"])
    values = solver.move_values(state)
    groups = distinct_moves(state, state.legal_actions())
    results = {key: split_value(max(values[a] for a in acts)) for key, acts in groups.items()}
    best = max(o for o, _ in results.values())
    assert {"win": 1, "draw": 0}[p["goal"]] == best
    reaching = [key for key, (o, _) in results.items() if o == best]
    assert len(reaching) == 1
    assert state.action_name(groups[reaching[0]][0]) == p["answer"] or p["answer"] in {
        state.action_name(a) for a in groups[reaching[0]]}
    wrong = {w["move"]: (w["result"], w["margin"]) for w in p["wrong"]}
    assert len(wrong) == len(groups) - 1
    names = {"win": 1, "draw": 0, "loss": -1}
    for key, acts in groups.items():
        if key != reaching[0]:
            o, m = results[key]
            assert wrong[state.action_name(acts[0])] == ({1: "win", 0: "draw", -1: "loss"}[o], m)
            assert names[wrong[state.action_name(acts[0])][0]] < best


def test_generated_puzzles_are_unique_and_replayable(tmp_path, capsys):
    rc, out, err = cli(["fish", "puzzles", "happy", "--n", "6", "--seed", "2", "--out", tmp_path], capsys)
    assert rc == 0, err
    book = load_book(str(tmp_path / "puzzles.json"))
    assert len(book["puzzles"]) == 6
    solver = Solver()
    for p in book["puzzles"]:
        _check_puzzle(p, solver)
        assert p["tiles_in_hands"] >= 6
    md = (tmp_path / "puzzles.md").read_text()
    assert md.count("## Puzzle") == 6 and book["puzzles"][0]["position"] in md


def test_every_shipped_puzzle_has_one_answer():
    books = sorted(SHIPPED.glob("*.json"))
    assert books, "no shipped puzzle book"
    solver = Solver()
    for path in books:
        book = load_book(str(path))
        assert len(book["puzzles"]) >= 20
        for p in book["puzzles"]:
            _check_puzzle(p, solver)


def test_play_puzzle_in_the_terminal(tmp_path):
    book = load_book("happy-block")
    first, second = book["puzzles"][:2]
    said = []
    answers = iter([first["answer"], "no-such-move", second["wrong"][0]["move"]])
    solved = play_puzzles("happy-block", None, read=lambda prompt: next(answers, None), write=said.append)
    text = "\n".join(said)
    assert solved == 1
    assert "right:" in text and "not a move here" in text and f"The answer is {second['answer']}" in text
    assert f"leads to a {second['wrong'][0]['result']}" in text
    assert "the input ended: solved 1 of 2" in text


@pytest.mark.parametrize("content, words", [
    ("{not json", "not a puzzle file"),
    ('{"format": "other"}', "not a puzzle file"),
    ('{"format": "pipslab-puzzles", "puzzles": []}', "holds no puzzles"),
    ('{"format": "pipslab-puzzles", "puzzles": [{"position": "happy-block; nonsense"}]}', "has no 'answer'"),
    ('{"format": "pipslab-puzzles", "puzzles": [{"position": "happy-block; nonsense", "answer": "1-1@left", '
     '"goal": "win", "line": [], "wrong": []}]}', "puzzle 1"),
    ('{"format": "pipslab-puzzles", "puzzles": [{"position": "happy-block; turn=0; ends=1|0; hands=0-6 5-5 / 2-3", '
     '"answer": "6-6@left", "goal": "win", "line": [], "wrong": []}]}', "not a legal move"),
])
def test_malformed_puzzle_file(content, words, tmp_path, capsys, monkeypatch):
    path = tmp_path / "book.json"
    path.write_text(content)
    rc, _, err = cli(["play", "--puzzle", path], capsys, monkeypatch, stdin="")
    assert rc == 2 and err.count("\n") == 1 and words in err, err
