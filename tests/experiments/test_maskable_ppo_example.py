"""The MaskablePPO example (experiments/examples/maskable_ppo_happy.py): sb3-contrib trains on
``pipslab/HappyDominoes-v0`` unchanged for a few thousand steps, the policy is saved as a
plain state_dict and read back with ``weights_only=True``, and the ``ppo`` agent it
registers plays a short ``pipslab tournament`` through ``--import`` of the file."""
import csv
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from pipslab.envs.errors import PipslabError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "experiments" / "examples" / "maskable_ppo_happy.py"


@pytest.mark.slow
def test_train_a_few_thousand_steps_then_play_a_tournament(tmp_path):
    from pipslab.experiments.examples import maskable_ppo_happy as ex

    meta = ex.train(3000, seed=0, out=tmp_path, envs=4, progress=lambda *_: None)
    assert meta["steps"] >= 3000 and (tmp_path / "train.json").is_file()
    data = torch.load(tmp_path / "policy.pt", weights_only=True)      # tensors and plain values only
    assert data["format"] == ex.FORMAT and data["config"]["mode"] == "block"

    # the agent: a legal action at every move of a game against random, the same on a replay
    from pipslab.agents.registry import make_agent
    from pipslab.experiments.games import game_spec, play_game
    spec = game_spec("happy")
    seen = []

    def on_move(state, player, action):
        assert action in state.legal_actions()
        seen.append(action)

    agents = [make_agent(f"ppo:path={tmp_path / 'policy.pt'}", "happy"), make_agent("random", "happy")]
    play_game(spec, {"mode": "block"}, agents, [1, 0], [1, 1], on_move=on_move)
    first = list(seen)
    seen.clear()
    agents = [make_agent(f"ppo:path={tmp_path / 'policy.pt'},sample=true", "happy"), make_agent("random", "happy")]
    play_game(spec, {"mode": "block"}, agents, [1, 0], [1, 1], on_move=on_move)
    assert first and seen

    # the tournament harness, the example imported by its path
    out = tmp_path / "t"
    r = subprocess.run([str(Path(sys.executable).with_name("pipslab")), "tournament", "happy", "--import", str(EXAMPLE),
                        "--agents", f"ppo:path={tmp_path / 'policy.pt'},random", "--games", "12", "--workers", "1",
                        "--out", str(out), "--no-plots", "--no-progress"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    rows = {row["agent"]: row for row in csv.DictReader((out / "summary.csv").open())}
    ppo = next(k for k in rows if k.startswith("ppo"))
    assert int(rows[ppo]["games"]) == 12 and 0.0 <= float(rows[ppo]["win_rate"]) <= 1.0


def test_foreign_or_missing_policy_files_are_one_line(tmp_path):
    from pipslab.experiments.examples import maskable_ppo_happy as ex

    with pytest.raises(PipslabError, match="no policy file"):
        ex.load_policy(tmp_path / "missing.pt")
    other = tmp_path / "other.pt"
    torch.save({"format": "something-else", "model": {"w": torch.zeros(2)}}, other)
    with pytest.raises(PipslabError, match="not a policy file"):
        ex.load_policy(other)
    pickled = tmp_path / "pickled.pt"
    torch.save({"format": ex.FORMAT, "obj": np.random.default_rng(0)}, pickled)   # an arbitrary object
    with pytest.raises(PipslabError, match="cannot read"):
        ex.load_policy(pickled)
