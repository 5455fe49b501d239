"""RULES §4 (Triple domino for luck, `001`): the four-player game replayed move by move,
and every rule of the spinner, the counting, the luck draws, penalties, end and ranking."""
import random

import pytest

from pipslab.envs.dominoes.engine import action_name, deal, decode, encode_place, sample_world
from pipslab.envs.dominoes.notation import format_position, parse_position, render
from pipslab.envs.dominoes.tiles import count, tile_name
from pipslab.envs.dominoes.triple import TripleState
from pipslab.envs.dominoes.variants import TRIPLE_2, TRIPLE_3, TRIPLE_4, triple
from pipslab.envs.errors import IllegalActionError, PositionError

from dominoes_helpers import rest_of, t

END = {"left": 0, "right": 1, "side1": 2, "side2": 3}
V4 = TRIPLE_4
DRAW, PASS = V4.draw_action, V4.pass_action


def put(tile, end):
    return encode_place(V4, t(tile), END[end])


# `001`'s deal, seats in the text's order.  The text gives Sergey "4:3", but Igor also
# holds 3:4 (and plays it on move 6) while Sergey later plays "5:3", which nobody was
# dealt: Sergey's 4:3 must be 5:3, the only reading under which the game can be replayed.
VLADLEN = "5-2 5-6 4-4 6-3 5-5"
IGOR = "3-3 0-4 1-6 3-4 2-4"
SERGEY = "0-2 3-1 5-3 1-5 2-2"
ANNA = "0-0 4-6 1-4 6-6 0-6"
V, I, S, A = 0, 1, 2, 3


def game_001():
    bone = "1-0 1-1 " + rest_of(VLADLEN, IGOR, SERGEY, ANNA, "1-0 1-1")
    return parse_position(f"triple-4; turn=0; hands={VLADLEN} / {IGOR} / {SERGEY} / {ANNA}; boneyard={bone}")


def test_variants_deal_6_or_5_and_the_action_space_has_four_ends():
    rng = random.Random(0)
    for v, size in ((TRIPLE_2, 6), (TRIPLE_3, 6), (TRIPLE_4, 5)):
        s = deal(v, rng)
        assert isinstance(s, TripleState) and [count(h) for h in s.hands] == [size] * v.players
        assert s.boneyard_size == 28 - size * v.players
        assert v.num_actions == 114 and v.draw_action == 112 and v.pass_action == 113
    assert triple(3) is TRIPLE_3
    # the first player is chosen by lot and may open with any tile
    seats = {deal(TRIPLE_3, rng).current_player for _ in range(60)}
    assert seats == {0, 1, 2}
    s = deal(TRIPLE_2, rng)
    placements = [a for a in s.legal_actions() if a < 112]
    assert len(placements) == 6 and all(a % 4 == 0 for a in placements)


def test_action_encoding_round_trips_with_the_side_lines():
    seen = set()
    for a in range(V4.num_actions):
        kind, tile, end = decode(V4, a)
        if kind == "place":
            assert encode_place(V4, tile, end) == a
            assert action_name(V4, a) == f"{tile_name(tile)}@{('left', 'right', 'side1', 'side2')[end]}"
        seen.add((kind, tile, end))
    assert len(seen) == 114 and action_name(V4, 112) == "draw" and action_name(V4, 113) == "pass"


def test_scenario_the_four_player_game_of_001():
    s = game_001()
    assert s.current_player == V
    scores = []

    def play(seat, tile, end, expect):
        assert s.current_player == seat
        assert s.placement_score(t(tile), END[end]) == expect
        before = s.winnings[seat] - s.penalties[seat]
        s.apply(put(tile, end))
        assert s.winnings[seat] - s.penalties[seat] - before == expect, (tile, end)
        scores.append((tile, expect))

    play(V, "5-6", "left", 0)                 # opens: 5 left, 6 right
    assert (s.ends[0], s.ends[1]) == (5, 6)
    play(I, "6-1", "right", 0)                # 5 + 1 = 6, but only two ends: nothing
    play(S, "1-3", "right", 0)
    # Anna has nothing to play: she must draw (no pass yet), draws 1:0 and 1:1, then stops
    assert s.current_player == A and s.legal_actions() == [DRAW]
    with pytest.raises(IllegalActionError, match="draw at least once"):
        s.apply(PASS)
    s.apply(DRAW)
    assert s.hands[A] >> t("0-1") & 1 and s.penalties[A] == 5
    assert s.legal_actions() == [DRAW, PASS]
    s.apply(DRAW)
    assert s.hands[A] >> t("1-1") & 1 and s.penalties[A] == 10
    s.apply(PASS)
    assert count(s.hands[A]) == 7
    play(V, "5-5", "left", 8)                 # the spinner: 8 whatever the count
    assert s.spinner == 5 and s.open_ends() == 2
    # Igor: 3:3 or 3:4, neither scores; he plays 3:4
    assert s.placement_score(t("3-3"), END["right"]) == 0
    play(I, "3-4", "right", 0)                # 5 + 4 = 9 but two ends: nothing
    play(S, "5-3", "side1", 5)                # 5 + 3 + 4 = 12
    assert s.count() == 12 and s.open_ends() == 3
    play(A, "4-1", "right", 5)                # count 9: cancels 5 of her 10 penalty points
    assert s.count() == 9 and s.penalties[A] == 5 and s.winnings[A] == 0
    play(V, "5-2", "left", 5)                 # the spinner's far end
    play(I, "3-3", "side1", 7)                # a double making 6: 5 + 2
    play(S, "2-2", "left", 7)
    play(A, "0-1", "right", 0)                # pointless
    play(V, "3-6", "side1", 0)
    play(I, "2-4", "left", 0)
    play(S, "5-1", "side2", 0)                # the spinner's other side
    assert s.open_ends() == 4
    play(A, "6-6", "side1", 0)
    assert s.count() == 4 + 0 + 6 + 1
    assert s.winnings == [13, 7, 12, 0] and s.penalties == [0, 0, 0, 5]
    assert s.line == ((4, 2), (2, 2), (2, 5), (5, 5), (5, 6), (6, 1), (1, 3), (3, 4), (4, 1), (1, 0))
    assert s.arms == (((5, 3), (3, 3), (3, 6), (6, 6)), ((5, 1),))
    assert s.hands[V] == 1 << t("4-4")        # "Vladlen then holds only 4:4"
    text = format_position(s)
    assert "line=4-2 2-2 2-5 5-5* 5-6" in text and "arms=5-3 3-3 3-6 6-6 / 5-1" in text
    assert format_position(parse_position(text)) == text
    assert "count 11" in render(s)


def test_opening_double_is_the_spinner_and_the_8_goes_to_nobody():
    hands = "3-3 1-2 / 0-1 0-2"
    s = parse_position(f"triple-2; turn=0; hands={hands}; boneyard={rest_of(*hands.replace('/', ' ').split())}")
    s.apply(encode_place(TRIPLE_2, t("3-3"), 0))
    assert s.spinner == 3 and s.winnings == [0, 0]
    assert s.ends == [3, 3, -1, -1]
    # later doubles open no new lines
    s2 = parse_position("triple-2; turn=0; ends=3|1|-|-; spinner=3; hands=1-1 0-5 / 0-3 2-4; boneyard=0-0")
    assert s2.spinner == 3 and sorted(s2.legal_actions()) == [encode_place(TRIPLE_2, t("1-1"), 1), 112]
    s2.apply(encode_place(TRIPLE_2, t("1-1"), 1))
    assert s2.spinner == 3 and s2.ends == [3, 1, -1, -1]
    # the spinner's side lines take tiles carrying its number
    assert encode_place(TRIPLE_2, t("0-3"), 2) in s2.legal_actions()
    assert encode_place(TRIPLE_2, t("0-3"), 3) in s2.legal_actions()


def test_the_three_ends_rule_and_the_count():
    # ends 5|1 (two ends): 6 is a multiple of 3 but nothing scores
    s = parse_position("triple-2; turn=0; ends=5|1|-|-; hands=1-4 / 2-3; boneyard=0-0")
    assert s.placement_score(t("1-4"), 1) == 0
    # with the spinner and a side line: three ends
    s = parse_position("triple-2; turn=0; ends=5|4|3|-; spinner=5; hands=4-2 1-1 / 2-3; boneyard=0-0")
    assert s.count() == 5 + 4 + 3 and s.open_ends() == 3
    assert s.placement_score(t("2-4"), 1) == 0            # 5 + 2 + 3 = 10
    s = parse_position("triple-2; turn=0; ends=5|4|3|-; spinner=5; hands=4-1 3-3 / 2-3; boneyard=0-0")
    assert s.placement_score(t("1-4"), 1) == 5            # 5 + 1 + 3 = 9
    assert s.placement_score(t("3-3"), 2) == 7            # a double: 5 + 4 + 3 = 12


def test_draws_for_luck_limit_five_and_penalties():
    bone = "0-0 0-1 0-2 0-3 0-4 0-6"
    s = parse_position(f"triple-2; turn=0; ends=5|6|-|-; spinner=5; hands=6-2 / 2-2; boneyard={bone}")
    # a placement exists (6-2) yet drawing for luck is allowed; no pass while placing is possible
    assert s.legal_actions() == [encode_place(TRIPLE_2, t("2-6"), 1), 112]
    with pytest.raises(IllegalActionError, match="pass only without a legal placement"):
        s.apply(113)
    for k in range(5):
        s.apply(112)
    assert s.penalties[0] > 0 and s.turn_draws == 5
    assert 112 not in s.legal_actions()           # five draws this turn: no more
    with pytest.raises(IllegalActionError, match="already 5 draws"):
        s.apply(112)


def test_a_lucky_draw_scores_10_is_placed_at_once_and_ends_the_turn():
    # ends 5 | 4 | side 3 (count 12); next boneyard tile 4-1 makes 9 on the right: lucky
    s = parse_position("triple-2; turn=0; ends=5|4|3|-; spinner=5; hands=0-0 / 2-2; "
                       "boneyard=1-4 0-1; penalties=5 / 0")
    s.apply(112)
    assert s.lucky == t("1-4") and s.penalties == [5, 0]
    assert s.legal_actions() == [encode_place(TRIPLE_2, t("1-4"), 1)]   # only its scoring end
    assert "lucky=1-4" in format_position(s)
    assert parse_position(format_position(s)).legal_actions() == s.legal_actions()
    s.apply(encode_place(TRIPLE_2, t("1-4"), 1))
    assert s.winnings == [5, 0] and s.penalties == [0, 0]   # 10: 5 cancel the penalty, 5 won
    assert s.current_player == 1 and s.turn_draws == 0


def test_empty_hand_keeps_playing_by_drawing_and_the_game_ends():
    s = parse_position("triple-2; turn=0; ends=5|4|3|-; spinner=5; hands=- / 6-6; boneyard=0-1")
    assert s.legal_actions() == [112]
    s.apply(112)                  # 0-1 gives no placement: penalty; the boneyard is empty
    assert s.penalties[0] == 5 and s.legal_actions() == [113]
    s.apply(113)
    assert not s.is_terminal
    s.apply(113)                  # seat 1 has no placement either: a full round of passes
    assert s.is_terminal and s.blocked
    # every hand and the boneyard empty also ends the game
    s = parse_position("triple-2; turn=0; ends=5|4|3|-; spinner=5; hands=4-6 / -")
    s.apply(encode_place(TRIPLE_2, t("4-6"), 1))
    assert s.is_terminal and not s.blocked


def test_passes_with_a_boneyard_do_not_end_the_game():
    s = parse_position("triple-2; turn=0; ends=5|4|3|-; spinner=5; hands=0-1 / 0-2; boneyard=0-0 0-6 1-1")
    for _ in range(2):
        s.apply(112)
        s.apply(113)
    assert not s.is_terminal and s.passes == 2


def test_ranking_zero_penalty_rule_and_rank_based_zero_sum_rewards():
    s = parse_position("triple-3; turn=0; passes=2; ends=5|4|3|-; spinner=5; hands=0-1 / 0-2 / 1-2; "
                       "winnings=0 / 30 / 12; penalties=0 / 5 / 0")
    s.apply(TRIPLE_3.pass_action)
    assert s.is_terminal
    # seat 0 (no penalties, 0 won) and seat 2 (no penalties, 12) beat seat 1 (30 - 5)
    assert s.ranks() == [2, 3, 1] and s.winners() == [2]
    assert s.returns() == [-0.5, -0.5, 1.0] and sum(s.returns()) == 0
    r = s.result()
    assert r["winnings"] == [0, 30, 12] and r["penalties"] == [0, 5, 0] and r["points"] == [0, 25, 12]
    assert r["settlement"] == [0, 0, 0 + 25 - 12]
    # equal at the top: the winners share +1
    s = parse_position("triple-3; turn=0; passes=2; ends=5|4|3|-; spinner=5; hands=0-1 / 0-2 / 1-2; "
                       "winnings=7 / 7 / 0; penalties=0 / 0 / 5")
    s.apply(TRIPLE_3.pass_action)
    assert s.winners() == [0, 1] and s.returns() == [0.5, 0.5, -1.0]


def test_sample_world_of_triple_keeps_what_a_pass_proves():
    s = parse_position("triple-2; turn=1; ends=5|4|3|-; spinner=5; hands=0-1 0-2 / 6-6; boneyard=1-1 2-2 1-2")
    s.apply(112)   # seat 1 draws 1-1 (no placement)
    s.apply(113)   # and passes: it holds no 5, 4 or 3
    view = s.observe(0)
    assert view.voids(1) == (1 << 5) | (1 << 4) | (1 << 3)
    for seed in range(100):
        w = sample_world(view, random.Random(seed))
        assert w.observe(0) == view
        from pipslab.envs.dominoes.tiles import SUIT
        assert not w.hands[1] & (SUIT[5] | SUIT[4] | SUIT[3])


@pytest.mark.parametrize("text, message", [
    ("triple-2; line=5-5 5-4; hands=0-1 / 0-2", "no spinner is marked"),
    ("triple-2; line=5-4 4-4*; arms=4-1 / 3-3; hands=0-1 / 0-2", "does not join the spinner"),
    ("triple-2; line=5-4*; hands=0-1 / 0-2", "not a double"),
    ("triple-2; line=5-4; arms=4-1 / -; hands=0-1 / 0-2", "no spinner is marked"),
    ("triple-2; ends=5|4|3; hands=0-1 / 0-2", "LEFT|RIGHT|SIDE1|SIDE2"),
    ("triple-2; ends=5|4|3|-; spinner=-; hands=0-1 / 0-2", "spinner is '-'"),
    ("triple-2; ends=5|4|-|-; hands=0-1 / 0-2; winnings=1 / 2 / 3", "expected 2 numbers"),
    ("triple-2; ends=5|4|-|-; hands=0-1 / 0-2; draws=6", "draws=6"),
    ("triple-2; ends=5|4|-|-; hands=0-1 / 0-2; lucky=3-3", "must be in the hand"),
    ("triple-2; ends=5|4|-|-; hands=0-1 / 0-2; match=1 / 2", "unknown field 'match'"),
])
def test_malformed_triple_positions_give_clear_errors(text, message):
    with pytest.raises(PositionError, match=message):
        parse_position(text)


def test_ends_form_round_trips():
    s = parse_position("triple-2; turn=1; ends=2|0|6|-; spinner=5; hands=0-1 / 3-3; winnings=8 / 0")
    assert s.ends == [2, 0, 6, -1] and s.spinner == 5
    assert encode_place(TRIPLE_2, t("3-5"), 3) not in s.legal_actions()  # 3-5 is on the table
    text = format_position(s)
    assert "ends=2|0|6|-; spinner=5" in text and format_position(parse_position(text)) == text


def test_sample_world_while_another_seat_must_place_a_lucky_tile():
    s = parse_position("triple-2; turn=0; ends=5|4|3|-; spinner=5; hands=0-0 / 2-2 6-6; boneyard=1-4 0-1")
    s.apply(112)                                   # seat 0 draws the lucky 1-4
    view = s.observe(1)
    assert view.lucky == -2 and s.observe(0).lucky == t("1-4")
    for seed in range(30):
        w = sample_world(view, random.Random(seed))
        assert w.observe(1) == view and w.lucky >= 0 and w.hands[0] >> w.lucky & 1
        assert w.legal_actions() and all(a // 4 == w.lucky for a in w.legal_actions())
