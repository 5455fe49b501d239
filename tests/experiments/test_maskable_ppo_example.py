"""The MaskablePPO example (``python -m pipslab.experiments.examples.maskable_ppo_happy``):
sb3-contrib trains on the Happy env unchanged for a few thousand steps, ``model.save``
writes sb3's zip, and the ``sb3`` agent plays it in a ``pipslab tournament`` as it is."""
import csv
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.slow
def test_train_a_few_thousand_steps_then_play_a_tournament(tmp_path):
    r = subprocess.run([sys.executable, "-m", "pipslab.experiments.examples.maskable_ppo_happy", "--steps", "2048",
                        "--envs", "4", "--seed", "0", "--out", str(tmp_path / "ppo")],
                       cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    model = tmp_path / "ppo" / "model.zip"
    assert model.is_file() and (tmp_path / "ppo" / "train.json").is_file()
    assert not list((tmp_path / "ppo").glob("*.tmp*"))          # written atomically

    # every move of a game is legal, and a sampling policy replays from the game's rng
    from pipslab.agents.registry import make_agent
    from pipslab.envs.game import get_game
    from pipslab.experiments.games import play_game

    def moves(spec_text):
        seen = []

        def on_move(state, player, action):
            assert action in state.legal_actions()
            seen.append(action)
        agents = [make_agent(spec_text, "happy"), make_agent("random", "happy")]
        play_game(get_game("happy"), {"mode": "block"}, agents, [1, 0], [1, 1], on_move=on_move)
        return seen
    assert moves(f"sb3:path={model}") and moves(f"sb3:path={model},sample=true") == moves(f"sb3:path={model},sample=true")

    out = tmp_path / "t"
    r = subprocess.run([str(Path(sys.executable).with_name("pipslab")), "tournament", "happy",
                        "--agents", f"sb3:path={model},random", "--games", "12", "--workers", "1",
                        "--out", str(out), "--no-plots", "--no-progress"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    rows = {row["agent"]: row for row in csv.DictReader((out / "summary.csv").open())}
    assert int(rows[f"sb3:path={model}"]["games"]) == 12
