"""The compiled backgammon engine (``fast``) against the pure-Python reference (``moves``):
legal plays on 10,000+ positions and dice (as sets of positions, and as the reference's
exact ``Play`` lists), the state after each play and its result, the checker-move mask,
whole random games' result shares, and pubeval rollouts."""
import math

import numpy as np
import pytest

from pipslab.envs.backgammon import BackgammonState, Position, fast
from pipslab.envs.backgammon.moves import (apply_step, dice_to_play, legal_checker_moves, legal_plays, max_dice,
                                           play_table)
from pipslab.envs.errors import PipslabError

from backgammon_helpers import turn_positions


def _odd_positions(n, seed):
    """Positions random games rarely reach: many checkers on the bar, crowded home boards,
    bear-offs with gaps, few checkers left (each side 1-15 checkers, anywhere)."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        b = [0] * 26
        mine, theirs = int(rng.integers(1, 16)), int(rng.integers(1, 16))
        home = rng.random() < 0.4                 # all of mine in my home board
        for _ in range(mine):
            p = int(rng.integers(1, 7)) if home else int(rng.choice([25] + list(range(1, 25))))
            if p == 25 or b[p] >= 0:
                b[p] += 1
        for _ in range(theirs):
            p = int(rng.choice([0] + list(range(1, 25)) + list(range(1, 7))))
            if p == 0 or b[p] <= 0:
                b[p] -= 1
        if any(v > 0 for v in b):
            out.append(Position(b))
    return out


def _cases():
    positions = turn_positions(7000, 11) + _odd_positions(3500, 12)
    rng = np.random.default_rng(13)
    return [(p, (int(a), int(b))) for p, (a, b) in zip(positions, rng.integers(1, 7, size=(len(positions), 2)))]


def _result(position) -> int:
    """The reference's points for the player who made the play leading to ``position``
    (the game state's ``points``), 0 when the game goes on."""
    if position.borne_off != 15:
        return 0
    return BackgammonState(position, 0).points()


@pytest.mark.slow
def test_compiled_plays_equal_the_reference_on_10000_positions():
    cases = _cases()
    assert len(cases) >= 10_000
    for pos, roll in cases:
        dice = dice_to_play(roll)
        ref = legal_plays(pos, dice)
        # the afterstates as a set, the Play list exactly (steps, positions, order)
        rows = fast.afterstates(pos, *roll)
        assert set(map(tuple, rows.tolist())) == {p.position for p in ref}, (pos.id, roll)
        assert len(rows) == len(ref)
        assert fast.legal_plays(pos, dice) == ref, (pos.id, roll)
        # the state after each play: its steps lead there; the result of the play
        rows, won = fast.afterstates_won(np.array(pos, dtype=np.int8), *roll)
        results = {tuple(r): int(w) for r, w in zip(rows.tolist(), won.tolist())}
        replies, won2 = fast.replies_won(np.array(pos.swap(), dtype=np.int8), *roll)
        assert {tuple(r): int(w) for r, w in zip(replies.tolist(), won2.tolist())} == results
        for play in ref:
            b = list(pos)
            for s, d, hit in play.steps:
                assert apply_step(b, s, d) == hit
            assert tuple(b) == play.position
            assert results[play.position] == _result(play.position), (pos.id, roll, play.notation)
        # the checker-move mask and the dice a maximal play uses
        need = max_dice(pos, dice)
        mask = sorted((s - 1) * 6 + d - 1 for s, d in legal_checker_moves(pos, dice, need))
        assert fast.checker_actions(pos, dice) == (mask, need), (pos.id, roll)


def test_compiled_plays_of_the_dice_left_mid_turn():
    for pos in turn_positions(400, 5) + _odd_positions(300, 6):
        for dice in [(a,) for a in range(1, 7)] + [(a,) * k for a in range(1, 7) for k in (2, 3)] + [(2, 5), (6, 1)]:
            assert fast.legal_plays(pos, dice) == legal_plays(pos, dice), (pos.id, dice)
            need = max_dice(pos, dice)
            mask = sorted((s - 1) * 6 + d - 1 for s, d in legal_checker_moves(pos, dice, need))
            assert fast.checker_actions(pos, tuple(sorted(dice, reverse=True))) == (mask, need)
    start = Position.start()
    assert set(play_table(start, (4, 4, 4, 4))) == set(map(tuple, fast.afterstates(start, 4, 4).tolist()))


def test_compiled_front_doors_take_every_board_type():
    pos = Position.from_id("4HPwATDgc/ABMA")
    want = sorted(map(tuple, fast.afterstates(pos, 5, 2).tolist()))
    for board in (np.array(pos, dtype=np.int8), np.array(pos), np.array(pos, dtype=np.int32), list(pos),
                  np.array(pos[::-1], dtype=np.int8)[::-1]):
        assert sorted(map(tuple, fast.afterstates(board, 5, 2).tolist())) == want
        assert fast.legal_plays(board, (5, 2)) == legal_plays(pos, (5, 2))
    with pytest.raises(PipslabError):
        fast.legal_plays(pos, (7, 1))


def _reference_random_game(rng):
    """A game of uniformly random whole plays through the reference: ``(winner, points)``,
    the winner 0 when he made the first play (the compiled games' seat 0 always does)."""
    state = BackgammonState(Position.start(), 0, opening=True)
    state.apply_chance(rng)
    first = state.current_player
    plays = legal_plays(state.position, state.dice)
    play = plays[int(rng.integers(len(plays)))]
    for action in state.play_actions(play):
        state.apply(action)
    while not state.is_terminal:
        state.apply_chance(rng)
        plays = legal_plays(state.position, state.dice)
        if not plays:
            state.apply_play(None)
            continue
        play = plays[int(rng.integers(len(plays)))]
        for action in state.play_actions(play):
            state.apply(action)
    return int(state.winner != first), state.points()


@pytest.mark.slow
def test_compiled_random_games_have_the_reference_result_shares():
    games = fast.random_games(7, 6000)
    assert set(games[:, 0]) <= {0, 1} and set(games[:, 1]) <= {1, 2, 3} and (games[:, 2] > 10).all()
    rng = np.random.default_rng(8)
    ref = np.array([_reference_random_game(rng) for _ in range(800)])
    for name, mine, theirs in (("the first mover wins", games[:, 0] == 0, ref[:, 0] == 0),
                               ("gammons or backgammons", games[:, 1] >= 2, ref[:, 1] >= 2),
                               ("backgammons", games[:, 1] == 3, ref[:, 1] == 3)):
        p = (mine.sum() + theirs.sum()) / (len(mine) + len(theirs))
        se = math.sqrt(p * (1 - p) * (1 / len(mine) + 1 / len(theirs)))
        assert abs(mine.mean() - theirs.mean()) <= 4 * se, (name, mine.mean(), theirs.mean())


def test_compiled_random_games_are_seeded():
    assert np.array_equal(fast.random_games(3, 20), fast.random_games(3, 20))
    assert not np.array_equal(fast.random_games(3, 20), fast.random_games(4, 20))
    winner, turns = fast.random_game(5)
    assert (winner, turns) == fast.random_game(5)


@pytest.mark.slow
def test_compiled_pubeval_rollouts_equal_play_out():
    from pipslab.agents.backgammon import pubeval_scores
    from pipslab.agents.backgammon_value import play_out
    from pipslab.agents.backgammon_evaluators import pubeval_play_outs
    boards = np.array(turn_positions(120, 21) + [Position.start()], dtype=np.int64)
    for seed in range(3):
        got = pubeval_play_outs(boards, [seed, 1, 2])
        want = [play_out(b, pubeval_scores, np.random.default_rng([seed, 1, 2])) for b in boards]
        assert got.tolist() == want
