"""Gymnasium conventions every pipslab env keeps (issue 14): ``info`` has the same keys
and types on every step, reset included; masks are int8 everywhere; ``rgb_array`` renders
a frame, ``human`` is refused in one line and any other unsupported ``render_mode`` warns
(as Gymnasium's envs do) instead of raising; ``reset`` refuses an
unknown option in one line; the checkers pass with ``illegal_action="lose"`` (the default
``"raise"`` refuses the unmasked random actions they step)."""
import warnings

import gymnasium as gym
import numpy as np
import pytest

import pipslab  # noqa: F401  (registers the ids)
from pipslab.envs.errors import IllegalActionError, PipslabError
from pipslab.envs.generic_env import GameEnv

ENVS = {
    "happy-block": ("pipslab/HappyDominoes-v0", {}),
    "happy-draw": ("pipslab/HappyDominoes-v0", {"mode": "draw"}),
    "troshin-3": ("pipslab/TroshinDominoes-v0", {"players": 3}),
    "troshin-4-pairs-match": ("pipslab/TroshinDominoes-v0", {"players": 4, "pairs": True, "match": True}),
    "triple-4": ("pipslab/TripleDominoes-v0", {"players": 4}),
    "backgammon": ("pipslab/Backgammon-v1", {}),
}


def _types(info) -> dict:
    return {k: (type(v), getattr(v, "dtype", None), getattr(v, "shape", None)) for k, v in info.items()}


@pytest.mark.parametrize("name", list(ENVS))
def test_info_has_the_same_keys_and_types_on_every_step(name):
    env_id, kwargs = ENVS[name]
    env = gym.make(env_id, **kwargs).unwrapped
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=0)
    schema = _types(info)
    ends = 0
    for episode in range(3 if "match" in name or "backgammon" in name else 8):
        obs, info = env.reset(seed=episode)
        assert _types(info) == schema
        done = False
        while not done:
            obs, reward, done, _, info = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            assert _types(info) == schema
        ends += 1
        # at the end: the outcome's numeric columns are all in info, with the outcome's values
        outcome = env.outcome()
        for key, value in outcome.extra.items():
            if isinstance(value, (bool, int, float)):
                assert key in info and info[key] == value, key
        assert info["winner"] == (-1 if outcome.winner is None else outcome.winner)
        assert info["winning_team"] == (-1 if outcome.team is None else outcome.team)
        assert [info[f"points_{s}"] for s in range(env.players)] == [float(p) for p in outcome.points]
        assert not obs["action_mask"].any() and not info["legal_actions"]
    assert ends >= 3
    for value in schema.values():
        assert value[0] in (bool, int, float, str, list, np.ndarray), value


@pytest.mark.parametrize("name", list(ENVS))
def test_masks_are_int8(name):
    env_id, kwargs = ENVS[name]
    env = gym.make(env_id, **kwargs)
    obs, info = env.reset(seed=1)
    masks = env.get_wrapper_attr("action_masks")()
    for m in (obs["action_mask"], info["action_mask"], masks, env.unwrapped.action_masks()):
        assert m.dtype == np.int8 and np.array_equal(m, obs["action_mask"])
    assert env.observation_space["action_mask"].dtype == np.int8


def test_render_modes_rgb_array_renders_human_is_refused_others_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = gym.make("pipslab/HappyDominoes-v0", render_mode="rgb_array").unwrapped
        env.reset(seed=0)
        frame = env.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    with pytest.warns(UserWarning, match="'svg'"):
        env = GameEnv("happy", render_mode="svg")
    env.reset(seed=0)
    assert env.render() is None and env.render_mode == "svg"
    with pytest.raises(PipslabError, match="render_mode='human'"):
        GameEnv("happy", render_mode="human")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = gym.make("pipslab/Backgammon-v1", render_mode="ansi")
        env.reset(seed=0)
        assert "Position ID" in env.render()
    with pytest.raises(PipslabError, match="render_mode"):
        GameEnv("triple", players=3, render_mode=3)


@pytest.mark.parametrize("name", ["happy-block", "troshin-3", "backgammon"])
def test_unknown_reset_options_are_refused_in_one_line(name):
    env_id, kwargs = ENVS[name]
    env = gym.make(env_id, **kwargs)
    with pytest.raises(PipslabError, match="unknown reset option.*'seed_offset'.*this env takes position") as err:
        env.reset(options={"seed_offset": 3})
    assert "\n" not in str(err.value)


def test_the_checkers_pass_with_illegal_action_lose():
    from gymnasium.utils.env_checker import check_env as gym_check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    for name in ("happy-draw", "triple-4", "backgammon"):
        env_id, kwargs = ENVS[name]
        gym_check_env(gym.make(env_id, illegal_action="lose", **kwargs).unwrapped)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")    # sb3's advice on Dict spaces and image-like boxes
            sb3_check_env(gym.make(env_id, illegal_action="lose", **kwargs).unwrapped, warn=True)
    with pytest.raises(IllegalActionError):   # why the default cannot: it steps unmasked actions
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for seed in range(20):
                sb3_check_env(gym.make("pipslab/HappyDominoes-v0").unwrapped, warn=False)


def test_sb3_make_vec_env_builds_the_env_and_reads_the_masks():
    """sb3's ``make_vec_env`` asks for ``render_mode="rgb_array"`` (it used to raise, then
    warn; now the env renders frames: tests/envs/test_frames.py);
    sb3-contrib reads the masks through ``action_masks`` across the wrappers."""
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from stable_baselines3.common.env_util import make_vec_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        venv = make_vec_env("pipslab/HappyDominoes-v0", n_envs=2, seed=0)
    obs = venv.reset()
    assert is_masking_supported(venv)
    masks = get_action_masks(venv)
    assert masks.shape == (2, 58) and np.array_equal(masks.astype(np.int8), obs["action_mask"])
    venv.close()
