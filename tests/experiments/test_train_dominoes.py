"""``pipslab train happy|troshin|triple``: masked PPO in a league — learning, resume,
checkpoints, the exploiter and bad input."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from pipslab.agents.domino_net import PolicyNet, net_dict, net_spec
from pipslab.experiments.ratings import wilson_interval
from pipslab.experiments.train_dominoes import League, TrainArgs, play_hands, train
from pipslab.experiments.tournament import TournamentArgs, run_tournament

from harness_helpers import pipslab, pipslab_here

SMALL = dict(hidden=[32, 32], batch_hands=64, minibatch=256, epochs=2, snapshot_every=2, checkpoint_every=1,
             eval_games=0, progress=False)


def _weights(path):
    return torch.load(path, weights_only=True)["model"]


def test_resumed_run_ends_with_the_same_weights_as_one_run(tmp_path):
    """Stopped after 3 updates and resumed, the run reaches the weights of one run straight
    through: every hand's stream and the league's state ride in the checkpoint."""
    options = {"players": 4, "pairs": True}
    train(TrainArgs(game="troshin", options=options, hands=320, seed=5, out=str(tmp_path / "one"), **SMALL))
    train(TrainArgs(game="troshin", options=options, hands=192, seed=5, out=str(tmp_path / "two"), **SMALL))
    ck = torch.load(tmp_path / "two" / "checkpoint.pt", weights_only=True)
    assert ck["done"] == 192 and any(m.startswith("snapshot-") for m in ck["league"]["members"])
    train(TrainArgs(game="troshin", options=options, hands=320, seed=5, out=str(tmp_path / "two"), resume=True,
                    **SMALL))
    a, b = _weights(tmp_path / "one" / "net.pt"), _weights(tmp_path / "two" / "net.pt")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    c = train(TrainArgs(game="troshin", options=options, hands=320, seed=6, out=str(tmp_path / "three"), **SMALL))
    assert c["done"] == 320
    assert not all(torch.equal(a[k], _weights(tmp_path / "three" / "net.pt")[k]) for k in a)


def test_hands_do_not_depend_on_the_batch_they_are_played_in():
    """Hand h is dealt, seated and played from its own stream: the same hands played as
    one batch or as two give the same decisions (the same weights)."""
    args = TrainArgs(game="happy", options={"mode": "draw"}, seed=3, **SMALL)
    torch.manual_seed(0)
    from pipslab.agents.domino_net import NetPlayer
    player = NetPlayer(PolicyNet(dict(net_spec("happy", {"mode": "draw"}), hidden=[32, 32])))
    whole = play_hands(player, League(args), args, 0, 8)
    parts = [play_hands(player, League(args), args, lo, 4) for lo in (0, 4)]
    assert whole.decisions == sum(p.decisions for p in parts) > 0
    assert sorted(map(tuple, whole.obs.tolist())) == sorted(map(tuple, np.concatenate([p.obs for p in parts]).tolist()))
    assert sorted(whole.returns.tolist()) == pytest.approx(sorted(np.concatenate([p.returns for p in parts]).tolist()))


@pytest.mark.slow
def test_a_short_seeded_run_beats_random_and_its_untrained_start(tmp_path):
    """20,480 hands of Happy draw by plain masked PPO (about 30 s on one core): the
    trained net beats `random` and the same net untrained (its seed's initial weights),
    lower Wilson bound above 50% over 2,000 duplicate games each (measured: 58.9%
    [56.7, 61.0] against random).  Draw mode, because block mode is so much luck that
    even `heaviest` wins only 53% against `random`."""
    out = tmp_path / "run"
    train(TrainArgs(game="happy", options={"mode": "draw"}, hands=20_480, seed=1, out=str(out), eval_games=0,
                    progress=False))
    torch.manual_seed(1)
    start = PolicyNet(dict(net_spec("happy", {"mode": "draw"}), hidden=[128, 128]))
    torch.save(net_dict(start), tmp_path / "start.pt")
    for opponent in ("random", f"net:net={tmp_path / 'start.pt'}"):
        s = run_tournament(TournamentArgs(game="happy", mode="draw", agents=[f"net:net={out / 'net.pt'}", opponent],
                                          games=2000,
                                          seed=7, out=str(tmp_path / f"t-{len(opponent)}"), progress=False,
                                          workers=1, plots=False, bootstrap=0)).summary
        me = s.iloc[0] if s.iloc[0]["agent"].startswith(f"net:net={out}") else s.iloc[1]
        low, _ = wilson_interval(int(me["wins"]), int(me["games"]))
        assert low > 0.5, (opponent, int(me["wins"]), int(me["games"]))


@pytest.mark.slow
def test_the_exploiter_trains_against_one_fixed_agent_and_reports_it(tmp_path):
    r = pipslab("train", "happy", "--exploit", "heaviest", "--hands", "128", "--batch-hands", "64", "--hidden", "16",
                "--eval-games", "8", "--eval-every", "128", "--out", str(tmp_path / "x"), "--no-progress")
    assert r.returncode == 0, r.stderr
    assert "exploiter of heaviest: wins" in r.stdout
    curve = (tmp_path / "x" / "curve.csv").read_text().splitlines()
    assert curve[0].startswith("hands,") and len(curve) == 2 and ",heaviest," in curve[1]
    ck = torch.load(tmp_path / "x" / "checkpoint.pt", weights_only=True)
    assert ck["league"]["members"] == ["heaviest"]       # no snapshots, no other opponents
    assert (tmp_path / "x" / "curve.png").stat().st_size > 0


@pytest.mark.slow
def test_the_curve_runs_through_the_harness(tmp_path):
    r = pipslab("train", "triple", "--players", "3", "--hands", "64", "--batch-hands", "64", "--hidden", "16",
                "--eval-games", "6", "--eval-against", "greedy", "--out", str(tmp_path / "t"), "--no-progress")
    assert r.returncode == 0, r.stderr
    rows = (tmp_path / "t" / "curve.csv").read_text().splitlines()
    assert len(rows) == 2 and ",greedy," in rows[1]
    assert (tmp_path / "t" / "evals").is_dir() and (tmp_path / "t" / "net.pt").is_file()


# in a real process too: one refusal of the trainer's own, one of argparse's
BAD_FLAGS_IN_A_PROCESS = (["happy", "--hands", "0"], ["happy", "--mode", "blocked"])


@pytest.mark.parametrize("argv, message", [
    pytest.param(["happy", "--hands", "0"], "--hands must be a whole number from 1", marks=pytest.mark.slow),
    (["happy", "--self-play", "1.5"], "--self-play must lie in [0, 1]"),
    (["happy", "--lr", "0"], "--lr must lie in (0, 1]"),
    (["happy", "--league", "heaviest,nosuch"], "unknown agent 'nosuch'"),
    (["happy", "--exploit", "nosuch"], "unknown agent 'nosuch'"),
    (["triple", "--guide", "nosuch"], "unknown agent 'nosuch'"),
    (["happy", "--epochs", "0"], "--epochs 0 (no PPO) needs --guide"),
    pytest.param(["happy", "--mode", "blocked"], "invalid choice", marks=pytest.mark.slow),
    (["troshin", "--players", "5"], "players"),
    (["troshin", "--players", "2", "--pairs"], "pairs"),
    (["triple", "--hidden", "0"], "--hidden must list layer sizes"),
    (["happy", "--hidden", "a,b"], "comma-separated ints"),
    (["happy", "--arch", "wide"], "--arch must be one of mlp, placements"),
    (["triple", "--mirror"], "--mirror: a mirror net for triple-2: the mirror turns a line of two ends round; "
                              "this one has 4"),
    (["happy", "--league", "", "--self-play", "0"], "--league is empty"),
    (["happy", "--guide-phases", "1-2 in hand"], "--guide-phases chooses the decisions the teacher labels"),
    (["happy", "--guide", "pimc", "--guide-phases", "boneyard empty"], "'boneyard empty' is not a phase of happy-block"),
    (["happy", "--replay", "100"], "--replay works on the imitation passes"),
    (["happy", "--guide", "pimc", "--guide-keep", "--guide-epochs", "0"], "--guide-keep works on the imitation"),
    (["happy", "--guide", "pimc", "--replay", "-1"], "--replay must be a whole number from 0"),
    (["happy", "--guide", "pimc", "--play", "greedy"], "--play greedy plays moves the policy did not sample"),
    (["happy", "--guide", "pimc", "--epochs", "0", "--play", "best"], "--play must be one of sample, greedy"),
    (["happy", "--explore", "0.1"], "--explore is the share of random moves of --play greedy"),
    (["happy", "--guide", "pimc", "--epochs", "0", "--fit-every", "4"], "--fit-every gathers rounds of labels"),
    (["happy", "--guide", "pimc", "--replay", "100", "--fit-every", "4"], "--fit-every gathers rounds of labels"),
    (["happy", "--guide", "pimc", "--fit-every", "0"], "--fit-every must be a whole number from 1"),
    (["happy", "--guide", "pimc", "--epochs", "0", "--play", "greedy", "--explore", "2"], "--explore must lie in [0, 1]"),
])
def test_bad_flags_give_one_line_and_exit_2(tmp_path, capfd, argv, message):
    """Each through the CLI's main in this process (its exit status and stderr, warnings
    included, as a process gives them, without 2-3 s of imports each); the two in
    BAD_FLAGS_IN_A_PROCESS through a real ``pipslab`` process as well."""
    args = ["train", *argv, "--out", str(tmp_path / "run"), "--no-progress"]
    runs = [pipslab_here(capfd, *args)] + ([pipslab(*args)] if argv in BAD_FLAGS_IN_A_PROCESS else [])
    for r in runs:
        assert r.returncode == 2, (r.stdout, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], r.stderr
    assert not (tmp_path / "run" / "checkpoint.pt").exists()


@pytest.mark.slow
def test_bad_checkpoints_and_resumes_are_refused_with_one_line(tmp_path, capfd):
    """Every step through the CLI's main in this process (the same exit status and stderr
    as a process, without 2-3 s of imports each) but the garbage checkpoint, which a real
    ``pipslab`` process reads."""
    run = tmp_path / "run"
    base = ["train", "happy", "--hands", "64", "--batch-hands", "64", "--hidden", "16", "--eval-games", "0",
            "--out", str(run), "--no-progress"]
    r = pipslab_here(capfd, *base, "--resume")
    assert r.returncode == 2 and "nothing to resume" in r.stderr
    r = pipslab_here(capfd, *base)
    assert r.returncode == 0, r.stderr
    r = pipslab_here(capfd, *base)
    assert r.returncode == 2 and "already holds a training run" in r.stderr
    r = pipslab_here(capfd, *base[:-3], "--lr", "0.01", "--out", str(run), "--resume", "--no-progress")
    assert r.returncode == 2 and "trained with other settings: lr=" in r.stderr
    before = (run / "checkpoint.pt").read_bytes()
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    (shipped / "checkpoint.pt").write_bytes((run / "net.pt").read_bytes())    # a bare net, not a checkpoint
    r = pipslab_here(capfd, *base[:-3], "--out", str(shipped), "--resume", "--no-progress")
    assert r.returncode == 2 and "not a training checkpoint" in r.stderr
    (run / "checkpoint.pt").write_bytes(b"garbage")
    r = pipslab(*base, "--resume")
    assert r.returncode == 2 and "not a readable network file" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    (run / "checkpoint.pt").write_bytes(before)
    r = pipslab_here(capfd, *base[:2], "--hands", "128", *base[4:], "--resume")
    assert r.returncode == 0, r.stderr
    assert torch.load(run / "checkpoint.pt", weights_only=True)["done"] == 128
    bad = tmp_path / "bad.toml"
    bad.write_text("hands = [")
    r = pipslab_here(capfd, "train", "happy", "--config", str(bad), "--out", str(tmp_path / "c"))
    assert r.returncode == 2 and "not valid TOML" in r.stderr
    bad.write_text("hands = 64\nbogus = 1\n")
    r = pipslab_here(capfd, "train", "happy", "--config", str(bad), "--out", str(tmp_path / "c"))
    assert r.returncode == 2 and "unknown key 'bogus'" in r.stderr


def test_the_oracle_guide_labels_the_solvers_best_moves(tmp_path, capfd):
    """With --guide oracle every labelled decision carries the exact solver's best moves,
    which are legal, and the imitation term enters the loss."""
    from pipslab.agents.domino_net import NetPlayer
    from pipslab.experiments.train_dominoes import ppo_update
    args = TrainArgs(game="happy", options={"mode": "block"}, seed=2, guide="oracle", **SMALL)
    torch.manual_seed(0)
    net = PolicyNet(dict(net_spec("happy", {"mode": "block"}), hidden=[32, 32]))
    batch = play_hands(NetPlayer(net), League(args), args, 0, 16, label=True)
    assert batch.decisions > 0 and np.all(batch.teacher.sum(1) >= 1)
    assert np.all(batch.masks[batch.teacher == 1] == 1)
    stats = ppo_update(net, torch.optim.Adam(net.parameters(), 1e-3), batch, args, 0, guide=1.0)
    assert stats["imitation"] > 0
    assert args.guide_weight(0) == 1.0
    args.guide_hands = 100
    assert args.guide_weight(50) == pytest.approx(0.5) and args.guide_weight(200) == 0.0
    # the solver plays two sides only: three players each for themselves, and Triple, are refused
    r = pipslab_here(capfd, "train", "troshin", "--players", "3", "--guide", "oracle", "--out", str(tmp_path / "t"))
    assert "no exact solver for troshin-3" in r.stderr
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    r = pipslab_here(capfd, "train", "triple", "--guide", "pimc", "--out", str(tmp_path / "t"))
    assert "needs the exact solver" in r.stderr
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1


def test_the_pimc_guide_labels_troshin_pairs_with_the_pairs_solver():
    """Troshin's four in pairs have a teacher too: pimc's move from the seat's own view
    (worlds from sample_world, each solved for the mover's pair), always legal."""
    from pipslab.agents.domino_net import NetPlayer
    options = {"players": 4, "pairs": True}
    args = TrainArgs(game="troshin", options=options, seed=3, guide="pimc", guide_samples=2,
                     league=["partner"], **SMALL)
    torch.manual_seed(0)
    net = PolicyNet(dict(net_spec("troshin", options), hidden=[32, 32]))
    batch = play_hands(NetPlayer(net), League(args), args, 0, 8, label=True)
    labelled = batch.teacher.sum(1) >= 1
    assert batch.decisions > 0 and labelled.all()
    assert np.all(batch.masks[batch.teacher == 1] == 1)


@pytest.mark.slow
def test_bench_train_reports_domino_training_beside_random_play():
    r = pipslab("bench", "train", "--seconds", "0.3", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout.strip().splitlines()[-1])["dominoes"]
    assert d["train_hands_per_s"] > 0 and d["guided_train_hands_per_s"] > 0
    assert d["random_hands_per_s"] > d["train_hands_per_s"] > d["guided_train_hands_per_s"]
    assert "Happy block dominoes: hands per second" in r.stdout


def test_bench_agents_times_agents_on_the_same_decisions(capfd):
    """The timing run through a real ``pipslab`` process, the two refusals through the
    CLI's main in this process (the same status and stderr, without a start-up each)."""
    r = pipslab("bench", "agents", "--agents", "heaviest,ismcts:iters=20", "--moves", "4", "--json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout.strip().splitlines()[-1])["agents"]
    assert set(rows) == {"heaviest", "ismcts:iters=20"} and all(v["moves"] == 4 for v in rows.values())
    assert rows["ismcts:iters=20"]["mean_s"] > rows["heaviest"]["mean_s"] > 0
    r = pipslab_here(capfd, "bench", "agents", "--agents", "net", "--game", "troshin", "--players", "4")
    assert r.returncode == 2 and "no shipped net for troshin-4" in r.stderr
    r = pipslab_here(capfd, "bench", "solver", "--agents", "heaviest")
    assert r.returncode == 2 and "--agents applies to pipslab bench agents" in r.stderr


@pytest.mark.slow
def test_ctrl_c_saves_a_checkpoint_and_prints_the_resume_command(tmp_path):
    import signal
    import subprocess
    import sys
    import time
    out = tmp_path / "run"
    p = subprocess.Popen([sys.executable, "-m", "pipslab.experiments.cli", "train", "happy", "--hands", "10000000",
                          "--batch-hands", "64", "--hidden", "16", "--eval-games", "0", "--out", str(out),
                          "--no-progress"], stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while not (out / "checkpoint.pt").exists() and time.time() < deadline:
        time.sleep(0.2)
    p.send_signal(signal.SIGINT)
    err = p.communicate(timeout=120)[1]
    assert p.returncode == 130, err
    line = err.strip().splitlines()[-1]
    assert "resume with: pipslab train happy" in line and "--resume" in line
    hands = torch.load(out / "checkpoint.pt", weights_only=True)["done"]
    assert hands > 0 and f"interrupted after {hands:,} hands" in line
