"""``ismcts``'s compiled iterations (``agents/ismcts_compiled.py``) against its Python loop
(``compiled=false``, the reference): the same search, other random numbers — so the moves
they choose over many seeds have the same distribution (chi-square, fixed seeds) — and the
compiled rollout evaluator against the Python playouts."""
import random

import numpy as np
import pytest
from scipy.stats import chi2_contingency

from pipslab.agents.base import Observation
from pipslab.agents.dominoes_value import DominoRollout
from pipslab.agents.registry import make_agent
from pipslab.agents.search_dominoes import ISMCTSAgent
from pipslab.envs.dominoes.engine import deal
from pipslab.envs.dominoes.variants import VARIANTS


def _decision(variant, seed, min_moves=0):
    """A random state with at least three legal moves, reached by random play."""
    rng = random.Random(seed)
    while True:
        s = deal(variant, rng)
        for _ in range(min_moves):
            if s.is_terminal:
                break
            legal = s.legal_actions()
            s.apply(legal[rng.randrange(len(legal))])
        while not s.is_terminal and len(s.legal_actions()) < 3:
            legal = s.legal_actions()
            s.apply(legal[rng.randrange(len(legal))])
        if not s.is_terminal:
            p = s.current_player
            return Observation(p, s.observe(p), s.legal_actions(), s.num_actions)


@pytest.mark.parametrize("name,moves,iters", [("happy-block", 0, 30), ("happy-draw", 4, 30),
                                              ("troshin-4-pairs", 4, 40), ("triple-3", 6, 40)])
def test_compiled_iterations_choose_moves_as_the_python_loop(name, moves, iters):
    obs = _decision(VARIANTS[name], 3, moves)
    compiled, python = ISMCTSAgent(iters=iters), ISMCTSAgent(iters=iters, compiled=False)
    counts = {a: [0, 0] for a in obs.legal_actions}
    for seed in range(300):
        counts[compiled.act(obs, np.random.default_rng(seed))][0] += 1
        counts[python.act(obs, np.random.default_rng(seed))][1] += 1
    table = np.array([c for c in counts.values() if sum(c)]).T
    assert table.shape[1] > 1 or table[0, 0] == table[1, 0]
    if table.shape[1] > 1:
        assert chi2_contingency(table)[1] > 1e-3


def test_compiled_iterations_replay_and_keep_their_budgets():
    obs = _decision(VARIANTS["happy-block"], 5)
    agent = make_agent("ismcts:iters=200", "happy")
    moves = [agent.act(obs, np.random.default_rng(s)) for s in range(20)]
    assert moves == [agent.act(obs, np.random.default_rng(s)) for s in range(20)]
    assert set(moves) <= set(obs.legal_actions)
    timed = make_agent("ismcts:time=0.01", "happy")
    assert timed.act(obs, np.random.default_rng(1)) in obs.legal_actions


def test_the_python_loop_is_kept_for_other_evaluators_and_matches():
    agent = make_agent("ismcts:iters=10,eval=hand", "happy")
    assert not isinstance(agent.evaluator, DominoRollout)
    assert make_agent("ismcts:iters=10,compiled=false", "happy").evaluator.compiled is False
    rng = np.random.default_rng(0)
    from pipslab.envs.dominoes.match import new_match
    m = new_match(VARIANTS["troshin-2"], rng)
    p = m.current_player
    obs = Observation(p, m.observe(p), m.legal_actions(), m.num_actions)
    assert make_agent("ismcts:iters=20", "troshin").act(obs, rng) in obs.legal_actions


@pytest.mark.parametrize("name", ["happy-draw", "troshin-4-pairs", "triple-4"])
def test_compiled_rollout_evaluator_estimates_what_python_playouts_do(name):
    v = VARIANTS[name]
    rng = random.Random(1)
    s = deal(v, rng)
    for _ in range(5):
        legal = s.legal_actions()
        s.apply(legal[rng.randrange(len(legal))])
    fast, slow = DominoRollout(), DominoRollout(compiled=False)
    fast.reseed(np.random.default_rng(0))
    slow.reseed(np.random.default_rng(0))
    a = np.array([fast.estimate(s) for _ in range(3000)])
    b = np.array([slow.estimate(s) for _ in range(3000)])
    se = np.sqrt(a.var(axis=0) / len(a) + b.var(axis=0) / len(b))
    assert np.all(np.abs(a.mean(axis=0) - b.mean(axis=0)) < 4 * se + 1e-9)
    again = DominoRollout()
    again.reseed(np.random.default_rng(0))
    assert [again.estimate(s) for _ in range(5)] == a[:5].tolist()    # seeded by the reseed
