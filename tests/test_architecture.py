"""docs/architecture.md taken at its word: an agent and an evaluator written with only what
its rows name — a module with ``@register`` on a factory of an agent with ``act(observation,
rng)``, a class with ``values(batch, seat)`` and ``reseed(rng)`` and one
``register_evaluator`` call — play ``pipslab tournament`` and ``pipslab play`` through
``--import``; and every file the page names exists."""
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"

BOT = '''"""A bot and an evaluator, as docs/architecture.md says to write them."""
import numpy as np

from pipslab.agents.base import Agent
from pipslab.agents.evaluators import register_evaluator
from pipslab.agents.registry import register


class Shuffler(Agent):
    """Any legal move, drawn from the rng it is given."""

    def act(self, observation, rng):
        legal = observation.legal_actions
        return legal[int(rng.integers(len(legal)))]


@register("doc_shuffler", games=["happy", "troshin"])
def make_shuffler(game):
    return Shuffler()


class Even:
    """Every unfinished position is even for every seat; a finished one is worth its result."""

    def evaluate(self, states):
        return np.array([s.returns() if s.is_terminal else [0.0] * s.variant.players for s in states])


class Coin:
    """Every backgammon position a coin toss: no gammons, no backgammons."""

    def probabilities(self, positions):
        return np.tile([0.5, 0.0, 0.0, 0.0, 0.0], (len(positions), 1))


register_evaluator("dominoes", "doc_even", Even)
register_evaluator("backgammon", "doc_coin", Coin)
'''


def pipslab(*argv, cwd):
    return subprocess.run([sys.executable, "-m", "pipslab.experiments.cli", *map(str, argv)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_a_documented_agent_and_evaluator_play_a_tournament_and_a_game(tmp_path):
    bot = tmp_path / "my_bot.py"
    bot.write_text(BOT)
    search = "ismcts:iters=24,eval=doc_even"
    r = pipslab("tournament", "happy", "--agents", f"doc_shuffler,{search},heaviest", "--games", 12, "--seed", 4,
                "--out", tmp_path / "t", "--import", bot, "--workers", 1, "--no-plots", "--no-progress", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    summary = pd.read_csv(tmp_path / "t" / "summary.csv")
    assert list(summary["agent"]) == ["doc_shuffler", search, "heaviest"] and (summary["games"] == 8).all()
    r = pipslab("play", "troshin", "--agents", f"{search},doc_shuffler", "--seed", 2, "--import", bot, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "doc_shuffler" in r.stdout and search in r.stdout
    pimc = "pimc:samples=2,depth=2,eval=doc_even"
    r = pipslab("play", "happy", "--agents", f"{pimc},doc_shuffler", "--seed", 3, "--import", bot, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert pimc in r.stdout


def test_a_documented_backgammon_evaluator_runs_every_backgammon_search(tmp_path):
    bot = tmp_path / "my_bot.py"
    bot.write_text(BOT)
    searches = "expectimax:plies=1,eval=doc_coin,mcts:iters=12,eval=doc_coin"
    r = pipslab("play", "backgammon", "--agents", searches, "--seed", 5, "--import", bot, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "expectimax:plies=1,eval=doc_coin" in r.stdout and "mcts:iters=12,eval=doc_coin" in r.stdout


def test_every_file_the_page_names_exists():
    text = DOC.read_text()
    paths = set(re.findall(r"`((?:envs|agents|experiments|tests|docs|notebooks)/[\w/.]*)`", text))
    assert len(paths) >= 20
    missing = sorted(p for p in paths if not (ROOT / p).exists() and not re.search(r"[A-Z]{3,}", p))   # NAME.pt
    assert not missing, missing
    # the row of agents names the catalogue the registry loads
    assert "`agents/builtin.py`" in text
