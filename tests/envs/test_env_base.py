"""What every Gymnasium adapter shares (pipslab.envs.base_env.SeatEnv): one ``opponents``
argument (``opponent=`` a deprecated alias), and the hidden-information rule — neither
``info`` nor the ``ansi`` render shows another seat's tiles or the boneyard's while the game
is on, unless ``reveal=True``."""
import dataclasses
import random
import re
import warnings

import gymnasium as gym
import numpy as np
import pytest

import pipslab  # noqa: F401  (registers the ids)
from pipslab.envs.base_env import SeatEnv
from pipslab.envs.dominoes.match import TroshinMatch
from pipslab.envs.dominoes.tiles import TILES, tiles_of
from pipslab.envs.errors import PipslabError
from pipslab.envs.generic_env import GameEnv

from dominoes_helpers import swap_hidden

DOMINO_ENVS = {
    "happy-block": lambda **k: GameEnv("happy", mode="block", **k),
    "happy-draw": lambda **k: GameEnv("happy", mode="draw", **k),
    "troshin-2": lambda **k: GameEnv("troshin", players=2, **k),
    "troshin-3": lambda **k: GameEnv("troshin", players=3, **k),
    "troshin-4": lambda **k: GameEnv("troshin", players=4, **k),
    "troshin-4-pairs": lambda **k: GameEnv("troshin", players=4, pairs=True, **k),
    "troshin-2-match": lambda **k: GameEnv("troshin", players=2, match=True, **k),
    "troshin-4-pairs-match": lambda **k: GameEnv("troshin", players=4, pairs=True, match=True, **k),
    "triple-2": lambda **k: GameEnv("triple", players=2, **k),
    "triple-3": lambda **k: GameEnv("triple", players=3, **k),
    "triple-4": lambda **k: GameEnv("triple", players=4, **k),
    "happy-d3": lambda **k: GameEnv("happy", mode="draw", max_pip=3, **k),
}
ALL_ENVS = dict(DOMINO_ENVS, backgammon=lambda **k: GameEnv("backgammon", **k))


# ------------------------------------------------------------------ hidden tiles
def _hand_state(state):
    return state.hand if isinstance(state, TroshinMatch) else state


def _hidden_tiles(state, me) -> set:
    s = _hand_state(state)
    hidden = set(s.boneyard_tiles())
    for p in range(s.variant.players):
        if p != me:
            hidden |= set(tiles_of(s.hands[p]))
    return hidden


def _tile_patterns(tile) -> re.Pattern:
    a, b = TILES[tile]
    names = {f"{a}-{b}", f"{b}-{a}"}
    return re.compile(r"(?<![\d|])(" + "|".join(map(re.escape, names)) + r")(?![\d|])"
                      + rf"|\[{a}\|{b}\]|\[{b}\|{a}\]")


def _strings(obj):
    """Every string inside ``obj`` (dicts, sequences, dataclasses), keys included."""
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for v in obj:
            yield from _strings(v)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        yield from _strings(dataclasses.asdict(obj))


def _shown(text: str, hidden: set) -> list:
    return sorted(t for t in hidden if _tile_patterns(t).search(text))


def _leaks(env, info) -> list:
    """The hidden tiles of the seats other than the learner's named in ``info`` or the render."""
    hidden = _hidden_tiles(env.state, env.learner_seat)
    texts = list(_strings(info)) + [env.render()]
    return _shown("\n".join(texts), hidden)


def _with_state(env, state):
    saved = env.state
    env.state = state
    try:
        return env._info(), env.render()
    finally:
        env.state = saved


def _swapped(env, rng):
    """The env's state with a hidden tile of another seat traded with a boneyard tile: a
    state the learner cannot tell from the true one (None when there is no such pair)."""
    state = env.state
    if isinstance(state, TroshinMatch):
        hand = swap_hidden(state.hand, env.learner_seat, rng)
        if hand is None:
            return None
        m = state.clone()
        m.hand = hand
        return m
    return swap_hidden(state, env.learner_seat, rng)


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return a == b


def _random_steps(env, seed, games):
    """(info, swap) at every point of ``games`` random games where the game is on."""
    rng = np.random.default_rng(seed)
    pyrng = random.Random(seed)
    for g in range(games):
        obs, info = env.reset(seed=seed * 100 + g)
        done = False
        while True:
            if not env.state.is_terminal:
                yield info, _swapped(env, pyrng)
            if done:
                break
            legal = np.flatnonzero(obs["action_mask"])
            obs, _, done, _, info = env.step(int(rng.choice(legal)))


@pytest.mark.parametrize("name", list(DOMINO_ENVS))
def test_info_and_render_never_show_hidden_tiles(name):
    for learner in (0, 1):
        env = DOMINO_ENVS[name](learner_seat=learner, render_mode="ansi")
        checked = swaps = 0
        for info, swap in _random_steps(env, seed=learner + 1, games=3):
            assert _leaks(env, info) == [], (name, env.render())
            if swap is not None:   # the same info and picture for a state the learner cannot tell apart
                info2, text2 = _with_state(env, swap)
                assert _same(info, info2) and text2 == env.render(), name
                swaps += 1
            checked += 1
        assert checked > 3 and swaps > 0


@pytest.mark.parametrize("name", list(DOMINO_ENVS))
def test_reveal_shows_the_hidden_tiles(name):
    env = DOMINO_ENVS[name](render_mode="ansi", reveal=True)
    leaked = 0
    for info, _swap in _random_steps(env, seed=5, games=2):
        hidden = _hidden_tiles(env.state, env.learner_seat)
        render_shows = _shown(env.render(), hidden)
        info_shows = _shown("\n".join(_strings(info)), hidden)
        hands_hidden = hidden - set(_hand_state(env.state).boneyard_tiles())
        assert set(render_shows) >= hands_hidden          # every other hand is drawn
        assert set(info_shows) == hidden                  # info["position"]: hands and boneyard
        leaked += bool(hidden)
    assert leaked > 0


def test_render_turns_the_hands_up_at_the_end():
    env = GameEnv("happy", mode="block", render_mode="ansi")
    env.reset(options={"position": "happy-block; turn=0; ends=1|0; hands=1-2 / 0-0 0-2"})
    assert "0-0" not in env.render() and "2 tiles" in env.render()
    obs, reward, done, _, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert done and "0-0 0-2" in env.render() and (info["pips_left_0"], info["pips_left_1"]) == (0, 2)
    assert "position" not in info


# ------------------------------------------------------------------ opponents
@pytest.mark.parametrize("name", list(ALL_ENVS))
def test_one_opponents_argument_and_the_deprecated_alias(name):
    make = ALL_ENVS[name]
    env = make(opponents="random")
    assert isinstance(env, SeatEnv) and env.seat_agents[env.learner_seat] is None
    with pytest.warns(DeprecationWarning, match="opponents="):
        old = make(opponent="random")
    assert [type(a) for a in old.seat_agents] == [type(a) for a in env.seat_agents]
    with pytest.raises(PipslabError, match="not both"), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        make(opponents="random", opponent="random")
    players = env.players
    per_seat = make(opponents=["random"] * players)
    assert per_seat.seat_agents[0] is None and all(a is not None for a in per_seat.seat_agents[1:])
    with pytest.raises(PipslabError, match="one per seat"):
        make(opponents=["random"] * (players + 1))


def test_gym_make_takes_opponents_and_the_old_name():
    env = gym.make("pipslab/HappyDominoes-v0", opponents="heaviest").unwrapped
    assert env.opponent.name == "heaviest"
    with pytest.warns(DeprecationWarning):
        env = gym.make("pipslab/Backgammon-v1", opponent="random").unwrapped
    assert env.opponent is not None


def test_masks_agree_across_envs():
    for name, make in ALL_ENVS.items():
        env = make()
        obs, info = env.reset(seed=0)
        assert obs["action_mask"].dtype == np.int8 and info["action_mask"].dtype == np.int8, name
        assert env.action_masks().dtype == np.int8, name
        assert np.array_equal(env.action_masks(), obs["action_mask"]), name
        assert list(np.flatnonzero(obs["action_mask"])) == info["legal_actions"], name
