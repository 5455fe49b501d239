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


def test_contact_inputs_equal_the_reference(rows):
    from pipslab.envs.backgammon.features import contact_features
    x = encode(rows, "contact")
    assert x.shape == (len(rows), FEATURE_SETS["contact"])
    assert np.array_equal(x[:, :207], encode(rows, "plus"))
    want = np.array([contact_features(r) for r in rows])
    assert np.array_equal(x[:, 207:], want)
    assert (x[:, 207] > 0).any() and (x[:, 209] < 1).any()      # the rows hold shots and blocked checkers


def _board(mine: dict, his: dict, my_bar: int = 0, his_bar: int = 0):
    """A board from the player on roll's side: ``mine``/``his`` point -> checkers, both
    in that player's numbering (his checkers negative in the board)."""
    b = [0] * 26
    for p, n in mine.items():
        b[p] = n
    for p, n in his.items():
        b[p] = -n
    b[25], b[0] = my_bar, -his_bar
    return np.array([b], dtype=np.int8)


@pytest.mark.parametrize("away,shots", [(6, 17), (7, 6), (8, 6), (11, 2), (12, 3), (1, 11), (2, 12)])
def test_shots_at_a_blot_are_the_textbook_counts(away, shots):
    # my blot on 14, one checker of his `away` pips behind it, nothing in between
    x = encode(_board({14: 1, 24: 14}, {14 - away: 1, 1: 14}), "contact")[0]
    assert round(x[207] * 36) == shots


def test_a_made_point_between_stops_the_indirect_shots():
    # 6 away, with my point 10 made: 6s (11), 5-1 (2), 4-2 (2) and 3-3 (via 11) still hit;
    # 2-2 would have to stop on 10: 16 shots, not 17
    x = encode(_board({14: 1, 10: 2, 24: 12}, {8: 1, 1: 14}), "contact")[0]
    assert round(x[207] * 36) == 16


def test_escapes_past_a_prime():
    six = {p: 2 for p in range(18, 24)}
    five = {p: 2 for p in range(19, 24)}
    assert round(encode(_board({24: 1, 6: 14}, {**six, 1: 3}), "contact")[0][209] * 36) == 0
    assert round(encode(_board({24: 1, 6: 14}, {**five, 1: 5}), "contact")[0][209] * 36) == 11   # a 6 jumps it
    assert round(encode(_board({24: 1, 6: 14}, {1: 15}), "contact")[0][209] * 36) == 36         # nothing ahead


def test_containment_inputs_equal_the_reference(rows):
    from pipslab.envs.backgammon.features import containment_features
    x = encode(rows, "containment")
    assert x.shape == (len(rows), FEATURE_SETS["containment"])
    assert np.array_equal(x[:, :211], encode(rows, "contact"))
    want = np.array([containment_features(r) for r in rows])
    assert np.array_equal(x[:, 211:], want)
    for k in range(211, 219):                          # every input varies over the rows
        assert len(set(x[:, k].tolist())) > 1, k


@pytest.mark.parametrize("away,shots", [(6, 17), (12, 3)])
def test_pip_loss_is_the_shots_times_the_pips_a_hit_costs(away, shots):
    # my blot on 14 goes back 25 - 14 = 11 pips with each of his hitting rolls
    x = encode(_board({14: 1, 24: 14}, {14 - away: 1, 1: 14}), "containment")[0]
    assert round(x[211] * 900) == shots * (25 - 14)


def test_containment_behind_a_prime_and_in_the_open():
    prime = {p: 2 for p in range(13, 19)}              # his six points 13..18 (his 7..12)
    x = encode(_board({24: 2, 6: 13}, {**prime, 1: 3}), "containment")[0]
    assert round(x[213] * 36) == 0                     # a checker on 19..24 cannot pass six points
    x = encode(_board({24: 2, 6: 13}, {1: 15}), "containment")[0]
    assert round(x[213] * 36) == 36                    # his only point is deep in my board: it holds nothing
    # pips to break contact: his rearmost checker is on my 1-point, so my 24s need 23 each
    # and my 6s 5 each
    assert round(x[215] * 100) == 2 * 23 + 13 * 5


def test_a_closed_board_keeps_a_checker_out():
    board = {p: 2 for p in range(19, 25)}              # his whole home board (my 19..24)
    x = encode(_board({6: 14}, {**board, 1: 3}, my_bar=1), "containment")[0]
    assert x[217] == pytest.approx(1.0)                # 36 of 36 rolls dance
    x = encode(_board({6: 14}, {19: 2, 20: 2, 1: 11}, my_bar=1), "containment")[0]
    assert x[217] == pytest.approx(4 / 36)
