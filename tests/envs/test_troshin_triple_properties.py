"""Property tests over thousands of seeded random games: Troshin for 2, 3 and 4 players,
pairs on and off, single hands and matches; Triple for 2, 3 and 4 players.

Checked at every step: every tile in exactly one place; the legal actions obey the rules
(placement priority, draws, passes, the 5-draw limit, lucky tiles); an illegal action is
refused; a view never changes when hidden tiles move between other hands and the boneyard;
sampled worlds show the observer exactly its view and depend only on it.  At the end:
every game and match ends; points add up (Troshin: the hand's score from the counts, a
match's totals are the sum of its hands; Triple: winnings − penalties is the sum of every
scoring event); the returns are zero-sum."""
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipslab.envs.dominoes.engine import deal, needs_redeal, sample_world
from pipslab.envs.dominoes.match import TroshinMatch, new_match
from pipslab.envs.dominoes.notation import format_position, parse_position
from pipslab.envs.dominoes.tiles import FULL_SET, PIPS, SUIT, tiles_of
from pipslab.envs.dominoes.triple import placement_score, placements_of, scoring_mask
from pipslab.envs.dominoes.variants import (
    TRIPLE_2, TRIPLE_3, TRIPLE_4, TROSHIN_2, TROSHIN_3, TROSHIN_4, TROSHIN_4_PAIRS,
)
from pipslab.envs.errors import IllegalActionError

from dominoes_helpers import accounted, swap_hidden

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow],
                    derandomize=False)
TROSHIN = [TROSHIN_2, TROSHIN_3, TROSHIN_4, TROSHIN_4_PAIRS]
TRIPLE = [TRIPLE_2, TRIPLE_3, TRIPLE_4]


def check_views(s, rng):
    """Hidden tiles never reach a view; sampled worlds are consistent and view-determined."""
    me = s.current_player
    view = s.observe(me)
    for p in range(s.variant.players):
        assert s.observe(p).hand == s.hands[p]
    swapped = swap_hidden(s, me, rng)
    if swapped is not None:
        for p in range(s.variant.players):
            if p == me or swapped.hands[p] == s.hands[p]:
                assert swapped.observe(p) == s.observe(p)
    if rng.random() < 0.15:
        seed = rng.randrange(1 << 30)
        world = sample_world(view, random.Random(seed))
        assert accounted(world) and world.observe(me) == view
        assert world.legal_actions() == s.legal_actions()
        for p in range(s.variant.players):
            if p != me:
                void = view.voids(p)  # passes since its last draw
                for n in range(7):
                    if void >> n & 1:
                        assert not world.hands[p] & SUIT[n], "a pass ruled that number out"
        if swapped is not None:
            again = sample_world(swapped.observe(me), random.Random(seed))
            assert format_position(again) == format_position(world)


def check_illegal_refused(s, rng):
    legal = set(s.legal_actions())
    illegal = [a for a in range(s.variant.num_actions) if a not in legal]
    a = rng.choice(illegal)
    c = s.clone()
    with pytest.raises(IllegalActionError):
        c.apply(a)


# ---------------------------------------------------------------- Troshin
def check_troshin_step(s, rng):
    v = s.variant
    assert accounted(s)
    legal = s.legal_actions()
    assert legal
    placements = s.placements()
    if placements:
        assert legal == placements
    elif s.boneyard_size:
        assert legal == [v.draw_action]
    else:
        assert legal == [v.pass_action]
    check_views(s, rng)
    if rng.random() < 0.2:
        check_illegal_refused(s, rng)
    return legal


def check_troshin_end(s):
    v = s.variant
    counts = s.pips_left()
    teams = v.teams
    totals = s.team_counts()
    tp = s.team_points()
    if s.blocked:
        assert s.passes == v.players and s.boneyard_size == 0
        low = min(totals)
        if totals.count(low) > 1:
            assert s.winner == -1 and tp == [0] * len(tp)
        else:
            win = totals.index(low)
            assert tp[win] == sum(totals) - 2 * low and s.winners() == [p for p in range(v.players) if teams[p] == win]
    else:
        assert s.hands[s.winner] == 0
        win = teams[s.winner]
        assert tp[win] == sum(c for p, c in enumerate(counts) if teams[p] != win)
    for p, c in enumerate(counts):  # a lone 0-0 counts 10; beside others 0
        assert c == (10 if s.hands[p] == 1 else sum(PIPS[t] for t in tiles_of(s.hands[p])))
    assert abs(sum(s.returns())) < 1e-9
    assert s.points() == [tp[teams[p]] for p in range(v.players)]


def play_troshin_hand(v, seed):
    rng = random.Random(seed)
    s = deal(v, rng)
    assert not needs_redeal(v, s.hands)
    steps = 0
    while not s.is_terminal:
        legal = check_troshin_step(s, rng)
        s.apply(rng.choice(legal))
        steps += 1
        assert steps < 300, "every hand ends"
    assert accounted(s)
    check_troshin_end(s)
    return s


@pytest.mark.parametrize("variant", TROSHIN, ids=lambda v: v.name)
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1))
@pytest.mark.slow
def test_troshin_hands(variant, seed):
    for k in range(40):  # 25 x 40 = 1,000 hands per variant
        play_troshin_hand(variant, seed * 97 + k)


@pytest.mark.parametrize("variant", TROSHIN, ids=lambda v: v.name)
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_troshin_matches(variant, seed):
    rng = random.Random(seed)
    for k in range(6):  # 30 matches per variant
        m = new_match(variant, rng)
        hand_totals = []
        steps = 0
        while not m.is_terminal:
            if m.is_chance:   # between hands: the next deal is the match's chance node
                assert m.legal_actions() == [] and m.hand.is_terminal
                m.apply_chance(rng)
                continue
            hand = m.hand
            legal = check_troshin_step(hand, rng) if rng.random() < 0.3 else m.legal_actions()
            assert m.legal_actions() == hand.legal_actions()
            before = m.hand_index
            m.apply(rng.choice(legal))
            if m.hand_index != before:  # the hand just ended: it is the old `hand` object
                assert hand.is_terminal
                check_troshin_end(hand)
                hand_totals.append(tuple(hand.team_points()))
                assert m.last_hand["points"] == hand.points()
            steps += 1
            assert steps < 20000, "every match ends"
        assert hand_totals == m.hand_points
        assert [sum(h[t] for h in hand_totals) for t in range(variant.n_teams)] == m.scores
        assert max(m.scores) >= 100 and sum(1 for x in m.scores if x >= 100) == 1
        assert abs(sum(m.returns())) < 1e-9
        back = parse_position(format_position(m))
        assert isinstance(back, TroshinMatch) and back.scores == m.scores


# ---------------------------------------------------------------- Triple
def play_triple(v, seed):
    rng = random.Random(seed)
    s = deal(v, rng)
    events_sum = [0] * v.players
    steps = 0
    while not s.is_terminal:
        assert accounted(s)
        legal = s.legal_actions()
        assert legal
        me = s.current_player
        placements = s.placements()
        if s.lucky >= 0:
            assert legal == placements and all(a // 4 == s.lucky for a in placements)
            assert all(placement_score(v, s.ends, s.spinner, s.lucky, a & 3) > 0 for a in placements)
        else:
            assert placements == [a for a in legal if a < v.draw_action]
            assert (v.draw_action in legal) == (s.boneyard_size > 0 and s.turn_draws < v.spinner.luck_draws)
            assert (v.pass_action in legal) == (not placements and (s.boneyard_size == 0 or s.turn_draws >= 1))
        assert s.turn_draws <= v.spinner.luck_draws
        # the fast scoring mask agrees with the definition
        if rng.random() < 0.2:
            cand = FULL_SET & ~s.table
            slow = 0
            for t in tiles_of(cand):
                if any(placement_score(v, s.ends, s.spinner, t, a & 3) > 0
                       for a in placements_of(s.ends, s.spinner, 1 << t)):
                    slow |= 1 << t
            assert slow == scoring_mask(v, s.ends, s.spinner, cand)
        check_views(s, rng)
        if rng.random() < 0.1:
            check_illegal_refused(s, rng)
        a = rng.choice(legal)
        if a < v.draw_action:
            events_sum[me] += v.spinner.lucky_draw if s.lucky >= 0 else placement_score(v, s.ends, s.spinner, a // 4, a % 4)
        before_pen = s.penalties[me] + s.winnings[me]
        s.apply(a)
        if a == v.draw_action and s.lucky < 0:
            events_sum[me] -= v.spinner.luck_penalty
            assert s.penalties[me] + s.winnings[me] == before_pen + v.spinner.luck_penalty
        for p in range(v.players):
            assert s.winnings[p] - s.penalties[p] == events_sum[p], "winnings - penalties = the scoring events"
            assert s.winnings[p] >= 0 and s.penalties[p] >= 0
        steps += 1
        assert steps < 1000, "every game ends"
    assert accounted(s)
    if s.blocked:
        assert s.boneyard_size == 0 and s.passes >= v.players
    else:
        assert s.boneyard_size == 0 and not any(s.hands)
    ranks = s.ranks()
    keys = s.ranking_keys()
    for p in range(v.players):
        for q in range(v.players):
            if s.penalties[p] == 0 and s.penalties[q] > 0:
                assert ranks[p] < ranks[q], "no penalty points beats any penalty points"
            if keys[p] == keys[q]:
                assert ranks[p] == ranks[q]
    assert abs(sum(s.returns())) < 1e-9
    back = parse_position(format_position(s))
    assert back.is_terminal and back.winnings == s.winnings and back.penalties == s.penalties
    return s


@pytest.mark.parametrize("variant", TRIPLE, ids=lambda v: v.name)
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1))
@pytest.mark.slow
def test_triple_games(variant, seed):
    for k in range(40):  # 25 x 40 = 1,000 games per player count
        play_triple(variant, seed * 89 + k)

