"""The TD(λ) backgammon learner: targets, learning, resume, checkpoints, the td agent and
eval=td, and the trainer's bad input."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from pipslab.agents.registry import make_agent
from pipslab.agents.td import TDNet, equity, flip, load_net, net_dict, net_path
from pipslab.envs.backgammon import Position
from pipslab.envs.errors import PipslabError
from pipslab.experiments import train_backgammon as tb
from pipslab.experiments.runner import RunInterrupted
from pipslab.experiments.tournament import TournamentArgs, run_tournament

from harness_helpers import pipslab as _pipslab
from harness_helpers import pipslab_here


def _fresh_net(path: Path, seed: int = 0, **cfg) -> Path:
    torch.manual_seed(seed)
    torch.save(net_dict(TDNet(**cfg)), path)
    return path


def _win_rate(agent: str, opponent: str, games: int, out: Path, seed: int = 7) -> float:
    args = TournamentArgs(game="backgammon", agents=[agent, opponent], games=games, seed=seed, out=str(out),
                          progress=False, workers=1, plots=False, bootstrap=0)
    s = run_tournament(args).summary
    row = s[s["agent"] == agent].iloc[0]
    return row["wins"] / row["games"]


def test_flip_and_equity():
    p = np.array([0.6, 0.2, 0.05, 0.1, 0.01])
    assert np.allclose(flip(flip(p)), p)
    assert np.isclose(equity(flip(p)), -equity(p))
    assert np.isclose(equity(np.array([1, 1, 1, 0, 0])), 3.0)
    assert np.isclose(equity(np.array([0, 0, 0, 1, 0])), -2.0)


def test_targets_of_a_hand_made_two_move_game():
    """X on roll has five checkers on his 6 point (no roll bears them all off); O has one
    checker on his 1 point (every roll bears it off).  The game is: X plays, O wins a
    single game (X has borne off ten).  So the positions are s0 (X on roll) and s1 (O on
    roll), G[1] is O's exact win and G[0] = flip((1 - λ) V(s1) + λ G[1])."""
    x = {6: 5}
    o = {24: 1}          # his point 1 is my 24
    start = np.array(Position.from_points(x, o), dtype=np.int8)
    torch.manual_seed(3)
    net = TDNet("plus", [16])
    states, points = tb.play_generation(net, seed=5, first_game=0, count=3, start=start)
    for s, pts in zip(states, points):
        assert len(s) == 2 and pts == 1
        assert (s[0] == start).all()
        # s1 is from O's side: his one checker on his 1 point; X has 1 to 5 checkers left
        assert s[1][1] == 1 and s[1][2:26].max() <= 0
        assert 1 <= -s[1][s[1] < 0].sum() <= 5
    for lam in (0.0, 0.3, 1.0):
        X, G = tb.targets(net, states, points, lam)
        v1 = net.probabilities(states[0][1:2])[0]
        assert np.allclose(G[1], [1, 0, 0, 0, 0])
        want = flip((1 - lam) * v1 + lam * np.array([1.0, 0, 0, 0, 0]))
        assert np.allclose(G[0], want, atol=1e-6)
    # with λ = 1 the target of X's position is his exact single loss
    assert np.allclose(tb.targets(net, states, points, 1.0)[1][0], [0, 0, 0, 0, 0])


def test_lambda_returns_recursion_over_three_positions():
    v_next = np.array([[0.7, 0.1, 0.0, 0.2, 0.0], [0.4, 0.0, 0.0, 0.3, 0.1], [0, 0, 0, 0, 0]])
    last = np.array([1.0, 1.0, 0.0, 0.0, 0.0])          # a gammon win of the last mover
    G = tb.lambda_returns(v_next, last, 0.5)
    g1 = flip(0.5 * v_next[1] + 0.5 * last)
    g0 = flip(0.5 * v_next[0] + 0.5 * g1)
    assert np.allclose(G, [g0, g1, last])


def test_self_play_games_are_legal_and_finish(tmp_path):
    torch.manual_seed(0)
    net = TDNet("tesauro", [8])
    states, points = tb.play_generation(net, seed=1, first_game=0, count=8)
    assert set(points) <= {1.0, 2.0, 3.0}
    for s in states:
        assert (s[0] == np.array(Position.start())).all()
        for b in s:                       # every kept board is a valid position
            Position(b.tolist())
    # a game's dice come from its own stream: game 5 alone plays the same moves
    alone, pts = tb.play_generation(net, seed=1, first_game=5, count=1)
    assert (alone[0] == states[5]).all() and pts[0] == points[5]


@pytest.mark.slow
def test_short_training_beats_random_and_its_untrained_start(tmp_path):
    out = tmp_path / "run"
    args = tb.TrainArgs(games=2048, seed=1, out=str(out), hidden=[32], lr=3e-3, batch_games=128, eval_games=0,
                        progress=False, checkpoint_every=1024)
    tb.train(args)
    trained = out / "net.pt"
    untrained = _fresh_net(tmp_path / "untrained.pt", seed=1, features="plus", hidden=[32])
    vs_random = _win_rate(f"td:net={trained}", "random", 60, tmp_path / "t1")
    vs_start = _win_rate(f"td:net={trained}", f"td:net={untrained}", 100, tmp_path / "t2")
    assert vs_random >= 0.85, vs_random
    assert vs_start >= 0.65, vs_start


@pytest.mark.slow
def test_resume_gives_the_same_weights_as_one_run(tmp_path):
    common = dict(seed=2, hidden=[16], batch_games=32, eval_games=0, progress=False, checkpoint_every=32)
    tb.train(tb.TrainArgs(games=128, out=str(tmp_path / "one"), **common))
    tb.train(tb.TrainArgs(games=64, out=str(tmp_path / "two"), **common))
    tb.train(tb.TrainArgs(games=128, out=str(tmp_path / "two"), resume=True, **common))
    a = torch.load(tmp_path / "one" / "checkpoint.pt", weights_only=True)
    b = torch.load(tmp_path / "two" / "checkpoint.pt", weights_only=True)
    assert a["done"] == b["done"] == 128
    for key in a["model"]:
        assert torch.equal(a["model"][key], b["model"][key]), key
    # and the optimizer moments too
    for k, st in a["optimizer"]["state"].items():
        assert torch.equal(st["exp_avg"], b["optimizer"]["state"][k]["exp_avg"])
    # a resume with other hyper-parameters is refused
    with pytest.raises(PipslabError, match="other settings"):
        tb.train(tb.TrainArgs(games=160, out=str(tmp_path / "two"), resume=True, **{**common, "hidden": [8]}))


@pytest.mark.slow
def test_ctrl_c_saves_and_resume_continues(tmp_path, monkeypatch):
    common = dict(seed=4, hidden=[8], batch_games=16, eval_games=0, progress=False, checkpoint_every=10**6)
    calls = {"n": 0}
    real = tb.train_generation

    def interrupted(*a, **k):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(tb, "train_generation", interrupted)
    with pytest.raises(RunInterrupted, match="interrupted after 32 games; resume with: .*--resume"):
        tb.train(tb.TrainArgs(games=64, out=str(tmp_path / "r"), **common))
    monkeypatch.setattr(tb, "train_generation", real)
    tb.train(tb.TrainArgs(games=64, out=str(tmp_path / "r"), resume=True, **common))
    tb.train(tb.TrainArgs(games=64, out=str(tmp_path / "s"), **common))
    a = torch.load(tmp_path / "r" / "checkpoint.pt", weights_only=True)["model"]
    b = torch.load(tmp_path / "s" / "checkpoint.pt", weights_only=True)["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)


def _damaged_files(tmp_path: Path):
    good = _fresh_net(tmp_path / "good.pt", features="plus", hidden=[8])
    data = torch.load(good, weights_only=True)
    cases = {}
    raw = good.read_bytes()
    (tmp_path / "truncated.pt").write_bytes(raw[: len(raw) // 2])
    cases["truncated"] = tmp_path / "truncated.pt"
    (tmp_path / "noise.pt").write_bytes(bytes(range(256)) * 10)
    cases["noise"] = tmp_path / "noise.pt"
    torch.save({"format": "something-else", "model": {}, "config": {}}, tmp_path / "foreign.pt")
    cases["foreign"] = tmp_path / "foreign.pt"
    torch.save({**data, "config": {"features": "plus", "hidden": [9]}}, tmp_path / "mismatch.pt")
    cases["mismatch"] = tmp_path / "mismatch.pt"
    torch.save({**data, "config": {"features": "nope", "hidden": [8]}}, tmp_path / "features.pt")
    cases["features"] = tmp_path / "features.pt"
    model = dict(data["model"])
    model.pop(next(iter(model)))
    torch.save({**data, "model": model}, tmp_path / "missing.pt")
    cases["missing key"] = tmp_path / "missing.pt"
    # a pickle of an arbitrary object: weights_only refuses to run it
    import pickle
    (tmp_path / "pickle.pt").write_bytes(pickle.dumps(Path("/")))
    cases["pickle"] = tmp_path / "pickle.pt"
    cases["absent"] = tmp_path / "absent.pt"
    return cases


@pytest.mark.slow
def test_bad_network_files_give_one_line(tmp_path, capfd):
    """Every damaged file through the CLI's main in this process (stderr at the descriptor
    level, warnings included), and one of them, the pickle, through a real ``pipslab``
    process: the same checks as a process per file, without seven more start-ups (about
    2.5 s of imports each)."""
    cases = _damaged_files(tmp_path)
    for what, path in cases.items():
        with pytest.raises(PipslabError) as exc:
            load_net(str(path))
        assert "\n" not in str(exc.value), what
        r = pipslab_here(capfd, "play", "backgammon", "--agents", f"td:net={path},pubeval", "--games", "1")
        assert r.returncode == 2, (what, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, (what, r.stderr)
    r = _pipslab("play", "backgammon", "--agents", f"td:net={cases['pickle']},pubeval", "--games", "1")
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr


@pytest.mark.slow
def test_resume_of_a_damaged_checkpoint_is_refused_with_one_line(tmp_path, capfd):
    """The truncated checkpoint through a real ``pipslab`` process, the shipped-style net
    through the CLI's main in this process (the same status and stderr)."""
    out = tmp_path / "run"
    tb.train(tb.TrainArgs(games=16, seed=0, hidden=[8], batch_games=16, eval_games=0, progress=False, out=str(out)))
    ckpt = out / "checkpoint.pt"
    ckpt.write_bytes(ckpt.read_bytes()[:100])
    r = _pipslab("train", "backgammon", "--games", "32", "--hidden", "8", "--batch-games", "16", "--eval-games", "0",
                 "--out", str(out), "--resume", "--no-progress")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr
    # a shipped-style net (no optimizer state) cannot be resumed either
    _fresh_net(ckpt, features="plus", hidden=[8])
    r = pipslab_here(capfd, "train", "backgammon", "--games", "32", "--hidden", "8", "--batch-games", "16",
                     "--eval-games", "0", "--out", str(out), "--resume", "--no-progress")
    assert r.returncode == 2 and "not a training checkpoint" in r.stderr, r.stderr


# in a real process too: one refusal of argparse's, one of the trainer's own
BAD_TRAIN_INPUT_IN_A_PROCESS = (["--no-such-flag"], ["--out", "/proc/pipslab-cannot-write-here"])


@pytest.mark.parametrize("argv", [
    ["--games", "-1"],
    ["--games", "0"],
    ["--seed", "-1"],
    ["--lam", "1.5"],
    ["--lr", "nan"],
    ["--hidden", "0"],
    ["--hidden", "a,b"],
    ["--features", "pixels"],
    ["--batch-games", "0"],
    pytest.param(["--no-such-flag"], marks=pytest.mark.slow),                        # in a process too
    pytest.param(["--out", "/proc/pipslab-cannot-write-here"], marks=pytest.mark.slow),  # in a process too
    ["--out", "/dev/null/x"],
    ["--out", ""],
    ["--resume"],
])
def test_bad_train_input_gives_one_line_and_exit_2(tmp_path, capfd, argv):
    """Each through the CLI's main in this process (its exit status and stderr, warnings
    included, as a process gives them, without 2-3 s of imports each); the two in
    BAD_TRAIN_INPUT_IN_A_PROCESS through a real ``pipslab`` process as well."""
    real = argv in BAD_TRAIN_INPUT_IN_A_PROCESS
    if "--out" not in argv:
        argv = argv + ["--out", str(tmp_path / "run")]
    runs = [pipslab_here(capfd, "train", "backgammon", "--no-progress", *argv)]
    if real:
        runs.append(_pipslab("train", "backgammon", "--no-progress", *argv))
    for r in runs:
        assert r.returncode == 2, r
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "run" / "checkpoint.pt").exists()


@pytest.mark.slow
def test_out_that_is_a_file_and_a_second_fresh_run_are_refused(tmp_path, capfd):
    """The file through a real ``pipslab`` process, the second run through the CLI's main
    in this process (the same status and stderr)."""
    f = tmp_path / "file"
    f.write_text("x")
    r = _pipslab("train", "backgammon", "--games", "16", "--out", str(f), "--no-progress")
    assert r.returncode == 2 and f.read_text() == "x"
    out = tmp_path / "run"
    tb.train(tb.TrainArgs(games=16, hidden=[8], batch_games=16, eval_games=0, progress=False, out=str(out)))
    before = (out / "checkpoint.pt").read_bytes()
    r = pipslab_here(capfd, "train", "backgammon", "--games", "16", "--hidden", "8", "--batch-games", "16",
                     "--out", str(out), "--no-progress")
    assert r.returncode == 2 and "--resume" in r.stderr
    assert (out / "checkpoint.pt").read_bytes() == before


def test_curve_is_written_through_the_harness(tmp_path):
    out = tmp_path / "run"
    tb.train(tb.TrainArgs(games=64, hidden=[8], batch_games=32, eval_every=32, eval_games=4, progress=False,
                          out=str(out), eval_against=["pubeval", "random"]))
    import pandas as pd
    curve = pd.read_csv(out / "curve.csv")
    assert list(curve["games"]) == [32, 32, 64, 64]
    assert set(curve["opponent"]) == {"pubeval", "random"}
    assert (curve["eval_games"] == 4).all()
    assert ((curve["win_low"] <= curve["win_rate"]) & (curve["win_rate"] <= curve["win_high"])).all()
    assert (out / "curve.png").stat().st_size > 1000
    assert (out / "evals").is_dir()


def test_td_agent_and_td_evaluator_play_through_search(tmp_path):
    net = _fresh_net(tmp_path / "n.pt", features="tesauro", hidden=[8])
    for spec in (f"td:net={net}", f"expectimax:plies=1,eval=td:{net},filter=2", f"mcts:iters=8,eval=td:{net}"):
        agent = make_agent(spec, "backgammon")
        assert agent is not None
    rate = _win_rate(f"expectimax:plies=1,eval=td:{net},filter=2", f"mcts:iters=4,eval=td:{net}", 2, tmp_path / "t")
    assert 0.0 <= rate <= 1.0
    with pytest.raises(PipslabError, match="no network file"):
        make_agent("td:net=no-such-net", "backgammon")


def test_the_shipped_net_loads_and_plays():
    from pipslab.agents.td import DEFAULT_NET, shipped_nets
    assert DEFAULT_NET in shipped_nets()
    net = load_net(DEFAULT_NET)
    p = net.probabilities(np.array([Position.start()]))
    assert p.shape == (1, 5) and 0.35 < p[0, 0] < 0.75       # the opening is about even
    card = net_path(DEFAULT_NET).with_suffix(".md")
    assert card.exists() and "pipslab train backgammon" in card.read_text()


@pytest.mark.slow
def test_worker_processes_give_the_same_weights(tmp_path):
    common = dict(games=64, seed=6, hidden=[8], batch_games=32, eval_games=0, progress=False)
    tb.train(tb.TrainArgs(out=str(tmp_path / "one"), **common))
    tb.train(tb.TrainArgs(out=str(tmp_path / "two"), workers=2, **common))
    a = torch.load(tmp_path / "one" / "net.pt", weights_only=True)["model"]
    b = torch.load(tmp_path / "two" / "net.pt", weights_only=True)["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.slow
def test_config_file_sets_flags_and_the_command_line_wins(tmp_path, capfd):
    """The good file through a real ``pipslab`` process; the four bad ones through the CLI's
    main in this process (the same exit status and stderr, without a start-up each)."""
    cfg = tmp_path / "td.toml"
    cfg.write_text('games = 16\nhidden = [8]\nbatch-games = 16\neval_games = 0\nlr = 0.002\n')
    out = tmp_path / "run"
    r = _pipslab("train", "backgammon", "--config", str(cfg), "--lr", "0.004", "--out", str(out), "--no-progress")
    assert r.returncode == 0, r.stderr
    meta = torch.load(out / "checkpoint.pt", weights_only=True)
    import json
    settings = json.loads((out / "run.json").read_text())["settings"]
    assert meta["done"] == 16 and settings["lr"] == 0.004 and settings["hidden"] == [8]
    for bad in ('games = "many"\n', 'colour = "blue"\n', 'hidden = "wide"\n', "= nonsense"):
        cfg.write_text(bad)
        r = pipslab_here(capfd, "train", "backgammon", "--config", str(cfg), "--out", str(tmp_path / "bad"),
                         "--no-progress")
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, (bad, r.stderr)
        assert not (tmp_path / "bad" / "checkpoint.pt").exists()


@pytest.mark.slow
def test_a_second_trainer_on_the_same_folder_is_refused(tmp_path):
    from pipslab.experiments.runlock import RunLock
    out = tmp_path / "run"
    out.mkdir()
    lock = RunLock(out).acquire("pipslab train backgammon (the first)")
    try:
        r = _pipslab("train", "backgammon", "--games", "16", "--hidden", "8", "--batch-games", "16",
                     "--eval-games", "0", "--out", str(out), "--no-progress")
        assert r.returncode == 2 and "in use by process" in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1
        assert not (out / "checkpoint.pt").exists()
    finally:
        lock.release()
    # once the first is gone the folder is free again
    tb.train(tb.TrainArgs(games=16, hidden=[8], batch_games=16, eval_games=0, progress=False, out=str(out)))
    assert (out / "checkpoint.pt").exists()


def test_grow_computes_what_the_smaller_net_did():
    from pipslab.agents.td import grow
    from backgammon_helpers import turn_positions
    rows = np.array([list(p) for p in turn_positions(200, seed=8)], dtype=np.int8)
    torch.manual_seed(0)
    for small, features, hidden in ((TDNet("plus", [16]), "contact", [24]),
                                    (TDNet("tesauro", [8, 4]), "plus", [8, 6]),
                                    (TDNet("contact", [16]), "contact", [16])):
        big = grow(small, features, hidden, seed=3)
        assert big.config == {"features": features, "hidden": hidden}
        assert np.allclose(big.probabilities(rows), small.probabilities(rows), atol=1e-6)
        if hidden[0] != small.config["hidden"][0]:      # the new units are there to learn: not all zero
            assert big.layers[0].weight[small.config["hidden"][0]:].abs().sum() > 0
    for features, hidden in (("plus", [16]), ("contact", [8]), ("contact", [16, 8]), ("pixels", [16])):
        with pytest.raises(PipslabError, match="cannot grow"):
            grow(TDNet("contact", [16]), features, hidden)


def test_init_from_a_smaller_net_grows_it(tmp_path, capfd):
    small = _fresh_net(tmp_path / "small.pt", features="plus", hidden=[8])
    r = pipslab_here(capfd, "train", "backgammon", "--games", "16", "--batch-games", "16", "--features", "contact",
                     "--hidden", "12", "--init", str(small), "--eval-games", "0", "--out", str(tmp_path / "grown"),
                     "--no-progress")
    assert r.returncode == 0, r.stderr
    assert load_net(str(tmp_path / "grown" / "net.pt")).config == {"features": "contact", "hidden": [12]}
    # a bigger net cannot start a smaller one: one line, nothing trained
    r = pipslab_here(capfd, "train", "backgammon", "--games", "16", "--batch-games", "16", "--hidden", "4",
                     "--init", str(small), "--eval-games", "0", "--out", str(tmp_path / "shrunk"), "--no-progress")
    assert r.returncode == 2 and "cannot grow" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "shrunk" / "net.pt").exists()
