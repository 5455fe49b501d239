"""``pipslab moves backgammon`` (and the backgammon bench's JSON contract)."""
import json

import pytest

from pipslab.envs.backgammon import Position
from pipslab.experiments.cli import main


def test_moves_json_lists_every_play_with_its_position(capsys):
    assert main(["moves", "backgammon", "--position-id", "4HPwATDgc/ABMA", "--dice", "3", "1", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert len(rows) == 16
    by_move = {r["move"]: r for r in rows}
    assert "8/5 6/5" in by_move
    made = Position.from_id(by_move["8/5 6/5"]["position_id"])
    assert made[5] == 2 and made[8] == 2 and made[6] == 4          # mover still on roll
    assert Position.from_id(by_move["8/5 6/5"]["next_position_id"]) == made.swap()


def test_moves_text_and_pass(capsys):
    closed = Position.from_points({"bar": 1, 13: 5, 8: 4, 6: 5},
                                  {19: 3, 20: 2, 21: 2, 22: 2, 23: 2, 24: 2, 12: 2})
    assert main(["moves", "backgammon", "--position-id", closed.id, "--dice", "6", "5"]) == 0
    out = capsys.readouterr().out
    assert "pass" in out and "0 legal plays" in out


@pytest.mark.parametrize("argv", [
    ["--position-id", "4HPwATDgc/ABM", "--dice", "3", "1"],
    ["--position-id", "4HPwATDgc/ABMA", "--dice", "0", "1"],
])
def test_moves_bad_input_is_one_line_and_exit_2(argv, capsys):
    assert main(["moves", "backgammon"] + argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("pipslab: error:")


def test_moves_help_says_who_is_on_roll(capsys):
    with pytest.raises(SystemExit):
        main(["moves", "--help"])
    out = capsys.readouterr().out
    assert "on roll" in out
