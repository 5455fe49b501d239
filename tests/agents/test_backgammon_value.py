"""State values for backgammon search (agents/backgammon_value.py) and `pipslab calibrate`:
features seen from both sides, the committed calibrations, the fit and its resume, and
what a 1-ply search with pubeval now plays."""
import json

import numpy as np
import pytest

from pipslab.agents import backgammon_value as bv
from pipslab.agents.backgammon import pubeval_scores
from pipslab.agents.registry import make_agent
from pipslab.envs.backgammon import BackgammonState, Position, legal_plays
from pipslab.envs.errors import PipslabError
from pipslab.experiments.calibrate import CalibrateArgs, play_chunk, run_calibration
from pipslab.experiments.cli import main

from backgammon_helpers import turn_positions


def _positions(n=300, seed=0):
    """Positions with a player on roll from random games (that player's side)."""
    return np.array([np.array(p, dtype=np.int64) for p in turn_positions(n, seed)])


def test_race_mask_agrees_with_position_is_race():
    rows = _positions()
    expected = [Position._trusted(tuple(int(v) for v in r)).is_race() for r in rows]
    assert list(bv.race_mask(rows)) == expected
    assert any(expected) and not all(expected)


def test_features_see_both_sides():
    rows = _positions(200, seed=1)
    x, y = bv.state_features(rows, pubeval_scores), bv.state_features(bv.swap(rows), pubeval_scores)
    # turning the board round swaps mine and theirs and negates the pip lead
    assert np.allclose(x[:, 0], y[:, 1]) and np.allclose(x[:, 1], y[:, 0])
    assert np.allclose(x[:, 2], -y[:, 2])
    assert np.allclose(x[:, [3, 4, 5, 6]], y[:, [4, 3, 6, 5]])
    start = np.array(Position.start(), dtype=np.int64)[None, :]
    f = bv.state_features(start, pubeval_scores)[0]
    assert f[2] == 0 and f[3:].tolist() == [0, 0, 0, 0]
    assert f[0] == f[1]   # the start is the same from both sides


def make_agent_ranker(name):
    from pipslab.agents.search_backgammon import make_evaluator
    return make_evaluator(name).afterstate_values


def test_committed_calibrations_load_and_rank_a_race_lead():
    for name in ("pubeval", "race"):
        cal = bv.calibration(name)
        ahead = np.array(Position.from_points({1: 5, 2: 5, 3: 5}, {20: 5, 22: 5, 24: 5}), dtype=np.int64)
        behind = bv.swap(ahead)
        assert bv.race_mask(ahead)[0]
        ranker = make_agent_ranker(name)
        va, vb = cal.state_values(np.array([ahead, behind]), ranker)
        assert -1 < vb < 0 < va < 1   # far ahead in the race and on roll: nearly won


def test_state_value_credits_my_own_points():
    """The leaf must see the on-roll player's own side: making the 5 point (with
    the same pips) is worth more than the same checkers as blots."""
    cal = bv.calibration("pubeval")
    made = Position.from_points({24: 2, 13: 5, 8: 2, 6: 4, 5: 2},
                                {1: 2, 12: 5, 17: 3, 19: 5})
    blots = Position.from_points({24: 2, 13: 5, 8: 2, 6: 4, 7: 1, 3: 1},
                                 {1: 2, 12: 5, 17: 3, 19: 5})
    assert made.pip_count() == blots.pip_count()
    v = cal.state_values(np.array([made, blots], dtype=np.int64), pubeval_scores)
    assert v[0] > v[1]


def test_calibration_errors_name_the_problem(tmp_path, monkeypatch):
    monkeypatch.setattr(bv, "CALIBRATION_DIR", tmp_path)
    bv.calibration.cache_clear()
    try:
        with pytest.raises(PipslabError, match="no calibration for evaluator 'pubeval'"):
            bv.calibration("pubeval")
        (tmp_path / "pubeval.json").write_text(json.dumps({"features": ["x"], "weights": {}, "bias": {}}))
        with pytest.raises(PipslabError, match="is not a valid calibration"):
            bv.calibration("pubeval")
        (tmp_path / "pubeval.json").write_text("{not json")
        with pytest.raises(PipslabError, match="is not a valid calibration"):
            bv.calibration("pubeval")
    finally:
        bv.calibration.cache_clear()


def test_play_chunk_is_deterministic_and_labels_both_sides():
    a, b = play_chunk("pubeval", 7, 0, 4), play_chunk("pubeval", 7, 2, 2)
    for key in ("x", "won", "game", "race"):
        assert np.array_equal(a[key][a["game"] >= 2], b[key])   # game i depends only on (seed, i)
    for g in range(4):
        won = a["won"][a["game"] == g]
        # players alternate on roll, so the labels alternate too (a dance changes nothing)
        assert won.any() and not won.all()


@pytest.mark.slow
def test_calibrate_fits_resumes_and_refuses_to_overwrite(tmp_path):
    out = tmp_path / "cal"
    args = CalibrateArgs(eval="pubeval", games=250, seed=3, out=str(out), workers=1)
    first = run_calibration(args, progress=False)
    cal = bv.Calibration.from_json(first)
    assert set(cal.weights) == {"contact", "race"}
    for row in first["held_out"]:
        assert row["logloss_fit"] < row["logloss_base"]
    assert first["weights"]["contact"][2] > 0   # a pip lead helps
    with pytest.raises(PipslabError, match="pass --resume"):
        run_calibration(args, progress=False)
    # an interrupted run: one chunk missing; --resume plays it again, same result
    (out / "chunks" / "games-0000100.npz").unlink()
    args.resume = True
    again = run_calibration(args, progress=False)
    assert again["weights"] == first["weights"] and again["positions"] == first["positions"]
    other = CalibrateArgs(eval="pubeval", games=260, seed=3, out=str(out), workers=1, resume=True)
    with pytest.raises(PipslabError, match="holds a different run"):
        run_calibration(other, progress=False)
    (out / "chunks" / "games-0000200.npz").write_bytes(b"not a chunk")
    with pytest.raises(PipslabError, match="games-0000200.npz is not a readable chunk"):
        run_calibration(args, progress=False)


@pytest.mark.slow
def test_calibrate_ctrl_c_saves_what_is_played_and_resume_finishes_it(tmp_path, monkeypatch):
    import pipslab.experiments.calibrate as cal_mod
    real, calls = cal_mod.play_chunk, []

    def interrupted(*a):
        calls.append(a)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*a)

    args = CalibrateArgs(eval="pubeval", games=250, seed=3, out=str(tmp_path / "a"), workers=1)
    monkeypatch.setattr(cal_mod, "play_chunk", interrupted)
    with pytest.raises(cal_mod.CalibrationInterrupted, match=r"after 100 games \(saved\); resume with: "
                       r"pipslab calibrate --eval pubeval --games 250 --seed 3 --out .* --resume"):
        run_calibration(args, progress=False)
    monkeypatch.setattr(cal_mod, "play_chunk", real)
    args.resume = True
    resumed = run_calibration(args, progress=False)
    whole = run_calibration(CalibrateArgs(eval="pubeval", games=250, seed=3, out=str(tmp_path / "b"), workers=1),
                            progress=False)
    assert resumed["weights"] == whole["weights"] and resumed["held_out"] == whole["held_out"]


@pytest.mark.parametrize("argv, message", [
    (["calibrate", "--eval", "gnubg"], "must be a ranking evaluator"),
    (["calibrate", "--eval", "nope"], "known evaluators"),
    (["calibrate", "--games", "5"], "--games must be at least 10"),
    (["calibrate", "--games", "many"], "invalid int value"),
])
def test_calibrate_cli_errors_are_one_line(argv, message, capsys, tmp_path):
    code = None
    try:
        code = main(argv + ["--out", str(tmp_path / "x")])
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1


@pytest.mark.parametrize("roll, play", [
    ((6, 5), "24/18 18/13"), ((3, 1), "8/5 6/5"), ((4, 2), "8/4 6/4"),
    ((6, 1), "13/7 8/7"), ((5, 3), "8/3 6/3"),
])
def test_one_ply_pubeval_plays_the_classic_openings(roll, play):
    agent = make_agent("expectimax:plies=1,eval=pubeval", "backgammon")
    state = BackgammonState.from_position_id(Position.start().id, dice=roll)
    view = state.observe(0)
    chosen = agent.choose_play(view, legal_plays(view.position, view.dice), np.random.default_rng(0))
    assert chosen.notation == play
