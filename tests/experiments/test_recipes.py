"""Recipes and the training system around them: ``pipslab train --recipe`` from nothing,
SIGTERM mid-stage and ``--resume`` to the same weights, the generated cards (the shipped
ones too), game options as flags, and every bad input as one line and exit 2 with nothing
written."""
from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from pipslab.agents.netfiles import shipped_nets
from pipslab.experiments import model_card
from pipslab.experiments.recipe import load_recipe, recipe_names, stage_args
from pipslab.experiments.trainer import command_of

from harness_helpers import pipslab_here

NETS = Path(__file__).resolve().parents[2] / "agents" / "nets"
SHIPPED = tuple(shipped_nets())          # every net in agents/nets, so a new version is held to its card too


def _weights(path: Path) -> dict:
    return torch.load(path, weights_only=True)["model"]


def _same(a: Path, b: Path) -> bool:
    x, y = _weights(a), _weights(b)
    return x.keys() == y.keys() and all(torch.equal(x[k], y[k]) for k in x)


def test_every_shipped_net_has_a_recipe_that_loads():
    assert {"backgammon", "happy-block", "happy-draw", "troshin-3", "troshin-4-pairs", "triple-3"} <= set(SHIPPED)
    assert set(SHIPPED) <= set(recipe_names())
    for name in recipe_names():
        r = load_recipe(name)
        assert r.stages and all(st.budget > 0 for st in r.stages) and r.against


def test_the_recipes_are_listed_with_stages_and_budgets(capfd):
    r = pipslab_here(capfd, "train", "--recipes")
    assert r.returncode == 0, r.stderr
    assert "happy-block: happy mode=block" in r.stdout and "522,240 hands" in r.stdout
    assert "backgammon" in r.stdout and "800,000 games" in r.stdout


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_card_is_the_text_of_its_data(name):
    """A shipped card is generated: its JSON gives exactly its text, names no machine
    folder, and the net is its recipe's full-scale output (a clone retrains it with one
    command), not a run chained by hand."""
    data = json.loads((NETS / f"{name}.json").read_text())
    text = (NETS / f"{name}.md").read_text()
    assert text == model_card.card_text(data, f"{name}-curve.png", f"{name}-curve.csv")
    assert "/work/" not in text and "/tmp/" not in text and "/home/" not in text
    assert data["full_scale"] is True and not data["history"], "a shipped net is its recipe's exact output"
    assert data["recipe_command"] == f"pipslab train --recipe {name} --out DIR"
    assert (NETS / f"{name}-curve.png").is_file() and (NETS / f"{name}.pt").is_file()
    assert data["evaluation"]["rows"]


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_cards_stages_are_what_its_recipe_runs_now(name):
    """The recipe and the card stay one plan: each stage's command the recipe makes today
    (``[defaults]`` merged in, the card's ``--workers``) is the one the card records, but
    for ``--out`` (a stage's folder is the runner's)."""
    data = json.loads((NETS / f"{name}.json").read_text())
    recipe = load_recipe(name)
    assert [st["name"] for st in data["stages"]] == [st.name for st in recipe.stages]
    no_out = re.compile(r" --out \S+")
    for i, st in enumerate(data["stages"]):
        workers = re.search(r"--workers (\d+)", st["command"])
        args = stage_args(recipe, i, Path("DIR"), 1.0, {"workers": int(workers.group(1))} if workers else {})
        args.eval_against = args.eval_against or list(recipe.trainer.default_against(args))
        assert no_out.sub("", command_of(recipe.trainer, args)) == no_out.sub("", st["command"]), (name, i)


def test_defaults_are_every_stages_settings_until_a_stage_says_otherwise(tmp_path):
    """``[defaults]``: each stage starts from the table, its own keys win; a bad key there
    is one line naming the defaults."""
    from pipslab.envs.errors import PipslabError
    text = ('game = "happy"\n[defaults]\nlr = 0.0005\nhidden = [8]\nhands = 64\n'
            '[[stages]]\nname = "a"\n[[stages]]\nname = "b"\nlr = 0.0001\nhands = 96\n' + EVALUATION)
    r = load_recipe(_bad_recipe(tmp_path, text))
    assert [(st.name, st.budget, st.settings["lr"], st.settings["hidden"]) for st in r.stages] == \
        [("a", 64, 0.0005, [8]), ("b", 96, 0.0001, [8])]
    for good, bad, message in (("hands = 64", "bogus = 1", "defaults: unknown key 'bogus'"),
                               ("lr = 0.0005", 'lr = "fast"', "defaults: lr must be float"),
                               ("hands = 64", 'name = "x"', "defaults: name is each stage's own"),
                               ("hands = 64", "hands = 0", "defaults: hands must be at least 1")):
        with pytest.raises(PipslabError, match=message):
            load_recipe(_bad_recipe(tmp_path, text.replace(good, bad)))


@pytest.mark.slow
def test_a_recipe_runs_from_nothing_at_a_small_scale(tmp_path, capfd, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = Path("rec")             # a relative folder named like the start of "--recipe": the card keeps the flag whole
    r = pipslab_here(capfd, "train", "--recipe", "happy-block-v1", "--scale", "0.002", "--out", str(out),
                     "--no-progress")
    assert r.returncode == 0, r.stderr
    for name in ("net.pt", "model-card.md", "card.json", "run.json", "curve.csv", "curve.png"):
        assert (out / name).is_file(), name
    card = (out / "model-card.md").read_text()
    assert "A scaled run" in card and str(tmp_path) not in card and "stages/2-expert-iteration" in card
    data = json.loads((out / "card.json").read_text())
    assert [s["name"] for s in data["stages"]] == ["ppo-league", "expert-iteration"]
    assert data["recipe_command"] == "pipslab train --recipe happy-block-v1 --out DIR --scale 0.002"
    assert "--out DIR/stages/2-expert-iteration --init DIR/stages/1-ppo-league/net.pt" in data["stages"][1]["command"]
    assert len(data["evaluation"]["rows"]) == 3
    # stage 2 started from stage 1's net inside the run folder
    stage2 = json.loads((out / "stages" / "2-expert-iteration" / "run.json").read_text())
    assert str(out / "stages" / "1-ppo-league" / "net.pt") in stage2["command"]
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["status"] == "done" and manifest["recipe"] == "happy-block-v1"


def test_a_backgammon_recipe_from_a_shipped_net_draws_the_error_rate_curve(tmp_path, capfd):
    """``start`` = a shipped net, grown to the stage's size; every evaluation keeps its
    net, and the card draws their error rates on the benchmark, the start net's at 0."""
    pytest.importorskip("gnubg_nn")           # the recipe's curve is against gnubg ([bench] extra)
    out = tmp_path / "bg"
    r = pipslab_here(capfd, "train", "--recipe", "backgammon", "--scale", "0.0002", "--out", str(out),
                     "--no-progress")
    assert r.returncode == 0, r.stderr
    data = json.loads((out / "card.json").read_text())
    assert data["start"] == "backgammon-v1" and "--init backgammon-v1" in data["stages"][0]["command"]
    import csv
    rows = list(csv.DictReader((out / "error-curve.csv").open()))
    kept = sorted((out / "stages" / "1-contact-256" / "evals").glob("*-net.pt"))
    assert len(rows) == len(kept) + 1 and rows[0]["games"] == "0" and rows[0]["stage"] == "start (backgammon-v1)"
    from pipslab.experiments.benchmark_backgammon import error_rate
    from pipslab.agents.td import load_net
    assert float(rows[0]["error_rate"]) == pytest.approx(error_rate(load_net("backgammon-v1"))["error_rate"], abs=1e-3)
    card = (out / "model-card.md").read_text()
    assert "error-curve.png" in card and "starts from the shipped net `backgammon-v1`" in card
    assert (out / "error-curve.png").is_file()


def _recipe_process(*argv):
    return subprocess.Popen([sys.executable, "-m", "pipslab.experiments.cli", "train", *argv, "--no-progress"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL))


# a league stage checkpointed at every update, then a pimc teacher's stage (happy-block-v1's shape)
TWO_STAGES = """description = "two small stages"
game = "happy"
seed = 0

[[stages]]
name = "ppo-league"
hands = 1536
batch_hands = 32
hidden = [16]
checkpoint_every = 1
eval_games = 0

[[stages]]
name = "expert-iteration"
hands = 256
batch_hands = 32
epochs = 0
guide = "pimc"
guide_samples = 2
hidden = [16]
eval_games = 0

[evaluation]
against = ["random"]
games = 4
"""


@pytest.mark.slow
def test_sigterm_mid_stage_then_resume_ends_with_the_weights_of_one_run(tmp_path):
    """A scheduler's SIGTERM during stage 1: a checkpoint, the resume command, exit 130;
    ``--resume`` continues that stage, runs the next, and the net equals an uninterrupted
    run's bit for bit."""
    cut, whole = tmp_path / "cut", tmp_path / "whole"
    recipe = tmp_path / "two-stages.toml"      # happy-block-v1's shape, small enough for the suite
    recipe.write_text(TWO_STAGES)
    p = _recipe_process("--recipe", str(recipe), "--out", str(cut))
    one_run = _recipe_process("--recipe", str(recipe), "--out", str(whole))      # the uninterrupted run, meanwhile
    ckpt = cut / "stages" / "1-ppo-league" / "checkpoint.pt"
    deadline = time.time() + 180
    while not ckpt.exists() and time.time() < deadline and p.poll() is None:
        time.sleep(0.05)
    assert p.poll() is None, "the run ended before its first checkpoint was seen"
    p.send_signal(signal.SIGTERM)
    err = p.communicate(timeout=180)[1]
    assert p.returncode == 130, err
    last = err.strip().splitlines()[-1]
    assert "interrupted in stage 1 (ppo-league)" in last and "--resume" in last, err
    assert not (cut / "net.pt").exists()
    manifest = json.loads((cut / "stages" / "1-ppo-league" / "run.json").read_text())
    assert manifest["status"] == "interrupted"
    r = subprocess.run([sys.executable, "-m", "pipslab.experiments.cli", "train", "--recipe", str(recipe),
                        "--out", str(cut), "--resume", "--no-progress"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    err = one_run.communicate(timeout=600)[1]
    assert one_run.returncode == 0, err
    assert _same(cut / "net.pt", whole / "net.pt")
    sessions = json.loads((cut / "stages" / "1-ppo-league" / "run.json").read_text())["sessions"]
    assert [s["status"] for s in sessions] == ["interrupted", "done"]


@pytest.mark.slow
def test_game_options_train(tmp_path, capfd):
    """Every option the game defines is a flag (or --option NAME=VALUE) of its trainer."""
    base = ["--hands", "64", "--batch-hands", "32", "--hidden", "8", "--eval-games", "0", "--no-progress"]
    r = pipslab_here(capfd, "train", "happy", "--option", "max_pip=4", *base, "--out", str(tmp_path / "a"))
    assert r.returncode == 0, r.stderr
    net = torch.load(tmp_path / "a" / "net.pt", weights_only=True)
    assert net["config"]["options"]["max_pip"] == 4
    r = pipslab_here(capfd, "train", "happy", "--max-pip", "4", "--hand-size", "5", *base, "--out", str(tmp_path / "b"))
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "b" / "run.json").read_text())["settings"]["options"]["hand_size"] == 5
    for bad, message in ((["--option", "colour=red"], "has no option 'colour'"),
                         (["--max-pip", "99"], "max_pip"), (["--option", "nonsense"], "KEY=VALUE")):
        r = pipslab_here(capfd, "train", "happy", *bad, *base, "--out", str(tmp_path / "bad"))
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and message in r.stderr, r.stderr
        assert not (tmp_path / "bad").exists()


def _bad_recipe(tmp_path: Path, text: str) -> str:
    path = tmp_path / f"bad-{len(list(tmp_path.glob('bad-*.toml')))}.toml"
    path.write_text(text)
    return str(path)


GOOD_STAGE = '[[stages]]\nname = "s"\nhands = 64\nbatch_hands = 32\nhidden = [8]\neval_games = 0\n'
EVALUATION = '[evaluation]\nagainst = ["random"]\ngames = 4\n'


LABELLED = ('epochs = 0\nguide = "pimc"\nguide_samples = 2\nreplay = 5000\nfit_every = 2\n')


def test_a_stage_fits_an_earlier_stages_labels_beside_its_own(tmp_path, capfd):
    """``replay_from = "STAGE"``: the stage's buffer starts with the earlier stage's labels,
    taken from its folder inside the run (the card says DIR, not a machine path)."""
    text = ('game = "happy"\n[options]\nmode = "draw"\n' + GOOD_STAGE.replace('"s"', '"first"') + LABELLED
            + GOOD_STAGE.replace('"s"', '"second"') + LABELLED + 'seed = 5\nreplay_from = "first"\n' + EVALUATION)
    out = tmp_path / "rec"
    r = pipslab_here(capfd, "train", "--recipe", _bad_recipe(tmp_path, text), "--out", str(out), "--no-progress")
    assert r.returncode == 0, r.stderr
    first, second = out / "stages" / "1-first", out / "stages" / "2-second"
    theirs = sorted((first / "replay").glob("*.npz"), key=lambda f: int(f.stem))
    ours = sorted((second / "replay").glob("*.npz"), key=lambda f: int(f.stem))
    assert len(ours) > len(theirs) > 0
    assert [f.read_bytes() for f in ours[:len(theirs)]] == [f.read_bytes() for f in theirs]
    assert json.loads((second / "run.json").read_text())["settings"]["replay_from"] == str(first)
    card = json.loads((out / "card.json").read_text())
    assert "--replay-from DIR/stages/1-first" in card["stages"][1]["command"]


def test_bad_recipes_and_bad_runs_are_one_line_and_exit_2(tmp_path, capfd, monkeypatch):
    out = tmp_path / "out"
    cases = [
        (["--recipe", _bad_recipe(tmp_path, 'game = "happy"\n' + GOOD_STAGE + LABELLED + 'replay_from = "s"\n'
                                  + EVALUATION)], "replay_from must name an earlier stage"),
        (["--recipe", _bad_recipe(tmp_path, 'game = "happy"\n' + GOOD_STAGE + GOOD_STAGE.replace('"s"', '"t"')
                                  + 'replay_from = "s"\n' + EVALUATION)], "replay_from fills the replay buffer"),
        (["--recipe", "no-such-recipe"], "unknown recipe"),
        (["--recipe", _bad_recipe(tmp_path, 'game = "happy"\n' + GOOD_STAGE.replace("hands = 64", 'hands = "many"')
                                  + EVALUATION)], "hands must be int"),
        (["--recipe", _bad_recipe(tmp_path, 'game = "happy"\ncolour = 1\n' + GOOD_STAGE + EVALUATION)],
         "unknown key 'colour'"),
        (["--recipe", _bad_recipe(tmp_path, 'game = "happy"\n' + GOOD_STAGE + 'bogus = 2\n' + EVALUATION)],
         "unknown key 'bogus' for the happy trainer"),
        (["--recipe", _bad_recipe(tmp_path, 'game = "happy"\n' + GOOD_STAGE.replace("hands = 64\n", "")
                                  + EVALUATION)], "no budget"),
        (["--recipe", _bad_recipe(tmp_path, 'game = "happy"\n' + GOOD_STAGE.replace("hidden = [8]", "lr = 7.0")
                                  + EVALUATION)], "--lr must lie in"),
        (["--recipe", _bad_recipe(tmp_path, 'game = "happy"\nstart = "no-such-net"\n' + GOOD_STAGE + EVALUATION)],
         "start must name a shipped net"),
        (["--recipe", "happy-block", "--scale", "0"], "--scale must be a number above 0"),
        (["--recipe", "happy-block", "--scale", "-1"], "--scale must be a number above 0"),
        (["--recipe", "happy-block"], "--recipe needs --out"),
    ]
    for argv, message in cases:
        args = ["train", *argv] + (["--out", str(out)] if "--recipe needs" not in message else []) + ["--no-progress"]
        r = pipslab_here(capfd, *args)
        assert r.returncode == 2, (argv, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and message in r.stderr, (argv, r.stderr)
        assert not out.exists(), argv
    # a GPU asked for where torch sees none
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    for argv in (["--recipe", "happy-block", "--device", "cuda", "--out", str(out)],
                 ["happy", "--device", "cuda", "--hands", "32", "--out", str(out)]):
        r = pipslab_here(capfd, "train", *argv, "--no-progress")
        assert r.returncode == 2 and "torch sees no GPU" in r.stderr and len(r.stderr.strip().splitlines()) == 1, \
            r.stderr
        assert not out.exists()
    # Ray missing, Ray's address unreachable, Ray's start-up failing
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:9")
    r = pipslab_here(capfd, "train", "happy", "--backend", "ray", "--hands", "32", "--out", str(out), "--no-progress")
    assert r.returncode == 2 and "cannot be reached" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not out.exists()
    monkeypatch.delenv("RAY_ADDRESS")
    import ray
    monkeypatch.setattr(ray, "is_initialized", lambda: False)

    def slow_start(**kwargs):
        raise TimeoutError("Timed out while waiting for the raylet to start")
    monkeypatch.setattr(ray, "init", slow_start)
    r = pipslab_here(capfd, "train", "--recipe", "happy-block", "--backend", "ray", "--out", str(out), "--no-progress")
    assert r.returncode == 2 and "could not start or reach a local Ray: Timed out" in r.stderr, r.stderr
    assert not out.exists()
    monkeypatch.setitem(sys.modules, "ray", None)
    r = pipslab_here(capfd, "train", "happy", "--backend", "ray", "--hands", "32", "--out", str(out), "--no-progress")
    assert r.returncode == 2 and "needs Ray" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not out.exists()


@pytest.mark.slow
def test_resume_of_a_folder_made_by_another_recipe_is_refused(tmp_path, capfd):
    out = tmp_path / "r"
    r = pipslab_here(capfd, "train", "--recipe", "happy-block", "--scale", "0.001", "--out", str(out), "--no-progress")
    assert r.returncode == 0, r.stderr
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
    r = pipslab_here(capfd, "train", "--recipe", "happy-draw", "--scale", "0.001", "--out", str(out), "--resume",
                     "--no-progress")
    assert r.returncode == 2 and "holds a different recipe run (recipe: 'happy-block' there, 'happy-draw' here" \
        in r.stderr, r.stderr
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()} == before


def test_a_recipe_that_starts_from_a_shipped_net_grows_it(tmp_path):
    """``start = NAME``: the first stage's --init is the shipped net's name (no machine
    path in the card), and a bigger stage starts from it grown, computing what it did."""
    import numpy as np

    from pipslab.agents.td import load_net
    from pipslab.envs.backgammon import Position
    from pipslab.experiments.recipe import stage_args
    from pipslab.experiments.train_backgammon import TDTrainer
    recipe = load_recipe("backgammon")
    assert recipe.start == "backgammon-v1"
    args = stage_args(recipe, 0, tmp_path, 1.0, {})
    assert args.init == "backgammon-v1" and args.features == "contact"
    trainer = TDTrainer(args, torch.device("cpu"))
    trainer.init_from(args.init)
    rows = np.array([Position.start()] * 2, dtype=np.int8)
    assert np.allclose(trainer.net.probabilities(rows), load_net("backgammon-v1").probabilities(rows), atol=1e-6)


def test_render_of_a_net_without_card_data_is_one_line(capfd):
    from pipslab.experiments import recipe
    assert recipe.main(["render", "no-such-net"]) == 2
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and "no-such-net" in err and "Traceback" not in err
