"""The TD trainer's compiled self-play and batched targets against the torch reference:
the compiled net makes the choices ``play_scores`` makes, and the λ-returns of a whole
generation are each game's ``lambda_returns``."""
import numpy as np
import pytest
import torch

from pipslab.agents.backgammon_value import swap
from pipslab.agents.td import TDNet, net_arrays, outcome_vector, play_scores
from pipslab.envs.backgammon import Position, fast
from pipslab.experiments import train_backgammon as tb


def _torch_game(net, seed, game, start=tb.START):
    """One greedy game as the trainer plays it, valued by torch (``play_scores``)."""
    rng = np.random.default_rng([seed, game])
    rolls = rng.integers(1, 7, size=(tb.ROLL_BLOCK, 2))
    i = 0
    while rolls[i, 0] == rolls[i, 1]:
        i += 1
    board, states = np.asarray(start, dtype=np.int8), []
    for _ in range(tb.MAX_TURNS):
        states.append(board.copy())
        if i >= len(rolls):
            rolls, i = rng.integers(1, 7, size=(tb.ROLL_BLOCK, 2)), 0
        a, b = rolls[i]
        i += 1
        rows = fast.afterstates(board, int(a), int(b)).copy()
        if not len(rows):
            rows = board[None, :]
        scores, points = play_scores(net, rows)
        k = int(np.argmax(scores))
        if points[k]:
            return np.array(states), points[k]
        board = swap(rows[k])
    return np.array(states), 0.0


@pytest.mark.parametrize("features,hidden,seed", [("plus", [16], 0), ("contact", [16], 2), ("containment", [16], 3),
                                                  pytest.param("tesauro", [12, 6], 1, marks=pytest.mark.slow)])
def test_compiled_self_play_makes_the_torch_choices(features, hidden, seed):
    torch.manual_seed(seed)
    net = TDNet(features, hidden)
    states, points = tb.play_generation(net, seed=4, first_game=10, count=10)
    same = 0
    for g, (s, pts) in enumerate(zip(states, points)):
        for b in s:
            Position(b.tolist())              # every kept board is a valid position
        ref, ref_pts = _torch_game(net, 4, 10 + g)
        same += len(ref) == len(s) and (ref == s).all() and ref_pts == pts
    # float32 sums in another order can only flip a choice between plays of (nearly) equal value
    assert same >= 9, same


def test_net_arrays_are_a_copy_of_the_layers():
    torch.manual_seed(2)
    net = TDNet("plus", [8, 4])
    w1, b1, rest, dims = net_arrays(net)
    assert w1.shape == (207, 8) and w1.flags.c_contiguous and w1.dtype == np.float32
    assert dims.tolist() == [8, 4, 5] and len(rest) == 4 * 8 + 4 + 5 * 4 + 5
    with torch.no_grad():
        net.layers[0].weight.add_(1.0)
    assert not np.array_equal(net_arrays(net)[0], w1)


def test_games_longer_than_a_block_of_rolls_draw_more_from_their_stream():
    torch.manual_seed(3)
    net = TDNet("tesauro", [4])
    states, points = tb.play_generation(net, seed=0, first_game=0, count=12)
    long = [g for g, s in enumerate(states) if len(s) > tb.ROLL_BLOCK]
    assert long, [len(s) for s in states]          # an untrained tiny net plays long games
    for g in long[:2]:
        ref, pts = _torch_game(net, 0, g)
        assert len(ref) == len(states[g]) and pts == points[g]


def test_generation_targets_are_each_games_lambda_returns():
    torch.manual_seed(4)
    net = TDNet("plus", [16])
    states, points = tb.play_generation(net, seed=1, first_game=0, count=6)
    points[2] = 0.0                                   # a dropped game keeps no targets
    X, G = tb.targets(net, states, points, 0.7)
    kept = [s for s, p in zip(states, points) if p > 0]
    with torch.no_grad():
        V = torch.sigmoid(net(X)).numpy().astype(np.float64)
    want, start = [], 0
    for s, pts in zip(kept, [p for p in points if p > 0]):
        v_next = np.zeros((len(s), 5))
        v_next[:-1] = V[start + 1:start + len(s)]
        want.append(tb.lambda_returns(v_next, outcome_vector(pts), 0.7))
        start += len(s)
    assert len(X) == sum(map(len, kept))
    assert np.array_equal(G, np.concatenate(want))


def test_one_ply_targets_are_the_nets_own_value_one_roll_ahead():
    """The compiled 1-ply targets against a plain one: each of the 21 rolls' plays valued
    by the torch net, the td agent's choice taken, its outcome probabilities (the mover's)
    averaged with the rolls' weights."""
    from backgammon_helpers import turn_positions
    from pipslab.agents.td import flip
    from pipslab.envs.backgammon.features import FEATURE_LEVELS
    torch.manual_seed(4)
    net = TDNet("contact", [16])
    rows = np.array([list(p) for p in turn_positions(40, seed=3)]
                    + [list(Position.from_points({1: 1}, {24: 1}))], dtype=np.int8)   # every roll wins here
    got = fast.one_ply_targets(rows, FEATURE_LEVELS["contact"], *net_arrays(net))

    def plain(b):
        acc = np.zeros(5)
        for a in range(1, 7):
            for c in range(a, 7):
                w = (1 if a == c else 2) / 36
                afters = fast.afterstates(np.asarray(b, dtype=np.int64), a, c).astype(np.int64)
                if not len(afters):
                    acc += w * flip(net.probabilities(swap(np.asarray(b, dtype=np.int64)[None, :]))[0])
                    continue
                scores, points = play_scores(net, afters)
                k = int(np.argmax(scores))
                acc += w * (outcome_vector(points[k]) if points[k] else flip(net.probabilities(swap(afters[k:k + 1]))[0]))
        return acc

    want = np.array([plain(b) for b in rows])
    assert np.allclose(got, want, atol=1e-6)
    assert np.allclose(got[-1], [1, 0, 0, 0, 0])            # a single checker each, mine on the 1 point
    assert np.allclose(got.sum(axis=0)[0] / len(got), want[:, 0].mean())


def test_one_ply_training_fits_the_workers_targets(tmp_path):
    """--target one-ply: the learner fits the 1-ply targets the shards computed (one
    generation, two shards = one shard's targets stacked)."""
    from pipslab.experiments.train_backgammon import one_ply, play_shard
    torch.manual_seed(1)
    net = TDNet("plus", [8])
    arrays = net_arrays(net)
    whole = play_shard(("plus", arrays, 5, "one-ply"), 0, 4)
    halves = [play_shard(("plus", arrays, 5, "one-ply"), g, 2) for g in (0, 2)]
    X = np.concatenate([h[2][0] for h in halves])
    G = np.concatenate([h[2][1] for h in halves])
    assert np.array_equal(X, whole[2][0]) and np.allclose(G, whole[2][1])
    assert play_shard(("plus", arrays, 5, "lambda"), 0, 2)[2] is None
    X2, G2 = one_ply(net, whole[0], whole[1])
    assert np.allclose(G2, whole[2][1]) and ((G2 > -1e-9) & (G2 < 1 + 1e-9)).all()
