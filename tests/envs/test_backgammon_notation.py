"""GNU BG Position IDs and move notation."""
import pytest

from pipslab.envs.backgammon import Position, find_play, format_play, legal_plays, parse_play
from pipslab.envs.errors import PipslabError, PositionError


def test_start_position_id():
    assert Position.start().id == "4HPwATDgc/ABMA"
    assert Position.from_id("4HPwATDgc/ABMA") == Position.start()
    assert str(Position.start()) == "4HPwATDgc/ABMA"


def test_position_id_round_trip_and_swap():
    pos = Position.from_points({"bar": 1, 24: 1, 13: 5, 8: 3, 6: 5}, {1: 2, 12: 5, 17: 3, 19: 4, 22: 1})
    assert Position.from_id(pos.id) == pos
    assert pos.swap().swap() == pos
    assert Position.from_id(pos.swap().id) == pos.swap()
    assert pos.pip_count() == pos.swap().opp_pip_count()
    assert pos.bar == pos.swap().opp_bar == 1


@pytest.mark.parametrize("bad", ["", "4HPwATDgc/ABM", "4HPwATDgc/ABMA!", "!!!!!!!!!!!!!!", 42,
                                 "//////////////"])
def test_malformed_position_ids(bad):
    with pytest.raises(PositionError):
        Position.from_id(bad)


def test_impossible_positions_are_refused():
    with pytest.raises(PositionError):
        Position([0] * 25)
    with pytest.raises(PositionError):
        Position([0] + [1] * 16 + [0] * 9)          # 16 checkers
    with pytest.raises(PositionError):
        Position.from_points({5: 2}, {5: 2})


def test_notation_forms():
    start = Position.start()
    assert [p.notation for p in legal_plays(start, (3, 1)) if p.position == find_play(start, (3, 1), "8/5 6/5").position] == ["8/5 6/5"]
    pos = Position.from_points({"bar": 1, 13: 5, 8: 3, 6: 5, 7: 1}, {22: 1, 19: 5, 1: 2, 12: 5, 17: 2})
    play = find_play(pos, (6, 3), "bar/22* 13/7")
    assert play.notation == "bar/22* 13/7"
    assert play.position.opp_bar == 1
    assert "*" in format_play(((13, 6, True),))
    assert format_play(((13, 6, True),)) == "13/7*"
    assert format_play(((6, 6, False),)) == "6/off"
    assert format_play(()) == "pass"
    assert parse_play("24/18*/13 8/5(2)") == [(24, 18), (18, 13), (8, 5), (8, 5)]
    assert parse_play("bar/22 6/off") == [(25, 22), (6, 0)]


def test_find_play_accepts_a_combined_move_and_refuses_illegal_ones():
    start = Position.start()
    assert find_play(start, (6, 5), "24/13").position == find_play(start, (6, 5), "24/18 18/13").position
    with pytest.raises(PipslabError, match="legal"):
        find_play(start, (6, 5), "24/12")
    with pytest.raises(PipslabError):
        parse_play("24-18")
