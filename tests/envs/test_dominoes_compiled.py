"""The compiled domino rules (``envs/dominoes/compiled.py``) against the Python reference:
move by move on at least 10,000 random states of every variant (the legal moves, the
state after each move, illegal moves refused, the results), and — since the compiled code
draws from its own generator — its deals, playouts and worlds against the reference's by
chi-square tests with fixed seeds."""
import random

import numpy as np
import pytest
from scipy.stats import chi2_contingency

from pipslab.envs.dominoes import compiled as C
from pipslab.envs.dominoes.engine import deal, packed_world_sampler, world_sampler
from pipslab.envs.dominoes.variants import VARIANTS, happy
from pipslab.envs.errors import IllegalActionError, PositionError

ALL = list(VARIANTS.values()) + [happy("block", 2), happy("draw", 3), happy("block", 4, 3)]
RESULT_KEYS = ("winner", "winners", "draw", "blocked", "pips_left", "points", "returns")
P_MIN = 1e-3    # fixed seeds: a test fails only when the distributions differ


def _play_checked(variant, rng, states: int):
    """Random games with the reference, the compiled state beside it: every state's legal
    moves and every move's result compared; returns the states seen."""
    prm = C.params(variant)
    out = np.empty(C.MAX_ACTIONS, dtype=np.int64)
    seen = games = 0
    while seen < states:
        s = deal(variant, rng)
        c = C.pack(s)
        games += 1
        while True:
            seen += 1
            k = C.legal(prm, c, out)
            legal = s.legal_actions()
            assert out[:k].tolist() == legal
            if s.is_terminal:
                break
            bad = rng.randrange(variant.num_actions + 3)
            if bad not in legal:       # refused by both, the compiled state unchanged
                before = c.copy()
                assert C.apply(prm, c, bad) == C.ILLEGAL
                assert (c == before).all()
                with pytest.raises(IllegalActionError):
                    s.clone().apply(bad)
            a = legal[rng.randrange(len(legal))]
            twin = c.copy()            # clone is a copy: the copy plays on alone
            s.apply(a)
            assert C.apply(prm, c, a) == 0
            np.testing.assert_array_equal(c, C.pack(s))
            assert C.apply(prm, twin, a) == 0 and (twin == c).all()
        got = C.result(variant, c)
        want = s.result()
        assert got == {k: want[k] for k in RESULT_KEYS}
        assert C.apply(prm, c, legal[0] if legal else 0) == C.ILLEGAL    # nothing is legal at the end
    return seen, games


@pytest.mark.parametrize("variant", ALL, ids=lambda v: v.name)
def test_compiled_rules_match_the_reference_move_by_move(variant):
    seen, games = _play_checked(variant, random.Random(hash(variant.name) % 1000), 10_000)
    assert seen >= 10_000 and games > 100


def test_params_and_pack_round_trip_the_fields():
    s = deal(VARIANTS["triple-3"], random.Random(1))
    c = C.pack(s)
    assert c[C.S_CUR] == s.current_player and c[C.S_BLEN] == len(s.boneyard)
    assert [c[C.S_HANDS + p] for p in range(3)] == s.hands
    assert c[C.S_WINNER] == C.PLAYING and c[C.S_SPINNER] == -1
    prm = C.params(VARIANTS["triple-3"])
    assert prm is C.params(VARIANTS["triple-3"]) and not prm.flags.writeable


def _reference_tally(variant, games: int, rng):
    n = variant.players
    tally = np.zeros(n + 2, dtype=np.int64)
    for _ in range(games):
        s = deal(variant, rng)
        while not s.is_terminal:
            legal = s.legal_actions()
            s.apply(legal[rng.randrange(len(legal))])
        w = -1 if s.winner is None or s.winner < 0 else s.winner % 2 if variant.pairs else s.winner
        tally[n if w < 0 else w] += 1
        tally[n + 1] += int(s.blocked)
    return tally


@pytest.mark.parametrize("name", ["happy-block", "happy-draw", "troshin-3", "troshin-4-pairs", "triple-2", "triple-4"])
def test_compiled_random_games_have_the_reference_distribution(name):
    """Who wins (or a draw) and how often the game blocks: chi-square, fixed seeds."""
    v = VARIANTS[name]
    n = v.players
    ref = _reference_tally(v, 3000, random.Random(7))
    got = np.zeros(n + 2, dtype=np.int64)
    C.random_games(C.params(v), 30_000, C.new_rng(11), got)
    outcomes = np.array([ref[:n + 1], got[:n + 1]])
    outcomes = outcomes[:, outcomes.sum(axis=0) > 0]
    assert chi2_contingency(outcomes)[1] > P_MIN
    blocked = np.array([[ref[n + 1], 3000 - ref[n + 1]], [got[n + 1], 30_000 - got[n + 1]]])
    if blocked[:, 0].sum():
        assert chi2_contingency(blocked)[1] > P_MIN


@pytest.mark.parametrize("name", ["happy-block", "troshin-4-pairs", "triple-4"])
def test_compiled_deals_have_the_reference_distribution(name):
    """Which seat opens, and where tile 27 (6-6) and tile 0 (0-0) lie: chi-square."""
    v = VARIANTS[name]
    rng = random.Random(3)
    r = C.new_rng(5)

    def where(hands, tile):
        return next((p for p, h in enumerate(hands) if h >> tile & 1), v.players)

    ref, got = np.zeros((3, v.players + 1)), np.zeros((3, v.players + 1))
    s = np.zeros(C.WIDTH, dtype=np.int64)
    prm = C.params(v)
    tiles = np.empty(28, dtype=np.int64)
    for _ in range(4000):
        d = deal(v, rng)
        ref[0, d.current_player] += 1
        ref[1, where(d.hands, 27)] += 1
        ref[2, where(d.hands, 0)] += 1
        C.deal_into(prm, s, r, tiles)
        hands = [int(s[C.S_HANDS + p]) for p in range(v.players)]
        got[0, s[C.S_CUR]] += 1
        got[1, where(hands, 27)] += 1
        got[2, where(hands, 0)] += 1
        bone = [int(t) for t in s[C.S_BONE:C.S_BONE + s[C.S_BLEN]]]
        assert len(bone) == len(d.boneyard) and C.pack(d)[C.S_OPENING] == s[C.S_OPENING] or v.opening != 0
        assert sum(1 << t for t in bone) | np.bitwise_or.reduce(hands) == v.tile_set
    for row in range(3):
        table = np.array([ref[row], got[row]])
        table = table[:, table.sum(axis=0) > 0]
        assert chi2_contingency(table)[1] > P_MIN


@pytest.mark.parametrize("name", ["happy-draw", "troshin-4", "triple-3"])
def test_compiled_rollouts_estimate_what_the_reference_playouts_do(name):
    """From one mid-game state, the mean return of each seat over random playouts."""
    v = VARIANTS[name]
    rng = random.Random(2)
    s = deal(v, rng)
    for _ in range(6):
        legal = s.legal_actions()
        s.apply(legal[rng.randrange(len(legal))])
    ref = []
    for _ in range(3000):
        w = s.clone()
        while not w.is_terminal:
            legal = w.legal_actions()
            w.apply(legal[rng.randrange(len(legal))])
        ref.append(w.returns())
    ref = np.array(ref)
    out = np.zeros(4)
    C.rollouts(C.params(v), C.pack(s), C.new_rng(4), 30_000, out)
    se = ref.std(axis=0) / np.sqrt(len(ref))
    assert np.all(np.abs(out[:v.players] - ref.mean(axis=0)) < 4 * se + 1e-9)


def _mid_game_views(variant, count, seed, min_moves=2):
    rng = random.Random(seed)
    views = []
    while len(views) < count:
        s = deal(variant, rng)
        for _ in range(rng.randrange(min_moves, 40)):
            if s.is_terminal:
                break
            legal = s.legal_actions()
            s.apply(legal[rng.randrange(len(legal))])
        if not s.is_terminal:
            views.append(s.observe(s.current_player))
    return views


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_packed_worlds_are_consistent_with_the_view(name):
    v = VARIANTS[name]
    r = C.new_rng(3)
    mask = np.ones(C.WIDTH, dtype=bool)
    mask[C.S_HANDS:C.S_HANDS + 4] = mask[C.S_BONE:C.S_BONE + 28] = False
    for view in _mid_game_views(v, 12, 1):
        ref = C.pack(world_sampler(view)(random.Random(0)))
        worlds = packed_world_sampler(view)
        for _ in range(40):
            w = worlds(r)
            assert w[C.S_HANDS + view.player] == view.hand
            assert [bin(w[C.S_HANDS + p]).count("1") for p in range(v.players)] == list(view.hand_sizes)
            held = view.table
            for p in range(v.players):
                held |= int(w[C.S_HANDS + p])
            for t in w[C.S_BONE:C.S_BONE + w[C.S_BLEN]]:
                held |= 1 << int(t)
            assert held == v.tile_set and w[C.S_BLEN] == view.boneyard_size
            fixed = mask.copy()
            fixed[C.S_OPENING] = fixed[C.S_LUCKY] = False     # worked out from the dealt hands
            np.testing.assert_array_equal(w[fixed], ref[fixed])
            assert C.legal_actions(v, w)


def _seat_tile_counts(sample, view, n):
    """How often each unseen tile was dealt to each other seat (and the boneyard)."""
    v = view.variant
    unseen = [t for t in range(28) if (v.tile_set & ~view.hand & ~view.table) >> t & 1]
    counts = np.zeros((len(unseen), v.players + 1))
    for _ in range(n):
        hands = sample()
        for i, t in enumerate(unseen):
            where = next((p for p in range(v.players) if hands[p] >> t & 1), v.players)
            counts[i, where] += 1
    return counts


@pytest.mark.parametrize("name,attempts", [("happy-draw", 20), ("troshin-3", 20), ("troshin-4", 20),
                                           ("troshin-4", 0), ("triple-4", 0)])
def test_packed_worlds_deal_as_the_python_sampler(name, attempts):
    """The tiles each other seat gets, over many worlds: chi-square per tile.  With
    ``attempts=0`` every world comes from the exact assignment (augmenting paths)."""
    v = VARIANTS[name]
    views = [view for view in _mid_game_views(v, 60, 4, min_moves=8)    # some hand is constrained
             if packed_world_sampler(view).slots[:, C.W_FORBID].any()][:2]
    assert views
    for view in views:
        rng = random.Random(1)
        r = C.new_rng(2)
        py = world_sampler(view, attempts)
        packed = packed_world_sampler(view, attempts)

        def from_python():
            return py(rng).hands

        def from_packed():
            w = packed(r)
            return [int(w[C.S_HANDS + p]) for p in range(v.players)]

        a, b = _seat_tile_counts(from_python, view, 1500), _seat_tile_counts(from_packed, view, 1500)
        for i in range(len(a)):
            table = np.array([a[i], b[i]])
            table = table[:, table.sum(axis=0) > 0]
            if table.shape[1] > 1:
                assert chi2_contingency(table)[1] > P_MIN


def test_a_view_no_deal_can_satisfy_is_refused():
    v = VARIANTS["happy-block"]
    view = _mid_game_views(v, 1, 0)[0]
    worlds = packed_world_sampler(view)
    worlds.info[C.X_BONEYARD] += 1          # an inconsistent view: one tile too many unseen
    with pytest.raises(PositionError):
        worlds(C.new_rng(0))


def test_generators_are_seeded_from_the_callers():
    a, b = C.rng_from(random.Random(5)), C.rng_from(random.Random(5))
    assert a[0] == b[0] and C.rng_from(np.random.default_rng(5))[0] == C.rng_from(np.random.default_rng(5))[0]
    draws = [C.below(a, 7) for _ in range(7000)]
    assert set(draws) == set(range(7)) and chi2_contingency([np.bincount(draws), [1000] * 7])[1] > P_MIN
    assert all(0.0 <= C.uniform(a) < 1.0 for _ in range(100))
    s1, s2 = C.deal(VARIANTS["triple-2"], random.Random(9)), C.deal(VARIANTS["triple-2"], random.Random(9))
    assert (s1 == s2).all()


@pytest.mark.slow
def test_a_callers_cache_is_dropped_when_the_compiled_code_it_calls_changes(tmp_path):
    """numba keys a cached function by its own file alone; ``drop_stale_caches`` makes a
    caller recompile when the module it calls into changed."""
    import subprocess
    import sys
    import time
    (tmp_path / "callee.py").write_text("from numba import njit\n\n@njit(cache=True)\ndef f(x):\n    return x + 1\n")
    (tmp_path / "caller.py").write_text(
        "import callee\nfrom numba import njit\nfrom pipslab.envs.dominoes.compiled import drop_stale_caches\n"
        "drop_stale_caches(__file__, callee.__file__)\n\n@njit(cache=True)\ndef g(x):\n    return callee.f(x) * 10\n")

    def run():
        return subprocess.run([sys.executable, "-c", "import caller; print(caller.g(1))"], cwd=tmp_path,
                              capture_output=True, text=True, check=True).stdout.strip()

    assert run() == "20" and run() == "20"
    assert list((tmp_path / "__pycache__").glob("caller.*.nbi"))      # cached
    time.sleep(0.01)
    (tmp_path / "callee.py").write_text("from numba import njit\n\n@njit(cache=True)\ndef f(x):\n    return x + 2\n")
    assert run() == "30"
