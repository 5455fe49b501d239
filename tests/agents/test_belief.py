"""Inference (``agents/belief.py``, ``pimc:infer=...``): the state rebuilt before another
seat's past placement shows that seat exactly what it saw, worlds the opponent model rules
out lose their weight, a flat model changes nothing, and the agent replays from its records."""
from __future__ import annotations

import random

import numpy as np
import pytest

from pipslab.agents.base import Observation
from pipslab.agents.belief import Belief, past_moves
from pipslab.agents.evaluators import DominoEvaluator
from pipslab.agents.registry import make_agent
from pipslab.agents.search_dominoes import weighted_move_totals
from pipslab.agents.solver import Solver
from pipslab.envs.dominoes.encoding import encode_troshin_view, encode_view
from pipslab.envs.dominoes.engine import DRAW, world_sampler
from pipslab.envs.dominoes.tiles import PIPS
from pipslab.envs.dominoes.variants import HAPPY_BLOCK, HAPPY_DRAW, TROSHIN_4_PAIRS
from pipslab.envs.errors import PipslabError


def _played(variant, seed, before):
    """A hand played at random from a deal, with every seat's view and legal moves recorded
    just before each of its placements; stopped at a decision with 2+ moves after
    ``before`` moves (or None when the hand ended first)."""
    from pipslab.envs.dominoes.engine import deal
    rng = random.Random(seed)
    s = deal(variant, rng)
    seen = []
    for _ in range(before):
        if s.is_terminal:
            return None, seen
        legal = s.legal_actions()
        seen.append((s.current_player, s.observe(s.current_player), legal))
        s.apply(legal[rng.randrange(len(legal))])
    while not s.is_terminal and len(s.legal_actions()) < 2:
        seen.append((s.current_player, s.observe(s.current_player), s.legal_actions()))
        s.apply(s.legal_actions()[0])
    return (None if s.is_terminal else s), seen


class _Model(DominoEvaluator):
    """A prior that records the mover's view of every state it is asked about."""

    def __init__(self, rule=None):
        self.asked = []
        self.rule = rule

    def estimate(self, state):
        return [0.0] * state.variant.players

    def prior(self, states):
        out = []
        for s in states:
            self.asked.append((s.observe(s.current_player), s.legal_actions()))
            legal = s.legal_actions()
            out.append(self.rule(s, legal) if self.rule else {a: 1.0 / len(legal) for a in legal})
        return out


@pytest.mark.parametrize("variant,encode", [(HAPPY_BLOCK, encode_view), (HAPPY_DRAW, encode_view),
                                            (TROSHIN_4_PAIRS, encode_troshin_view)])
def test_the_state_before_a_past_move_shows_its_mover_what_it_saw(variant, encode):
    checked = 0
    for seed in range(40):
        s, seen = _played(variant, seed, 6 + seed % 8)
        if s is None:
            continue
        view = s.observe(s.current_player)
        moves = past_moves(view)
        model = _Model()
        Belief(model, 0.1)(view, [s, s])          # the true world: every past move's hand is the true one
        placements = [(p, v, legal) for p, v, legal in seen if v.history != () and p != view.player]
        # each weighed move is one of the true placements of another seat, with the view it had then
        truth = {len(v.history): (v, legal) for p, v, legal in seen}
        assert len(model.asked) == len(moves) and len(moves) <= len(placements)
        for move, (asked_view, asked_legal) in zip(moves, model.asked):
            true_view, true_legal = truth[len(move.view.history)]
            assert move.seat == true_view.player != view.player
            assert np.array_equal(encode(asked_view), encode(true_view))
            assert asked_legal == true_legal and move.action in true_legal
            checked += 1
    assert checked > 40


def test_draw_mode_weighs_no_move_made_before_the_movers_later_draw():
    for seed in range(60):
        s, _seen = _played(HAPPY_DRAW, seed, 12)
        if s is None:
            continue
        view = s.observe(s.current_player)
        for move in past_moves(view):
            later = view.history[len(move.view.history):]
            assert not any(kind == DRAW and p == move.seat for kind, p, *_ in later)


def _heaviest_rule(state, legal):
    """The opponent always places its heaviest playable tile."""
    top = max(legal, key=lambda a: PIPS[a // 2])
    return {a: 1.0 if a == top else 0.0 for a in legal}


def test_worlds_the_model_rules_out_lose_their_weight():
    found = 0
    for seed in range(200):
        s, _ = _played(HAPPY_BLOCK, seed, 5)
        if s is None:
            continue
        view = s.observe(s.current_player)
        if not past_moves(view):
            continue
        sampler = world_sampler(view)
        rng = np.random.default_rng(seed)
        worlds = [sampler(rng) for _ in range(60)]
        model = _Model(_heaviest_rule)
        belief = Belief(model, floor=0.0)
        weights = belief(view, worlds)
        assert weights.sum() == pytest.approx(1.0) and (weights >= 0).all()
        consistent = []
        for w in worlds:     # the world is consistent iff every weighed move was the heaviest then
            one = _Model(_heaviest_rule)
            consistent.append(Belief(one, 0.0).log_weights(view, [w, w])[0] > -np.inf)
        if any(consistent) and not all(consistent):
            assert all(w == 0 for w, c in zip(weights, consistent) if not c)
            assert all(w > 0 for w, c in zip(weights, consistent) if c)
            found += 1
    assert found >= 5


def _indifferent(state, legal):
    """Every legal move is certain: no world is likelier than another."""
    return dict.fromkeys(legal, 1.0)


def test_an_indifferent_model_weighs_every_world_alike_and_pimc_then_sums_as_before():
    s, _ = _played(HAPPY_BLOCK, 3, 7)
    view = s.observe(s.current_player)
    assert past_moves(view)
    sampler = world_sampler(view)
    worlds = [sampler(np.random.default_rng(1)) for _ in range(20)]
    assert np.allclose(Belief(_Model(_indifferent), 0.0)(view, worlds), 1 / 20)
    solver = Solver("margin")
    flat = weighted_move_totals(view, s.legal_actions(), np.random.default_rng(5), solver, 20,
                                Belief(_Model(_indifferent), 0.0))
    sampler, rng, plain = world_sampler(view), np.random.default_rng(5), dict.fromkeys(s.legal_actions(), 0)
    for _ in range(20):
        for a, v in solver.move_values(sampler(rng)).items():
            plain[a] += v
    assert flat == pytest.approx({a: v / 20 for a, v in plain.items()})


def test_a_uniform_model_weighs_a_world_by_the_chance_a_random_player_made_those_moves():
    for seed in range(5, 50):
        s, _ = _played(HAPPY_BLOCK, seed, 9)
        if s is not None and len(past_moves(s.observe(s.current_player))) >= 2:
            break
    view = s.observe(s.current_player)
    moves = past_moves(view)
    sampler = world_sampler(view)
    worlds = [sampler(np.random.default_rng(k)) for k in range(30)]
    weights = Belief(_Model(), 0.0)(view, worlds)
    expected = []
    for w in worlds:    # the mover's legal moves then: its tiles then matching the ends then
        chance = 1.0
        for m in moves:
            held = w.hands[m.seat] | m.placed_since[m.seat]
            left, right = m.view.left, m.view.right
            n = sum((held >> t & 1) * ((left in _pips(t)) + (right in _pips(t))) for t in range(28))
            chance /= n
        expected.append(chance)
    assert len(set(np.round(expected, 12))) > 1
    assert weights == pytest.approx(np.array(expected) / sum(expected))


def _pips(tile):
    from pipslab.envs.dominoes.tiles import TILES
    return TILES[tile]


def test_pimc_with_inference_replays_from_its_seed_and_its_records(tmp_path, capsys):
    s, _ = _played(HAPPY_BLOCK, 11, 8)
    obs = Observation(s.current_player, s.observe(s.current_player), s.legal_actions(), s.num_actions)
    agent = make_agent("pimc:samples=30,infer=net", "happy")
    moves = [agent.act(obs, np.random.default_rng(9)) for _ in range(2)]
    assert moves[0] == moves[1] and moves[0] in obs.legal_actions
    from pipslab.experiments.cli import main
    out = tmp_path / "t"
    assert main(["tournament", "happy", "--mode", "draw", "--agents", "pimc:samples=8,infer=net,heaviest",
                 "--games", "2", "--seed", "4", "--workers", "1", "--no-plots", "--no-progress",
                 "--out", str(out)]) == 0
    capsys.readouterr()
    for game in ("0", "1"):
        assert main(["play", "--replay", game, "--from", str(out)]) == 0
        assert "replay matches the record" in capsys.readouterr().out


@pytest.mark.parametrize("spec,words", [("pimc:infer=rollout", "needs a prior"),
                                        ("pimc:infer=net,floor=1", "floor"),
                                        ("pimc:infer=net,time=0.1", "samples, not time")])
def test_bad_inference_specs_are_one_line(spec, words):
    with pytest.raises(PipslabError, match=words):
        make_agent(spec, "happy")


def _by_pips(state, legal):
    """A soft opponent: heavier placements likelier."""
    return {a: 1.0 + PIPS[a // 2] for a in legal}


@pytest.mark.parametrize("variant,depth", [(HAPPY_BLOCK, None), (HAPPY_DRAW, 8), (TROSHIN_4_PAIRS, 8)])
def test_the_compiled_weighted_sums_are_the_python_reference_on_the_same_worlds(variant, depth):
    """``--guide pimc --guide-infer``'s road: the worlds the compiled call deals, rebuilt
    as Python states, weighed by the same belief and solved by ``Solver.move_values``."""
    from pipslab.agents.pimc_compiled import CompiledPIMC
    from pipslab.envs.dominoes import compiled as C
    from pipslab.envs.dominoes.engine import DominoState, packed_world_sampler
    compiled, solver = CompiledPIMC(variant, depth), Solver("margin", max_depth=depth)
    belief = Belief(_Model(_by_pips), 0.05)
    checked = uneven = 0
    for seed in range(80):
        s, _ = _played(variant, seed, 4 + seed % 9)
        if s is None or s.left < 0 or s.legal_actions()[-1] >= variant.draw_action:
            continue
        view = s.observe(s.current_player)
        if not past_moves(view):
            continue
        legal = s.legal_actions()
        got = weighted_move_totals(view, legal, np.random.default_rng(seed), solver, 12, belief, compiled)
        r = C.new_rng(int(np.random.default_rng(seed).integers(1 << 62)))
        packed, worlds = packed_world_sampler(view), []
        for _ in range(12):
            w = packed(r)
            worlds.append(DominoState.from_view(view, [int(w[C.S_HANDS + p]) for p in range(variant.players)],
                                                w[C.S_BONE:C.S_BONE + w[C.S_BLEN]].tolist(), None))
        weights = belief(view, worlds)
        uneven += len(set(np.round(weights, 12))) > 1
        want = dict.fromkeys(legal, 0.0)
        for wt, world in zip(weights, worlds):
            for a, v in solver.move_values(world).items():
                want[a] += wt * v
        assert got == pytest.approx(want)
        checked += 1
    assert checked >= 10 and uneven >= 5          # worlds the belief does tell apart


@pytest.mark.parametrize("variant", [HAPPY_BLOCK, HAPPY_DRAW, TROSHIN_4_PAIRS])
def test_the_nets_hand_priors_are_its_prior_of_each_state(variant):
    """The net answers ``hand_priors`` from one encoding with each hand's bits put in;
    the seam's own road builds a state per hand and asks ``prior``."""
    from pipslab.agents.domino_net import NetEvaluator
    net = NetEvaluator()
    checked = 0
    for seed in range(30):
        s, _ = _played(variant, seed, 3 + seed % 10)
        if s is None:
            continue
        rng = random.Random(seed)
        size = bin(s.hands[s.current_player]).count("1")
        hands = [s.hands[s.current_player]] + [sum(1 << t for t in rng.sample(range(28), size)) for _ in range(6)]
        fast = net.hand_priors(s, hands)
        slow = DominoEvaluator.hand_priors(net, s, hands)
        assert len(fast) == len(slow) == 7
        for f, w in zip(fast, slow):
            assert f.keys() == w.keys() and f == pytest.approx(w, abs=1e-5)
        assert len({tuple(sorted(f)) for f in fast}) > 1 or len(fast[0]) == 1   # other hands, other moves
        checked += 1
    assert checked >= 15
