"""The Python API at the package root and "bring your own bot": the docstring examples and
the README's code blocks run as written; sb3, TorchScript and callable policies play in
tournaments; bad files and shapes are one line (exit 2 on the command line) before the
first game; an illegal move forfeits its game and is counted."""
from __future__ import annotations

import doctest
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pipslab
from pipslab.envs.errors import PipslabError
from pipslab.experiments import api
from pipslab.experiments.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_the_api_docstring_examples_run():
    result = doctest.testmod(api, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 10 and result.failed == 0


def test_version_is_the_installed_one(capsys):
    from importlib.metadata import version
    assert pipslab.__version__ == version("pipslab")
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.strip() == f"pipslab {pipslab.__version__}"


def readme_blocks(section: str, lang: str = "python"):
    text = (ROOT / "README.md").read_text()
    body = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{lang}\n(.*?)```", body, re.S)


@pytest.mark.slow
def test_the_readme_bring_your_own_bot_blocks_run(tmp_path, monkeypatch, capsys):
    blocks = readme_blocks("Bring your own bot")
    assert len(blocks) == 3
    monkeypatch.chdir(tmp_path)
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {"__name__": "__readme__"})
    out = capsys.readouterr().out
    assert "sb3:path=my-ppo.zip" in out and "lowest_tile" in out and (tmp_path / "my-ppo.zip").is_file()


def test_make_env_takes_every_option_of_the_game():
    env = pipslab.make_env("happy", max_pip=4, opponents="heaviest")
    obs, _ = env.reset(seed=1)
    assert obs["action_mask"].any()
    with pytest.raises(PipslabError, match="colour"):
        pipslab.make_env("happy", colour="red")


def test_load_net_policy_is_a_distribution_over_the_legal_moves():
    net = pipslab.load_net("happy-draw")
    env = pipslab.make_env("happy", mode="draw", opponents="random")
    obs, _ = env.reset(seed=3)
    for _ in range(5):
        p = net.policy(obs["observation"], obs["action_mask"])
        assert p.sum() == pytest.approx(1.0) and (p[obs["action_mask"] == 0] == 0).all()
        assert -1.0 <= net.value(obs) <= 1.0
        obs, _, done, _, _ = env.step(int(np.argmax(p)))
        if done:
            break
    bg = pipslab.load_net("backgammon")
    probs = bg.probabilities("4HPwATDgc/ABMA")
    assert probs.shape == (5,) and 0.4 < probs[0] < 0.6
    with pytest.raises(PipslabError, match="backgammon net"):
        bg.policy(obs)
    with pytest.raises(PipslabError, match="no network"):
        pipslab.load_net("no-such-net")


def test_tournament_returns_dataframes_and_writes_nothing_without_out(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    t = pipslab.tournament("happy", ["heaviest", "random"], games=20, seed=5)
    assert isinstance(t.summary, pd.DataFrame) and isinstance(t.pairings, pd.DataFrame)
    assert isinstance(t.ratings, pd.DataFrame) and len(t.games) == 20 and t.out is None
    assert not list(tmp_path.iterdir())
    again = pipslab.tournament("happy", ["heaviest", "random"], games=20, seed=5, out="t")
    pd.testing.assert_frame_equal(again.summary, t.summary)
    assert (tmp_path / "t" / "games.csv").is_file()


# ------------------------------------------------------------------ policies
def first_legal(observation, mask, rng):
    return int(np.flatnonzero(mask)[0])


def test_a_callable_plays_every_game_and_replays():
    for game, opts in [("happy", {"mode": "draw"}), ("troshin", {"players": 3}), ("backgammon", {})]:
        t1 = pipslab.tournament(game, [first_legal, "random"], games=4, seed=2, **opts)
        t2 = pipslab.tournament(game, [first_legal, "random"], games=4, seed=2, **opts)
        pd.testing.assert_frame_equal(t1.games.drop(columns="duration_s"), t2.games.drop(columns="duration_s"))
        assert "forfeits" not in t1.summary


def test_an_illegal_move_forfeits_the_game_and_is_counted(capsys):
    def sometimes_illegal(observation, mask, rng):
        return int(np.flatnonzero(mask == 0)[0]) if rng.random() < 0.2 else int(np.flatnonzero(mask)[0])

    t = pipslab.tournament("happy", [sometimes_illegal, "heaviest"], games=30, seed=4)
    lost = t.games[t.games["result"] == "forfeit"]
    assert len(lost) > 0
    row = t.summary.set_index("agent").loc["sometimes_illegal"]
    assert row["forfeits"] == len(lost) and t.summary.set_index("agent").loc["heaviest", "forfeits"] == 0
    for _, g in lost.iterrows():    # the forfeiting seat got the worst return, the other side the opposite
        loser = 0 if g["seat0"] == "sometimes_illegal" else 1
        assert g[f"return_{loser}"] == -1.0 and g[f"return_{1 - loser}"] == 1.0 and g["winner_seat"] == 1 - loser
    assert "the game is forfeited" in capsys.readouterr().err


def test_scores_from_a_callable_play_the_best_legal_action():
    from pipslab.agents.registry import make_agent
    from pipslab.envs.observation import Observation
    pipslab.register_policy("prefers_high_ids", lambda obs, mask, rng: np.arange(mask.size, dtype=float))
    agent = make_agent("prefers_high_ids", "happy")
    state = pipslab.get_game("happy").new_state(np.random.default_rng(0), {})
    p = state.current_player
    legal = state.legal_actions()
    assert agent.act(Observation(p, state.observe(p), legal, state.num_actions), np.random.default_rng(0)) == max(legal)
    with pytest.raises(PipslabError, match="callable"):
        pipslab.register_policy("x", 3)


@pytest.fixture(scope="module")
def torch_module(tmp_path_factory):
    import torch

    class Linear(torch.nn.Module):
        def __init__(self, n, k):
            super().__init__()
            self.layer = torch.nn.Linear(n, k)

        def forward(self, observation, mask):
            return self.layer(observation)
    folder = tmp_path_factory.mktemp("torch")
    good, bad = folder / "happy.pt", folder / "wrong.pt"
    torch.jit.save(torch.jit.script(Linear(111, 58)), str(good))
    torch.jit.save(torch.jit.script(Linear(50, 58)), str(bad))
    return good, bad


def test_a_torchscript_module_plays(torch_module):
    good, _ = torch_module
    t = pipslab.tournament("happy", [f"torch:path={good}", "random"], games=6, seed=1)
    assert int(t.summary["games"].iloc[0]) == 6


@pytest.fixture(scope="module")
def sb3_model(tmp_path_factory):
    from sb3_contrib import MaskablePPO
    path = tmp_path_factory.mktemp("sb3") / "model.zip"
    env = pipslab.make_env("happy", opponents="heaviest")
    model = MaskablePPO("MultiInputPolicy", env, seed=0, n_steps=64, batch_size=64, n_epochs=1,
                        policy_kwargs={"net_arch": [16]}, verbose=0)
    model.learn(64)
    model.save(path)
    return path, model


def test_an_sb3_model_plays_as_sb3_itself_would(sb3_model):
    path, model = sb3_model
    from pipslab.agents.registry import make_agent
    from pipslab.envs.observation import Observation
    agent = make_agent(f"sb3:path={path}", "happy")
    env = pipslab.make_env("happy", opponents="random")
    obs, _ = env.reset(seed=0)
    done = False
    while not done:
        state = env.unwrapped.state
        seat = state.current_player
        ours = agent.act(Observation(seat, state.observe(seat), state.legal_actions(), state.num_actions),
                         np.random.default_rng(0))
        theirs, _ = model.predict(obs, action_masks=obs["action_mask"], deterministic=True)
        assert ours == int(theirs)
        obs, _, done, _, _ = env.step(ours)


def test_bad_policy_files_are_one_line_and_exit_2_before_any_game(tmp_path, capsys, sb3_model, torch_module):
    model, _ = sb3_model
    _, wrong = torch_module
    notes = tmp_path / "notes.zip"
    notes.write_text("not a zip")
    cases = [
        (f"sb3:path={tmp_path / 'missing.zip'}", "happy", "no model file"),
        (f"sb3:path={notes}", "happy", "not a stable-baselines3 model"),
        (f"sb3:path={wrong}", "happy", "not a stable-baselines3 model"),
        (f"torch:path={model}", "happy", "not a TorchScript"),
        (f"sb3:path={model}", "backgammon", "actions"),                 # a model for another game
        (f"torch:path={wrong}", "happy", "the policy failed"),           # the wrong observation size
        ("sb3", "happy", "give the model file"),
    ]
    for spec, game, message in cases:
        out = tmp_path / "never"
        assert main(["tournament", game, "--agents", f"{spec},random", "--games", "2", "--out", str(out),
                     "--no-progress", "--workers", "1"]) == 2
        err = capsys.readouterr().err.strip()
        assert message in err and "\n" not in err and not out.exists(), (spec, err)


def test_a_file_that_registers_a_policy_plays_from_the_command_line(tmp_path, capsys):
    bot = tmp_path / "mybot.py"
    bot.write_text("import numpy as np\nimport pipslab\n\n"
                   "def act(observation, mask, rng):\n    return int(np.flatnonzero(mask)[-1])\n\n"
                   "pipslab.register_policy('mybot', act)\n")
    r = subprocess.run([str(Path(sys.executable).with_name("pipslab")), "tournament", "happy", "--import", str(bot),
                        "--agents", "mybot,heaviest", "--games", "8", "--workers", "2", "--out", str(tmp_path / "t"),
                        "--no-plots", "--no-progress"], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    summary = pd.read_csv(tmp_path / "t" / "summary.csv")
    assert list(summary["agent"]) == ["mybot", "heaviest"] and summary["games"].sum() == 16


def test_a_torch_export_program_plays(tmp_path):
    import torch

    class Linear(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(111, 58)

        def forward(self, observation, mask):
            return self.layer(observation) + mask * 0.0
    path = tmp_path / "happy.pt2"
    torch.export.save(torch.export.export(Linear(), (torch.zeros(1, 111), torch.zeros(1, 58, dtype=torch.int8))), path)
    t = pipslab.tournament("happy", [f"torch:path={path}", "random"], games=4, seed=1)
    assert int(t.summary["games"].iloc[0]) == 4


@pytest.mark.slow
def test_your_bots_are_league_opponents_of_the_trainer(tmp_path, sb3_model, capsys):
    model, _ = sb3_model
    bot = tmp_path / "leaguebot.py"
    bot.write_text("import numpy as np\nimport pipslab\n\n"
                   "def act(observation, mask, rng):\n    return int(np.flatnonzero(mask)[-1])\n\n"
                   "pipslab.register_policy('leaguebot', act)\n")
    out = tmp_path / "train"
    assert main(["train", "happy", "--hands", "512", "--batch-hands", "256", "--import", str(bot),
                 "--league", f"leaguebot,sb3:path={model}", "--eval-games", "10",
                 "--eval-against", f"leaguebot,sb3:path={model}", "--out", str(out), "--no-progress"]) == 0
    curve = pd.read_csv(out / "curve.csv")
    assert {"leaguebot", f"sb3:path={model}"} <= set(curve["opponent"])


@pytest.mark.slow
def test_the_api_guide_blocks_run(tmp_path, monkeypatch):
    text = (ROOT / "docs" / "api.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 5
    monkeypatch.chdir(tmp_path)
    for block in blocks:
        exec(compile(block, "docs/api.md", "exec"), {"__name__": "__docs__"})
    assert (tmp_path / "t" / "analysis" / "analysis.csv").is_file()
