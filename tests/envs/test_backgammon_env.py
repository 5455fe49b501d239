"""pipslab/Backgammon-v1: the Gymnasium adapter."""
import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import pipslab  # noqa: F401  (registers the ids)
from pipslab.envs.backgammon import NUM_ACTIONS, PASS, Position
from pipslab.envs.backgammon.features import tesauro_features
from pipslab.envs.errors import IllegalActionError
from pipslab.envs.generic_env import GameEnv


def test_check_env_passes():
    check_env(GameEnv("backgammon", illegal_action="lose"), skip_render_check=False)
    check_env(gym.make("pipslab/Backgammon-v1", illegal_action="lose", learner_seat=1).unwrapped)


def _play(env, seed):
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    trace, total, done = [], 0.0, False
    while not done:
        assert np.array_equal(obs["action_mask"], info["action_mask"])
        assert np.array_equal(obs["action_mask"], env.action_masks())
        assert obs["observation"].shape == (223,) and obs["observation"].dtype == np.float32
        legal = np.flatnonzero(obs["action_mask"])
        assert len(legal) >= 1
        a = int(rng.choice(legal))
        trace.append((info["position_id"], a))
        obs, reward, done, trunc, info = env.step(a)
        total += reward
        assert not trunc
    return trace, total, info


def test_seeding_reproduces_games_and_rewards_are_points():
    env = GameEnv("backgammon")
    t1, r1, info = _play(env, 3)
    t2, r2, _ = _play(env, 3)
    t3, _, _ = _play(env, 4)
    assert t1 == t2 and r1 == r2 and t1 != t3
    assert r1 in (1.0, 2.0, 3.0, -1.0, -2.0, -3.0)
    assert abs(info["points_0"]) == abs(r1) and info["points_0"] == r1 == -info["points_1"]
    assert (r1 > 0) == (info["winner"] == 0) and info["gammon"] == (abs(r1) >= 2)


def test_learner_seat_one_and_gammons_off():
    env = GameEnv("backgammon", learner_seat=1, gammons=False)
    for seed in range(3):
        _, r, info = _play(env, seed)
        assert r in (1.0, -1.0)
        assert (r > 0) == (info["winner"] == 1)


def test_reset_from_position_and_illegal_actions():
    env = GameEnv("backgammon", render_mode="ansi")
    obs, info = env.reset(seed=0, options={"position": "4HPwATDgc/ABMA", "dice": (3, 1)})
    assert info["position_id"] == "4HPwATDgc/ABMA"
    assert [info[f"dice_{i}"] for i in range(4)] == [3, 1, 0, 0] and info["moves_left"] == 2
    assert "Position ID 4HPwATDgc/ABMA" in env.render()
    # 3: 24/21 13/10 8/5 6/3; 1: 24/23 8/7 6/5 (13/12 is closed)
    assert obs["action_mask"].sum() == 7
    with pytest.raises(IllegalActionError):
        env.step(PASS)
    lose = GameEnv("backgammon", illegal_action="lose")
    lose.reset(seed=0, options={"position": "4HPwATDgc/ABMA", "dice": (3, 1)})
    obs, reward, done, _, info = lose.step(PASS)
    assert done and reward == -3.0 and info["illegal_action"]


def test_tesauro_encoding():
    x = tesauro_features(Position.start(), on_roll=True)
    assert x.shape == (198,) and x.min() >= 0 and x.max() <= 7.5
    # my 6-point has 5 checkers: units 1,1,1,(5-3)/2
    assert list(x[4 * 5: 4 * 6]) == [1, 1, 1, 1.0]
    # my 24-point: 2 checkers; his 24-point (my 1): 2 checkers -- symmetric start
    assert list(x[4 * 23: 4 * 24]) == [1, 1, 0, 0] == list(x[96 + 4 * 23: 96 + 4 * 24])
    assert x[196] == 1 and x[197] == 0 and x[192:196].sum() == 0
    y = tesauro_features(Position.start().swap(), on_roll=False)
    assert np.array_equal(x[:192], y[:192]) and y[197] == 1


def test_render_function_and_opponent_agent():
    from pipslab.agents import make_agent

    env = GameEnv("backgammon", opponents=make_agent("random", "backgammon"), render_mode="ansi")
    _play(env, 1)
    text = env.state.render()
    assert "wins" in text
    assert env.action_space.n == NUM_ACTIONS
