"""Hypothesis: arbitrary legal-looking positions round-trip and generate consistent plays."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipslab.envs.backgammon import Position, fast, legal_checker_moves, legal_plays
from pipslab.envs.backgammon.moves import dice_to_play, max_dice


@st.composite
def positions(draw):
    b = [0] * 26
    mine = draw(st.integers(1, 15))
    theirs = draw(st.integers(1, 15))
    for _ in range(mine):
        p = draw(st.sampled_from([25] + list(range(1, 25)) * 3))
        if p == 25 or b[p] >= 0:
            b[p] += 1
    for _ in range(theirs):
        p = draw(st.sampled_from([0] + list(range(1, 25)) * 3))
        if p == 0 or b[p] <= 0:
            b[p] -= 1
    if not any(v > 0 for v in b):
        b[1] = 1 if b[1] >= 0 else b[1]
        if b[1] <= 0:
            b[25] = 1
    return Position(b)


rolls = st.tuples(st.integers(1, 6), st.integers(1, 6))


@settings(max_examples=300, deadline=None)
@given(positions(), rolls)
@pytest.mark.slow
def test_plays_keep_checkers_and_agree_everywhere(pos, roll):
    assert Position.from_id(pos.id) == pos and pos.swap().swap() == pos
    dice = dice_to_play(roll)
    plays = legal_plays(pos, dice)
    need = max_dice(pos, dice)
    assert all(len(p.steps) == need for p in plays)
    mine = sum(v for v in pos[1:] if v > 0)
    for p in plays:
        after = p.position
        off = sum(1 for s, d, _ in p.steps if s - d <= 0)
        assert sum(v for v in after[1:] if v > 0) == mine - off
        assert sum(-v for v in after[:25] if v < 0) == sum(-v for v in pos[:25] if v < 0)
        assert after.pip_count() == pos.pip_count() - sum(min(s, d) for s, d, _ in p.steps)
    firsts = {(s, d) for s, d in legal_checker_moves(pos, dice)}
    assert {p.steps[0][:2] for p in plays} <= firsts
    assert set(map(tuple, fast.afterstates(pos, *roll).tolist())) == {p.position for p in plays}
    assert len(plays) == len({p.position for p in plays})
