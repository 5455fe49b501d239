"""pipslab/HappyDominoes-v0: gymnasium conventions, masks, seeding, positions, illegal actions."""
import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import pipslab  # noqa: F401  (registers the ids)
from pipslab.agents.registry import make_agent
from pipslab.envs.dominoes.encoding import HAPPY_SIZE as OBS_SIZE, encode_view
from pipslab.envs.errors import IllegalActionError, PipslabError
from pipslab.envs.generic_env import GameEnv

from dominoes_helpers import place, run_episodes, swap_hidden


@pytest.mark.parametrize("mode", ["block", "draw"])
def test_check_env_passes(mode):
    env = gym.make("pipslab/HappyDominoes-v0", mode=mode, illegal_action="lose")
    check_env(env.unwrapped, skip_render_check=False)


@pytest.mark.parametrize("mode", ["block", "draw"])
def test_mask_equals_legal_actions_and_episodes_end(mode):
    env = GameEnv("happy", mode=mode, opponents="heaviest")
    assert env.obs_size == OBS_SIZE
    rewards, _ = run_episodes(env, 200, max_steps=100)
    assert set(rewards) <= {-1.0, 0.0, 1.0}


def test_same_seed_and_actions_give_the_same_trajectory():
    def trajectory(seed):
        env = GameEnv("happy", mode="draw", reveal=True)   # reveal: info["position"] is the full position
        obs, info = env.reset(seed=seed)
        out = [info["position"]]
        done = False
        while not done:
            obs, r, done, _, info = env.step(info["legal_actions"][0])
            out.append(info["position"])
        return out

    assert trajectory(7) == trajectory(7)
    assert trajectory(7) != trajectory(8)


def test_learner_seat_one_and_reward_sign():
    env = GameEnv("happy", mode="block", learner_seat=1)
    obs, info = env.reset(options={"position": "happy-block; turn=0; ends=1|0; hands=2-2 / 0-0 0-2"})
    # seat 0 (the opponent) had to pass; the learner (seat 1, black) is to move
    assert env.state.current_player == 1
    obs, reward, done, _, info = env.step(place(env.state, "0-2", "right"))
    # the opponent plays 2-2 and goes out: the learner loses
    assert done and reward == -1.0 and info["winner"] == 0 and not info["draw"]


def test_reset_from_position_and_ansi_render():
    env = GameEnv("happy", mode="draw", render_mode="ansi")
    obs, info = env.reset(options={"position": "happy-draw; turn=0; ends=1|1; hands=4-4 0-6 2-3 2-6 0-5 / 3-5; boneyard=6-6 0-0"})
    assert info["legal_actions"] == [56]
    text = env.render()
    assert "ends:  1|1" in text and "boneyard: 2 tiles" in text
    with pytest.raises(PipslabError, match="position is happy-block"):
        env.reset(options={"position": "happy-block; ends=1|1; hands=1-1 / 2-2"})


def test_auto_forced_plays_single_moves_for_the_learner():
    env = GameEnv("happy", mode="draw", auto_forced=True)
    obs, info = env.reset(options={"position": "happy-draw; turn=0; ends=1|1; hands=4-4 0-6 2-3 2-6 0-5 / 3-5; boneyard=6-6 0-0"})
    # draw, draw, pass for the learner, then the opponent passes: blocked at once
    assert env.state.is_terminal and env.state.pips_left() == [44, 8]


def test_illegal_action_raise_and_lose():
    env = GameEnv("happy", mode="block")
    obs, info = env.reset(seed=3)
    bad = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError, match=f"illegal action {bad}"):
        env.step(bad)
    env = GameEnv("happy", mode="block", illegal_action="lose")
    obs, info = env.reset(seed=3)
    obs, reward, done, _, info = env.step(bad)
    assert done and reward == -1.0 and info["illegal_action"]


def test_bad_arguments_are_clear_errors():
    with pytest.raises(PipslabError, match="illegal_action"):
        GameEnv("happy", illegal_action="ignore")
    with pytest.raises(PipslabError, match="unknown agent"):
        GameEnv("happy", opponents="grandmaster")
    with pytest.raises(PipslabError, match="learner_seat"):
        GameEnv("happy", learner_seat=2)


def test_observation_hides_the_opponent_hand_and_boneyard():
    env = GameEnv("happy", mode="draw")
    env.reset(seed=1)
    s = env.state
    me = env.learner_seat
    x = encode_view(s.observe(me))
    # move an opponent tile into the boneyard and a boneyard tile into its hand
    c = swap_hidden(s, me)
    assert c.hands != s.hands
    assert np.array_equal(encode_view(c.observe(me)), x)
    assert x[:28].sum() == bin(s.hands[me]).count("1")


def test_opponent_can_be_an_agent_object():
    agent = make_agent("suits", "happy")
    moves = []

    class Spy(type(agent)):
        def act(self, observation, rng):
            action = super().act(observation, rng)
            moves.append((observation.player, action))
            return action

    agent.__class__ = Spy
    env = GameEnv("happy", mode="draw", opponents=agent)
    assert env.opponent is agent
    for seed in range(5):
        moves.clear()
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            assert list(np.flatnonzero(obs["action_mask"])) == env.state.legal_actions()
            obs, _, done, _, info = env.step(env.state.legal_actions()[0])
        # every move of the other seat in the record is one the agent object chose
        assert moves and {p for p, _ in moves} == {1 - env.learner_seat}
        assert len(moves) == sum(1 for e in env.state.events() if e[1] != env.learner_seat)
