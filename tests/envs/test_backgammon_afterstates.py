"""pipslab/Backgammon-v1 inside a turn (issue 14): the observation says which dice are left
to play and how many moves (it is Markov: two states with the same observation have the
same legal moves), and ``afterstates()`` lists exactly the positions the step API can
reach by the end of the roll."""
import numpy as np
import pytest

from pipslab.envs.backgammon import PASS
from pipslab.envs.backgammon.features import NUM_FEATURES, OBS_SIZE, observation, tesauro_features
from pipslab.envs.errors import PipslabError
from pipslab.envs.game import GAMES
from pipslab.envs.generic_env import GameEnv

START = "4HPwATDgc/ABMA"


def _dice_block(obs):
    return obs["observation"][NUM_FEATURES:NUM_FEATURES + 24].reshape(6, 4)


def test_the_observation_counts_the_dice_left_of_a_double():
    env = GameEnv("backgammon")
    obs, info = env.reset(seed=0, options={"position": START, "dice": (5, 5)})
    seen = []
    for _ in range(4):
        block = _dice_block(obs)
        assert block.sum() == block[4].sum() == info["moves_left"]      # only fives, one unit per die
        assert obs["observation"][OBS_SIZE - 1] == info["moves_left"] / 4
        seen.append(int(block[4].sum()))
        obs, _, _, _, info = env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert seen == [4, 3, 2, 1]
    # the turn passed: the learner is on roll again with a new roll, whose dice the block shows
    dice = [info[f"dice_{i}"] for i in range(4) if info[f"dice_{i}"]]
    assert _dice_block(obs).sum() == len(dice) and info["moves_left"] <= len(dice)


def test_a_mixed_roll_shows_which_die_is_left():
    env = GameEnv("backgammon")
    obs, info = env.reset(options={"position": START, "dice": (6, 4)})
    assert list(_dice_block(obs)[:, 0]) == [0, 0, 0, 1, 0, 1] and _dice_block(obs)[:, 1:].sum() == 0
    six = next(a for a in np.flatnonzero(obs["action_mask"]) if a % 6 == 5)     # a move of the 6
    obs, _, _, _, info = env.step(int(six))
    assert list(_dice_block(obs)[:, 0]) == [0, 0, 0, 1, 0, 0] and info["dice_0"] == 4 and info["moves_left"] == 1
    assert np.array_equal(obs["observation"][:NUM_FEATURES],
                          tesauro_features(env.state.position_from(0), True))


def test_the_observation_is_markov_within_a_turn():
    """The mask is a function of the observation: over random games, every observation
    seen twice came with the same mask (without the dice block, 1-2 and 2-1 after one
    move, or a double after one and after three moves, collide)."""
    env = GameEnv("backgammon", opponents="random")
    masks = {}
    rng = np.random.default_rng(0)
    for seed in range(6):
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            key = obs["observation"].tobytes()
            assert masks.setdefault(key, obs["action_mask"].tobytes()) == obs["action_mask"].tobytes()
            obs, _, done, _, _ = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


def _reachable(env):
    """Every position (learner's side) at the end of the learner's roll, by following the
    mask one checker move at a time from the env's state."""
    out = set()
    me = env.learner_seat

    def walk(state):
        if state.is_terminal or state.is_chance or state.current_player != me:
            # the turn is over: the position as the learner left it
            out.add(tuple(state.position_from(me)))
            return
        for a in state.legal_actions():
            child = state.clone()
            child.apply(a)
            walk(child)

    walk(env.state)
    return out


@pytest.mark.parametrize("seed", range(4))
def test_afterstates_are_what_the_steps_reach(seed):
    env = GameEnv("backgammon", opponents="random")
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    checked = 0
    done = False
    while not done and checked < 25:
        after = env.afterstates()
        assert len(after) == len(after.actions) == len(after.position_ids) == after.positions.shape[0]
        assert after.features.shape == (len(after), OBS_SIZE) and after.features.dtype == np.float32
        assert {tuple(int(v) for v in row) for row in after.positions} == _reachable(env)
        for k, play in enumerate(after.plays):
            assert np.array_equal(after.features[k], observation(play.position, False))
            assert after.features[k][197] == 1 and not after.features[k][NUM_FEATURES:].any()
            assert after.position_ids[k] == play.position.id
            assert after.finished[k] == (play.position.borne_off == 15)
        # every play's actions are accepted one by one by the mask, and lead to its position
        k = int(rng.integers(len(after)))
        probe = env.state.clone()
        for a in after.actions[k]:
            assert a in probe.legal_actions()
            probe.apply(a)
        if rng.random() < 0.5:
            obs, reward, done, _, info = env.step_play(k)
        else:   # a single checker move: afterstates() mid-turn are the rest of the roll
            obs, reward, done, _, info = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        checked += 1
    assert checked >= 10


def test_afterstates_of_a_blocked_roll_is_the_pass():
    env = GameEnv("backgammon")
    # the learner has a checker on the bar and the opponent's home board is closed
    from pipslab.envs.backgammon import Position
    b = [0] * 26
    b[25] = 1                    # one of the learner's checkers on the bar, 14 on its 6-point
    b[6] = 14
    for p in range(19, 25):      # the opponent's home board (the learner's 19..24) closed
        b[p] = -2
    b[18] = -3
    pos = Position(b)
    obs, info = env.reset(options={"position": pos.id, "dice": (6, 5)})
    after = env.afterstates()
    assert len(after) == 1 and after.actions == ((PASS,),) and after.plays[0].notation == "pass"
    assert after.position_ids[0] == pos.id
    env.step_play(0)


def test_afterstates_refusals():
    env = GameEnv("backgammon")
    with pytest.raises(PipslabError, match="reset"):
        env.afterstates()
    env.reset(seed=0)
    with pytest.raises(PipslabError, match="index"):
        env.step_play(10_000)
    with pytest.raises(PipslabError, match="index"):
        env.step_play(True)


def test_the_game_encoder_is_the_env_observation():
    """The game's encoder (the PettingZoo/OpenSpiel adapters and the generic env use it)
    gives the env's observation: the dice block on the viewer's turn only."""
    enc = GAMES["backgammon"].observation_encoder()
    env = GameEnv("backgammon")
    obs, _ = env.reset(options={"position": START, "dice": (3, 3)})
    assert enc.size == OBS_SIZE
    assert np.array_equal(enc.encode(env.state.observe(0)), obs["observation"])
    other = enc.encode(env.state.observe(1))
    assert not other[NUM_FEATURES:].any() and other[197] == 1
