"""Properties of the backgammon engine over random games and positions."""
import numpy as np
import pytest

from pipslab.envs.backgammon import (NUM_ACTIONS, PASS, BackgammonState, Position, action_name, decode_action,
                             encode_action, legal_checker_moves, legal_plays, new_game)
from pipslab.envs.backgammon.game import CHANCE_OUTCOMES, play_uniformly
from pipslab.envs.backgammon.moves import apply_step, dice_to_play
from pipslab.envs.errors import PipslabError

from backgammon_helpers import turn_positions

ROLLS = [r for r, _ in CHANCE_OUTCOMES]


def test_action_encoding_round_trips_over_every_id():
    seen = set()
    for action in range(NUM_ACTIONS):
        move = decode_action(action)
        if action == PASS:
            assert move is None and action_name(action) == "pass"
            continue
        s, d = move
        assert 1 <= s <= 25 and 1 <= d <= 6
        assert encode_action(s, d) == action
        seen.add((s, d))
        assert action_name(action)
    assert len(seen) == NUM_ACTIONS - 1 == 150
    with pytest.raises(PipslabError):
        decode_action(NUM_ACTIONS)
    with pytest.raises(PipslabError):
        encode_action(26, 1)


def _invariants(state):
    p = state.position
    mine = sum(v for v in p if v > 0) + p.borne_off
    theirs = sum(-v for v in p if v < 0) + p.opp_borne_off
    assert mine == 15 and theirs == 15
    assert p.bar >= 0 and p.opp_bar >= 0
    pips = state.pip_counts()
    assert pips[state.current_player] == sum(i * v for i, v in enumerate(p) if v > 0)
    assert sum(pips) == p.pip_count() + p.opp_pip_count()
    assert Position.from_id(p.id) == p


def _views_agree(state):
    """Both seats see the whole game (nothing is hidden in backgammon): the seat on roll
    its board as the state holds it, the other seat the same board turned round, and both
    the same dice of the same turn."""
    p = state.current_player
    mine, his = state.observe(p), state.observe(1 - p)
    assert (mine.player, his.player) == (p, 1 - p) and mine.current_player == his.current_player == p
    assert mine.position == state.position and his.position == state.position.swap()
    assert mine.turn_start == his.turn_start.swap()
    assert mine.dice == his.dice == state.dice and mine.roll == his.roll == state.roll
    assert mine.moves_left == his.moves_left and mine.is_chance == his.is_chance == state.is_chance


def test_random_games_keep_the_invariants_and_end():
    rng = np.random.default_rng(11)
    for _ in range(25):
        state = new_game()
        steps = 0
        while not state.is_terminal:
            steps += 1
            assert steps < 20_000
            _invariants(state)
            if state.is_chance:
                assert state.legal_actions() == []
                state.apply_chance(rng)
                continue
            legal = state.legal_actions()
            assert legal, "a non-terminal decision node always has an action (PASS at least)"
            assert all(0 <= a < NUM_ACTIONS for a in legal)
            _views_agree(state)
            state.apply(legal[int(rng.integers(len(legal)))])
        r = state.returns()
        assert r[0] == -r[1] and abs(r[0]) in (1.0, 2.0, 3.0)
        res = state.result()
        assert res["winner"] in (0, 1) and res["points"] == abs(r[0])
        assert res["pips_left"][res["winner"]] == 0


def _all_paths(state, out, depth=0):
    """Follow every legal action sequence of the turn; collect the end positions."""
    for a in state.legal_actions():
        s = state.clone()
        s.apply(a)
        if s.current_player != state.current_player or s.is_terminal or s.is_chance:
            # turn over: position seen from the mover = swap back unless terminal
            out.add(s.position if s.is_terminal else s.position.swap())
        else:
            _all_paths(s, out, depth + 1)


@pytest.mark.parametrize("seed", [1, 2])
def test_checker_by_checker_paths_reach_exactly_the_whole_plays(seed):
    rng = np.random.default_rng(seed)
    for pos in turn_positions(60, seed):
        for roll in [ROLLS[int(i)] for i in rng.choice(21, size=4, replace=False)] + [(6, 5)]:
            plays = legal_plays(pos, dice_to_play(roll))
            state = BackgammonState(pos, 0, roll, opening=False)
            if not plays:
                assert state.legal_actions() == [PASS]
                continue
            ends = set()
            _all_paths(state, ends)
            assert ends == {p.position for p in plays}, (pos.id, roll)
            # and every play's own steps are a legal action path
            for play in plays[:5]:
                s = state.clone()
                for a in s.play_actions(play):
                    s.apply(a)
                got = s.position if s.is_terminal else s.position.swap()
                assert got == play.position


def test_mask_equals_legal_checker_moves():
    for pos in turn_positions(40, 5):
        for roll in ROLLS[::3]:
            state = BackgammonState(pos, 0, roll, opening=False)
            moves = legal_checker_moves(pos, dice_to_play(roll))
            expected = sorted(encode_action(s, d) for s, d in moves) or [PASS]
            assert state.legal_actions() == expected
            for s, d in moves:
                b = list(pos)
                apply_step(b, s, d)          # every offered move is a real checker move
                assert sum(v for v in b if v > 0) <= 15


def test_clone_is_independent_and_cheap():
    rng = np.random.default_rng(0)
    state = new_game(rng)
    copy = state.clone()
    copy.apply(copy.legal_actions()[0])
    assert state.position != copy.position or state.dice != copy.dice
    assert state.history != copy.history


def test_state_from_position_id_and_dice():
    state = BackgammonState.from_position_id("4HPwATDgc/ABMA", (3, 1), player=1)
    assert state.current_player == 1 and state.dice == (3, 1) and not state.is_chance
    assert len(state.legal_plays()) == 16
    chance = BackgammonState.from_position_id("4HPwATDgc/ABMA")
    assert chance.is_chance and not chance.opening
    with pytest.raises(PipslabError):
        BackgammonState.from_position_id("4HPwATDgc/ABMA", (0, 7))
    with pytest.raises(PipslabError):
        BackgammonState.from_position_id("4HPwATDgc/ABMA", (3,))


def test_seeded_games_replay_exactly():
    def play(seed):
        rng = np.random.default_rng(seed)
        state = play_uniformly(new_game(), rng)
        return state.history, state.returns()

    assert play(5) == play(5)
    assert play(5) != play(6)


def test_sample_world_rebuilds_the_state_from_any_view():
    from pipslab.envs.backgammon import sample_world

    rng = np.random.default_rng(4)
    state = new_game()
    checked = 0
    while not state.is_terminal:
        for player in (0, 1):
            world = sample_world(state.observe(player), rng)
            assert world.position == state.position and world.current_player == state.current_player
            assert world.legal_actions() == state.legal_actions()
            assert world.is_chance == state.is_chance and world.opening == state.opening
            checked += 1
        if state.is_chance:
            state.apply_chance(rng)
        else:
            legal = state.legal_actions()
            state.apply(legal[int(rng.integers(len(legal)))])
    world = sample_world(state.observe(1))
    assert world.is_terminal and world.returns() == state.returns()
    assert checked > 50


def test_gnubg_agent_missing_package_is_a_clear_error(monkeypatch):
    import sys

    from pipslab.agents import make_agent
    from pipslab.envs.errors import PipslabError

    monkeypatch.setitem(sys.modules, "gnubg_nn", None)
    with pytest.raises(PipslabError, match="gnubg-nn"):
        make_agent("gnubg", "backgammon")


def test_apply_play_makes_a_whole_play_and_refuses_others():
    from pipslab.envs.errors import IllegalActionError

    state = BackgammonState(Position.start(), 0, (6, 4), opening=False)
    plays = state.legal_plays()
    other = legal_plays(Position.start(), (5, 2))[0]
    with pytest.raises(IllegalActionError):
        state.clone().apply_play(other)
    s = state.clone()
    s.apply_play(plays[3])
    assert s.is_chance and s.current_player == 1 and s.position.swap() == plays[3].position
    closed = Position.from_points({"bar": 1, 13: 5, 8: 4, 6: 5},
                                  {19: 3, 20: 2, 21: 2, 22: 2, 23: 2, 24: 2, 12: 2})
    stuck = BackgammonState(closed, 0, (6, 5))
    assert stuck.legal_plays() == []
    stuck.apply_play(None)
    assert stuck.current_player == 1


@pytest.mark.parametrize("bits", [np.random.PCG64, np.random.MT19937, np.random.Philox, np.random.SFC64])
def test_dice_are_the_numbers_of_integers_size_2(bits):
    # apply_chance draws the two dice as two scalars: the same numbers as one
    # rng.integers(1, 7, size=2), with other draws from the same generator in between
    ours, ref = np.random.Generator(bits(7)), np.random.Generator(bits(7))
    state = BackgammonState(Position.start(), 0, opening=False)
    for i in range(3000):
        assert state.clone().apply_chance(ours) == tuple(ref.integers(1, 7, size=2).tolist())
        n = 1 + i % 40
        assert ours.integers(n) == ref.integers(n)
        if i % 7 == 0:
            assert ours.random() == ref.random()
