"""Lock-step ISMCTS (``search_many``, ``ISMCTSAgent.search_batch``): the visit-count policy,
what PUCT reduces to without values, a batch equal to its searches one at a time, root
noise, and net-guided ismcts replayed from its records."""
from __future__ import annotations

import math

import numpy as np
import pytest

from pipslab.agents import search_dominoes
from pipslab.agents.base import Observation
from pipslab.agents.evaluators import DominoEvaluator
from pipslab.agents.registry import make_agent
from pipslab.agents.search_dominoes import search_many
from pipslab.envs.dominoes.engine import deal
from pipslab.envs.dominoes.variants import HAPPY_BLOCK, HAPPY_DRAW
from pipslab.envs.errors import PipslabError


def _decisions(variant, count, seed=0, moves=0):
    """The first state with at least 2 legal moves after ``moves`` forced-or-first moves,
    in each of ``count`` deals."""
    out, rng = [], np.random.default_rng(seed)
    while len(out) < count:
        s = deal(variant, rng)
        for _ in range(moves):
            if not s.is_terminal:
                s.apply(s.legal_actions()[0])
        while not s.is_terminal and len(s.legal_actions()) < 2:
            s.apply(s.legal_actions()[0])
        if not s.is_terminal:
            out.append(s)
    return out


def _obs(s):
    p = s.current_player
    return Observation(p, s.observe(p), s.legal_actions(), s.num_actions)


class _Ranked(DominoEvaluator):
    """Deterministic per state: constant values ``value`` for seat 0 (minus for the others
    in a 2-seat game) and a prior proportional to 1, 2, 3, … over the legal moves in order
    (uniform with ``uniform``) — a prior that depends on the legal moves alone."""

    def __init__(self, value=0.0, uniform=False):
        self.value, self.uniform = value, uniform

    def estimate(self, state):
        return [self.value, -self.value]

    def weights(self, n):
        w = [1.0] * n if self.uniform else [i + 1.0 for i in range(n)]
        return [x / sum(w) for x in w]

    def prior(self, states):
        return [dict(zip(s.legal_actions(), self.weights(len(s.legal_actions())))) for s in states]


class _Pips(DominoEvaluator):
    """Deterministic per state, different from state to state: each seat's value from the
    pips left, a prior from each move's tile id."""

    def estimate(self, state):
        pips = state.pips_left()
        return [math.tanh((pips[1 - p] - pips[p]) / 30) for p in range(2)]

    def prior(self, states):
        out = []
        for s in states:
            legal = s.legal_actions()
            w = [1.0 + (a * 7919) % 13 for a in legal]
            out.append({a: x / sum(w) for a, x in zip(legal, w)})
        return out


@pytest.fixture
def roots(monkeypatch):
    """The roots of the searches, in the order their results are made."""
    seen = []
    real = search_dominoes._most_visited
    monkeypatch.setattr(search_dominoes, "_most_visited", lambda root, legal: seen.append(root) or real(root, legal))
    return seen


@pytest.mark.parametrize("spec, ended_at_root", [("ismcts:iters=60,eval=net,compiled=false", 1),
                                                  ("ismcts:iters=60,eval=hand", 0)])
def test_the_visit_count_policy_is_the_root_s_counts(spec, ended_at_root, roots):
    """PUCT's first iteration values the root and ends there, every other one goes through a
    root move; UCB1 expands a root move at every iteration (no game ends at the root).
    The Python loop's trees (the compiled PUCT's: ``tests/agents/test_puct_compiled.py``)."""
    obs = [_obs(s) for s in _decisions(HAPPY_BLOCK, 3)]
    agent = make_agent(spec, "happy")
    results = agent.search_batch(obs, [np.random.default_rng(i) for i in range(3)])
    for o, r, root in zip(obs, results, roots):
        assert list(r.visits) == list(o.legal_actions)
        assert r.visits == {a: (root.children[a].visits if a in root.children else 0) for a in o.legal_actions}
        assert sum(r.visits.values()) == 60 - ended_at_root and r.iterations == 60 == root.visits
        assert r.action == next(a for a in o.legal_actions if r.visits[a] == max(r.visits.values()))
        assert -1.0 <= r.value <= 1.0


def test_the_root_value_is_the_observer_s_mean_return():
    """With every leaf valued ``(v, -v)`` (and no game ending so early), the root value is
    ``v`` for seat 0 and ``-v`` for seat 1."""
    states = _decisions(HAPPY_BLOCK, 4, seed=1)
    results = search_many([s.observe(s.current_player) for s in states], [5] * 4, _Ranked(0.25), 30)
    for s, r in zip(states, results):
        assert r.value == pytest.approx(0.25 if s.current_player == 0 else -0.25)


def _reference_root_visits(prior, legal, iters, c):
    """PUCT's root with zero values: ``Q = 0`` for every move and the root's moves all equally
    available (each root pass makes every one available once more), so the k-th pass
    takes the first move maximising ``c * P(a) * sqrt(k) / (1 + N(a))`` — the exploration
    term alone; the first iteration values the root."""
    n = dict.fromkeys(legal, 0)
    for k in range(1, iters):
        best, best_a = -1e18, legal[0]
        for a in legal:
            score = 0.0 + c * prior[a] * math.sqrt(k) / (1 + n[a])
            if score > best:
                best, best_a = score, a
        n[best_a] += 1
    return n


@pytest.mark.parametrize("uniform", [True, False])
def test_puct_with_zero_values_visits_the_root_by_the_prior_alone(uniform):
    """With all values 0 the root's visits follow the greedy ``argmax P(a) / (1 + N(a))``
    whatever the worlds sampled — with a uniform prior a round robin over the legal moves
    in their order — for any seed and any budget."""
    states = _decisions(HAPPY_DRAW, 3, seed=3)
    ev = _Ranked(0.0, uniform=uniform)
    for iters in (1, 2, 7, 23):
        for seed in (0, 1):
            results = search_many([s.observe(s.current_player) for s in states], [seed] * 3, ev, iters, c=1.5)
            for s, r in zip(states, results):
                legal = s.legal_actions()
                expected = _reference_root_visits(ev.prior([s])[0], legal, iters, 1.5)
                assert r.visits == expected
                if uniform:
                    m, k = divmod(iters - 1, len(legal))
                    assert list(r.visits.values()) == [m + 1] * k + [m] * (len(legal) - k)


@pytest.mark.parametrize("spec", ["ismcts:iters=50,eval=net", "ismcts:iters=50,eval=net,mix=0.5",
                                  "ismcts:iters=50,eval=hand", "ismcts:iters=50,compiled=false",
                                  "ismcts:iters=50,eval=rollout:2"])
def test_a_batch_is_its_searches_one_at_a_time(spec):
    """Each search keeps to its own stream (worlds, tie-breaks, playouts, a rollout
    evaluator's moves): the same visits and moves alone as in a batch of 6, and the move
    ``act`` plays wherever it runs this loop."""
    obs = [_obs(s) for s in _decisions(HAPPY_BLOCK, 6, seed=2, moves=1)]
    agent = make_agent(spec, "happy")
    batch = agent.search_batch(obs, [np.random.default_rng(i) for i in range(6)])
    alone = [agent.search_batch([o], [np.random.default_rng(i)])[0] for i, o in enumerate(obs)]
    assert [r.visits for r in batch] == [r.visits for r in alone]
    assert [r.action for r in batch] == [r.action for r in alone]
    assert [r.value for r in batch] == pytest.approx([r.value for r in alone], abs=1e-5)   # float32 rows
    if agent.guided or not agent.compiled:
        assert [agent.act(o, np.random.default_rng(i)) for i, o in enumerate(obs)] == [r.action for r in batch]


def test_a_batch_with_an_exactly_deterministic_evaluator_is_exactly_its_searches():
    states = _decisions(HAPPY_DRAW, 8, seed=4, moves=2)
    views, seeds = [s.observe(s.current_player) for s in states], list(range(10, 18))
    batch = search_many(views, seeds, _Pips(), 80, noise=(0.3, 0.25))
    assert batch == [search_many([v], [seed], _Pips(), 80, noise=(0.3, 0.25))[0] for v, seed in zip(views, seeds)]
    assert batch != search_many(views, [seed + 1 for seed in seeds], _Pips(), 80, noise=(0.3, 0.25))


def _all_nodes(root):
    stack, out = [root], []
    while stack:
        nd = stack.pop()
        out.append(nd)
        stack.extend(nd.children.values())
    return out


def test_root_noise_changes_the_root_prior_only_when_asked_and_replays_from_the_seed(roots):
    s = _decisions(HAPPY_BLOCK, 1, seed=5)[0]
    ev = _Ranked(0.0)
    clean = ev.prior([s])[0]
    view = s.observe(s.current_player)
    plain = search_many([view], [7], ev, 40)
    noisy = search_many([view], [7], ev, 40, noise=(0.3, 0.25))
    again = search_many([view], [7], ev, 40, noise=(0.3, 0.25))
    other = search_many([view], [8], ev, 40, noise=(0.3, 0.25))
    r_plain, r_noisy, r_again, r_other = roots
    assert r_plain.prior == clean                             # off by default: the evaluator's prior
    assert r_noisy.prior.keys() == clean.keys() and r_noisy.prior != clean
    assert sum(r_noisy.prior.values()) == pytest.approx(1.0)
    assert all(r_noisy.prior[a] >= 0.75 * clean[a] - 1e-12 for a in clean)
    assert r_again.prior == r_noisy.prior and again == noisy  # from the search's own stream
    assert r_other.prior != r_noisy.prior
    # below the root every prior is still the evaluator's (a prior of the legal moves alone here)
    for root in (r_noisy, r_other):
        inner = [nd for nd in _all_nodes(root) if nd is not root and nd.prior]
        assert inner and all(list(nd.prior.values()) == ev.weights(len(nd.prior)) for nd in inner)
    assert plain[0].iterations == noisy[0].iterations == 40


def test_noise_and_mix_need_a_prior_and_bad_noise_is_one_line():
    view = _decisions(HAPPY_BLOCK, 1)[0]
    view = view.observe(view.current_player)
    with pytest.raises(PipslabError, match="need an evaluator with a prior"):
        search_many([view], [0], make_agent("ismcts:eval=hand", "happy").evaluator, 5, noise=(0.3, 0.25))
    for bad in ((0, 0.25), (0.3, 1.5), "x"):
        with pytest.raises(PipslabError, match="noise"):
            search_many([view], [0], _Ranked(), 5, noise=bad)
    with pytest.raises(PipslabError, match="one seed per search"):
        search_many([view, view], [0], _Ranked(), 5)


def test_net_guided_ismcts_replays_from_its_records(tmp_path, capsys):
    from pipslab.experiments.cli import main
    out = tmp_path / "t"
    assert main(["tournament", "happy", "--agents", "ismcts:iters=20,eval=net,heaviest", "--games", "2",
                 "--seed", "4", "--workers", "1", "--no-plots", "--no-progress", "--out", str(out)]) == 0
    capsys.readouterr()
    for game in ("0", "1"):
        assert main(["play", "--replay", game, "--from", str(out)]) == 0
        assert "replay matches the record" in capsys.readouterr().out


def test_the_lockstep_benchmark_runs_and_agrees():
    from pipslab.experiments.bench_search import lockstep_rates
    r = lockstep_rates(3, 10, 0)
    assert r["same_moves"] == 1.0 and r["lockstep_iters_per_s"] > 0 and r["one_at_a_time_iters_per_s"] > 0
