"""The notebooks run headless (nbclient, a real Jupyter kernel) on a small workload, so they
cannot rot unnoticed; what they write goes to a scratch folder.

``fish_endgames.ipynb`` is run three ways: on the summaries the repository ships (no study
files), on a small study read whole (``FISH_STUDY``), and with no study at all
(``FISH_SUMMARIES`` an empty folder), where it runs one of its own.
``benchmark_your_bot.ipynb`` trains a tiny policy and plays it, and a callable bot, in a
tournament."""
import json
import pathlib

import nbformat
import pandas as pd
import pytest
from nbclient import NotebookClient

from pipslab.experiments.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
FISH = ROOT / "notebooks" / "fish_endgames.ipynb"
BOT = ROOT / "notebooks" / "benchmark_your_bot.ipynb"
VARIABLES = ("FISH_STUDY", "FISH_SUMMARIES", "FISH_RESULTS", "BOT_STEPS", "BOT_GAMES", "BOT_SEED", "BOT_RESULTS")


def test_there_are_notebooks():
    assert [p.name for p in NOTEBOOKS] == ["benchmark_your_bot.ipynb", "fish_endgames.ipynb"]


def _texts(nb) -> list:
    """Every output of every code cell as text: streams, and each display's text and HTML."""
    out = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        for o in cell.get("outputs", []):
            text = o.get("text", "")
            data = o.get("data", {})
            for key in ("text/plain", "text/html"):
                value = data.get(key, "")
                text += "".join(value) if isinstance(value, list) else value
            out.append("".join(text) if isinstance(text, list) else text)
    return out


def _images(nb) -> int:
    return sum("image/png" in o.get("data", {}) for c in nb["cells"] if c["cell_type"] == "code"
               for o in c.get("outputs", []))


@pytest.mark.parametrize("path", [FISH, BOT], ids=lambda p: p.stem)
def test_the_committed_notebook_shows_its_outputs(path):
    """A reader sees the answers without running it: every code cell has saved output, none an
    error, and it was run on the repository's defaults (no scratch folder in its paths)."""
    nb = json.loads(path.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code and all(c.get("outputs") for c in code[2:])
    assert not [o for c in code for o in c["outputs"] if o["output_type"] == "error"]
    text = "\n".join(_texts(nb))
    assert "/tmp" not in text and str(ROOT) not in text
    assert _images(nb) >= 2
    first = "".join(nb["cells"][0]["source"])
    for name in VARIABLES:
        if name.startswith("FISH_" if path == FISH else "BOT_"):
            assert f"`{name}`" in first, f"{name} is not documented in {path.name}'s first cell"
    if path == FISH:
        assert "fish-happy-block" in text and "troshin-4-pairs" in text
        assert "read from results/fish-happy-block/summary.csv" in text   # what ships: the summaries
    else:
        assert "my-ppo (sb3)" in text and "my_bot" in text and "win_rate_low" in text


def _run(path: pathlib.Path, tmp_path, monkeypatch, **env):
    """Execute ``path`` in a kernel started in ``tmp_path`` with only ``env`` of its variables set."""
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, str(value))
    monkeypatch.chdir(tmp_path)
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    return nb, "\n".join(_texts(nb))


@pytest.mark.slow
def test_fish_notebook_runs_on_the_shipped_summaries(tmp_path, monkeypatch):
    """No FISH_STUDY: the checkout's results/ holds only summary.csv, run.json and the figures."""
    nb, outputs = _run(FISH, tmp_path, monkeypatch, FISH_RESULTS=tmp_path / "results")
    assert "read from results/fish-happy-block/summary.csv" in outputs
    assert "read from results/fish-troshin-4-pairs/summary.csv" in outputs
    assert "running a small one" not in outputs
    # the shipped answers, as summary.md states them
    assert "happy-block: 65.9% [65.3%, 66.6%] of 20,000 games ended blocked." in outputs
    assert "troshin-4-pairs: 12.0% [11.6%, 12.5%] of 20,000 games ended blocked." in outputs
    assert "best endgame player" in outputs and "decided at the last placement" in outputs
    assert _images(nb) == 8                      # the studies' own PNGs: four figures each
    assert not (tmp_path / "results").exists()   # nothing drawn, nothing written


@pytest.mark.slow
def test_fish_notebook_runs_on_a_small_study(tmp_path, monkeypatch):
    study = tmp_path / "study"
    assert main(["fish", "study", "happy", "--agents", "heaviest,suits", "--games", "40", "--seed", "5",
                 "--before", "3", "--view-samples", "2", "--workers", "1", "--no-plots", "--no-progress",
                 "--out", str(study)]) == 0
    nb, outputs = _run(FISH, tmp_path, monkeypatch, FISH_STUDY=study, FISH_RESULTS=tmp_path / "results")
    assert "happy-block: " in outputs and "ended blocked" in outputs and "best endgame player" in outputs
    assert f"read whole from {study}" in outputs and "summary.csv" not in outputs
    for name in ("margins", "decided", "closing", "regret"):
        assert (tmp_path / "results" / f"happy-block-{name}.png").is_file()


@pytest.mark.slow
def test_fish_notebook_runs_its_own_study_when_none_is_found(tmp_path, monkeypatch):
    """No study anywhere (as from a wheel): it runs a small one into FISH_RESULTS and says so."""
    (tmp_path / "empty").mkdir()
    results = tmp_path / "results"
    nb, outputs = _run(FISH, tmp_path, monkeypatch, FISH_SUMMARIES=tmp_path / "empty", FISH_RESULTS=results)
    assert f"No fish study in {tmp_path / 'empty'}: running a small one" in outputs
    assert "happy-block: 60 games (heaviest vs suits)" in outputs and "best endgame player" in outputs
    assert (results / "study-happy-block" / "positions.csv").is_file()
    for name in ("margins", "decided", "closing", "regret"):
        assert (results / f"happy-block-{name}.png").is_file()


@pytest.mark.slow
def test_fish_notebook_refuses_a_study_that_is_not_there(tmp_path, monkeypatch):
    """FISH_STUDY names what to read: a folder without a study is an error, not a study of its own."""
    with pytest.raises(Exception, match="FISH_STUDY: no study in"):
        _run(FISH, tmp_path, monkeypatch, FISH_STUDY=tmp_path / "nothing", FISH_RESULTS=tmp_path / "results")
    assert not (tmp_path / "results").exists()


@pytest.mark.slow
def test_bot_notebook_trains_and_benchmarks_a_bot(tmp_path, monkeypatch):
    out = tmp_path / "bot"
    nb, outputs = _run(BOT, tmp_path, monkeypatch, BOT_STEPS=1024, BOT_GAMES=20, BOT_SEED=3, BOT_RESULTS=out)
    assert "1,024 training steps, 20 tournament games, seed 3" in outputs
    tables = [t for t in _texts(nb) if "win_rate_high" in t and "avg_pip_diff" in t]
    assert tables, "no summary table in the outputs"
    for agent in ("my-ppo (sb3)", "my_bot", "heaviest", "random"):
        assert agent in tables[0]
    assert (out / "my-ppo.zip").is_file()
    summary = pd.read_csv(out / "tournament" / "summary.csv")
    assert set(summary["agent"]) == {f"sb3:path={out / 'my-ppo.zip'}", "my_bot", "heaviest", "random"}
    assert summary["games"].sum() == 2 * 20
    for name in ("win_rate.png", "pairings.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert _images(nb) == 2
