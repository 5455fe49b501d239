"""The notebooks run headless (nbclient, a real Jupyter kernel) on a small workload, so they
cannot rot unnoticed; what they write goes to a scratch folder."""
import json
import pathlib

import nbformat
import pytest
from nbclient import NotebookClient

from pipslab.experiments.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert [p.name for p in NOTEBOOKS] == ["fish_endgames.ipynb"]


def test_the_committed_notebook_shows_its_outputs():
    """A reader sees the answers without running it: every code cell has saved output."""
    nb = json.loads((ROOT / "notebooks" / "fish_endgames.ipynb").read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code and all(c.get("outputs") for c in code[2:])
    text = json.dumps(nb)
    assert "fish-happy-block" in text and "troshin-4-pairs" in text


@pytest.mark.slow
def test_fish_notebook_runs_on_a_small_study(tmp_path, monkeypatch):
    study = tmp_path / "study"
    assert main(["fish", "study", "happy", "--agents", "heaviest,suits", "--games", "40", "--seed", "5",
                 "--before", "3", "--view-samples", "2", "--workers", "1", "--no-plots", "--no-progress",
                 "--out", str(study)]) == 0
    monkeypatch.setenv("FISH_STUDY", str(study))
    monkeypatch.setenv("FISH_RESULTS", str(tmp_path / "results"))
    monkeypatch.chdir(tmp_path)
    nb = nbformat.read(ROOT / "notebooks" / "fish_endgames.ipynb", as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "happy-block: " in outputs and "ended blocked" in outputs and "best endgame player" in outputs
    for name in ("margins", "decided", "closing", "regret"):
        assert (tmp_path / "results" / f"happy-block-{name}.png").is_file()
