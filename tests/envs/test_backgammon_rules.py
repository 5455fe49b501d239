"""RULES §5 (backgammon) as tests: every scenario of source 002 plus the standard rules."""
import numpy as np
import pytest

from pipslab.envs.backgammon import (PASS, BackgammonState, Position, encode_action, legal_checker_moves,
                             legal_plays, new_game)
from pipslab.envs.backgammon.game import CHANCE_OUTCOMES
from pipslab.envs.errors import IllegalActionError

ALL_ROLLS = [roll for roll, _ in CHANCE_OUTCOMES]


def results(position, roll):
    return {p.position for p in legal_plays(position, _dice(roll))}


def _dice(roll):
    a, b = roll
    return (a,) * 4 if a == b else (max(a, b), min(a, b))


def after(position, *moves):
    """The position after (from, to) checker moves (to 0 = off), hits included."""
    b = list(position)
    for a, t in moves:
        b[a] -= 1
        if t >= 1:
            if b[t] == -1:
                b[t], b[0] = 1, b[0] - 1
            else:
                b[t] += 1
    return Position(b)


# Source 002, position 9: O holds 19, 20 and 23; X (on roll, the source's numbering) has a
# checker on the bar.
POS9 = Position.from_points({"bar": 1, 24: 1, 13: 5, 8: 3, 6: 5},
                            {19: 2, 20: 2, 23: 2, 12: 5, 16: 3, 1: 1})


def test_pos9_roll_53_must_enter_with_the_3_then_any_5():
    assert legal_checker_moves(POS9, (5, 3)) == [(25, 3)]
    plays = legal_plays(POS9, (5, 3))
    assert plays
    for play in plays:
        assert play.steps[0][:2] == (25, 3)            # bar/22 first
        assert play.steps[1][1] == 5                   # then a 5
    fives = {play.steps[1][0] for play in plays}
    assert fives == {22, 13, 8, 6}                     # any legal 5, the entered checker included
    assert {p.notation for p in plays} >= {"bar/22 22/17", "bar/22 13/8", "bar/22 6/1*"}


def test_pos9_roll_52_no_move_and_the_turn_passes():
    assert legal_plays(POS9, (5, 2)) == []
    state = BackgammonState(POS9, 0, (5, 2))
    assert state.legal_actions() == [PASS]
    state.apply(PASS)
    assert state.current_player == 1 and state.is_chance
    assert state.position_from(0) == POS9                # nothing moved


def test_pos8c_o_on_bar_cannot_enter_by_the_sum():
    # X holds 1, 2 and 6; O is on the bar and rolls 2-1: 3 is open but the sum never enters.
    x_view = Position.from_points({1: 2, 2: 2, 6: 2, 13: 5, 8: 4}, {"bar": 1, 19: 5, 12: 5, 17: 4})
    o_view = x_view.swap()                                 # O on roll
    assert o_view.bar == 1
    assert legal_plays(o_view, (2, 1)) == []
    assert [(p.steps[0][0], p.steps[0][1]) for p in legal_plays(o_view, (3, 1))][0] == (25, 3)
    state = BackgammonState(o_view, 1, (2, 1))
    assert state.legal_actions() == [PASS]


def test_pos10_closed_board_x_cannot_move_whatever_the_roll():
    pos = Position.from_points({"bar": 1, 13: 5, 8: 4, 6: 5},
                               {19: 3, 20: 2, 21: 2, 22: 2, 23: 2, 24: 2, 12: 2})
    for roll in ALL_ROLLS:
        assert legal_plays(pos, _dice(roll)) == [], roll
    # O keeps rolling: X passes every turn until a point opens
    state = BackgammonState(pos, 0, (6, 6))
    rng = np.random.default_rng(1)
    state.apply(PASS)
    assert state.current_player == 1
    for _ in range(3):                                     # O plays, X passes again
        state.apply_chance(rng)
        assert state.current_player == 1
        while state.current_player == 1 and not state.is_chance:
            state.apply(state.legal_actions()[0])
        state.apply_chance(rng)
        if state.position.bar and all(state.position[25 - d] < -1 for d in range(1, 7)):
            assert state.legal_actions() == [PASS]
            state.apply(PASS)
        else:
            break


POS11 = Position.from_points({6: 3, 5: 3, 4: 3, 3: 2, 2: 2, 1: 2}, {19: 5, 20: 5, 21: 5})


def test_pos11_bear_off_64():
    got = results(POS11, (6, 4))
    assert got == {
        after(POS11, (6, 0), (4, 0)),     # 11A: 6 off from the 6, 4 off from the 4
        after(POS11, (6, 0), (6, 2)),     # 11B: the 4 moves 6 -> 2
        after(POS11, (6, 0), (5, 1)),     # 11C: the 4 moves 5 -> 1
    }


def test_pos11_bear_off_21():
    got = results(POS11, (2, 1))
    assert after(POS11, (2, 0), (1, 0)) in got            # off from 2 and from 1
    assert after(POS11, (3, 1), (1, 0)) in got            # one checker from 3: 3/1/off
    assert after(POS11, (3, 2), (2, 0)) == after(POS11, (3, 1), (1, 0))   # 3/2/off = 3/1/off
    assert all(len(p.steps) == 2 for p in legal_plays(POS11, (2, 1)))       # both dice, one at a time


def test_pos12_die_used_in_full_where_possible():
    pos = Position.from_points({5: 2, 3: 2}, {19: 5, 20: 5, 21: 5})
    plays = legal_plays(pos, (6, 4))
    assert [p.position for p in plays] == [after(pos, (5, 0), (5, 1))]
    # the 4 cannot bear off from the 3 while a checker stands on the 5
    assert after(pos, (5, 0), (3, 0)) not in {p.position for p in plays}


# ---------------------------------------------------------------- standard rules

def test_doubles_are_played_four_times():
    for play in legal_plays(Position.start(), (3, 3, 3, 3)):
        assert len(play.steps) == 4
    state = BackgammonState(Position.start(), 0, (3, 3), opening=False)
    n = 0
    while state.current_player == 0:
        state.apply(state.legal_actions()[0])
        n += 1
    assert n == 4


def test_both_dice_must_be_used_when_possible():
    # X: one checker on 24 (the others on 1-2, unable to move); O holds 13.  6-5: 24/18 or
    # 24/19 -- both continue into the closed 13, so only one die can be played: the 6.
    pos = Position.from_points({24: 1, 1: 7, 2: 7}, {13: 2, 20: 3, 21: 3, 22: 3, 23: 4})
    plays = legal_plays(pos, (6, 5))
    assert [p.notation for p in plays] == ["24/18"]
    assert legal_checker_moves(pos, (6, 5)) == [(24, 6)]
    # if the 6 is blocked, the smaller die is played
    pos2 = Position.from_points({24: 1, 1: 7, 2: 7}, {13: 2, 18: 2, 20: 3, 21: 3, 22: 3, 23: 2})
    assert [p.notation for p in legal_plays(pos2, (6, 5))] == ["24/19"]


def test_both_dice_rule_excludes_a_play_that_strands_the_other_die():
    # X: one checker on 9, the rest on 1; O holds 8 and 2.  6-1: the 1 cannot be played
    # first (9/8 is closed; 1/off is not allowed while the 9 is out), but after 9/3 every
    # checker is home and the 1 bears off from 1 (3/2 is closed).  Both dice must be
    # used, so the only play is 9/3 1/off and the only first checker move is 9/3.
    pos = Position.from_points({9: 1, 1: 14}, {8: 2, 2: 2, 20: 5, 21: 6})
    plays = legal_plays(pos, (6, 1))
    assert plays and all(len(p.steps) == 2 for p in plays)
    assert {p.notation for p in plays} == {"9/3 1/off"}
    assert legal_checker_moves(pos, (6, 1)) == [(9, 6)]


def test_hitting_sends_the_blot_to_the_bar_and_is_not_compulsory():
    pos = Position.from_points({13: 5, 8: 3, 6: 5, 24: 2}, {7: 1, 12: 5, 17: 3, 19: 5, 1: 1})
    got = results(pos, (6, 1))
    hit = after(pos, (13, 7), (8, 7))
    assert hit in got and hit.opp_bar == 1 and hit[7] == 2
    assert any(p.opp_bar == 0 for p in got)                # not hitting is legal too


def test_a_checker_on_the_bar_must_enter_before_anything_else():
    pos = Position.from_points({"bar": 2, 13: 5, 8: 3, 6: 5}, {12: 5, 17: 3, 19: 5, 1: 2})
    for roll in ALL_ROLLS:
        for play in legal_plays(pos, _dice(roll)):
            bar_steps = [s for s, _, _ in play.steps if s == 25]
            assert len(bar_steps) == min(2, len(play.steps))
            assert all(s == 25 for s, _, _ in play.steps[:2])


def test_a_hit_checker_stops_the_bear_off():
    # X bearing off gets hit: with a checker on the bar no checker may bear off
    pos = Position.from_points({"bar": 1, 6: 2, 5: 2, 4: 2, 3: 2, 2: 2, 1: 2}, {24: 2, 23: 2, 19: 5, 20: 5})
    for roll in ALL_ROLLS:
        for play in legal_plays(pos, _dice(roll)):
            assert all(s - d > 0 for s, d, _ in play.steps), (roll, play)
    # entered but not home yet: still no bearing off
    pos2 = Position.from_points({22: 1, 6: 2, 5: 2, 4: 2, 3: 2, 2: 2, 1: 2}, {24: 2, 23: 2, 19: 5, 20: 5})
    for play in legal_plays(pos2, (2, 1)):
        assert all(s - d > 0 for s, d, _ in play.steps)


def test_bear_off_with_a_larger_die_only_from_the_highest_point():
    pos = Position.from_points({4: 1, 2: 1}, {19: 5, 20: 5, 21: 5})
    assert results(pos, (6, 5)) == {after(pos, (4, 0), (2, 0))}
    assert [m for m in legal_checker_moves(pos, (6, 5))] == [(4, 6), (4, 5)]


# ---------------------------------------------------------------- scoring

def _finish(x_points, o_spec, gammons=True):
    pos = Position.from_points(x_points, o_spec)
    state = BackgammonState(pos, 0, (6, 5), gammons=gammons)
    while not state.is_terminal:
        state.apply(state.legal_actions()[0])
    return state


def test_single_gammon_backgammon_and_the_gammon_switch():
    single = _finish({1: 1}, {19: 5, 20: 5, 21: 4})        # O bore off one
    assert single.returns() == [1.0, -1.0] and single.result()["points"] == 1
    gammon = _finish({1: 1}, {19: 5, 20: 5, 21: 5})
    assert gammon.returns() == [2.0, -2.0]
    r = gammon.result()
    assert r == {"winner": 0, "points": 2, "pips_left": [0, 6 * 5 + 5 * 5 + 4 * 5],
                 "gammon": True, "backgammon": False}
    bg_home = _finish({1: 1}, {19: 5, 20: 5, 6: 5})         # O checker in X's home board
    assert bg_home.returns() == [3.0, -3.0] and bg_home.result()["backgammon"]
    bg_bar = _finish({1: 1}, {"bar": 1, 19: 5, 20: 5, 21: 4})
    assert bg_bar.result()["points"] == 3
    off = _finish({1: 1}, {19: 5, 20: 5, 6: 5}, gammons=False)
    assert off.returns() == [1.0, -1.0] and not off.result()["gammon"]


def test_o_winning_scores_for_seat_1():
    x_view = Position.from_points({7: 5, 8: 5, 9: 5}, {24: 1})
    state = BackgammonState(x_view.swap(), 1, (6, 5))
    while not state.is_terminal:
        state.apply(state.legal_actions()[0])
    assert state.winner == 1 and state.returns() == [-2.0, 2.0]


# ---------------------------------------------------------------- dice and the opening

def test_opening_roll_higher_die_plays_both_numbers():
    for seed in range(30):
        state = new_game()
        assert state.is_chance and state.opening
        x, o = state.apply_chance(np.random.default_rng(seed))
        assert x != o
        assert state.current_player == (0 if x > o else 1)
        assert state.roll == (x, o) and not state.is_chance


class _TieFirst:
    """A stand-in Generator that ties twice before rolling 2 (X) and 5 (O)."""

    def __init__(self):
        self.rolls = [np.array([3, 3]), np.array([6, 6]), np.array([2, 5])]

    def integers(self, low, high, size=None):
        return self.rolls.pop(0)


def test_opening_ties_roll_again():
    state = new_game()
    assert state.apply_chance(_TieFirst()) == (2, 5)
    assert state.current_player == 1 and state.dice == (5, 2)


def test_dice_distribution_all_21_rolls_sixes_included():
    rng = np.random.default_rng(123)
    counts = {}
    state = BackgammonState(Position.start(), 0, opening=False)
    n = 36_000
    for _ in range(n):
        s = state.clone()
        a, b = s.apply_chance(rng)
        key = (max(a, b), min(a, b))
        counts[key] = counts.get(key, 0) + 1
    assert set(counts) == set(ALL_ROLLS) and len(counts) == 21
    assert counts[(6, 6)] > 0 and any(6 in k for k in counts)
    for roll, p in CHANCE_OUTCOMES:
        expected = p * n
        assert abs(counts[roll] - expected) < 5 * np.sqrt(expected), (roll, counts[roll], expected)
    assert abs(sum(p for _, p in CHANCE_OUTCOMES) - 1) < 1e-12


def test_illegal_action_names_the_action_and_the_legal_ones():
    state = BackgammonState(Position.start(), 0, (3, 1), opening=False)
    with pytest.raises(IllegalActionError) as err:
        state.apply(encode_action(24, 6))
    assert "138" in str(err.value) and "24/21" in str(err.value)
    with pytest.raises(IllegalActionError):
        state.apply(PASS)
