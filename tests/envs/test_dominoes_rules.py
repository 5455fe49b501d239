"""RULES.md §1-§2: every worked example is a test, plus the opening rule, the action
encoding and the position notation."""
import random

import pytest

from pipslab.envs.dominoes.engine import (
    DominoState, action_name, deal, decode, encode_place, opening_tile, sample_world,
)
from pipslab.envs.dominoes.notation import format_position, parse_position, render
from pipslab.envs.dominoes.tiles import N_TILES, PIPS, TILES, mask_of, tile_name
from pipslab.envs.dominoes.variants import (
    HAPPY_BLOCK, HAPPY_DRAW, TRIPLE_2, TRIPLE_3, TRIPLE_4, TROSHIN_2, TROSHIN_3, TROSHIN_4, TROSHIN_4_PAIRS, happy,
)
from pipslab.envs.errors import IllegalActionError, PipslabError, PositionError

from dominoes_helpers import hand, place, rest_of, t

BLACK, WHITE = 0, 1
# `000`'s shared deal: black opens 6-6; white's seven tiles hold no 6.
BLACK_HAND = "6-6 1-1 1-3 4-5 4-6 5-6 1-6"
WHITE_HAND = "1-2 0-3 3-3 3-5 2-3 0-2 2-2"


def shared_deal(mode: str) -> DominoState:
    boneyard = "2-4 0-6 " + rest_of(BLACK_HAND, WHITE_HAND, "2-4 0-6")
    return parse_position(f"happy-{mode}; turn=0; hands={BLACK_HAND} / {WHITE_HAND}; boneyard={boneyard}")


# ---------------------------------------------------------------- §1 shared rules
def test_set_has_28_tiles_seven_doubles_168_pips():
    assert len(TILES) == N_TILES == 28
    assert sum(1 for a, b in TILES if a == b) == 7
    assert sum(PIPS) == 168
    assert PIPS[t("0-0")] == 0


def test_both_ends_are_different_moves_when_they_show_the_same_number():
    # `000`: 0-6 could go left or right when both ends were 6
    s = parse_position("happy-block; turn=1; ends=6|6; hands=1-1 / 0-6 2-2")
    assert s.legal_actions() == [place(s, "0-6", "left"), place(s, "0-6", "right")]


def test_placement_has_priority_no_pass_no_draw_while_a_placement_exists():
    s = parse_position("happy-draw; turn=0; ends=1|5; hands=1-2 3-3 / 4-4; boneyard=0-0 6-6")
    assert s.legal_actions() == [place(s, "1-2", "left")]
    for action in (HAPPY_DRAW.draw_action, HAPPY_DRAW.pass_action):
        with pytest.raises(IllegalActionError, match="placement has priority"):
            s.apply(action)


# ---------------------------------------------------------------- §2 scenario 1
def test_scenario1_block_mode_white_passes_and_nothing_changes():
    s = shared_deal("block")
    assert s.current_player == BLACK and s.legal_actions() == [place(s, "6-6", "left")]
    s.apply(place(s, "6-6", "left"))
    assert (s.left, s.right) == (6, 6) and s.current_player == WHITE
    assert s.legal_actions() == [HAPPY_BLOCK.pass_action]  # block mode never draws
    s.apply(HAPPY_BLOCK.pass_action)
    assert bin(s.hands[WHITE]).count("1") == 7
    assert s.boneyard_size == 14
    assert (s.left, s.right) == (6, 6)
    assert s.current_player == BLACK and not s.is_terminal


def test_scenario1_draw_mode_white_draws_twice_then_must_place():
    s = shared_deal("draw")
    s.apply(place(s, "6-6", "left"))
    assert s.legal_actions() == [HAPPY_DRAW.draw_action]
    s.apply(HAPPY_DRAW.draw_action)  # 2-4: still no 6
    assert hand(s, WHITE).count("-") == 8 and s.boneyard_size == 13 and s.current_player == WHITE
    assert s.hands[WHITE] >> t("2-4") & 1
    s.apply(HAPPY_DRAW.draw_action)  # 0-6 fits
    assert hand(s, WHITE).count("-") == 9 and s.boneyard_size == 12 and s.current_player == WHITE
    assert s.legal_actions() == [place(s, "0-6", "left"), place(s, "0-6", "right")]
    with pytest.raises(IllegalActionError):
        s.apply(HAPPY_DRAW.draw_action)
    s.apply(place(s, "0-6", "left"))
    assert (s.left, s.right) == (0, 6)
    assert hand(s, WHITE).count("-") == 8
    assert s.current_player == BLACK


# ---------------------------------------------------------------- §2 scenario 2
def test_scenario2_last_boneyard_tiles_do_not_fit_then_blocked_white_wins():
    s = parse_position("happy-draw; turn=0; ends=1|1; hands=4-4 0-6 2-3 2-6 0-5 / 3-5; boneyard=6-6 0-0")
    with pytest.raises(IllegalActionError, match="boneyard is not empty"):
        s.apply(HAPPY_DRAW.pass_action)
    s.apply(HAPPY_DRAW.draw_action)  # 6-6
    assert s.legal_actions() == [HAPPY_DRAW.draw_action]
    s.apply(HAPPY_DRAW.draw_action)  # 0-0: a blank is 0, not any number
    assert s.boneyard_size == 0 and s.current_player == BLACK
    assert s.legal_actions() == [HAPPY_DRAW.pass_action]
    s.apply(HAPPY_DRAW.pass_action)
    assert not s.is_terminal  # an empty boneyard alone does not end the game
    s.apply(HAPPY_DRAW.pass_action)  # white, holding only 3-5, passes
    assert s.is_terminal and s.blocked
    assert s.pips_left() == [44, 8]
    assert s.winner == WHITE and s.returns() == [-1.0, 1.0]


# ---------------------------------------------------------------- §2 scenarios 3-5 (`003`)
def test_scenario3_fewer_tiles_is_not_always_a_win():
    W, B = 0, 1
    s = parse_position("happy-block; turn=0; ends=6|3; hands=4-4 2-3 / 0-1 1-1 2-2")
    s.apply(place(s, "2-3", "right"))
    assert (s.left, s.right) == (6, 2)
    s.apply(place(s, "2-2", "right"))
    s.apply(HAPPY_BLOCK.pass_action)  # white
    assert not s.is_terminal
    s.apply(HAPPY_BLOCK.pass_action)  # black
    assert s.is_terminal and s.blocked
    assert s.pips_left() == [8, 3]
    assert s.winner == B and s.returns()[W] == -1.0


def test_scenario4_equal_sums_are_a_draw_whatever_the_tile_counts():
    s = parse_position("happy-block; turn=0; ends=4|5; hands=1-2 0-6 / 3-6")
    s.apply(HAPPY_BLOCK.pass_action)
    s.apply(HAPPY_BLOCK.pass_action)
    assert s.is_terminal and s.blocked
    assert s.pips_left() == [9, 9]
    assert s.winner == -1 and s.returns() == [0.0, 0.0]
    assert s.result()["draw"] and s.result()["winner"] is None


def test_scenario5_empty_hand_wins_at_once():
    W = 0
    s = parse_position("happy-block; turn=0; ends=1|0; hands=2-2 / 0-0 0-2")
    assert s.legal_actions() == [HAPPY_BLOCK.pass_action]
    s.apply(HAPPY_BLOCK.pass_action)
    s.apply(place(s, "0-2", "right"))
    assert (s.left, s.right) == (1, 2)
    s.apply(place(s, "2-2", "right"))
    assert s.is_terminal and not s.blocked
    assert s.winner == W  # although black's 0-0 has 0 pips
    assert s.pips_left() == [0, 0]


# ---------------------------------------------------------------- §2 scenario 6
def test_scenario6_drill_double_keeps_its_number_open():
    seat0, seat1 = "4-4 1-1 0-2", "1-4 0-3 0-5"
    s = parse_position(f"happy-block; turn=0; hands={seat0} / {seat1}; boneyard={rest_of(seat0, seat1)}")
    s.apply(place(s, "4-4", "left"))
    s.apply(place(s, "1-4", "right"))
    assert (s.left, s.right) == (4, 1)
    s.apply(place(s, "1-1", "right"))
    assert (s.left, s.right) == (4, 1)
    assert s.line == ((4, 4), (4, 1), (1, 1))
    assert "[4|4] [4|1] [1|1]" in render(s)


# ---------------------------------------------------------------- first move
def test_highest_double_dealt_opens_and_must_be_played():
    hands = [mask_of([t("3-3"), t("6-5")]), mask_of([t("5-5"), t("0-1")])]
    assert opening_tile(HAPPY_BLOCK, hands) == (1, t("5-5"))


def test_without_doubles_the_heaviest_tile_opens_higher_half_breaks_ties():
    hands = [mask_of([t("4-5"), t("0-1")]), mask_of([t("3-6"), t("0-2")])]
    assert opening_tile(HAPPY_BLOCK, hands) == (1, t("3-6"))  # 6-3 beats 5-4
    hands = [mask_of([t("5-6")]), mask_of([t("4-6")])]
    assert opening_tile(HAPPY_BLOCK, hands) == (0, t("5-6"))


def test_a_deal_forces_the_opening_tile():
    rng = random.Random(5)
    for _ in range(200):
        s = deal(HAPPY_BLOCK, rng)
        seat, tile = opening_tile(HAPPY_BLOCK, s.hands)
        assert s.current_player == seat
        assert s.legal_actions() == [encode_place(HAPPY_BLOCK, tile, 0)]
        assert s.boneyard_size == 14 and all(bin(h).count("1") == 7 for h in s.hands)


def test_position_with_wrong_opener_is_rejected():
    seat0, seat1 = "4-4 1-1", "6-6 0-3"
    with pytest.raises(PositionError, match="seat 1 opens with 6-6"):
        parse_position(f"happy-block; turn=0; hands={seat0} / {seat1}; boneyard={rest_of(seat0, seat1)}")


# ---------------------------------------------------------------- encoding
def test_action_encoding_round_trips_over_every_id():
    for variant in (HAPPY_BLOCK, HAPPY_DRAW):
        assert variant.num_actions == 58
        seen = set()
        for a in range(variant.num_actions):
            kind, tile, end = decode(variant, a)
            if kind == "place":
                assert encode_place(variant, tile, end) == a
                assert action_name(variant, a) == f"{tile_name(tile)}@{('left', 'right')[end]}"
            seen.add((kind, tile, end))
        assert len(seen) == 58
        assert decode(variant, 56)[0] == "draw" and decode(variant, 57)[0] == "pass"
        with pytest.raises(IllegalActionError):
            decode(variant, 58)


def test_illegal_action_error_names_the_action_and_the_legal_ones():
    s = parse_position("happy-block; turn=0; ends=6|3; hands=4-4 2-3 / 0-1 1-1 2-2")
    with pytest.raises(IllegalActionError) as err:
        s.apply(place(s, "4-4", "left"))
    msg = str(err.value)
    assert "4-4@left" in msg and "does not match" in msg and "2-3@right" in msg
    with pytest.raises(IllegalActionError, match="not in player 0's hand"):
        s.apply(place(s, "0-1", "left"))


# ---------------------------------------------------------------- notation
@pytest.mark.parametrize("variant", [HAPPY_BLOCK, HAPPY_DRAW, TROSHIN_2, TROSHIN_3, TROSHIN_4, TROSHIN_4_PAIRS,
                                     TRIPLE_2, TRIPLE_3, TRIPLE_4], ids=lambda v: v.name)
def test_position_round_trips_through_whole_games(variant):
    rng = random.Random(variant.name)
    for _ in range(20):
        s = deal(variant, rng)
        while True:
            text = format_position(s)
            back = parse_position(text)
            assert format_position(back) == text
            assert back.hands == s.hands and back.boneyard_tiles() == s.boneyard_tiles()
            assert (back.current_player, back.passes, back.table) == (s.current_player, s.passes, s.table)
            assert back.legal_actions() == s.legal_actions()
            assert back.is_terminal == s.is_terminal
            if s.is_terminal:
                assert back.winner == s.winner and back.returns() == s.returns()
                break
            s.apply(rng.choice(s.legal_actions()))


@pytest.mark.parametrize("text, message", [
    ("", "empty position"),
    ("chess; hands=1-1 / 2-2", "unknown domino variant"),
    ("happy-block; turn=0; ends=1|1", "missing field 'hands'"),
    ("happy-block; ends=1|1; hands=1-1", "has 2 seats"),
    ("happy-block; ends=1|1; hands=1-1 / 7-7", "not in the double-six set"),
    ("happy-block; ends=1|1; hands=1-1 / x", "malformed tile"),
    ("happy-block; ends=1|1; hands=1-2 / 1-2", "appears twice"),
    ("happy-block; ends=1|1; hands=1-2 / 3-4; turn=2", "not a seat"),
    ("happy-block; ends=1|1; hands=1-2 / 3-4; turn=one", "not a whole number"),
    ("happy-block; ends=1:1; hands=1-2 / 3-4", "expected two numbers"),
    ("happy-block; ends=1|1; line=1-1; hands=1-2 / 3-4", "not both"),
    ("happy-block; line=1-1 2-2; hands=1-2 / 3-4", "does not join"),
    ("happy-block; line=1-1; hands=1-2 / 3-4", "tiles in no hand"),
    ("happy-block; hands=1-2 / 3-4", "table is empty"),
    ("happy-block; colour=red; hands=1-2 / 3-4", "unknown field"),
    ("happy-block; hands", "not key=value"),
])
def test_malformed_positions_give_clear_errors(text, message):
    with pytest.raises(PositionError, match=message):
        parse_position(text)


def test_unknown_mode_is_a_clear_error():
    with pytest.raises(PipslabError, match="unknown Happy dominoes mode"):
        happy("blitz")


def test_line_notation_gives_ends_and_table():
    rest = rest_of("6-6 6-0", "1-1", "2-2")
    s = parse_position(f"happy-draw; turn=1; line=6-6 6-0; hands=1-1 / 2-2; boneyard={rest}")
    assert (s.left, s.right) == (6, 0)
    assert s.table == mask_of([t("6-6"), t("0-6")])
    assert format_position(s).startswith("happy-draw; turn=1; passes=0; line=6-6 6-0;")


def test_sample_world_of_a_scenario_keeps_known_tiles():
    s = parse_position("happy-block; turn=0; ends=6|3; hands=4-4 2-3 / 0-1 1-1 2-2")
    w = sample_world(s.observe(0), random.Random(0))
    assert w.hands[0] == s.hands[0]
    assert bin(w.hands[1]).count("1") == 3
    assert not w.hands[1] & s.hands[0] and not w.hands[1] & s.table


# ------------------------------------------------------------------ rules data (issue #20)
@pytest.mark.parametrize("name", ["troshin-2", "triple-3"])
def test_clone_copies_every_slot_and_shares_the_history(name):
    from pipslab.envs.dominoes import variants as V
    from pipslab.envs.dominoes.common import Event
    from pipslab.envs.dominoes.engine import deal as deal_
    rng = random.Random(3)
    s = deal_(V.VARIANTS[name], rng)
    for _ in range(5):
        s.apply(rng.choice(s.legal_actions()))
    c = s.clone()
    slots = {n for k in type(s).__mro__ for n in getattr(k, "__slots__", ())}
    for n in slots:
        a, b = getattr(s, n), getattr(c, n)
        assert a == b, n
        assert (a is not b) if isinstance(a, list) else (a is b), n
    assert c.history is s.history and all(type(e) is Event for e in s.events())
    c.apply(c.legal_actions()[0])
    assert s.events() == c.events()[:-1]


def test_variant_derives_n_ends_and_holds_spinner_rules_apart():
    from pipslab.envs.dominoes import variants as V
    assert V.TROSHIN_2.n_ends == 2 and V.TROSHIN_2.spinner is None
    assert V.TRIPLE_2.n_ends == 4 and V.TRIPLE_2.spinner == V.SpinnerRules()
    with pytest.raises(PipslabError):
        V.TROSHIN_2.with_(layout="spinner")
