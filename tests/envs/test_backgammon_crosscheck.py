"""Move generation against GNU Backgammon: a committed fixture and a live check."""
import pytest

from pipslab.envs.backgammon import Position, legal_plays
from pipslab.envs.backgammon.moves import dice_to_play

from backgammon_helpers import fixture_cases


@pytest.mark.slow
def test_fixture_matches_gnubg_results():
    cases = fixture_cases()
    assert len(cases) >= 2000
    tags = {t for c in cases for t in c["tags"]}
    assert {"partial_roll", "larger_die_forced", "no_move"} <= tags
    bad = []
    for case in cases:
        pos = Position.from_id(case["position_id"])
        ours = sorted(p.position.id for p in legal_plays(pos, dice_to_play(case["dice"])))
        if ours != case["results"]:
            bad.append((case["position_id"], case["dice"]))
    assert bad == []


@pytest.mark.peers
@pytest.mark.slow
def test_live_against_gnubg_nn():
    import gnubg_nn  # noqa: F401  (installed by the [bench] extra; fail, never skip, without it)

    from pipslab.experiments.crosscheck_backgammon import run_crosscheck
    report = run_crosscheck(positions=120, seed=7, fixture=None, fixture_cases=0, verbose=False)
    assert report["cases"] >= 2000
    assert report["mismatches"] == 0, report["examples"]


@pytest.mark.peers
def test_position_ids_agree_with_gnubg_nn():
    import gnubg_nn

    for case in fixture_cases()[:300]:
        pid = case["position_id"]
        board = gnubg_nn.board_from_position_id(pid)
        assert Position.from_id(pid).to_gnubg() == [list(s) for s in board]
        assert gnubg_nn.position_id(Position.from_id(pid).to_gnubg()) == pid
