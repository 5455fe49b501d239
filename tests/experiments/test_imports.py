"""``--import`` (issue 14): a module in the current folder or a ``.py`` path registers agents
for ``pipslab tournament`` (workers and ``--resume`` included) and ``pipslab play``, run as
the installed ``pipslab`` console script, whose ``sys.path`` lacks the current folder."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

PIPSLAB = Path(sys.executable).with_name("pipslab")

AGENTS = '''
from pipslab.agents.registry import register
from pipslab.agents.random_agent import RandomAgent


class Firsty(RandomAgent):
    name = "firsty"

    def act(self, observation, rng):
        return min(observation.legal_actions)


@register("firsty", games=["happy"])
def _firsty(game):
    return Firsty()
'''


def _run(cwd, *args):
    assert PIPSLAB.exists(), f"the console script {PIPSLAB} is not installed (pip install -e .)"
    return subprocess.run([str(PIPSLAB), *args], cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.fixture()
def folder(tmp_path):
    (tmp_path / "myagents.py").write_text(AGENTS)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "other_agents.py").write_text(AGENTS.replace("firsty", "firsty2"))
    return tmp_path


@pytest.mark.slow
@pytest.mark.parametrize("spec, agent", [("myagents", "firsty"), ("sub/other_agents.py", "firsty2")])
def test_tournament_imports_from_the_current_folder_or_a_path(folder, spec, agent):
    r = _run(folder, "tournament", "happy", "--import", spec, "--agents", f"{agent},random", "--games", "8",
             "--workers", "2", "--out", "out", "--no-plots", "--no-progress")
    assert r.returncode == 0, r.stderr
    manifest = json.loads((folder / "out" / "run.json").read_text())
    recorded = manifest["args"]["imports"] if "args" in manifest else manifest["imports"]
    if spec.endswith(".py"):   # recorded absolute: a resume from elsewhere finds it
        assert recorded == [str((folder / spec).resolve())]
    else:
        assert recorded == [spec]
    # the replay loads the recorded import: a file from any folder, a module name (as
    # Python finds one) from the folder it is in
    r = _run(folder / "sub" if spec.endswith(".py") else folder, "play", "--replay", "0", "--from",
             str(folder / "out"))
    assert r.returncode == 0, r.stderr
    assert agent in r.stdout


@pytest.mark.slow
def test_play_imports_a_path_and_bad_imports_are_one_line(folder):
    r = _run(folder, "play", "happy", "--import", "./myagents.py", "--agents", "firsty,random", "--games", "1")
    assert r.returncode == 0, r.stderr
    assert "firsty" in r.stdout
    for spec, message in [("./missing.py", "no such file"), ("nosuchmodule_xyz", "cannot import"),
                          ("sub/notpython.txt", "must be a .py file")]:
        r = _run(folder, "play", "happy", "--import", spec, "--agents", "random,random")
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and message in r.stderr, (spec, r.stderr)
