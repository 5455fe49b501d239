"""The neural domino players: masked policy, hidden information, the evaluator seam,
net-guided ISMCTS and the files they read."""
from __future__ import annotations

import random

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from pipslab.agents.base import Observation
from pipslab.agents.domino_net import (NetAgent, NetEvaluator, PolicyNet, load_player, masked_softmax, net_dict,
                                       net_spec, sample_action, sample_actions)
from pipslab.agents.registry import make_agent
from pipslab.envs.errors import PipslabError
from pipslab.envs.game import GAMES

from dominoes_helpers import swap_hidden

TABLES = [("happy", {"mode": "block"}), ("happy", {"mode": "draw"}), ("troshin", {"players": 4, "pairs": True}),
          ("troshin", {"players": 3}), ("triple", {"players": 3})]


def _net_file(tmp_path, game, options, seed=0):
    torch.manual_seed(seed)
    net = PolicyNet(dict(net_spec(game, options), hidden=[32, 32]))
    path = tmp_path / f"{net.config['variant']}-{seed}.pt"
    torch.save(net_dict(net), path)
    return str(path)


@pytest.fixture(scope="module")
def nets(tmp_path_factory):
    d = tmp_path_factory.mktemp("nets")
    return {(g, tuple(sorted(o.items()))): _net_file(d, g, o) for g, o in TABLES}


def _net(nets, game, options):
    return nets[(game, tuple(sorted(options.items())))]


def _random_position(game, options, seed):
    """A position some random moves into a fresh deal, with the seat to move having a choice."""
    g = GAMES[game]
    rng = np.random.default_rng(seed)
    while True:
        s = g.new_state(rng, options)
        for _ in range(int(rng.integers(0, 12))):
            if s.is_terminal:
                break
            legal = s.legal_actions()
            s.apply(legal[int(rng.integers(len(legal)))])
        if not s.is_terminal and len(s.legal_actions()) > 1:
            return s


def _observation(state):
    p = state.current_player
    return Observation(p, state.observe(p), state.legal_actions(), state.num_actions)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), table=st.sampled_from(TABLES), u=st.floats(0, 1, exclude_max=True))
def test_masked_actions_get_zero_probability_and_are_never_sampled(nets, seed, table, u):
    game, options = table
    agent = NetAgent(net=_net(nets, game, options), sample=True)
    state = _random_position(game, options, seed)
    obs = _observation(state)
    p = agent.probabilities(obs)
    illegal = np.ones(len(p), bool)
    illegal[list(obs.legal_actions)] = False
    assert np.all(p[illegal] == 0.0) and abs(p.sum() - 1) < 1e-5 and np.all(p[~illegal] > 0)
    for x in (u, 0.0, np.nextafter(1.0, 0.0)):
        assert sample_action(p, obs.legal_actions, x) in obs.legal_actions
        assert sample_actions(p[None], obs.action_mask[None], np.array([x]))[0] == \
            sample_action(p, obs.legal_actions, x)
    assert agent.act(obs, np.random.default_rng(seed)) in obs.legal_actions
    greedy = NetAgent(net=_net(nets, game, options))
    assert greedy.act(obs, np.random.default_rng(0)) == obs.legal_actions[int(np.argmax(p[obs.legal_actions]))]


def test_masked_softmax_is_exactly_zero_even_for_huge_logits():
    logits = np.array([[1e30, 0.0, -5.0, 3.0]], dtype=np.float32)
    mask = np.array([[0, 1, 0, 1]], dtype=np.int8)
    p = masked_softmax(logits, mask)[0]
    assert p[0] == 0.0 and p[2] == 0.0 and p[3] > p[1] > 0


@pytest.mark.parametrize("game, options", [("troshin", {"players": 4, "pairs": True}), ("happy", {"mode": "draw"}),
                                           ("triple", {"players": 3})])
def test_a_net_acts_from_its_own_seats_view_only(nets, game, options):
    """Trading a hidden tile of another hand — the partner's included — with the boneyard
    changes nothing the net outputs for the seat to move (the search agents' test)."""
    path = _net(nets, game, options)
    agent, evaluator = NetAgent(net=path), NetEvaluator(path)
    teams = GAMES[game].teams(options)
    partner_swapped = 0
    for seed in range(40):
        s = _random_position(game, options, seed)
        me = s.current_player
        twin = swap_hidden(s, me, random.Random(seed))
        if twin is None:
            continue
        assert twin.observe(me) == s.observe(me) and twin.hands != s.hands
        partner_swapped += any(twin.hands[q] != s.hands[q] for q in range(len(teams))
                               if q != me and teams[q] == teams[me])
        a, b = agent.probabilities(_observation(s)), agent.probabilities(_observation(twin))
        assert np.array_equal(a, b)
        assert evaluator.values([s], me)[0] == evaluator.values([twin], me)[0]
    if len(set(teams)) < len(teams):
        assert partner_swapped > 0


def test_the_evaluator_values_each_seat_from_its_view_and_finished_states_exactly(nets):
    path = _net(nets, "troshin", {"players": 4, "pairs": True})
    ev = NetEvaluator(path)
    s = _random_position("troshin", {"players": 4, "pairs": True}, 3)
    r = ev.evaluate([s])[0]
    assert r.shape == (4,) and np.all(np.abs(r) <= 1)
    assert np.allclose([ev.values([s], seat)[0] for seat in range(4)], r, atol=1e-6)
    done = s.clone()
    while not done.is_terminal:
        done.apply(done.legal_actions()[0])
    assert list(ev.evaluate([done])[0]) == list(done.returns())


@pytest.mark.parametrize("game, options", TABLES)
def test_net_guided_ismcts_and_pimc_with_the_net_play_legal_moves(nets, game, options):
    path = _net(nets, game, options)
    specs = [f"ismcts:iters=30,net={path}", f"ismcts:iters=30,net={path},mix=0.5"] + (
        [f"pimc:samples=2,depth=2,eval=net:{path}"] if game == "happy" else [])
    for spec in specs:
        for seed in range(3):
            s = _random_position(game, options, seed)
            a = make_agent(spec, game).act(_observation(s), np.random.default_rng(seed))
            b = make_agent(spec, game).act(_observation(s), np.random.default_rng(seed))
            assert a == b and a in s.legal_actions()


def test_ismcts_takes_net_or_eval_not_both(nets):
    with pytest.raises(PipslabError, match="net= or eval="):
        make_agent(f"ismcts:net={_net(nets, 'happy', {'mode': 'block'})},eval=hand", "happy")
    for bad in ("ismcts:mix=0.5", f"ismcts:net={_net(nets, 'happy', {'mode': 'block'})},mix=1.5"):
        with pytest.raises(PipslabError, match="mix is the share of a random playout"):
            make_agent(bad, "happy")


def test_mix_one_values_new_nodes_by_the_playout_alone(monkeypatch):
    """mix=1: the net's value has no weight.  A value head turned upside down changes the
    move of plain net-guided search here (mix=0), and not the move of mix=1 search."""
    from pipslab.agents import domino_net
    path = "happy-block"   # the shipped net
    real = domino_net.NetEvaluator.evaluate_prior   # what the search asks of a new node

    def flipped(self, states):
        values, priors = real(self, states)
        return -values, priors

    def moves(spec, s):
        out = []
        for evaluate in (real, flipped):
            monkeypatch.setattr(domino_net.NetEvaluator, "evaluate_prior", evaluate)
            out.append(make_agent(spec, "happy").act(_observation(s), np.random.default_rng(0)))
        return out

    # a position where the value head matters to plain net-guided search (the first of a
    # fixed list of seeded positions: which one depends on the shipped net's weights)
    for seed in range(8, 40):
        s = _random_position("happy", {"mode": "block"}, seed)
        plain = moves(f"ismcts:iters=40,net={path},compiled=false", s)   # the loop that asks evaluate_prior
        if plain[0] != plain[1]:
            break
    assert plain[0] != plain[1], "no position among 32 where the value head changes the move"
    mixed = moves(f"ismcts:iters=40,net={path},mix=1", s)
    assert mixed[0] == mixed[1]


def test_a_net_refuses_another_variant_and_a_missing_shipped_net_is_named(nets):
    agent = make_agent(f"net:net={_net(nets, 'happy', {'mode': 'block'})}", "happy")
    agent.check_table("happy", {"mode": "block"})
    with pytest.raises(PipslabError, match="trained for happy-block, not happy-draw"):
        agent.check_table("happy", {"mode": "draw"})
    with pytest.raises(PipslabError, match="no shipped net for troshin-4"):
        make_agent("net", "troshin").check_table("troshin", {"players": 4})
    with pytest.raises(PipslabError, match="no shipped net for troshin-4"):
        make_agent("ismcts:iters=5,net=shipped", "troshin").check_table("troshin", {"players": 4})
    make_agent("ismcts:iters=5", "troshin").check_table("troshin", {"players": 4})


def test_bad_net_files_are_refused_with_one_line(tmp_path, nets):
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a torch file")
    with pytest.raises(PipslabError, match="not a readable network file"):
        load_player(str(junk))
    foreign = tmp_path / "foreign.pt"
    torch.save({"format": "pipslab-td-backgammon", "config": {}, "model": {}}, foreign)
    with pytest.raises(PipslabError, match="not a pipslab domino policy network"):
        load_player(str(foreign))
    data = torch.load(_net(nets, "happy", {"mode": "block"}), weights_only=True)
    data["model"]["policy.weight"] = data["model"]["policy.weight"][:5]
    torn = tmp_path / "torn.pt"
    torch.save(data, torn)
    with pytest.raises(PipslabError, match="do not fit"):
        load_player(str(torn))
    with pytest.raises(PipslabError, match="no network file"):
        load_player(str(tmp_path / "missing.pt"))


def test_eval_net_and_net_are_one_search():
    """``ismcts:net=NAME`` is an alias of ``ismcts:eval=net:NAME``: the same PUCT search, the
    same moves for a seed (and ``net=shipped`` of ``eval=net``)."""
    for seed in range(3):
        s = _random_position("happy", {"mode": "block"}, seed)
        if len(s.legal_actions()) < 2:
            continue
        moves = {spec: make_agent(spec, "happy").act(_observation(s), np.random.default_rng(seed))
                 for spec in ("ismcts:iters=30,eval=net:happy-block", "ismcts:iters=30,net=happy-block",
                              "ismcts:iters=30,eval=net", "ismcts:iters=30,net=shipped")}
        assert len(set(moves.values())) == 1, moves


def test_the_prior_is_the_policy_of_the_seat_to_move_alone_or_beside_the_values(nets):
    """``evaluate_prior`` (one forward pass, what search asks) gives the numbers of
    ``evaluate`` and ``prior`` asked apart, for several states at once: a distribution over
    the legal moves of the seat to move (the ``net`` agent's)."""
    for game, options in (("happy", {"mode": "block"}), ("troshin", {"players": 4, "pairs": True})):
        ev = NetEvaluator(_net(nets, game, options))
        states = [_random_position(game, options, seed) for seed in (2, 3)]
        values, together = ev.evaluate_prior(states)
        assert np.allclose(values, ev.evaluate(states), atol=1e-6)
        for s, after, alone in zip(states, together, ev.prior(states)):
            assert list(after) == list(s.legal_actions()) and after.keys() == alone.keys()
            assert np.allclose([after[a] for a in after], [alone[a] for a in after], atol=1e-6)
            assert sum(after.values()) == pytest.approx(1.0)
