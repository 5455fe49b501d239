"""The compiled heuristic agents (``agents/dominoes_compiled.py``) and the compiled
observation encoders (``envs/dominoes/compiled.py``) against the Python ones, on
thousands of random states of every variant they play."""
import random

import numpy as np
import pytest

from pipslab.agents import dominoes_compiled as A
from pipslab.agents.base import Observation
from pipslab.agents.registry import make_agent
from pipslab.envs.dominoes import compiled as C
from pipslab.envs.dominoes.engine import deal
from pipslab.envs.dominoes.variants import VARIANTS, happy
from pipslab.envs.game import GAMES

GAME_OF = {"happy": "happy", "troshin": "troshin", "triple": "triple"}
AGENTS = {"happy": ["heaviest", "suits", "partner"], "troshin": ["heaviest", "suits", "partner"],
          "triple": ["heaviest", "suits", "greedy"]}


def _game(variant):
    return variant.name.split("-")[0]


def _random_states(variant, count, seed):
    rng = random.Random(seed)
    while count > 0:
        s = deal(variant, rng)
        while not s.is_terminal and count > 0:
            yield s
            count -= 1
            legal = s.legal_actions()
            s.apply(legal[rng.randrange(len(legal))])


VARIANTS_PLAYED = [v for v in VARIANTS.values() if v.name != "troshin-120"] + [happy("draw", 3)]


@pytest.mark.parametrize("variant", VARIANTS_PLAYED, ids=lambda v: v.name)
def test_compiled_heuristics_move_as_the_python_agents(variant):
    game = _game(variant)
    prm = C.params(variant)
    acts = np.empty(C.MAX_ACTIONS, dtype=np.int64)
    python = {name: make_agent(name, game) for name in AGENTS[game]}
    rng = np.random.default_rng(0)
    checked = 0
    for s in _random_states(variant, 3000, 1):
        c = C.pack(s)
        k = C.legal(prm, c, acts)
        p = s.current_player
        obs = Observation(p, s.observe(p), s.legal_actions(), s.num_actions)
        for name, agent in python.items():
            assert A.choose(A.KINDS[name], prm, c, acts, k) == agent.act(obs, rng), (name, s)
        checked += 1
    assert checked == 3000


@pytest.mark.parametrize("variant", list(VARIANTS.values()) + [happy("block", 2)], ids=lambda v: v.name)
def test_compiled_observations_are_the_encoders(variant):
    game = _game(variant)
    kind, size = C.ENCODERS[game]
    encode = GAMES[game].observation_encoder(_options(variant)).encode
    prm = C.params(variant)
    x = np.zeros(size, dtype=np.float32)
    for s in _random_states(variant, 1500, 2):
        c = C.pack(s)
        for seat in range(variant.players):
            x[:] = 0
            C.encode_into(kind, prm, c, seat, x)
            np.testing.assert_array_equal(x, encode(s.observe(seat)))


def _options(variant):
    game = _game(variant)
    if game == "happy":
        return {"mode": "draw" if variant.draw else "block", "max_pip": variant.max_pip,
                "hand_size": variant.hand_size}
    if game == "troshin":
        return {"players": variant.players, "pairs": variant.pairs}
    return {"players": variant.players}


def test_advance_plays_the_heuristic_seats_and_stops_for_the_others():
    v = VARIANTS["troshin-4-pairs"]
    prm = C.params(v)
    rng = random.Random(4)
    refs = [deal(v, rng) for _ in range(20)]
    states = np.stack([C.pack(s) for s in refs])
    kinds = np.array([[A.LEARNER, A.SUITS, A.RANDOM, A.HEAVIEST]] * 20, dtype=np.int64)
    moves = np.zeros((20, A.MAX_MOVES), dtype=np.int64)
    nmoves = np.zeros(20, dtype=np.int64)
    legal_out = np.zeros((20, C.MAX_ACTIONS), dtype=np.int64)
    nlegal, status = np.zeros(20, dtype=np.int64), np.zeros(20, dtype=np.int64)
    agents = {1: make_agent("suits", "troshin"), 3: make_agent("heaviest", "troshin")}
    nprng = np.random.default_rng(0)
    alive = np.arange(20)
    while len(alive):
        A.advance(prm, states, alive, kinds, moves, nmoves, legal_out, nlegal, status)
        for h in alive:
            if status[h] == A.DONE:
                continue
            assert status[h] in (A.LEARNER, A.RANDOM) and nlegal[h] > 1
            assert states[h, C.S_CUR] in (0, 2)
            a = int(legal_out[h, nprng.integers(nlegal[h])])
            assert A.play(prm, states, h, a, moves, nmoves) == 0
        alive = np.array([h for h in alive if status[h] != A.DONE], dtype=np.int64)
    for h, s in enumerate(refs):    # the log replays on the reference, the heuristic seats' moves included
        for a in moves[h, :nmoves[h]]:
            p = s.current_player
            if p in agents and len(s.legal_actions()) > 1:
                obs = Observation(p, s.observe(p), s.legal_actions(), s.num_actions)
                assert agents[p].act(obs, nprng) == a
            s.apply(int(a))
        assert s.is_terminal and (C.pack(s) == states[h]).all()
    assert A.play(prm, states, 0, 0, moves, nmoves) == -1
