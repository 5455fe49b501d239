"""The domino trainer's self-play on the compiled engine against its Python reference:
the same hands, so the very same batch (observations, masks, actions, log-probabilities,
values, advantages, labels, league results) — with snapshots in the league, partners,
Triple's ``greedy``, and the oracle and pimc teachers; a league member the compiled
loop cannot play sends the update to the reference; the compiled pimc teacher's labels
are the pimc move from the seat's view."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from pipslab.agents.domino_net import NetPlayer, PolicyNet, net_spec
from pipslab.agents.teacher import Teacher
from pipslab.experiments.train_dominoes import League, TrainArgs, play_hands

SMALL = dict(hidden=[32, 32], batch_hands=64, minibatch=256, epochs=2, snapshot_every=2, checkpoint_every=1,
             eval_games=0, progress=False)
FIELDS = ("obs", "masks", "actions", "logp", "values", "advantages", "returns", "teacher")


def _setup(game, options, **changes):
    args = TrainArgs(game=game, options=options, seed=4, **dict(SMALL, **changes))
    args.validate()
    torch.manual_seed(1)
    net = PolicyNet(dict(net_spec(game, options), hidden=[32, 32]))
    league = League(args)
    league.add_snapshot("snapshot-1", net)         # a frozen net in the league too
    return args, NetPlayer(net), league


def _same(a, b):
    for f in FIELDS:
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f), err_msg=f)
    assert a.results == b.results and a.hands == b.hands and a.decisions == b.decisions


@pytest.mark.parametrize("game,options,changes", [
    ("happy", {"mode": "block"}, {}),
    ("happy", {"mode": "draw"}, {"self_play": 0.2}),
    ("troshin", {"players": 4, "pairs": True}, {"league": ["random", "partner", "heaviest"]}),
    ("troshin", {"players": 3}, {"league": ["suits", "partner"]}),
    ("triple", {"players": 3}, {"league": ["greedy", "random", "suits"]}),
    ("happy", {"mode": "block"}, {"guide": "oracle"}),
    ("happy", {"mode": "draw"}, {"guide": "oracle", "self_play": 0.3}),
    ("troshin", {"players": 4, "pairs": True}, {"guide": "oracle", "league": ["random", "partner"]}),
    ("happy", {"mode": "draw"}, {"guide": "pimc", "guide_samples": 2}),
    ("triple", {"players": 2}, {"guide": "greedy", "guide_share": 0.5}),
])
def test_compiled_self_play_gives_the_reference_batch(game, options, changes):
    args, player, league = _setup(game, options, **changes)
    label = bool(args.guide)
    fast = play_hands(player, league, args, 0, 48, label=label,
                      teacher=Teacher(args.game, args.options, args.guide, args.guide_samples, compiled=False) if label else None)
    slow = play_hands(player, league, args, 0, 48, label=label, compiled=False,
                      teacher=Teacher(args.game, args.options, args.guide, args.guide_samples, compiled=False) if label else None)
    assert fast.decisions > 0
    _same(fast, slow)


def test_a_member_the_compiled_loop_cannot_play_sends_the_update_to_the_reference():
    args, player, league = _setup("happy", {"mode": "block"}, league=["heaviest", "pimc:samples=2"], self_play=0.0)
    a = play_hands(player, league, args, 0, 12)
    b = play_hands(player, league, args, 0, 12, compiled=False)
    _same(a, b)
    assert "pimc:samples=2" in a.results


@pytest.mark.parametrize("mode", ["block", "draw"])
def test_the_compiled_pimc_teacher_labels_pimcs_moves(mode):
    """Legal labels on every decision, the same for the same seed; and on the same
    decisions the compiled teacher agrees with the reference (other worlds) as often as
    the reference agrees with itself under another seed, within noise."""
    import random

    from pipslab.envs.dominoes.engine import deal
    from pipslab.envs.dominoes.variants import happy
    args, player, league = _setup("happy", {"mode": mode}, guide="pimc", guide_samples=6)
    teacher = Teacher(args.game, args.options, args.guide, args.guide_samples)
    assert teacher.pimc is not None
    a = play_hands(player, league, args, 0, 24, label=True, teacher=teacher)
    b = play_hands(player, league, args, 0, 24, label=True, teacher=Teacher(args.game, args.options, args.guide, args.guide_samples))
    assert a.decisions > 0 and (a.teacher.sum(1) >= 1).all()
    assert np.all(a.masks[a.teacher == 1] == 1)
    np.testing.assert_array_equal(a.teacher, b.teacher)
    reference = Teacher(args.game, args.options, args.guide, args.guide_samples, compiled=False)
    rng = random.Random(5)
    same, again = [], []
    while len(same) < 80:
        s = deal(happy(mode), rng)
        for _ in range(rng.randrange(1, 10)):
            if not s.is_terminal:
                legal = s.legal_actions()
                s.apply(legal[rng.randrange(len(legal))])
        if s.is_terminal or len(s.legal_actions()) < 2:
            continue
        seat = s.current_player
        x = set(teacher.best_moves(s, seat, np.random.default_rng(len(same))))
        y = set(reference.best_moves(s, seat, np.random.default_rng(len(same))))
        z = set(reference.best_moves(s, seat, np.random.default_rng(1000 + len(same))))
        assert x <= set(s.legal_actions())
        same.append(bool(x & y))
        again.append(bool(y & z))
    assert abs(np.mean(same) - np.mean(again)) < 0.15


@pytest.mark.parametrize("game,options", [("happy", {"mode": "block"}), ("happy", {"mode": "draw"}),
                                          ("troshin", {"players": 2}), ("troshin", {"players": 4, "pairs": True})])
def test_the_oracle_read_from_its_parts_is_the_oracle_on_the_state(game, options):
    """``Teacher.oracle_moves`` (the compiled loop's oracle, the position from its arrays)
    labels as ``best_moves`` on the state wherever it answers, and a solver asked both
    ways in turn keeps giving the values of a solver asked on the states alone."""
    from pipslab.envs.game import get_game
    args = TrainArgs(game=game, options=options, guide="oracle", **SMALL)
    parts, whole = Teacher(args.game, args.options, args.guide, args.guide_samples), Teacher(args.game, args.options, args.guide, args.guide_samples)
    rng = np.random.default_rng(7)
    answered = 0
    for i in range(150):
        s = get_game(game).new_state(rng, options)
        for _ in range(int(rng.integers(0, 12))):
            if not s.is_terminal:
                legal = s.legal_actions()
                s.apply(legal[int(rng.integers(len(legal)))])
        if s.is_terminal or len(s.legal_actions()) < 2:
            continue
        p = s.current_player
        got = parts.oracle_moves(s.variant, s.boneyard, list(s.hands), p, s.left, s.right, s.bpos)
        if got is None:
            got = parts.best_moves(s, p, rng)
        else:
            answered += 1
            assert parts.solver.root_move_values(s.variant, s.boneyard, list(s.hands), p, s.left, s.right,
                                                 s.bpos) == whole.solver.move_values(s)
        assert got == whole.best_moves(s, p, rng)
    assert answered > 20


def test_league_draws_are_generator_choice_draws():
    """``League.draw`` is ``rng.choice(len(w), p=w / w.sum())``'s very draw (one uniform
    against the cumulative weights): old runs' hands replay."""
    args, _, league = _setup("happy", {"mode": "block"})
    league.record({"heaviest": [1.0, 1.0], "random": [0.0]})
    w = league.weights()
    for seed in range(500):
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        assert league.draw(a) == league.members[int(b.choice(len(w), p=w / w.sum()))]
        assert a.random() == b.random()
