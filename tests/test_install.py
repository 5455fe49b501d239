"""The installed package is one namespace, ``pipslab``: it installs into a fresh venv next
to unrelated packages called ``envs`` and ``agents`` (names other projects, and users' own
folders, already take), ``import pipslab`` registers every Gymnasium id, and nothing named
``envs``, ``agents`` or ``experiments`` lands at the top of site-packages."""
from __future__ import annotations

import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from harness_helpers import ROOT

CHECK = r"""
import envs, agents                      # the unrelated packages come first
assert envs.OTHER == "envs" and agents.OTHER == "agents", (envs, agents)
import gymnasium as gym
env = gym.make("pipslab:pipslab/HappyDominoes-v0")      # no other import needed
env.reset(seed=0)
import pipslab
from gymnasium.envs.registration import registry
ids = sorted(i for i in registry if i.startswith("pipslab/"))
assert ids, "no pipslab ids registered"
for i in ids:
    e = gym.make(i)
    obs, info = e.reset(seed=1)
    assert obs["action_mask"].any(), i
    e.close()
assert pipslab.envs.__name__ == "pipslab.envs" and envs.__name__ == "envs"
from importlib.metadata import version
assert pipslab.__version__ == version("pipslab"), pipslab.__version__
assert callable(pipslab.tournament) and callable(pipslab.make_env)      # the API at the root
print("OK", len(ids), " ".join(ids))
"""


@pytest.mark.slow
def test_installs_beside_other_envs_and_agents_packages(tmp_path):
    target = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(target)
    py = target / "bin" / "python"
    site = Path(subprocess.check_output([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                        text=True).strip())
    # the dependencies come from the test's own environment (no network), the project itself
    # is built and installed into the fresh venv as a wheel would be by a user
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    for name in ("envs", "agents"):
        (site / name).mkdir()
        (site / name / "__init__.py").write_text(f'OTHER = "{name}"\n')
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                        "--no-index", "--target", str(site), str(ROOT)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    top = {p.name for p in site.iterdir()}
    assert "pipslab" in top
    # our three folders are inside pipslab/, and the other packages are untouched
    assert (site / "pipslab" / "envs" / "__init__.py").exists()
    assert (site / "pipslab" / "agents" / "nets" / "backgammon.pt").exists()
    assert (site / "pipslab" / "experiments" / "configs").is_dir()
    assert (site / "pipslab" / "experiments" / "web" / "play.js").exists()   # the play page's assets
    assert not (top & {"experiments"}), top
    assert (site / "envs" / "__init__.py").read_text() == 'OTHER = "envs"\n'
    r = subprocess.run([str(py), "-c", CHECK], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.startswith("OK"), r.stderr[-3000:]
    assert "pipslab/Backgammon-v0" in r.stdout and "pipslab/TripleDominoes-v0" in r.stdout
    # the README's example commands work from the installed package, outside any checkout
    r = subprocess.run([str(py), "-m", "pipslab.experiments.examples.maskable_ppo_happy", "--help"],
                       capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert r.returncode == 0 and "--steps" in r.stdout, r.stderr[-2000:]
