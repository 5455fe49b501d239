"""PIMC, ISMCTS and the oracle: legal play, no peeking at hidden state, budgets, CLI."""
import json
import random

import numpy as np
import pytest

from pipslab.agents.base import Observation
from pipslab.agents.registry import make_agent
from pipslab.envs.dominoes.engine import deal
from pipslab.envs.dominoes.notation import parse_position
from pipslab.envs.dominoes.variants import HAPPY_BLOCK, HAPPY_DRAW
from pipslab.envs.errors import PipslabError
from pipslab.envs.game import get_game

from dominoes_helpers import place, swap_hidden
from harness_helpers import pipslab, play_checked

SEARCH = ["pimc:samples=6", "ismcts:iters=60"]


def observation(state, with_truth=False):
    p = state.current_player
    return Observation(p, state.observe(p), state.legal_actions(), state.num_actions,
                       state.clone() if with_truth else None)


def equivalent_pair(variant, seed):
    """Two true states that look the same to the seat to move but hide different tiles."""
    rng = random.Random(seed)
    while True:
        s = deal(variant, rng)
        for _ in range(rng.randrange(1, 6)):
            if s.is_terminal:
                break
            legal = s.legal_actions()
            s.apply(legal[rng.randrange(len(legal))])
        if s.is_terminal or len(s.legal_actions()) < 2:
            continue
        me = s.current_player
        twin = swap_hidden(s, me)
        if twin is None:
            continue
        assert twin.observe(me) == s.observe(me) and twin.hands != s.hands
        return s, twin


@pytest.mark.parametrize("spec", SEARCH)
@pytest.mark.parametrize("variant", [HAPPY_BLOCK, HAPPY_DRAW])
def test_search_agents_never_read_hidden_state(spec, variant):
    for seed in range(6):
        s, twin = equivalent_pair(variant, seed)
        a = make_agent(spec, "happy").act(observation(s), np.random.default_rng(seed))
        b = make_agent(spec, "happy").act(observation(twin), np.random.default_rng(seed))
        assert a == b and a in s.legal_actions()


@pytest.mark.parametrize("spec, mode", [
    pytest.param(spec, mode, marks=pytest.mark.slow) if (spec, mode) == ("oracle", "draw") else (spec, mode)
    for spec in SEARCH + ["oracle"] for mode in ("block", "draw")])
def test_search_agents_play_whole_games_legally(spec, mode):
    spec_obj = get_game("happy")
    agents = [make_agent(spec, "happy"), make_agent("heaviest", "happy")]
    for g in range(3):
        play_checked(spec_obj, {"mode": mode}, agents if g % 2 else agents[::-1], [1, 0, g], [1, 1, g])


def test_pimc_finds_the_winning_block_in_scenario5():
    # black to move after white's pass: 0-0 wins, 0-2 loses.  Every other tile is on the
    # table in this position, so each sampled world gives white its 2-2.
    s = parse_position("happy-block; turn=0; ends=1|0; hands=2-2 / 0-0 0-2")
    s.apply(HAPPY_BLOCK.pass_action)
    for spec in ["pimc:samples=5", "ismcts:iters=300"]:
        assert make_agent(spec, "happy").act(observation(s), np.random.default_rng(0)) == place(s, "0-0", "right")


def test_oracle_plays_the_solver_move_and_needs_the_truth():
    s = parse_position("happy-block; turn=0; ends=1|0; hands=2-2 / 0-0 0-2")
    s.apply(HAPPY_BLOCK.pass_action)
    oracle = make_agent("oracle", "happy")
    assert oracle.sees_hidden_state
    assert oracle.act(observation(s, with_truth=True), np.random.default_rng(0)) == place(s, "0-0", "right")
    with pytest.raises(PipslabError, match="needs the true state"):
        oracle.act(observation(s), np.random.default_rng(0))
    assert not make_agent("pimc", "happy").sees_hidden_state


@pytest.mark.parametrize("spec", ["ismcts:time=0.1", "pimc:time=0.1"])
def test_time_budget_is_used_and_kept(spec):
    # the agent thinks for its whole budget and stops soon after it (compiled once first);
    # the slack covers one round of work and a busy machine, not a budget ignored
    import time
    s, _ = equivalent_pair(HAPPY_BLOCK, 1)
    agent = make_agent(spec, "happy")
    agent.act(observation(s), np.random.default_rng(0))
    start = time.perf_counter()
    agent.act(observation(s), np.random.default_rng(1))
    assert 0.1 <= time.perf_counter() - start < 0.1 + 0.4


@pytest.mark.parametrize("spec, message", [
    ("pimc:samples=0", "samples must be at least 1"),
    ("pimc:depth=-2", "depth must be"),
    ("ismcts:iters=0", "iters must be at least 1"),
    ("ismcts:time=-1", "time must be positive"),
    ("pimc:bogus=1", "bad parameters"),
])
def test_bad_budgets_are_clear_errors(spec, message):
    with pytest.raises(PipslabError, match=message):
        make_agent(spec, "happy")


@pytest.mark.slow
def test_solve_cli_json_and_errors():
    r = pipslab("solve", "happy-block; turn=1; passes=1; ends=1|0; hands=2-2 / 0-0 0-2", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["result"] == "win" and data["margin"] == 4 and data["best_moves"] == ["0-0@right"]
    assert {m["move"]: m["result"] for m in data["moves"]} == {"0-0@right": "win", "0-2@right": "loss"}
    assert data["end"]["winner"] == 1
    r = pipslab("solve", "happy-block; ends=1|1")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "hands" in r.stderr


@pytest.mark.peers
@pytest.mark.slow
def test_bench_solver_json_has_median_and_p90():
    r = pipslab("bench", "solver", "--deals", "5", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout.strip().splitlines()[-1])
    assert 0 < data["median_solve_s"] <= data["p90_solve_s"]
    assert data["peers"]["dominoes_omniscient_4p_14_tiles_left"]["positions"] == 10
    # the Python reference on the same deals, and Troshin's pairs with 12 tiles in hand
    assert data["reference"]["median_nodes"] == data["median_nodes"] and data["speedup_vs_reference"] > 0
    pairs = data["troshin_4_pairs_12_tiles"]
    assert pairs["positions"] == 5 and 0 < pairs["median_s"] <= pairs["p90_s"]


def test_pimc_and_the_oracle_play_troshin_pairs_from_the_seat_view_only():
    """pimc solves Troshin's four in pairs through the pairs solver: legal whole games, and a
    seat's move does not change when the tiles it cannot see are swapped."""
    from pipslab.envs.dominoes.variants import troshin
    variant = troshin(4, True)
    for seed in range(4):
        s, twin = equivalent_pair(variant, seed)
        a = make_agent("pimc:samples=4", "troshin").act(observation(s), np.random.default_rng(seed))
        b = make_agent("pimc:samples=4", "troshin").act(observation(twin), np.random.default_rng(seed))
        assert a == b and a in s.legal_actions()
    spec, options = get_game("troshin"), {"players": 4, "pairs": True}
    for name in ("pimc:samples=4", "oracle"):
        agents = [make_agent(name, "troshin"), make_agent("partner", "troshin")] * 2
        state, _ = play_checked(spec, options, agents, [3, 0, 0], [3, 1, 0])
        assert state.is_terminal


@pytest.mark.parametrize("game, options", [
    ("troshin", {"players": 4, "pairs": True}),
    ("troshin", {"players": 3}),
    ("triple", {"players": 3}),
    ("triple", {"players": 2}),
])
def test_ismcts_plays_every_variant_and_player_count(game, options):
    spec = get_game(game)
    n = spec.players(options)
    agents = [make_agent("ismcts:iters=25", game)] + [make_agent("random", game) for _ in range(n - 1)]
    state, _ = play_checked(spec, options, agents, [2, 0, 0], [2, 1, 0])
    assert len(state.returns()) == n


class _UniformZero:
    """The dominoes protocol at its smallest, with a prior: every unfinished state is worth
    0 to every seat and every legal move is equally likely."""

    def evaluate(self, states):
        return np.array([s.returns() if s.is_terminal else [0.0] * s.variant.players for s in states], dtype=float)

    def prior(self, states):
        return [{a: 1 / len(s.legal_actions()) for a in s.legal_actions()} for s in states]


def test_puct_with_a_uniform_prior_and_zero_values_is_a_round_robin_over_the_legal_moves(monkeypatch):
    """What PUCT reduces to when the prior and the values say nothing: the first iteration
    values the root, then every iteration takes the least visited root move (ties: the first
    in legal order), so after ``1 + m*n + k`` iterations the first ``k`` moves have ``m + 1``
    visits and the rest ``m`` (no game ends within a few placements of the deal)."""
    from pipslab.agents import search_dominoes
    from pipslab.agents.evaluators import register_evaluator
    register_evaluator("dominoes", "test-uniform-zero", _UniformZero)
    roots = []
    real = search_dominoes._most_visited
    monkeypatch.setattr(search_dominoes, "_most_visited", lambda root, legal: roots.append(root) or real(root, legal))
    s = deal(HAPPY_DRAW, np.random.default_rng(3))
    while len(s.legal_actions()) < 3:
        s.apply(s.legal_actions()[0])
    legal = s.legal_actions()
    n, m, k = len(legal), 2, 1
    agent = make_agent(f"ismcts:iters={1 + m * n + k},eval=test-uniform-zero", "happy")
    assert agent.guided and agent.c == 1.5
    assert agent.act(observation(s), np.random.default_rng(0)) == legal[0]
    visits = [roots[-1].children[a].visits for a in legal]
    assert visits == [m + 1] * k + [m] * (n - k)


# a Troshin match, seat 1 to move: 4-5 at either end goes out and ends the hand, so every
# simulation meets the match's chance node
MATCH_HAND_END = ("troshin-4-pairs; match=45 / 80; hand=6; turn=1; passes=0; ends=5|4; "
                  "hands=3-3 / 4-5 / 1-2 / 5-5 6-6; boneyard=0-0 0-1")


@pytest.mark.parametrize("spec", ["ismcts:iters=40", "ismcts:iters=40,eval=hand", "ismcts:iters=40,compiled=false",
                                  "ismcts:iters=40,eval=test-uniform-zero"])
def test_ismcts_deals_a_match_s_next_hand_from_its_own_stream(spec, monkeypatch):
    from pipslab.agents.evaluators import register_evaluator
    from pipslab.envs.dominoes.match import TroshinMatch
    register_evaluator("dominoes", "test-uniform-zero", _UniformZero)
    streams = []
    real = TroshinMatch.apply_chance
    monkeypatch.setattr(TroshinMatch, "apply_chance", lambda self, rng: streams.append(type(rng)) or real(self, rng))
    m = parse_position(MATCH_HAND_END)
    assert isinstance(m, TroshinMatch) and m.current_player == 1 and len(m.legal_actions()) == 2
    obs = observation(m)
    moves = [make_agent(spec, "troshin").act(obs, np.random.default_rng(s)) for s in (0, 0, 1)]
    assert moves[0] == moves[1] and set(moves) <= set(m.legal_actions())
    assert streams and set(streams) == {random.Random}   # the search's stream, seeded from the caller's rng


def test_ismcts_plays_a_troshin_match_to_the_end_and_pimc_refuses_one():
    spec, options = get_game("troshin"), {"players": 2, "match": True}
    agents = [make_agent("ismcts:iters=8", "troshin"), make_agent("ismcts:iters=8,eval=hand", "troshin")]
    state, moves = play_checked(spec, options, agents, [4, 0, 0], [4, 1, 0])
    assert state.is_terminal and state.hand_index >= 2 and max(state.scores) >= 100
    # pimc (and the oracle) solve single hands: a match is refused before the first game
    for name in ("pimc", "oracle"):
        with pytest.raises(PipslabError, match="match"):
            make_agent(name, "troshin").check_table("troshin", options)
