"""pipslab/TroshinDominoes-v0 and pipslab/TripleDominoes-v0: check_env at every player
count, masks, rewards, info, positions, opponents per seat, hidden tiles never encoded."""
import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import pipslab  # noqa: F401  (registers the ids)
from pipslab.agents.registry import make_agent
from pipslab.envs.dominoes.match import TroshinMatch
from pipslab.envs.dominoes.encoding import TRIPLE_SIZE as TRIPLE_OBS, TROSHIN_SIZE as TROSHIN_OBS
from pipslab.envs.dominoes.encoding import encode_triple_view, encode_troshin_view
from pipslab.envs.errors import IllegalActionError, PipslabError
from pipslab.envs.generic_env import GameEnv

from dominoes_helpers import place, run_episodes, swap_hidden

TROSHIN_CONFIGS = [(2, False, False), (3, False, False), (4, False, False), (4, True, False),
                   (2, False, True), (4, True, True)]


@pytest.mark.parametrize("players, pairs, match", TROSHIN_CONFIGS)
def test_troshin_check_env(players, pairs, match):
    env = gym.make("pipslab/TroshinDominoes-v0", players=players, pairs=pairs, match=match, illegal_action="lose")
    check_env(env.unwrapped, skip_render_check=False)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_triple_check_env(players):
    env = gym.make("pipslab/TripleDominoes-v0", players=players, illegal_action="lose")
    check_env(env.unwrapped, skip_render_check=False)


@pytest.mark.parametrize("players, pairs, match", TROSHIN_CONFIGS)
def test_troshin_masks_rewards_and_points(players, pairs, match):
    env = GameEnv("troshin", players=players, pairs=pairs, match=match, learner_seat=players - 1,
                             opponents="heaviest")
    rewards, info = run_episodes(env, 5 if match else 40)
    assert set(rewards) <= {1.0, 0.0, -1.0, -1.0 / (players - 1)}
    points = [info[f"points_{s}"] for s in range(players)]
    assert points == [float(p) for p in env.outcome().points] and f"points_{players}" not in info
    if match:
        scores = [info[f"score_team{t}"] for t in range(len(set(env.game.teams(env.options))))]
        assert max(scores) >= 100 and len(env.state.hand_points) == info["hands"]
        assert info["match"] and info["match_winner"] == scores.index(max(scores))
        assert isinstance(env.state, TroshinMatch)
    if pairs:
        assert rewards.count(-1.0 / 3) == 0  # partners share the result: +1 or -1


@pytest.mark.parametrize("players", [2, 3, 4])
def test_triple_masks_rewards_and_scores(players):
    env = GameEnv("triple", players=players, learner_seat=1, opponents="suits")
    rewards, info = run_episodes(env, 30)
    result = env.state.result()
    assert [info[f"winnings_{s}"] for s in range(players)] == result["winnings"]
    assert [info[f"penalties_{s}"] for s in range(players)] == result["penalties"]
    assert [info[f"rank_{s}"] for s in range(players)] == result["ranks"]
    assert all(-1.0 <= r <= 1.0 for r in rewards)


def test_opponents_per_seat_and_bad_arguments():
    env = GameEnv("troshin", players=4, pairs=True, opponents=["random", "heaviest", "suits", None])
    assert env.seat_agents[0] is None and env.seat_agents[2].name == "suits"
    env.reset(seed=1)
    with pytest.raises(PipslabError, match="one per seat"):
        GameEnv("troshin", players=3, opponents=["random", "random"])
    with pytest.raises(PipslabError, match="learner_seat"):
        GameEnv("triple", players=3, learner_seat=3)
    with pytest.raises(PipslabError, match="pairs need 4 players"):
        GameEnv("troshin", players=3, pairs=True)
    with pytest.raises(PipslabError, match="players=5: expected 2..4"):
        GameEnv("triple", players=5)
    agent = make_agent("heaviest", "triple")
    env = GameEnv("triple", players=3, opponents=agent)
    assert env.seat_agents[1] is agent and env.seat_agents[2] is agent


def test_troshin_reset_from_positions_hand_and_match():
    env = GameEnv("troshin", players=2, render_mode="ansi")
    obs, info = env.reset(options={"position": "troshin-2; turn=0; ends=5|4; hands=5-6 3-3 / 0-0"})
    assert info["legal_actions"] == [place(env.state, "5-6", "left")] and (info["points_0"], info["points_1"]) == (0.0, 0.0)
    with pytest.raises(PipslabError, match="match=true"):
        env.reset(options={"position": "troshin-2; match=3 / 4; ends=5|4; hands=5-6 / 0-0"})
    env = GameEnv("troshin", players=2, match=True, render_mode="ansi")
    obs, info = env.reset(options={"position": "troshin-2; match=95 / 10; turn=0; ends=5|4; hands=5-6 / 0-0"})
    assert obs["observation"][186] == pytest.approx(0.95) and obs["observation"][190] == 1.0
    obs, reward, done, _, info = env.step(info["legal_actions"][0])
    assert done and reward == 1.0 and (info["score_team0"], info["score_team1"]) == (105, 10)
    assert info["winner"] == info["match_winner"] == 0 and info["points_0"] == 105.0
    assert "match won by seat 0" in env.render()


def test_triple_illegal_actions_raise_or_lose():
    env = GameEnv("triple", players=2)
    obs, info = env.reset(options={"position": "triple-2; turn=0; ends=5|6|-|-; spinner=5; hands=6-2 / 2-2; boneyard=0-0"})
    with pytest.raises(IllegalActionError, match="pass only without a legal placement"):
        env.step(113)
    env = GameEnv("triple", players=2, illegal_action="lose")
    env.reset(options={"position": "triple-2; turn=0; ends=5|6|-|-; spinner=5; hands=6-2 / 2-2; boneyard=0-0"})
    obs, reward, done, _, info = env.step(113)
    assert done and reward == -1.0 and info["illegal_action"] and obs["action_mask"].sum() == 0


@pytest.mark.parametrize("make, encode", [
    (lambda: GameEnv("troshin", players=4, pairs=True), encode_troshin_view),
    (lambda: GameEnv("troshin", players=3), encode_troshin_view),
    (lambda: GameEnv("triple", players=4), encode_triple_view),
    (lambda: GameEnv("triple", players=2), encode_triple_view),
])
def test_observation_never_encodes_hidden_tiles(make, encode):
    env = make()
    rng = np.random.default_rng(3)
    checked = 0
    for episode in range(20):
        obs, info = env.reset(seed=episode)
        done = False
        while not done:
            swapped = swap_hidden(env.state, env.learner_seat)
            if swapped is not None:
                assert np.array_equal(encode(swapped.observe(env.learner_seat)), obs["observation"])
                checked += 1
            obs, _, done, _, info = env.step(rng.choice(np.flatnonzero(obs["action_mask"])))
    assert checked > 20
    assert TROSHIN_OBS == 191 and TRIPLE_OBS == 220


@pytest.mark.parametrize("learner_seat", [0, 1])
def test_a_match_env_deals_each_hand_inside_the_env(learner_seat, monkeypatch):
    """The match's chance node between hands is handled by the env (from its np_random):
    the learner steps across hand boundaries and is never shown a chance node."""
    env = GameEnv("troshin", players=2, match=True, learner_seat=learner_seat, opponents="heaviest")
    chances = []
    real = TroshinMatch.apply_chance

    def counted(self, rng):
        chances.append(rng is env.np_random)
        return real(self, rng)
    monkeypatch.setattr(TroshinMatch, "apply_chance", counted)
    obs, info = env.reset(seed=4)
    rng = np.random.default_rng(4)
    done, hands = False, {env.state.hand_index}
    while not done:
        assert not env.state.is_chance and env.learner_to_move()
        assert obs["action_mask"].any() and info["legal_actions"] == env.state.legal_actions()
        obs, reward, done, truncated, info = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        assert not env.state.is_chance
        hands.add(env.state.hand_index)
    assert env.state.is_terminal and len(hands) == env.state.hand_index + 1 >= 3
    assert chances and all(chances) and len(chances) == env.state.hand_index - 1
    assert reward == env.state.returns()[learner_seat]
