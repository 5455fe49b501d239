"""``render_mode="rgb_array"`` on every env (pipslab.envs.render_env): a uint8 (H, W, 3)
frame of one fixed size per game at every step; hidden tiles never change a frame;
Gymnasium's ``RecordVideo`` writes a video of an episode; PettingZoo's ``render_test``
passes for every game; ``render_mode="human"`` is refused in one line by the Gymnasium
envs (the PettingZoo env prints its text)."""
import random
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from pettingzoo.test import render_test

import pipslab  # noqa: F401  (registers the ids)
import toy_dice_race  # noqa: F401  (registers toy-race and pipslab/ToyDiceRace-v0)
from dominoes_helpers import swap_hidden
from pipslab.envs.backgammon.board import Position
from pipslab.envs.dominoes.match import TroshinMatch
from pipslab.envs.errors import PipslabError
from pipslab.envs.game import GAMES
from pipslab.envs.generic_env import GameEnv
from pipslab.envs.pettingzoo_env import env as aec_env
from pipslab.envs.pettingzoo_env import raw_env
from pipslab.envs.render_env import frame_shape, render_frame

# game name, its options, the Gymnasium env of one learner seat
GAMES_UNDER_TEST = {
    "happy-block": ("happy", {"mode": "block"}, lambda **kw: GameEnv("happy", mode="block", **kw)),
    "happy-draw": ("happy", {"mode": "draw"}, lambda **kw: GameEnv("happy", mode="draw", **kw)),
    "troshin-4-pairs": ("troshin", {"players": 4, "pairs": True},
                        lambda **kw: GameEnv("troshin", players=4, pairs=True, **kw)),
    "triple-3": ("triple", {"players": 3}, lambda **kw: GameEnv("triple", players=3, **kw)),
    "backgammon": ("backgammon", {}, lambda **kw: GameEnv("backgammon", **kw)),
    "toy-race": ("toy-race", {}, lambda **kw: GameEnv("toy-race", **kw)),
}
DOMINOES = ["happy-block", "happy-draw", "troshin-4-pairs", "triple-3"]


def _is_frame(frame, shape) -> bool:
    return (isinstance(frame, np.ndarray) and frame.dtype == np.uint8 and frame.shape == shape
            and frame.std() > 0)    # something is drawn


def _random_action(obs, rng) -> int:
    return int(rng.choice(np.flatnonzero(obs["action_mask"])))


# ------------------------------------------------------------------ every game draws
@pytest.mark.parametrize("name", list(GAMES_UNDER_TEST))
def test_every_game_draws_frames_of_one_shape_from_reset_to_the_end(name):
    game, _options, make = GAMES_UNDER_TEST[name]
    shape = frame_shape(game)
    assert len(shape) == 3 and shape[2] == 3
    env = make(render_mode="rgb_array")
    assert "rgb_array" in env.metadata["render_modes"]
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=1)
    frames = [env.render()]
    done, steps = False, 0
    while not done:
        obs, _, done, _, _ = env.step(_random_action(obs, rng))
        steps += 1
        if steps == 3:
            frames.append(env.render())      # mid-game
    frames.append(env.render())              # the end
    assert env.state.is_terminal and len(frames) == 3
    for frame in frames:
        assert _is_frame(frame, shape), (name, getattr(frame, "shape", None), getattr(frame, "dtype", None))
    assert not np.array_equal(frames[0], frames[-1])      # the frame follows the game
    with warnings.catch_warnings():                      # rgb_array is a mode of its own now: no warning
        warnings.simplefilter("error")
        frame = gym.make(GAMES[game].env_id, render_mode="rgb_array", **_options).unwrapped
        frame.reset(seed=0)
        assert _is_frame(frame.render(), shape)


def test_the_text_frame_of_a_generic_game_is_its_text_render():
    env = GameEnv("toy-race", render_mode="rgb_array", target=15)
    env.reset(seed=2)
    shown = env.render()
    assert _is_frame(shown, frame_shape("toy-race"))
    twin = env.state.clone()
    twin.scores = [s + 7 for s in twin.scores]     # another text, another frame
    env.state, saved = twin, env.state
    assert not np.array_equal(env.render(), shown)
    env.state = saved
    assert np.array_equal(env.render(), shown)     # the same state, the same pixels


# ------------------------------------------------------------------ hidden information
def _swapped(state, observer, rng):
    """A copy of ``state`` in which another seat's tile traded places with a boneyard tile
    (``observer`` cannot tell them apart; -1: nobody at the table can), or None."""
    if isinstance(state, TroshinMatch):
        hand = swap_hidden(state.hand, observer, rng)
        if hand is None:
            return None
        m = state.clone()
        m.hand = hand
        return m
    return swap_hidden(state, observer, rng)


@pytest.mark.parametrize("name", DOMINOES)
def test_hidden_tiles_never_change_a_frame(name):
    """Two states that differ only in another seat's hidden tiles give the same frame from
    the learner's seat (and from the PettingZoo env's public view); the frame with every
    hand shown tells them apart, so a frame that drew a hidden tile would fail here."""
    game, options, make = GAMES_UNDER_TEST[name]
    env = make(render_mode="rgb_array")
    public = raw_env(game, render_mode="rgb_array", **options)
    pyrng, rng = random.Random(3), np.random.default_rng(3)
    checked = differs = public_checked = 0
    for seed in range(5):
        obs, _ = env.reset(seed=seed)
        done = False
        while not done and checked < 4:
            state = env.state
            twin = _swapped(state, env.learner_seat, pyrng)
            if twin is not None:
                mine = env.render()
                env.state = twin
                assert np.array_equal(env.render(), mine), "a hidden tile changed the learner's frame"
                env.state = state
                everything = render_frame(game, state, viewer=None, seat=env.learner_seat)
                differs += not np.array_equal(everything, render_frame(game, twin, viewer=None, seat=env.learner_seat))
                checked += 1
                nobody = _swapped(state, -1, pyrng)
                if nobody is not None:
                    public.game_state = state
                    seen = public.render()
                    public.game_state = nobody
                    assert np.array_equal(public.render(), seen), "a hidden tile changed the public frame"
                    public_checked += 1
            for _ in range(2):     # every other decision of the learner
                if not done:
                    obs, _, done, _, _ = env.step(_random_action(obs, rng))
        if checked >= 4:
            break
    assert checked >= 4 and differs == checked and public_checked >= 2


def test_reveal_and_the_end_of_the_game_show_every_hand():
    hidden = GameEnv("happy", render_mode="rgb_array")
    shown = GameEnv("happy", render_mode="rgb_array", reveal=True)
    hidden.reset(seed=4)
    shown.reset(seed=4)
    assert not np.array_equal(hidden.render(), shown.render())
    twin = swap_hidden(hidden.state, hidden.learner_seat)
    before = shown.render()
    shown.state = twin
    assert not np.array_equal(shown.render(), before)       # reveal=True draws the other hand
    # at the end the hands are turned up, as in the ansi render: the frame is the revealed one
    rng = np.random.default_rng(0)
    obs, _ = hidden.reset(seed=5)
    done = False
    while not done:
        obs, _, done, _, _ = hidden.step(_random_action(obs, rng))
    assert np.array_equal(hidden.render(), render_frame("happy", hidden.state, viewer=None, seat=0))


# ------------------------------------------------------------------ RecordVideo
def _bear_off_position() -> str:
    """A short backgammon race: three checkers each in the home boards."""
    return Position.from_points({1: 2, 3: 1}, {24: 2, 22: 1}).id


def test_record_video_writes_a_video_of_an_episode(tmp_path):
    """Gymnasium's RecordVideo (it needs moviepy: a missing one fails here, it is not skipped)."""
    from gymnasium.wrappers import RecordVideo

    for name, env_id, options, reset in [("happy", "pipslab/HappyDominoes-v0", {}, {}),
                                         ("backgammon", "pipslab/Backgammon-v1", {},
                                          {"options": {"position": _bear_off_position()}})]:
        folder = tmp_path / name
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")          # Gymnasium's notes on the wrapper and the folder
            env = RecordVideo(gym.make(env_id, render_mode="rgb_array", **options), str(folder),
                              episode_trigger=lambda episode: True, name_prefix=name)
        rng = np.random.default_rng(0)
        obs, _ = env.reset(seed=0, **reset)
        done, steps = False, 0
        while not done:
            obs, _, terminated, truncated, _ = env.step(_random_action(obs, rng))
            done = terminated or truncated
            steps += 1
        env.close()
        videos = list(folder.glob("*.mp4"))
        assert len(videos) == 1 and videos[0].stat().st_size > 1000, (name, videos, steps)


# ------------------------------------------------------------------ PettingZoo
AEC = {
    "happy-block": ("happy", {"mode": "block"}),
    "happy-draw": ("happy", {"mode": "draw"}),
    "troshin-4-pairs-match": ("troshin", {"players": 4, "pairs": True, "match": True}),
    "triple-3": ("triple", {"players": 3}),
    "backgammon": ("backgammon", {}),
    "toy-race": ("toy-race", {}),
}


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", list(AEC))
def test_pettingzoo_render_test(name, capsys):
    game, options = AEC[name]
    render_test(lambda render_mode=None: aec_env(game, render_mode=render_mode, **options))
    assert capsys.readouterr().out.strip()        # "human" printed the table
    e = raw_env(game, render_mode="rgb_array", viewer=0, **options)
    e.reset(seed=0)
    assert _is_frame(e.render(), frame_shape(game))


# ------------------------------------------------------------------ modes refused, sb3, imports
@pytest.mark.parametrize("name", list(GAMES_UNDER_TEST))
def test_human_is_refused_in_one_line_naming_the_modes(name):
    make = GAMES_UNDER_TEST[name][2]
    with pytest.raises(PipslabError, match="render_mode='human'") as err:
        make(render_mode="human")
    message = str(err.value)
    assert "\n" not in message and "'ansi'" in message and "'rgb_array'" in message
    with pytest.raises(PipslabError, match="render_mode"):
        raw_env("happy", render_mode="video")        # the PettingZoo env refuses an unknown mode
    with pytest.warns(UserWarning, match="'svg'"):
        quiet = make(render_mode="svg")               # any other mode warns, as Gymnasium's envs do
    quiet.reset(seed=0)
    assert quiet.render() is None


def test_gym_make_human_wraps_the_frames_in_human_rendering():
    """What the refusal points to: gymnasium.make builds the env in rgb_array under its
    HumanRendering wrapper (which opens a pygame window on reset)."""
    from gymnasium.wrappers import HumanRendering

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = gym.make("pipslab/HappyDominoes-v0", render_mode="human")
    wrapper = env
    while not isinstance(wrapper, HumanRendering):
        wrapper = wrapper.env
    assert env.unwrapped.render_mode == "rgb_array" and env.render_mode == "human"


def test_sb3_make_vec_env_gets_frames():
    from stable_baselines3.common.env_util import make_vec_env

    with warnings.catch_warnings():
        warnings.simplefilter("error")   # rgb_array, what make_vec_env asks for, is a mode now: no warning
        venv = make_vec_env("pipslab/HappyDominoes-v0", n_envs=2, seed=0)
    venv.reset()
    images = venv.get_images()
    assert len(images) == 2 and all(_is_frame(im, frame_shape("happy")) for im in images)
    venv.close()


def test_importing_the_envs_does_not_import_matplotlib():
    code = ("import sys, pipslab, pipslab.envs.render_env, pipslab.envs.pettingzoo_env; "
            "print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "False", out.stderr
