"""Gymnasium's vector envs on every pipslab env and player count (issue 14): ``info`` keeps
the same keys and types on every step — Gymnasium stacks each key into an array typed by
its first value, so a field that is an int on one step and None on the next broke
``make_vec`` after about 175 steps and left the async env hanging in ``close()`` — and
the masks read from the vector observation always leave the learner a legal action on
the rows it must act on (under the default NEXT_STEP autoreset, the rows of episodes
that just ended carry an all-zero mask and are skipped, as the base env's docstring
says; under SAME_STEP no row is ever all zero)."""
import threading

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import pipslab  # noqa: F401  (registers the ids)

CONFIGS = {
    "happy-block": ("pipslab/HappyDominoes-v0", {"mode": "block"}),
    "happy-draw": ("pipslab/HappyDominoes-v0", {"mode": "draw"}),
    "troshin-2": ("pipslab/TroshinDominoes-v0", {"players": 2}),
    "troshin-3": ("pipslab/TroshinDominoes-v0", {"players": 3}),
    "troshin-4": ("pipslab/TroshinDominoes-v0", {"players": 4}),
    "troshin-4-pairs": ("pipslab/TroshinDominoes-v0", {"players": 4, "pairs": True}),
    "troshin-2-match": ("pipslab/TroshinDominoes-v0", {"players": 2, "match": True}),
    "troshin-4-pairs-match": ("pipslab/TroshinDominoes-v0", {"players": 4, "pairs": True, "match": True}),
    "triple-2": ("pipslab/TripleDominoes-v0", {"players": 2}),
    "triple-3": ("pipslab/TripleDominoes-v0", {"players": 3}),
    "triple-4": ("pipslab/TripleDominoes-v0", {"players": 4}),
    "backgammon": ("pipslab/Backgammon-v1", {}),
    "backgammon-seat-1": ("pipslab/Backgammon-v1", {"learner_seat": 1, "opponents": "pubeval"}),
}
STEPS = 1000
NUM_ENVS = 3


def _close(env, timeout=60.0):
    """``env.close()`` returns (the async env used to hang here after a worker failed)."""
    done = threading.Event()

    def close():
        env.close()
        done.set()

    t = threading.Thread(target=close, daemon=True)
    t.start()
    t.join(timeout)
    assert done.is_set(), "close() of the vector env did not return"


def _info_schema(info) -> dict:
    """Every info key's stacked dtype and shape (SAME_STEP's ``final_obs``/``final_info``
    come and go with the episodes that end: Gymnasium's own keys)."""
    return {k: (v.dtype, v.shape) for k, v in info.items() if k not in ("final_obs", "final_info", "_final_obs",
                                                                       "_final_info")}


def run_vector(env_id, kwargs, mode, steps=STEPS, autoreset=AutoresetMode.NEXT_STEP, seed=0):
    """Step a vector env ``steps`` times with random legal actions read from the vector
    observation's masks; check the info schema and the masks at every step, the result
    fields at every episode's end.  Returns the number of finished episodes."""
    env = gym.make_vec(env_id, num_envs=NUM_ENVS, vectorization_mode=mode,
                       vector_kwargs={"autoreset_mode": autoreset}, **kwargs)
    learner = kwargs.get("learner_seat", 0)
    try:
        rng = np.random.default_rng(seed)
        obs, info = env.reset(seed=seed)
        schema = _info_schema(info)
        assert info["action_mask"].dtype == object or info["action_mask"].shape[0] == NUM_ENVS
        skip = np.zeros(NUM_ENVS, dtype=bool)     # rows the autoreset will reset (NEXT_STEP)
        episodes = 0
        for _ in range(steps):
            masks = obs["action_mask"]
            assert masks.dtype == np.int8 and masks.shape == (NUM_ENVS, env.single_action_space.n)
            legal_rows = masks.any(axis=1)
            # a row with no legal action is exactly a row the autoreset resets next
            assert np.array_equal(~legal_rows, skip), (legal_rows, skip)
            actions = np.array([rng.choice(np.flatnonzero(m)) if ok else 0 for m, ok in zip(masks, legal_rows)])
            obs, reward, terminated, truncated, info = env.step(actions)
            assert not truncated.any()
            assert _info_schema(info) == schema, "info changed keys or types"
            # the vector obs's masks are the info's: the same on every row
            for i in range(NUM_ENVS):
                assert np.array_equal(np.asarray(info["action_mask"][i]), obs["action_mask"][i])
            final = info if autoreset == AutoresetMode.NEXT_STEP else info.get("final_info", {})
            if autoreset == AutoresetMode.SAME_STEP and terminated.any():
                assert _info_schema(final) == schema
            for i in np.flatnonzero(terminated):
                episodes += 1
                assert not final["illegal_action"][i]
                winner = int(final["winner"][i])
                assert winner >= -1
                if winner >= 0:
                    assert (winner == learner) == (reward[i] > 0), (winner, reward[i])
                if final["draw"][i]:
                    assert reward[i] == 0 and winner == -1
                if "Happy" in env_id or "Backgammon" in env_id:   # points are the returns there
                    assert float(final[f"points_{learner}"][i]) == reward[i]
                    assert min(int(final[f"pips_left_{s}"][i]) for s in (0, 1)) >= 0
            skip = (terminated | truncated) if autoreset == AutoresetMode.NEXT_STEP else np.zeros_like(skip)
        return episodes
    finally:
        _close(env)


def test_happy_sync_quick():
    """The issue's crash: Happy under make_vec, 1,000 steps (it failed at about 175)."""
    assert run_vector(*CONFIGS["happy-block"], "sync") > 50


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("name", list(CONFIGS))
def test_every_env_under_make_vec(name, mode):
    episodes = run_vector(*CONFIGS[name], mode)
    assert episodes >= 1


@pytest.mark.slow
@pytest.mark.parametrize("name", ["happy-draw", "troshin-4-pairs", "triple-3", "backgammon"])
def test_same_step_autoreset_never_gives_an_all_zero_row(name):
    """With ``AutoresetMode.SAME_STEP`` every returned row is one the learner acts on: no
    mask is all zero (``run_vector`` asserts it with nothing to skip)."""
    assert run_vector(*CONFIGS[name], "sync", autoreset=AutoresetMode.SAME_STEP) >= 1
