"""The one env class keeps every built-in game's behaviour: seeded episodes through the Gym
ids, the PettingZoo envs and the OpenSpiel games give the observations, action ids, rewards,
``info`` and renders recorded in ``data/playthroughs.json.gz`` by the hand-written classes
they replaced (issue 20; ``playthroughs.py`` recorded them).  The backgammon id moved to
``-v1`` (its observation grew from 198 to 223 inputs in issue 14); the golden cases name
``-v0``, replayed here through ``-v1``."""
import json

import pytest

import pipslab  # noqa: F401  (registers the ids, installs the agent factory)
import playthroughs

GOLDEN = playthroughs.load()
CURRENT = {"pipslab/Backgammon-v0": "pipslab/Backgammon-v1"}


def _diff(old, new, where=""):
    """The first place two recorded structures differ (None: equal)."""
    if type(old) is not type(new):
        return f"{where}: {old!r} != {new!r}"
    if isinstance(old, dict):
        if list(old) != list(new):
            return f"{where}: keys {list(old)} != {list(new)}"
        for k in old:
            d = _diff(old[k], new[k], f"{where}.{k}")
            if d:
                return d
        return None
    if isinstance(old, list):
        if len(old) != len(new):
            return f"{where}: length {len(old)} != {len(new)}"
        for i, (a, b) in enumerate(zip(old, new)):
            d = _diff(a, b, f"{where}[{i}]")
            if d:
                return d
        return None
    return None if old == new else f"{where}: {old!r} != {new!r}"


@pytest.mark.parametrize("name", list(playthroughs.CASES))
def test_gym_episodes_are_as_recorded(name):
    import gymnasium as gym
    import warnings

    env_id, kwargs, episodes, illegal, options = playthroughs.CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        now = playthroughs.play(lambda: gym.make(CURRENT.get(env_id, env_id), **kwargs), episodes, illegal, options)
    assert _diff(GOLDEN[name], json.loads(json.dumps(now)), name) is None


def test_pettingzoo_games_are_as_recorded():
    now = json.loads(json.dumps(playthroughs.record_aec()))
    assert _diff(GOLDEN["pettingzoo"], now, "pettingzoo") is None


def test_openspiel_games_are_as_recorded():
    pytest.importorskip("pyspiel")
    now = json.loads(json.dumps(playthroughs.record_spiel()))
    assert _diff(GOLDEN["openspiel"], now, "openspiel") is None
