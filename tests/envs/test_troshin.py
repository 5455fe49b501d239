"""RULES §3 (Troshin's draw game, `004`): every worked example is a test, plus the deal,
redeal, opening, drawing, fish, counting and scoring rules, pairs and match play."""
import random

import pytest

from pipslab.envs.dominoes.engine import deal, needs_redeal, opening_tile
from pipslab.envs.dominoes.match import TroshinMatch, new_match
from pipslab.envs.dominoes.notation import format_position, parse_position
from pipslab.envs.dominoes.tiles import count, mask_of
from pipslab.envs.dominoes.variants import (
    TROSHIN_2, TROSHIN_3, TROSHIN_4, TROSHIN_4_PAIRS, TROSHIN_120, troshin,
)
from pipslab.envs.errors import PipslabError

from dominoes_helpers import place, rest_of, t


def hand_of(text):
    return mask_of(t(x) for x in text.split())


# ---------------------------------------------------------------- variants as data
def test_variants_deal_7_or_5_and_keep_the_rest_as_boneyard():
    rng = random.Random(0)
    for v, size, bone in ((TROSHIN_2, 7, 14), (TROSHIN_3, 5, 13), (TROSHIN_4, 5, 8), (TROSHIN_4_PAIRS, 5, 8)):
        s = deal(v, rng)
        assert [count(h) for h in s.hands] == [size] * v.players
        assert s.boneyard_size == bone
    assert troshin(4, pairs=True) is TROSHIN_4_PAIRS
    assert TROSHIN_4_PAIRS.teams == (0, 1, 0, 1) and TROSHIN_4.teams == (0, 1, 2, 3)
    with pytest.raises(PipslabError, match="pairs need 4 players"):
        troshin(3, pairs=True)
    with pytest.raises(PipslabError, match="2, 3 or 4 players"):
        troshin(5)
    # the 120-point deal: all 28 tiles dealt, 7 each, 0-0 opens
    assert TROSHIN_120.hand_size == 7 and TROSHIN_120.opening == t("0-0")
    s = deal(TROSHIN_120, rng)
    assert s.boneyard_size == 0 and s.legal_actions() == [place(s, "0-0", "left")]


# ---------------------------------------------------------------- scenario 1: 120 points
P1 = "0-0 0-1 0-2 0-3 1-4 1-5 1-6"
P4 = "1-1 1-2 1-3 0-4 0-5 0-6 6-6"      # and one tile without 0 or 1


def test_scenario1_the_120_point_deal():
    rest = rest_of(P1, P4).split()
    p2, p3 = " ".join(rest[:7]), " ".join(rest[7:])
    s = parse_position(f"troshin-120; turn=0; hands={P1} / {p2} / {p3} / {P4}")
    assert s.boneyard_size == 0
    assert s.legal_actions() == [place(s, "0-0", "left")]
    s.apply(place(s, "0-0", "left"))
    answers = [("0-4", "4-1"), ("1-1", "1-0"), ("0-5", "5-1"), ("1-2", "2-0"), ("0-6", "6-1"), ("1-3", "3-0")]
    pass_ = TROSHIN_120.pass_action
    for opened, answer in answers:
        for seat in (1, 2):  # players 2 and 3 hold no 0 and no 1: they pass every turn
            assert s.current_player == seat and s.legal_actions() == [pass_]
            s.apply(pass_)
        assert s.current_player == 3
        s.apply(place(s, opened, "left"))
        assert s.current_player == 0
        s.apply(place(s, answer, "left"))
        assert s.right == 0 and s.left in (0, 1)
    assert s.is_terminal and not s.blocked and s.winner == 0
    assert bin(s.table).count("1") == 13
    assert [count(h) for h in s.hands] == [0, 7, 7, 1]
    assert s.points() == [120, 0, 0, 0]  # 168 - 48
    assert sum(s.pips_left()) == 168 - 48
    assert s.result()["points"][0] == 120 and s.returns()[0] == 1.0


# ---------------------------------------------------------------- scenario 2: redeal
def test_scenario2_redeal_triggers():
    five_doubles = hand_of("0-0 1-1 2-2 3-3 4-4")
    assert needs_redeal(TROSHIN_4, [five_doubles, 0, 0, 0])
    assert not needs_redeal(TROSHIN_4, [hand_of("0-0 1-1 2-2 3-3 4-5"), 0, 0, 0])
    six_threes = hand_of("0-3 1-3 2-3 3-3 3-4 3-5 6-6")
    assert needs_redeal(TROSHIN_2, [hand_of("0-0 0-1 0-2 0-4 0-5 1-1 1-2"), six_threes])
    assert not needs_redeal(TROSHIN_2, [hand_of("0-3 1-3 2-3 3-3 3-4 5-5 6-6"), 0])
    # the Happy variants never redeal
    from pipslab.envs.dominoes.variants import HAPPY_BLOCK
    assert not needs_redeal(HAPPY_BLOCK, [five_doubles, 0])


def test_deal_redeals_until_no_hand_calls_for_it():
    class Stacked(random.Random):
        """Shuffles into a five-doubles hand first, then randomly."""
        calls = 0

        def shuffle(self, x):
            Stacked.calls += 1
            if Stacked.calls == 1:
                x.sort(key=lambda tile: (tile not in (0, 7, 13, 18, 22), tile))
            else:
                super().shuffle(x)

    s = deal(TROSHIN_4, Stacked(1))
    assert Stacked.calls >= 2 and not needs_redeal(TROSHIN_4, s.hands)
    rng = random.Random(2)
    for _ in range(300):
        assert not needs_redeal(TROSHIN_2, deal(TROSHIN_2, rng).hands)


# ---------------------------------------------------------------- scenario 3: lone 0-0
def test_scenario3_lone_blank_double_counts_10_beside_others_0():
    s = parse_position("troshin-2; ends=5|5; hands=0-0 / 1-2")
    assert s.hand_count(0) == 10 and s.pips_left() == [10, 3]
    s2 = parse_position("troshin-2; ends=5|5; hands=0-0 1-2 / 3-4")
    assert s2.hand_count(0) == 3


def test_going_out_scores_a_lone_blank_double_as_10():
    # seat 0 goes out with 5-6; seat 1 holds only 0-0: seat 0 scores 10
    s = parse_position("troshin-2; turn=0; ends=5|4; hands=5-6 / 0-0")
    s.apply(place(s, "5-6", "left"))
    assert s.is_terminal and s.winner == 0 and s.points() == [10, 0]


# ---------------------------------------------------------------- first move, drawing, fish
def test_opening_6_6_then_highest_double_then_heaviest_tile():
    assert opening_tile(TROSHIN_3, [hand_of("1-1 5-5"), hand_of("6-6 0-1"), hand_of("4-4")]) == (1, t("6-6"))
    assert opening_tile(TROSHIN_3, [hand_of("1-1 5-6"), hand_of("3-3 0-1"), hand_of("4-5")]) == (1, t("3-3"))
    assert opening_tile(TROSHIN_3, [hand_of("1-2 4-5"), hand_of("3-6 0-1"), hand_of("5-6")]) == (2, t("5-6"))


def test_draw_as_many_as_needed_then_pass_only_with_no_boneyard():
    s = parse_position("troshin-3; turn=1; ends=6|6; hands=1-1 / 0-1 0-2 / 2-3; boneyard=1-2 3-4 2-6 0-0")
    draw = TROSHIN_3.draw_action
    assert s.legal_actions() == [draw]
    s.apply(draw)   # 1-2
    s.apply(draw)   # 3-4
    assert s.legal_actions() == [draw] and s.current_player == 1
    s.apply(draw)   # 2-6 fits
    assert s.legal_actions() == [place(s, "2-6", "left"), place(s, "2-6", "right")]
    s.apply(place(s, "2-6", "right"))
    assert s.current_player == 2 and s.boneyard_size == 1


def test_fish_after_a_full_round_of_passes_with_an_empty_boneyard():
    s = parse_position("troshin-3; turn=0; ends=6|6; hands=1-2 / 0-3 / 2-2")
    for seat in range(3):
        assert not s.is_terminal
        s.apply(TROSHIN_3.pass_action)
    assert s.is_terminal and s.blocked
    # counts 3, 3, 4: the lowest is shared by two players: a draw, nobody scores
    assert s.winner == -1 and s.points() == [0, 0, 0] and s.returns() == [0.0] * 3


def test_blocked_hand_scores_the_others_counts_minus_own():
    s = parse_position("troshin-3; turn=0; passes=2; ends=6|6; hands=1-2 / 0-4 / 2-5")
    s.apply(TROSHIN_3.pass_action)
    assert s.is_terminal and s.blocked and s.winner == 0
    assert s.points() == [(4 + 7) - 3, 0, 0]


def test_pairs_went_out_scores_the_two_opponents_only():
    # seat 1 goes out; its partner 3's tiles count for nobody; team 1 scores 0's + 2's counts
    s = parse_position("troshin-4-pairs; turn=1; ends=5|4; hands=3-3 / 4-6 / 1-2 / 5-5 6-6")
    s.apply(place(s, "4-6", "right"))
    assert s.is_terminal and s.winners() == [1, 3]
    assert s.team_points() == [0, 6 + 3]
    assert s.points() == [0, 9, 0, 9]
    assert s.returns() == [-1.0, 1.0, -1.0, 1.0]


def test_pairs_blocked_compares_pair_totals():
    s = parse_position("troshin-4-pairs; turn=0; passes=3; ends=6|6; hands=0-1 / 2-2 / 4-5 / 0-0 1-1")
    s.apply(TROSHIN_4_PAIRS.pass_action)
    # team 0: 1 + 9 = 10; team 1: 4 + 2 = 6 (0-0 beside 1-1 counts 0): team 1 wins 10 - 6
    assert s.is_terminal and s.blocked and s.winners() == [1, 3]
    assert s.team_points() == [0, 4]
    s = parse_position("troshin-4-pairs; turn=0; passes=3; ends=6|6; hands=0-1 / 1-1 / 1-2 / 0-2")
    s.apply(TROSHIN_4_PAIRS.pass_action)
    assert s.winner == -1 and s.team_points() == [0, 0]  # 4 against 4: a draw


# ---------------------------------------------------------------- match to 100
def test_match_plays_hands_until_a_side_reaches_100():
    rng = random.Random(4)
    for v in (TROSHIN_2, TROSHIN_3, TROSHIN_4, TROSHIN_4_PAIRS):
        m = new_match(v, rng)
        assert isinstance(m, TroshinMatch) and not m.is_chance
        while not m.is_terminal:
            if m.is_chance:
                m.apply_chance(rng)
                continue
            legal = m.legal_actions()
            m.apply(legal[rng.randrange(len(legal))])
        r = m.result()
        assert max(m.scores) >= 100 and m.scores[m.match_winner] == max(m.scores)
        assert [sum(h[k] for h in m.hand_points) for k in range(v.n_teams)] == list(m.scores)
        assert sorted(r["winners"]) == [p for p in range(v.players) if v.teams[p] == m.match_winner]
        assert abs(sum(m.returns())) < 1e-9 and r["hands"] == len(m.hand_points)


def test_match_position_round_trips_with_the_score():
    text = "troshin-4-pairs; match=45 / 80; hand=6; turn=1; passes=0; ends=5|4; hands=3-3 / 4-6 / 1-2 / 5-5 6-6"
    m = parse_position(text)
    assert isinstance(m, TroshinMatch) and m.scores == [45, 80] and m.hand_index == 6
    assert parse_position(format_position(m)).scores == [45, 80]
    m.apply(place(m.hand, "4-6", "right"))   # team 1 scores 9: 89, the match goes on
    assert m.scores == [45, 89] and not m.is_terminal and m.hand_index == 7
    assert m.last_hand["points"] == [0, 9, 0, 9]


def test_match_ends_when_the_winning_hand_reaches_100():
    m = parse_position("troshin-2; match=95 / 10; turn=0; ends=5|4; hands=5-6 / 0-0")
    m.apply(place(m.hand, "5-6", "left"))
    assert m.is_terminal and m.scores == [105, 10] and m.match_winner == 0
    assert m.returns() == [1.0, -1.0]


@pytest.mark.parametrize("text, message", [
    ("troshin-4-pairs; match=1 / 2 / 3; ends=5|4; hands=3-3 / 4-6 / 1-2 / 5-5", "expected 2 numbers"),
    ("troshin-2; match=10 / x; ends=5|4; hands=3-3 / 4-6", "not a whole number"),
    ("troshin-2; hand=3; ends=5|4; hands=3-3 / 4-6", "give 'match' too"),
    ("troshin-2; match=100 / 10; ends=5|4; hands=3-3 / 4-6", "hand is not finished"),
    ("troshin-2; match=5 / 10; target=0; ends=5|4; hands=3-3 / 4-6", "target at least 1"),
    ("troshin-3; ends=5|4; hands=3-3 / 4-6", "has 3 seats"),
    ("troshin-2; ends=5|4; hands=3-3 / 4-6; winnings=1 / 2", "unknown field 'winnings'"),
    ("happy-block; match=1 / 2; ends=5|4; hands=3-3 / 4-6", "unknown field 'match'"),
])
def test_malformed_troshin_positions_give_clear_errors(text, message):
    from pipslab.envs.errors import PositionError
    with pytest.raises(PositionError, match=message):
        parse_position(text)


def test_render_shows_pairs_points_and_the_match_score():
    from pipslab.envs.dominoes.notation import render
    s = parse_position("troshin-4-pairs; turn=1; ends=5|4; hands=3-3 / 4-6 / 1-2 / 5-5 6-6")
    s.apply(place(s, "4-6", "right"))
    text = render(s)
    assert "pair 1+3 wins" in text and "points: [0, 9, 0, 9]" in text
    m = parse_position("troshin-4-pairs; match=45 / 80; hand=6; turn=1; ends=5|4; hands=3-3 / 4-6 / 1-2 / 5-5 6-6")
    assert render(m).startswith("match to 100, hand 7: pair 0+2 45, pair 1+3 80")


def test_sample_world_of_a_match_view_is_a_match_with_the_same_score():
    from pipslab.envs.dominoes.engine import sample_world
    m = parse_position("troshin-3; match=40 / 75 / 10; hand=4; turn=0; ends=5|4; "
                       "hands=5-6 3-3 / 0-0 1-1 / 2-2 0-1; boneyard=1-2 0-2")
    view = m.observe(0)
    assert view.match.scores == (40, 75, 10) and view.match.hand_index == 4
    w = sample_world(view, random.Random(1))
    assert isinstance(w, TroshinMatch) and w.scores == [40, 75, 10]
    assert w.observe(0) == view and w.legal_actions() == m.legal_actions()
    rng = random.Random(2)
    while not w.is_terminal:                       # the sampled world's later hands are its chance nodes
        if w.is_chance:
            w.apply_chance(rng)
        else:
            w.apply(w.legal_actions()[0])
    assert max(w.scores) >= 100 and m.scores == [40, 75, 10]


# ---------------------------------------------------------------- the match's chance node
HAND_OVER = "troshin-4-pairs; match=45 / 80; hand=6; turn=1; passes=0; ends=5|4; hands=3-3 / 4-6 / 1-2 / 5-5 6-6"


def _between_hands():
    """A match whose hand just ended (team 1 scored 9: 45 / 89), the match going on."""
    m = parse_position(HAND_OVER)
    m.apply(place(m.hand, "4-6", "right"))
    return m


def test_a_match_between_hands_is_a_chance_node_as_backgammon_before_a_roll():
    from pipslab.envs.errors import IllegalActionError
    m = _between_hands()
    assert m.is_chance and not m.is_terminal and m.hand.is_terminal
    assert m.legal_actions() == [] and m.returns() == [0.0] * 4 and m.winners() == []
    assert m.scores == [45, 89] and m.hand_index == 7 and m.hand_points[-1] == (0, 9)
    assert m.current_player in range(4)          # a seat, as backgammon's player about to roll
    for action in (0, TROSHIN_4_PAIRS.draw_action, TROSHIN_4_PAIRS.pass_action):
        with pytest.raises(IllegalActionError, match="chance node"):
            m.apply(action)
    view = m.observe(0)
    assert view.match.scores == (45, 89) and not view.is_terminal
    # a hand that is on is no chance node: apply_chance is refused there, as in backgammon
    fresh = new_match(TROSHIN_2, random.Random(0))
    with pytest.raises(IllegalActionError, match="not a chance node"):
        fresh.apply_chance(random.Random(0))
    with pytest.raises(IllegalActionError, match="no chance node"):
        fresh.hand.apply_chance(random.Random(0))


def test_apply_chance_deals_a_fresh_hand_keeping_the_scores_and_the_opener_leads():
    import numpy as np
    for rng in (random.Random(3), np.random.default_rng(3)):
        m = _between_hands()
        hand = m.apply_chance(rng)
        assert m.hand is hand and not m.is_chance and not m.is_terminal
        assert m.scores == [45, 89] and m.hand_index == 7 and len(m.hand_points) == 1
        assert hand.table == 0 and hand.left < 0 and hand.events() == ()
        assert sorted(count(h) for h in hand.hands) == [5] * 4 and hand.boneyard_size == 8
        assert not needs_redeal(TROSHIN_4_PAIRS, hand.hands)
        seat, tile = opening_tile(TROSHIN_4_PAIRS, hand.hands)   # RULES §3: 6-6, else the highest double, ...
        assert m.current_player == seat and m.legal_actions() == [tile * 2]
        assert m.observe(seat).match.scores == (45, 89)


def test_the_same_rng_deals_the_same_hand_and_the_state_keeps_no_generator():
    import numpy as np
    a, b = _between_hands(), _between_hands()
    a.apply_chance(np.random.default_rng(11))
    b.apply_chance(np.random.default_rng(11))
    assert a.hand.hands == b.hand.hands and a.hand.boneyard == b.hand.boneyard
    c = _between_hands()
    c.apply_chance(np.random.default_rng(12))
    assert c.hand.hands != a.hand.hands
    assert not any(isinstance(getattr(a, k, None), (random.Random, np.random.Generator))
                   for k in TroshinMatch.__slots__)
    # a clone at the chance node deals from whatever generator it is given
    d = _between_hands()
    twin = d.clone()
    assert twin.is_chance
    d.apply_chance(random.Random(5))
    twin.apply_chance(random.Random(5))
    assert d.hand.hands == twin.hand.hands


def test_a_chance_node_position_round_trips():
    m = _between_hands()
    text = format_position(m)
    assert "match=45 / 80; hand=6" in text        # the finished hand with the scores before it
    back = parse_position(text)
    assert back.is_chance and back.scores == [45, 89] and back.hand_index == 7
    assert format_position(back) == text
    from pipslab.envs.dominoes.notation import render
    assert "hand 7: pair 0+2 45, pair 1+3 89; the next hand is to deal" in render(m)


def test_the_loop_deals_each_hand_from_the_deal_seed_alone():
    """Hand ``k`` of a match is a function of the deal seed: other agents (other moves,
    other lengths of every hand) meet the same deals, hand by hand."""
    from pipslab.agents.registry import make_agent
    from pipslab.envs.game import get_game
    from pipslab.experiments.games import play_game
    spec, options = get_game("troshin"), {"players": 2, "match": True}
    deals = []

    def dealt(names, agent_seed):
        seen = []

        def on_move(state, player, action):
            if state.hand.table == 0 and not state.hand.events():   # a hand's first move
                seen.append(tuple(state.hand.hands))
        agents = [make_agent(n, "troshin") for n in names]
        play_game(spec, options, agents, [7, 0, 3], agent_seed, on_move)
        return seen
    deals = [dealt(("random", "random"), [7, 1, 0]), dealt(("heaviest", "suits"), [7, 1, 9])]
    n = min(map(len, deals))
    assert n >= 2 and deals[0][:n] == deals[1][:n]
