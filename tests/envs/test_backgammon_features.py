"""The compiled network inputs (features.encode) against the reference encoder and the
board's own pip counts and race test."""
import numpy as np
import pytest

from backgammon_helpers import turn_positions
from pipslab.agents.backgammon_value import race_mask
from pipslab.envs.backgammon import Position
from pipslab.envs.backgammon.features import FEATURE_SETS, encode, tesauro_features


@pytest.fixture(scope="module")
def rows():
    return np.array([list(p) for p in turn_positions(300, seed=5)] + [list(Position.start())], dtype=np.int8)


def test_tesauro_inputs_equal_the_reference_encoder(rows):
    got = encode(rows, "tesauro")
    want = np.array([tesauro_features(r) for r in rows])
    assert got.shape == (len(rows), FEATURE_SETS["tesauro"]) and np.array_equal(got, want)


def test_plus_inputs(rows):
    x = encode(rows, "plus")
    assert x.shape == (len(rows), FEATURE_SETS["plus"])
    assert np.array_equal(x[:, :198], encode(rows, "tesauro"))
    for r, f in zip(rows, x):
        p = Position(r.tolist())
        assert round(f[198] * 100) == p.pip_count() and round(f[199] * 100) == p.opp_pip_count()
        assert round(f[201] * 5) == sum(1 for i in range(1, 25) if r[i] == 1)
        assert round(f[202] * 5) == sum(1 for i in range(1, 25) if r[i] == -1)
        assert round(f[205] * 5) == sum(int(r[i]) for i in range(19, 26) if r[i] > 0)
    assert np.array_equal(x[:, 200] == 1, race_mask(rows))
    start = encode(np.array([Position.start()]), "plus")[0]
    assert start[203] == pytest.approx(1 / 6) and start[204] == pytest.approx(1 / 6)   # no two made points in a row
    with pytest.raises(ValueError):
        encode(rows, "pixels")


def test_batch_afterstates_equal_one_call_per_board(rows):
    from pipslab.envs.backgammon import fast
    rng = np.random.default_rng(2)
    dice = rng.integers(1, 7, size=(len(rows), 2))
    out, offsets = fast.batch_afterstates(rows, dice)
    assert offsets[0] == 0 and offsets[-1] == len(out)
    for g, (r, d) in enumerate(zip(rows, dice)):
        one = fast.afterstates(r, int(d[0]), int(d[1]))
        mine = out[offsets[g]:offsets[g + 1]]
        if len(one) == 0:          # no legal play: the board itself, the turn passes
            assert np.array_equal(mine, r[None, :])
        else:
            assert sorted(map(bytes, mine)) == sorted(map(bytes, one))
