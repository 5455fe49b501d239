"""One road (issue 20): every Gym id, PettingZoo env and OpenSpiel game is derived from the
``Game`` alone — every option of every game is accepted on every road, the roads give the
same ``info`` keys, the returns keep inside ``Game.utility_bounds``, and the old backgammon
id is a deprecated alias."""
import warnings

import gymnasium as gym
import numpy as np
import pytest

import pipslab  # noqa: F401  (registers the ids)
import toy_dice_race  # noqa: F401  (a game defined in one file: it gets every road too)
from pipslab.envs import GAMES
from pipslab.envs.errors import PipslabError
from pipslab.envs.generic_env import GameEnv
from pipslab.envs.pettingzoo_env import env as aec_env
from pipslab.envs.pettingzoo_env import raw_env, worst_return

GAME_NAMES = ["happy", "troshin", "triple", "troshin6", "backgammon", "toy-race"]
GYM_ONLY = ("action_mask", "legal_actions", "illegal_action")


def option_values(game, option):
    """Values of ``option`` the game accepts alone: the default and a few others."""
    if option.name == "position":
        return [game.format(game.new_state(np.random.default_rng(4), {}))]
    if option.type is bool:
        candidates = [False, True]
    elif option.choices is not None:
        candidates = list(option.choices)
    elif option.type is int:
        candidates = [option.default, option.low, option.high, (option.low or 0) + 1]
    else:
        candidates = [option.default]
    out = []
    for value in candidates:
        if value is None or value in out:
            continue
        try:
            game.resolve({option.name: value})
        except PipslabError:
            continue
        out.append(value)
    return out


CASES = [(name, o.name, value) for name in GAME_NAMES for o in GAMES[name].options_spec
         for value in option_values(GAMES[name], o)]


def _quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


@pytest.mark.parametrize("name, option, value", CASES, ids=str)
def test_every_option_works_on_every_road(name, option, value):
    game = GAMES[name]
    kwargs = {option: value}
    env = _quiet(lambda: gym.make(game.gym_id(), illegal_action="lose", **kwargs))
    obs, info = env.reset(seed=0)
    assert env.unwrapped.options[option] == value and obs["observation"].shape == (env.unwrapped.obs_size,)
    assert env.observation_space["observation"].shape == (game.observation_encoder(kwargs).size,)
    aec = aec_env(name, **kwargs)
    aec.reset(seed=0)
    assert aec.unwrapped.options[option] == value
    assert set(aec.infos[aec.agents[0]]) == set(info) - set(GYM_ONLY)
    pyspiel = pytest.importorskip("pyspiel")
    from pipslab.envs import openspiel_games
    if name not in openspiel_games.SHORT_NAMES:
        with pytest.raises(PipslabError, match="no OpenSpiel game"):
            openspiel_games.load(name, kwargs)
        return
    spiel = openspiel_games.load(name, kwargs)
    assert spiel.get_parameters()[option] == value
    assert spiel.num_players() == game.players(kwargs) and spiel.num_distinct_actions() == game.actions(kwargs)
    assert (spiel.min_utility(), spiel.max_utility()) == game.utility_bounds(kwargs)
    state = spiel.new_initial_state()
    rng = np.random.default_rng(0)
    for _ in range(40):
        if state.is_terminal():
            break
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(outcomes[rng.choice(len(outcomes), p=np.asarray(probs) / sum(probs))]))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    del pyspiel


def test_the_openspiel_parameters_are_the_options():
    pyspiel = pytest.importorskip("pyspiel")
    from pipslab.envs import openspiel_games
    for name in [n for n in GAME_NAMES if n != "toy-race"]:   # built-in games (tests register and drop others)
        game = GAMES[name]
        spec = pyspiel.load_game(openspiel_games.SHORT_NAMES[name]).get_type()
        assert sorted(spec.parameter_specification) == sorted(game.option_names), name
        assert (spec.min_num_players, spec.max_num_players) == game.player_range()
    assert pyspiel.load_game("pipslab_happy").get_parameters()["hand_size"] == 0   # "not set"
    assert pyspiel.load_game("pipslab_happy(max_pip=2,hand_size=3)").new_initial_state().chance_outcomes()


@pytest.mark.parametrize("name", GAME_NAMES)
def test_the_same_info_keys_on_every_road_and_returns_inside_the_bounds(name):
    game = GAMES[name]
    low, high = game.utility_bounds()
    env = gym.make(game.gym_id(), opponents="random").unwrapped
    aec = raw_env(name)
    rng = np.random.default_rng(1)
    for episode in range(3):
        obs, info = env.reset(seed=episode)
        keys = set(info)
        done = False
        while not done:
            obs, reward, done, _, info = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            assert set(info) == keys and low <= reward <= high
        aec.reset(seed=episode)
        for agent in aec.agent_iter():
            o, reward, terminated, truncated, pz_info = aec.last()
            assert set(pz_info) - {"outcome"} == keys - set(GYM_ONLY) and low <= reward <= high
            aec.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(o["action_mask"]))))
        assert all(low <= r <= high for r in env.outcome().returns)
    assert worst_return(game, {}) == low == env.illegal_penalty


def test_the_info_columns_are_the_outcome_columns_with_their_types():
    for name in GAME_NAMES:
        game = GAMES[name]
        state = game.new_state(np.random.default_rng(2), {})
        rng = np.random.default_rng(3)
        while not state.is_terminal:
            if getattr(state, "is_chance", False):
                state.apply_chance(rng)
            else:
                state.apply(int(rng.choice(state.legal_actions())))
        defaults, end = game.info_defaults(), game.end_info(state)
        assert set(end) <= set(defaults) and all(type(end[k]) is type(defaults[k]) for k in end), name
        extra = game.outcome(state).extra
        columns = game.info_columns(game.resolve({})) if game.info_columns else {}
        assert all(k in extra for k in columns), name


def test_the_gym_id_plays_every_option_as_the_game_does():
    # the finding: gym.make(id, max_pip=2) raised TypeError while GameEnv("happy", max_pip=2) worked
    env = gym.make("pipslab/HappyDominoes-v0", max_pip=2, hand_size=2).unwrapped
    obs, info = env.reset(seed=0)
    other = GameEnv("happy", max_pip=2, hand_size=2)
    obs2, info2 = other.reset(seed=0)
    assert type(env) is type(other) and np.array_equal(obs["observation"], obs2["observation"])
    assert {"blocked", "passes", "draws"} <= set(info) and list(info) == list(info2)
    with pytest.raises(PipslabError, match="option players='4' \\(str\\)"):
        GameEnv("troshin", players="4")
    with pytest.raises(PipslabError, match="happy has no option 'colour'"):
        gym.make("pipslab/HappyDominoes-v0", colour="red")


def test_backgammon_v0_is_a_deprecated_alias_of_v1():
    with pytest.warns(DeprecationWarning, match="pipslab/Backgammon-v0 is deprecated: use pipslab/Backgammon-v1"):
        old = gym.make("pipslab/Backgammon-v0").unwrapped
    new = gym.make("pipslab/Backgammon-v1").unwrapped
    assert type(old) is type(new) and old.observation_space == new.observation_space
    a, _ = old.reset(seed=5)
    b, _ = new.reset(seed=5)
    assert np.array_equal(a["observation"], b["observation"]) and a["observation"].shape == (223,)
    assert callable(new.afterstates) and callable(new.step_play) and isinstance(new, GameEnv)
    assert not hasattr(GameEnv("happy"), "afterstates")


def test_envs_pickle_and_copy_with_their_game():
    import copy
    import pickle

    env = gym.make("pipslab/Backgammon-v1").unwrapped
    obs, _ = env.reset(seed=2)
    back = pickle.loads(pickle.dumps(env))
    assert type(back) is type(env) and back.game is GAMES["backgammon"]
    assert np.array_equal(back.step(int(np.flatnonzero(obs["action_mask"])[0]))[0]["observation"],
                          env.step(int(np.flatnonzero(obs["action_mask"])[0]))[0]["observation"])
    assert copy.deepcopy(GameEnv("troshin", players=3)).game is GAMES["troshin"]
