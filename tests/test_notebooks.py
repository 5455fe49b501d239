"""Every notebook's code cells run, in order, as plain Python (a smaller workload where the
notebook sets one), so the notebooks cannot rot unnoticed."""
import json
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
@pytest.mark.slow
def test_notebook_runs(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # whatever it writes lands in a scratch results/
    cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    assert cells
    env = {"__name__": "__notebook__"}
    for k, cell in enumerate(cells):
        source = "".join(cell["source"])
        if k == 0:
            source += "\nN_POSITIONS = min(globals().get('N_POSITIONS', 0), 40)\n"
        exec(compile(source, f"{path.name}[cell {k}]", "exec"), env)
    if "outcomes" in env:
        assert sum(env["outcomes"].values()) == env["N_POSITIONS"]
        assert (tmp_path / "results" / "notebooks" / "fish_endings.png").exists()
