"""Expert iteration for dominoes (``pipslab train ... --guide ismcts``): the teacher's label
of a decision is the root visit counts of ISMCTS guided by the learner's own net, every
decision of a labelling call searched together in one lock-step ``search_many``; the
0/1 labels of ``pimc`` and ``oracle`` go through the same seam unchanged; a tiny run
trains, writes its net and resumes to the weights of one run."""
from __future__ import annotations

import math
import random

import numpy as np
import pytest
import torch

from pipslab.agents.domino_net import NetEvaluator, NetPlayer, PolicyNet, net_spec
from pipslab.agents.search_dominoes import search_many
from pipslab.agents.teacher import LABELS, Teacher
from pipslab.envs.dominoes.variants import HAPPY_BLOCK, HAPPY_DRAW
from pipslab.envs.errors import PipslabError
from pipslab.envs.game import get_game
from pipslab.experiments import train_dominoes
from pipslab.experiments.train_dominoes import League, TrainArgs, play_hands

from dominoes_helpers import played_at_random
from harness_helpers import pipslab_here

ITERS = 24


def _player(game="happy", options=None, seed=0):
    torch.manual_seed(seed)
    return NetPlayer(PolicyNet(dict(net_spec(game, options or {"mode": "block"}), hidden=[32, 32])), "learner")


def _decisions(variant, count, seed, opened=False):
    """Python states from random play, each a decision with a choice."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        s = played_at_random(variant, rng, 0, 14)
        if not s.is_terminal and len(s.legal_actions()) > 1 and (not opened or s.left >= 0):
            out.append(s)
    return out


def _label(teacher, states, rngs, player):
    """The trainer's seam: ``label_many`` with the decisions given by their states."""
    return teacher.label_many(None, range(len(states)), rngs, None, state_of=lambda h: states[h], net=player)


@pytest.mark.parametrize("noise", [None, (0.3, 0.25)])
def test_a_label_row_is_the_searchs_root_visit_counts(noise):
    """Row i is ``search_many`` on decision i's view, seeded by one draw from its hand's
    generator, guided by the same net: its root visits at their action ids, nothing else."""
    states = _decisions(HAPPY_BLOCK, 12, 1)
    player = _player()
    teacher = Teacher("happy", {"mode": "block"}, f"ismcts:iters={ITERS}", noise=noise)
    got = _label(teacher, states, [np.random.default_rng([7, i]) for i in range(len(states))], player)
    assert got.dtype == LABELS and got.shape == (len(states), teacher.num_actions)
    for i, s in enumerate(states):
        seed = int(np.random.default_rng([7, i]).integers(1 << 62))
        r = search_many([s.observe(s.current_player)], [seed], NetEvaluator.of(player), ITERS, 1.5, noise=noise)[0]
        want = np.zeros(teacher.num_actions, dtype=LABELS)
        want[list(r.visits)] = list(r.visits.values())
        np.testing.assert_array_equal(got[i], want)
        assert got[i].sum() == ITERS - 1 and set(np.flatnonzero(got[i])) <= set(s.legal_actions())
    # the search follows the net it is given: another learner, other counts
    other = _label(teacher, states, [np.random.default_rng([7, i]) for i in range(len(states))], _player(seed=1))
    assert not np.array_equal(got, other)


def test_target_best_labels_one_on_the_searchs_most_visited_moves():
    """``target=best``: the same searches (same seeds, same net), each row 1 on the moves
    with the most root visits and 0 elsewhere — the move the search plays, not its
    distribution; a target that is neither is one line."""
    states = _decisions(HAPPY_DRAW, 12, 4)
    player = _player("happy", {"mode": "draw"})
    rngs = lambda: [np.random.default_rng([5, i]) for i in range(len(states))]   # noqa: E731
    visits = _label(Teacher("happy", {"mode": "draw"}, f"ismcts:iters={ITERS}"), states, rngs(), player)
    best = _label(Teacher("happy", {"mode": "draw"}, f"ismcts:iters={ITERS},target=best"), states, rngs(), player)
    assert best.dtype == LABELS
    np.testing.assert_array_equal(best, (visits == visits.max(1, keepdims=True)).astype(LABELS))
    assert (best.sum(1) >= 1).all() and (visits > 0).sum() > (best > 0).sum()   # the counts spread; best does not
    with pytest.raises(PipslabError, match="target is one of visits, best"):
        Teacher("happy", {"mode": "draw"}, "ismcts:iters=8,target=most")


def test_labels_do_not_depend_on_the_other_decisions_of_the_call():
    """Labelled together in one lock-step search or one at a time, each decision gets the
    same counts, and takes exactly one draw from its generator."""
    states = _decisions(HAPPY_DRAW, 10, 2)
    player = _player("happy", {"mode": "draw"})
    teacher = Teacher("happy", {"mode": "draw"}, f"ismcts:iters={ITERS},c=2")
    rngs = [np.random.default_rng([3, i]) for i in range(len(states))]
    together = _label(teacher, states, rngs, player)
    alone = np.concatenate([_label(teacher, [s], [np.random.default_rng([3, i])], player)
                            for i, s in enumerate(states)])
    np.testing.assert_array_equal(together, alone)
    for i, rng in enumerate(rngs):
        fresh = np.random.default_rng([3, i])
        fresh.integers(1 << 62)
        assert rng.random() == fresh.random()
    # best_moves is the most visited of the same search
    s = states[0]
    best = teacher.best_moves(s, s.current_player, np.random.default_rng([3, 0]), player)
    assert best == np.flatnonzero(together[0] == together[0].max()).tolist()


@pytest.mark.parametrize("guide, variant, options", [
    ("pimc", HAPPY_BLOCK, {"mode": "block"}),        # the compiled batched call
    ("oracle", HAPPY_BLOCK, {"mode": "block"}),
    ("pimc", HAPPY_DRAW, {"mode": "draw"}),          # one at a time from the states
])
def test_pimc_and_oracle_labels_are_still_one_on_their_best_moves(guide, variant, options):
    """Counts now, but 0/1 as before: the label rows equal ``best_moves`` for the same
    generators, so their normalised target is unchanged."""
    from pipslab.envs.dominoes import compiled as C
    states = _decisions(variant, 8 if variant.draw else 30, 4, opened=True)
    batched = Teacher("happy", options, guide, 2)
    single = Teacher("happy", options, guide, 2)
    S = np.stack([C.pack(s) for s in states]) if not variant.draw else None
    openings = [[ev for ev in s.observe(0).history if ev[0] == 0][0][2] for s in states]
    got = batched.label_many(S, range(len(states)), [np.random.default_rng([9, i]) for i in range(len(states))],
                             openings, state_of=lambda h: states[h])
    assert got.dtype == LABELS and set(np.unique(got)) <= {0, 1}
    for i, s in enumerate(states):
        want = np.zeros(single.num_actions, dtype=LABELS)
        want[single.best_moves(s, s.current_player, np.random.default_rng([9, i]))] = 1
        np.testing.assert_array_equal(got[i], want)


@pytest.mark.parametrize("guide, variant, options", [
    ("pimc", HAPPY_DRAW, {"mode": "draw"}),
    ("pimc", HAPPY_BLOCK, {"mode": "block"}),        # not the batched call: its labels are 0/1
    ("oracle", HAPPY_BLOCK, {"mode": "block"}),
])
def test_a_temperature_teaches_the_softmax_of_the_mean_move_values(guide, variant, options):
    """``--guide-temperature T``: each label row is the softmax, over the legal moves, of
    the teacher's mean value of each (the solver's value / 1000) over T — for the same
    generator the same worlds as the 0/1 label, whose best moves are the row's largest."""
    from pipslab.envs.dominoes import compiled as C
    states = _decisions(variant, 10, 6, opened=True)
    T = 0.2
    soft = Teacher("happy", options, guide, 3, temperature=T)
    hard = Teacher("happy", options, guide, 3)
    S = np.stack([C.pack(s) for s in states]) if not variant.draw else None
    openings = [[ev for ev in s.observe(0).history if ev[0] == 0][0][2] for s in states]
    got = soft.label_many(S, range(len(states)), [np.random.default_rng([5, i]) for i in range(len(states))],
                          openings, state_of=lambda h: states[h])
    assert got.dtype == LABELS
    np.testing.assert_allclose(got.sum(1), 1.0, rtol=1e-6)
    spread = 0
    for i, s in enumerate(states):
        legal = s.legal_actions()
        values = soft.move_values(s, s.current_player, np.random.default_rng([5, i]))
        assert sorted(values) == legal
        z = np.array([values[a] for a in legal]) / (1000 * T)
        want = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
        np.testing.assert_allclose(got[i, legal], want, rtol=1e-5)
        assert got[i].sum() - got[i, legal].sum() == 0                # nothing on an illegal move
        best = hard.best_moves(s, s.current_player, np.random.default_rng([5, i]))
        assert set(best) == set(np.flatnonzero(np.isclose(got[i], got[i].max(), rtol=1e-6)))
        spread += got[i, legal].max() - got[i, legal].min() > 1e-3
    assert spread > 0                                                 # some rows are not uniform


@pytest.mark.parametrize("key", ["temperature", "weigh"])
def test_soft_and_weighed_labels_are_only_for_the_solver_teachers(key):
    with pytest.raises(PipslabError, match=key):
        Teacher("happy", {"mode": "draw"}, "ismcts:iters=4", **{key: 0.5})
    with pytest.raises(PipslabError, match=key):
        Teacher("happy", {"mode": "draw"}, "pimc", **{key: -1})
    flag = f"--guide-{key}"
    for guide, value in (("suits", 0.5), ("pimc", -0.1)):
        args = TrainArgs(game="happy", options={"mode": "draw"}, guide=guide, epochs=0, **{f"guide_{key}": value})
        with pytest.raises(PipslabError, match=flag):
            args.validate()


@pytest.mark.parametrize("guide, variant, options", [
    ("pimc", HAPPY_DRAW, {"mode": "draw"}),
    ("oracle", HAPPY_BLOCK, {"mode": "block"}),
])
def test_weighed_labels_count_by_what_a_uniform_choice_loses(guide, variant, options):
    """``--guide-weigh W``: each row is the unweighed label (1 on the best moves over their
    number) times ``min(1, (best - mean) / W)`` of the teacher's move values in hands won,
    from the same worlds; a decision whose moves are all worth the same has no label, and
    the loss takes each row at its weight (rows summing to less than 1 are not scaled up)."""
    from pipslab.envs.dominoes import compiled as C
    states = _decisions(variant, 12, 8, opened=True)
    W = 0.3
    weighed = Teacher("happy", options, guide, 3, weigh=W)
    S = np.stack([C.pack(s) for s in states]) if not variant.draw else None
    openings = [[ev for ev in s.observe(0).history if ev[0] == 0][0][2] for s in states]
    got = weighed.label_many(S, range(len(states)), [np.random.default_rng([4, i]) for i in range(len(states))],
                             openings, state_of=lambda h: states[h])
    partial = 0
    for i, s in enumerate(states):
        values = weighed.move_values(s, s.current_player, np.random.default_rng([4, i]))
        v = np.array(list(values.values())) / 1000
        weight = min(1.0, (v.max() - v.mean()) / W)
        best = [a for a, x in values.items() if x == max(values.values())]
        want = np.zeros_like(got[i])
        want[best] = weight / len(best)
        np.testing.assert_allclose(got[i], want, rtol=1e-5, atol=1e-7)
        partial += 0 < weight < 1
    assert partial > 0 and np.any(got.sum(1) == 1)        # some rows count in part, some in full
    # a row of weight w counts w in the imitation target, one of weight 1 as before
    T = torch.from_numpy(got)
    T = T / T.sum(-1, keepdim=True).clamp(min=1.0)
    np.testing.assert_allclose(T.sum(-1).numpy(), got.sum(1), rtol=1e-6)
    # every move as good as the others: no label
    tie = Teacher("happy", {"mode": "block"}, "oracle", weigh=W)
    from pipslab.envs.dominoes.notation import parse_position
    s = parse_position("happy-block; turn=0; ends=0|6; hands=0-5 1-6 / 5-5")
    assert tie.label(s, 0, np.random.default_rng(0)).sum() == pytest.approx(1.0)    # +1 against -1: in full
    s = parse_position("happy-block; turn=0; ends=0|0; hands=0-5 0-6 / 1-1")          # white never plays:
    assert set(tie.move_values(s, 0, np.random.default_rng(0)).values()) == {1002}  # each wins by 2
    assert tie.label(s, 0, np.random.default_rng(0)).sum() == 0


@pytest.mark.parametrize("game, options", [
    ("happy", {"mode": "block"}),                    # the compiled self-play
    ("troshin", {"players": 4, "pairs": True}),
    ("troshin", {"players": 3}),                     # no solver: the search is the only teacher
    ("triple", {"players": 3}),
])
def test_the_trainer_labels_its_learners_decisions_with_visit_counts(game, options):
    args = TrainArgs(game=game, options=options, seed=2, guide="ismcts:iters=6", hidden=[32, 32], epochs=0,
                     guide_noise=[0.5, 0.25])
    args.validate()
    batch = play_hands(_player(game, options), League(args), args, 0, 6, label=True)
    assert batch.decisions > 0 and batch.teacher.dtype == LABELS
    assert np.all(batch.teacher.sum(1) == 5) and np.all(batch.masks[batch.teacher > 0] == 1)


def test_a_tiny_expert_iteration_run_trains_and_resumes(tmp_path, capfd, monkeypatch):
    """``--guide ismcts --epochs 0``: finite losses with an imitation term, a net written,
    and a resumed run reaching one straight run's weights."""
    seen = []
    update = train_dominoes.ppo_update

    def recorded(*a, **k):
        seen.append(update(*a, **k))
        return seen[-1]

    monkeypatch.setattr(train_dominoes, "ppo_update", recorded)
    base = ["train", "happy", "--guide", "ismcts:iters=8", "--epochs", "0", "--guide-epochs", "1",
            "--batch-hands", "32", "--hidden", "16", "--eval-games", "0", "--seed", "4", "--no-progress"]
    r = pipslab_here(capfd, *base, "--hands", "96", "--out", str(tmp_path / "one"))
    assert r.returncode == 0, r.stderr
    assert len(seen) == 3 and all(math.isfinite(v) for s in seen for v in s.values())
    assert all(s["imitation"] > 0 for s in seen)
    assert (tmp_path / "one" / "net.pt").is_file()
    r = pipslab_here(capfd, *base, "--hands", "64", "--out", str(tmp_path / "two"))
    assert r.returncode == 0, r.stderr
    r = pipslab_here(capfd, *base, "--hands", "96", "--out", str(tmp_path / "two"), "--resume")
    assert r.returncode == 0, r.stderr
    a = torch.load(tmp_path / "one" / "net.pt", weights_only=True)["model"]
    b = torch.load(tmp_path / "two" / "net.pt", weights_only=True)["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("flags, message", [
    (["--guide", "ismcts:time=1"], "it takes iters, c, mix, target, not time"),
    (["--guide", "ismcts:target=most"], "target is one of visits, best, not 'most'"),
    (["--guide", "ismcts:iters=1"], "iters must be at least 2"),
    (["--guide", "pimc", "--guide-noise", "0.3,0.25"], "give --guide ismcts"),
    (["--guide", "ismcts", "--guide-noise", "0,0.25"], "ALPHA,FRACTION"),
    (["--guide", "oracle", "--guide-infer", "net"], "give --guide pimc"),
    (["--guide", "pimc", "--guide-infer", "hand"], "needs a prior"),
    (["--guide", "pimc", "--guide-infer", "net", "--guide-floor", "1"], "floor"),
])
def test_bad_search_guides_are_one_line(flags, message, tmp_path, capfd):
    r = pipslab_here(capfd, "train", "happy", *flags, "--out", str(tmp_path / "run"), "--no-progress")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and message in r.stderr, r.stderr
    assert not (tmp_path / "run").exists()


def test_phases_label_only_the_decisions_in_them():
    """``phases``: a decision in one of them gets the label the teacher gives without
    ``phases`` from the same generator; any other an all-zero row, without a draw.  In
    block mode the compiled batch is given up, as the phase is read from the state."""
    rng = random.Random(3)
    states = [played_at_random(HAPPY_DRAW, rng, 0, 40) for _ in range(80)]
    states = [s for s in states if not s.is_terminal and len(s.legal_actions()) > 1]
    late = ("boneyard 1-4", "boneyard empty")
    phases = [get_game("happy").phase_of(s) for s in states]
    assert {p in late for p in phases} == {True, False}
    every = Teacher("happy", {"mode": "draw"}, "pimc", 3)
    some = Teacher("happy", {"mode": "draw"}, "pimc", 3, phases=late)
    got = _label(some, states, [np.random.default_rng([7, i]) for i in range(len(states))], None)
    want = _label(every, states, [np.random.default_rng([7, i]) for i in range(len(states))], None)
    for row, full, phase in zip(got, want, phases):
        np.testing.assert_array_equal(row, full if phase in late else np.zeros_like(full))
    assert not Teacher("happy", {"mode": "block"}, "pimc", 3, phases=["1-2 in hand"]).batched()
    with pytest.raises(PipslabError, match="not a phase of happy-draw; its phases: boneyard 10"):
        Teacher("happy", {"mode": "draw"}, "pimc", phases=["1-2 in hand"])


def test_kept_decisions_are_taught_the_policy_that_played_them():
    """``guide_keep``: every learner decision carries a label — the teacher's in the
    phases it labels, elsewhere the playing policy's own probabilities."""
    from pipslab.agents.domino_net import masked_softmax
    args = TrainArgs(game="happy", options={"mode": "draw"}, seed=3, guide="pimc", guide_samples=2, epochs=0,
                     guide_phases=["boneyard empty"], guide_keep=True, self_play=1.0)
    player = _player("happy", {"mode": "draw"})
    batch = play_hands(player, League(args), args, 0, 12, label=True)
    logits, _ = player.forward(batch.obs)
    probs = masked_softmax(logits, batch.masks)
    taught = np.isin(batch.teacher, [0.0, 1.0]).all(1) & (batch.teacher.max(1) == 1)
    kept = np.isclose(batch.teacher, probs, atol=1e-5).all(1)
    assert np.all(taught | kept) and taught.any() and kept.any()
    np.testing.assert_allclose(batch.teacher[kept].sum(1), 1.0, rtol=1e-5)
    assert get_game("happy").phases_of({"mode": "draw"})[-1] == "boneyard empty"


@pytest.mark.parametrize("explore", [0.0, 0.5])
def test_greedy_play_moves_as_the_net_plays_in_a_tournament(explore):
    """``play="greedy"``: every learner move is its net's most likely legal one, but for
    about ``explore`` of them, each legal and drawn from the hand's own generator (the
    same hands again play the same moves)."""
    args = TrainArgs(game="happy", options={"mode": "draw"}, seed=5, guide="pimc", guide_samples=2, epochs=0,
                     play="greedy", explore=explore, self_play=1.0)
    args.validate()
    player = _player("happy", {"mode": "draw"})
    batch = play_hands(player, League(args), args, 0, 16, label=True)
    logits, _ = player.forward(batch.obs)
    best = np.where(batch.masks > 0, logits, -np.inf).argmax(1)
    assert batch.masks[np.arange(len(batch.actions)), batch.actions].all()
    off = float(np.mean(batch.actions != best))
    if explore:
        assert 0.1 < off < explore        # a random move is the best one now and then
    else:
        assert off == 0.0 and np.isfinite(batch.logp).all()
    again = play_hands(player, League(args), args, 0, 16, label=True)
    assert np.array_equal(again.actions, batch.actions)


def test_the_replay_ring_keeps_the_newest_and_comes_back_from_its_files(tmp_path):
    """The ring holds the newest ``size`` decisions; a checkpoint's state refills an equal
    ring from the files, which are pruned once no checkpoint needs them; a missing file
    is one line."""
    R = train_dominoes.Replay(5, tmp_path / "r", 2, 3, "cpu")
    rows = np.arange(20, dtype=np.float32).reshape(10, 2)
    chunk = lambda a, b: (rows[a:b], np.ones((b - a, 3), np.int8), np.full((b - a, 3), a, np.float32),
                          rows[a:b, 0].copy())
    for a, b in ((0, 3), (3, 7), (7, 9)):
        R.add(*chunk(a, b))
    X, M, T, _ = R.tensors()
    assert len(R) == 5 and sorted(X[:, 0].tolist()) == [8.0, 10.0, 12.0, 14.0, 16.0] and bool(M.all())
    state = R.state()
    R.add(*chunk(9, 10))
    R.state()
    assert sorted(int(f.stem) for f in (tmp_path / "r").glob("*.npz")) == [3, 7, 9]     # 0-2: nobody's
    again = train_dominoes.Replay(5, tmp_path / "r", 2, 3, "cpu")
    again.load(state, tmp_path / "ck")
    ring = train_dominoes.Replay(5, tmp_path / "y", 2, 3, "cpu")
    for a, b in ((0, 3), (3, 7), (7, 9)):
        ring.add(*chunk(a, b))
    for a, b in zip(again.tensors(), ring.tensors()):
        assert torch.equal(a, b)
    (tmp_path / "r" / f"{3:012d}.npz").unlink()
    with pytest.raises(PipslabError, match="replay buffer's files .* missing"):
        train_dominoes.Replay(5, tmp_path / "r", 2, 3, "cpu").load(state, tmp_path / "ck")


def test_a_replayed_run_resumes_to_the_weights_of_one_run(tmp_path):
    """With ``replay`` (and ``guide_keep``, late phases only) a run stopped and resumed
    refills its buffer from its files and ends with the weights of one run; the buffer
    changes the weights."""
    common = dict(game="happy", options={"mode": "draw"}, guide="pimc", guide_samples=2, epochs=0,
                  guide_phases=["boneyard 1-4", "boneyard empty"], guide_keep=True, hidden=[16],
                  batch_hands=32, minibatch=128, checkpoint_every=1, eval_games=0, progress=False, seed=4)
    train_dominoes.train(TrainArgs(hands=128, replay=600, out=str(tmp_path / "one"), **common))
    train_dominoes.train(TrainArgs(hands=64, replay=600, out=str(tmp_path / "two"), **common))
    train_dominoes.train(TrainArgs(hands=128, replay=600, out=str(tmp_path / "two"), resume=True, **common))
    train_dominoes.train(TrainArgs(hands=128, out=str(tmp_path / "plain"), **common))
    w = {k: torch.load(tmp_path / k / "net.pt", weights_only=True)["model"] for k in ("one", "two", "plain")}
    assert all(torch.equal(w["one"][k], w["two"][k]) for k in w["one"])
    assert not all(torch.equal(w["one"][k], w["plain"][k]) for k in w["one"])
    assert len(list((tmp_path / "one" / "replay").glob("*.npz"))) < 4


def test_a_round_of_fit_every_plays_unchanged_then_fits_all_its_labels(tmp_path):
    """``fit_every``: an update inside a round only adds its labels to the buffer (nothing
    fitted, the weights unchanged); the round's last draws ``guide_epochs`` times all the
    round's labels, so one round over everything is that many passes over it (the
    offline fit), where fitting each update draws per update."""
    args = TrainArgs(game="happy", options={"mode": "draw"}, seed=3, guide="pimc", guide_samples=2, epochs=0,
                     replay=10_000, fit_every=2, minibatch=64, hidden=[16], play="greedy", explore=0.1,
                     self_play=1.0)
    args.validate()
    player = _player("happy", {"mode": "draw"})
    net = PolicyNet(dict(net_spec("happy", {"mode": "draw"}), hidden=[16]))
    before = {k: v.clone() for k, v in net.state_dict().items()}
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    game = get_game("happy")
    ring = train_dominoes.Replay(args.replay, tmp_path / "r", game.observation_encoder(args.options).size,
                                 game.actions(args.options), "cpu")
    first = play_hands(player, League(args), args, 0, 8, label=True)
    assert train_dominoes.ppo_update(net, opt, first, args, 0, 1.0, ring, fit=False) == {}
    assert all(torch.equal(before[k], v) for k, v in net.state_dict().items()) and not opt.state
    n1 = len(ring)
    assert n1 == int((first.teacher.sum(-1) > 0).sum()) > 0 and ring.fitted == 0
    second = play_hands(player, League(args), args, 8, 8, label=True)
    stats = train_dominoes.ppo_update(net, opt, second, args, 1, 1.0, ring, fit=True)
    assert math.isfinite(stats["imitation"]) and ring.fitted == ring.written == len(ring) > n1
    steps = {int(s["step"]) for s in opt.state.values()}
    assert steps == {-(-args.guide_epochs * len(ring) // args.minibatch)}
    assert not all(torch.equal(before[k], v) for k, v in net.state_dict().items())


def _stopped_in_its_second_update(monkeypatch, args):
    """Train ``args`` until its second update raises KeyboardInterrupt (as SIGTERM does)."""
    update, calls = train_dominoes.ppo_update, []

    def stopped(*a, **k):
        calls.append(k)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return update(*a, **k)

    monkeypatch.setattr(train_dominoes, "ppo_update", stopped)
    with pytest.raises(KeyboardInterrupt):
        train_dominoes.train(args)
    monkeypatch.setattr(train_dominoes, "ppo_update", update)


def test_a_run_stopped_inside_a_round_resumes_to_the_weights_of_one_run(tmp_path, monkeypatch):
    """A run stopped (SIGTERM, Ctrl-C) inside a round of ``fit_every`` refills the round's
    labels from the buffer's files and ends with one straight run's weights; without
    rounds (fitting each update) the weights differ."""
    common = dict(game="happy", options={"mode": "draw"}, guide="pimc", guide_samples=2, epochs=0, hidden=[16],
                  batch_hands=32, minibatch=128, checkpoint_every=1, eval_games=0, progress=False, seed=4,
                  replay=5_000, hands=128)
    train_dominoes.train(TrainArgs(fit_every=3, out=str(tmp_path / "one"), **common))
    _stopped_in_its_second_update(monkeypatch, TrainArgs(fit_every=3, out=str(tmp_path / "two"), **common))
    train_dominoes.train(TrainArgs(fit_every=3, out=str(tmp_path / "two"), resume=True, **common))
    train_dominoes.train(TrainArgs(out=str(tmp_path / "each"), **common))
    w = {k: torch.load(tmp_path / k / "net.pt", weights_only=True)["model"] for k in ("one", "two", "each")}
    assert all(torch.equal(w["one"][k], w["two"][k]) for k in w["one"])
    assert not all(torch.equal(w["one"][k], w["each"][k]) for k in w["one"])


def test_the_learner_can_be_the_model_that_weighs_pimcs_worlds():
    """``infer=learner``: each call's worlds are weighed by the net it is given — the same
    labels as a teacher built on that net as a fixed model, from the same generators; no
    net is one line; the trainer takes ``--guide-infer learner`` and checks its floor."""
    from pipslab.agents.domino_net import NetEvaluator
    from pipslab.agents.teacher import LEARNER
    rng = random.Random(5)
    states = [played_at_random(HAPPY_DRAW, rng, 6, 30) for _ in range(30)]
    states = [s for s in states if not s.is_terminal and len(s.legal_actions()) > 1][:12]
    player = _player("happy", {"mode": "draw"}, seed=3)
    learner = Teacher("happy", {"mode": "draw"}, "pimc", 6, infer=LEARNER, floor=0.02)
    fixed = Teacher("happy", {"mode": "draw"}, "pimc", 6, infer=NetEvaluator.of(player), floor=0.02)
    uniform = Teacher("happy", {"mode": "draw"}, "pimc", 6)
    gens = lambda: [np.random.default_rng([9, i]) for i in range(len(states))]
    got = _label(learner, states, gens(), player)
    np.testing.assert_array_equal(got, _label(fixed, states, gens(), None))
    assert not learner.batched()
    weighed = [learner.move_values(s, s.current_player, np.random.default_rng([9, i]), player)
               for i, s in enumerate(states)]
    flat = [uniform.move_values(s, s.current_player, np.random.default_rng([9, i])) for i, s in enumerate(states)]
    assert weighed != flat          # the weights moved some value
    with pytest.raises(PipslabError, match="none was given"):
        _label(learner, states[:1], gens()[:1], None)
    args = TrainArgs(game="happy", options={"mode": "draw"}, guide="pimc", epochs=0, guide_infer=LEARNER,
                     guide_floor=1.0)
    with pytest.raises(PipslabError, match="--guide-floor must lie in"):
        args.validate()
    args.guide_floor = 0.02
    args.validate()


def _labels(folder):
    """Every labelled decision in a run's replay files, in decision order."""
    files = sorted((folder / "replay").glob("*.npz"), key=lambda f: int(f.stem))
    parts = [dict(np.load(f)) for f in files]
    return {k: np.concatenate([p[k] for p in parts]) for k in ("X", "M", "T", "R")}


def test_a_run_takes_an_earlier_runs_labels_into_its_first_round_and_resumes_with_them(tmp_path, monkeypatch):
    """``replay_from``: the decisions the earlier run's last ring held become this run's
    first (the newest ``replay`` of them, a file cut where the ring began), its first fit
    draws ``guide_epochs`` times them and its own, a run stopped and resumed ends with the
    weights of one straight run, and the taken labels change the weights."""
    common = dict(game="happy", options={"mode": "draw"}, guide="pimc", guide_samples=2, epochs=0, hidden=[16],
                  batch_hands=32, minibatch=128, checkpoint_every=1, eval_games=0, progress=False, hands=64,
                  fit_every=2)
    train_dominoes.train(TrainArgs(seed=4, replay=300, out=str(tmp_path / "a"), **common))
    a = _labels(tmp_path / "a")
    written = int(torch.load(tmp_path / "a" / "checkpoint.pt", weights_only=True)["replay"]["written"])
    assert written > 300 and len(a["X"]) > 300        # the ring kept the newest 300: a file is cut
    theirs = {k: v[-300:] for k, v in a.items()}
    later = dict(common, seed=5, replay=5_000, replay_from=str(tmp_path / "a"))
    train_dominoes.train(TrainArgs(out=str(tmp_path / "b"), **later))
    b = _labels(tmp_path / "b")
    for k in theirs:
        np.testing.assert_array_equal(b[k][:300], theirs[k])
    ck = torch.load(tmp_path / "b" / "checkpoint.pt", weights_only=True)
    assert ck["replay"]["written"] == ck["replay"]["fitted"] == len(b["X"]) > 300
    steps = {int(s["step"]) for s in ck["optimizer"]["state"].values()}
    assert steps == {-(-8 * len(b["X"]) // 128)}          # one fit over the taken labels and its own
    _stopped_in_its_second_update(monkeypatch, TrainArgs(out=str(tmp_path / "c"), **later))
    train_dominoes.train(TrainArgs(out=str(tmp_path / "c"), resume=True, **later))
    train_dominoes.train(TrainArgs(out=str(tmp_path / "own"), **dict(later, replay_from="")))
    w = {k: torch.load(tmp_path / k / "net.pt", weights_only=True)["model"] for k in ("b", "c", "own")}
    assert all(torch.equal(w["b"][k], w["c"][k]) for k in w["b"])
    assert not all(torch.equal(w["b"][k], w["own"][k]) for k in w["b"])


def test_a_label_source_that_cannot_give_is_one_line_before_anything_is_written(tmp_path, capfd):
    """``--replay-from`` without ``--replay``, from a folder with no run, a run of another
    game or variant, or one whose files are gone: one line, exit 2, nothing written."""
    common = dict(game="happy", options={"mode": "draw"}, guide="pimc", guide_samples=2, epochs=0, hidden=[8],
                  batch_hands=32, eval_games=0, progress=False, hands=32, replay=1_000)
    train_dominoes.train(TrainArgs(seed=1, out=str(tmp_path / "draw"), **common))
    train_dominoes.train(TrainArgs(seed=1, out=str(tmp_path / "block"), **dict(common, options={"mode": "block"})))
    base = ["train", "happy", "--mode", "draw", "--epochs", "0", "--guide", "pimc", "--guide-samples", "2",
            "--hands", "32", "--batch-hands", "32", "--eval-games", "0", "--no-progress"]
    out = tmp_path / "out"
    cases = [
        (["--replay-from", str(tmp_path / "draw")], "--replay-from fills the replay buffer with another run's labels"),
        (["--replay", "100", "--replay-from", str(tmp_path / "nothing")], "holds no training run"),
        (["--replay", "100", "--replay-from", str(tmp_path / "block")], "trained happy-block, this run happy-draw"),
    ]
    for f in (tmp_path / "draw" / "replay").glob("*.npz"):
        f.rename(f.with_suffix(".gone"))
    cases.append((["--replay", "100", "--replay-from", str(tmp_path / "draw")], "do not reach back to decision 0"))
    for argv, message in cases:
        r = pipslab_here(capfd, *base, *argv, "--out", str(out))
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and message in r.stderr, (argv, r.stderr)
        assert not out.exists()
