"""The PettingZoo AEC envs (pipslab.envs.pettingzoo_env): PettingZoo's own api_test and
seed_test for every game and player count, masks empty off-turn, hidden tiles never in an
observation or the render, rewards equal to the game's returns, seeding, illegal actions."""
import random
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from pipslab.envs.dominoes.match import TroshinMatch
from pipslab.envs.errors import IllegalActionError, PipslabError
from pipslab.envs.game import GAMES
from pipslab.envs.pettingzoo_env import PipslabAECEnv, env, raw_env

from dominoes_helpers import swap_hidden

CONFIGS = [
    ("happy", {"mode": "block"}),
    ("happy", {"mode": "draw"}),
    ("troshin", {"players": 2}),
    ("troshin", {"players": 3}),
    ("troshin", {"players": 4}),
    ("troshin", {"players": 4, "pairs": True}),
    ("troshin", {"players": 2, "match": True}),
    ("troshin", {"players": 4, "pairs": True, "match": True}),
    ("triple", {"players": 2}),
    ("triple", {"players": 3}),
    ("triple", {"players": 4}),
    ("backgammon", {}),
    ("backgammon", {"gammons": False}),
]
DOMINO_CONFIGS = [c for c in CONFIGS if c[0] != "backgammon"]


def _id(config):
    game, options = config
    return "-".join([game] + [f"{k}={v}" for k, v in options.items()])


# PettingZoo's checker warns on every Dict observation of an env not on its list of classic
# envs, and its api_test passes reset options this env does not read (it warns too).
quiet = pytest.mark.filterwarnings("ignore::UserWarning")


@quiet
@pytest.mark.parametrize("config", CONFIGS, ids=_id)
def test_api_test(config):
    game, options = config
    api_test(env(game, **options), num_cycles=1000)


@quiet
@pytest.mark.parametrize("config", CONFIGS, ids=_id)
def test_seed_test(config):
    game, options = config
    seed_test(lambda: env(game, **options), num_cycles=500)


# ------------------------------------------------------------------ helpers
def play(e, rng, check=None, max_steps=20000):
    """Play ``e`` (a wrapped env, already reset) to the end with uniformly random legal
    actions, calling ``check(e)`` before every live agent's step; every agent's last
    reward (the one ``last()`` gives when it is terminated)."""
    final = {}
    steps = 0
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, info = e.last()
        assert not truncated
        if terminated:
            final[agent] = reward
            e.step(None)
            continue
        if check is not None:
            check(e)
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        steps += 1
        assert steps < max_steps
    return final


def _with_state(raw, state, fn):
    saved = raw.game_state
    raw.game_state = state
    try:
        return fn()
    finally:
        raw.game_state = saved


def _swapped(state, observer, rng):
    """``state`` with a tile of another seat's hand traded with a boneyard tile (a state
    ``observer`` cannot tell from it; observer -1: a state nobody at the table can), or None."""
    if isinstance(state, TroshinMatch):
        hand = swap_hidden(state.hand, observer, rng)
        if hand is None:
            return None
        m = state.clone()
        m.hand = hand
        return m
    return swap_hidden(state, observer, rng)


def _same_obs(a, b):
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


# ------------------------------------------------------------------ contract
@pytest.mark.parametrize("config", CONFIGS, ids=_id)
def test_masks_empty_off_turn_and_rewards_are_the_returns(config):
    game, options = config
    e = env(game, **options)
    raw = e.unwrapped
    teams = GAMES[game].teams(options)
    rng = np.random.default_rng(0)
    seen = {"turns": 0, "nonzero_rewards": 0}

    def check(e):
        state, selected = raw.game_state, e.agent_selection
        assert not state.is_terminal and not getattr(state, "is_chance", False)
        assert selected == f"player_{state.current_player}"
        for agent in e.agents:
            obs = e.observe(agent)
            assert obs["action_mask"].dtype == np.int8 and obs["observation"].dtype == np.float32
            assert e.observation_space(agent).contains(obs)
            legal = list(np.flatnonzero(obs["action_mask"]))
            assert legal == (sorted(state.legal_actions()) if agent == selected else [])
            assert e.rewards[agent] == 0.0
        seen["turns"] += 1

    for seed in range(4 if game == "backgammon" or options.get("match") else 10):
        e.reset(seed=seed)
        final = play(e, rng, check)
        state = raw.game_state
        assert state.is_terminal and e.agents == []
        returns = [float(r) for r in state.returns()]
        assert final == {f"player_{s}": returns[s] for s in range(len(returns))}
        assert abs(sum(returns)) < 1e-9                           # zero-sum games
        for s, t in enumerate(teams):
            assert returns[s] == returns[teams.index(t)]           # partners share their side's
        outcome = GAMES[game].outcome(state)
        assert tuple(outcome.returns) == tuple(state.returns())
        seen["nonzero_rewards"] += any(final.values())
    assert seen["turns"] > 20 and seen["nonzero_rewards"] > 0


def test_every_agent_gets_the_outcome_and_zero_masks_at_the_end():
    e = raw_env("troshin", players=4, pairs=True)
    e.reset(seed=3)
    rng = np.random.default_rng(3)
    while not any(e.terminations.values()):
        e.step(int(rng.choice(np.flatnonzero(e.observe(e.agent_selection)["action_mask"]))))
    assert all(e.terminations.values()) and not any(e.truncations.values())
    outcomes = [e.infos[a]["outcome"] for a in e.agents]
    assert all(o is outcomes[0] for o in outcomes) and outcomes[0].returns == tuple(e.game_state.returns())
    for agent in e.agents:
        assert not e.observe(agent)["action_mask"].any()
        assert e._cumulative_rewards[agent] == e.game_state.returns()[e.agent_seat[agent]]
    assert e.rewards["player_0"] == e.rewards["player_2"] == -e.rewards["player_1"] == -e.rewards["player_3"] != 0


@pytest.mark.parametrize("config", DOMINO_CONFIGS, ids=_id)
def test_hidden_tiles_never_reach_an_observation_or_the_render(config):
    game, options = config
    rng, pyrng = np.random.default_rng(1), random.Random(1)
    players = GAMES[game].players(options)
    shown_to = {seat: raw_env(game, render_mode="ansi", viewer=f"player_{seat}", **options)
                for seat in range(players)}
    public = raw_env(game, render_mode="ansi", **options)
    e = env(game, **options)
    raw = e.unwrapped
    counts = {"obs": 0, "render": 0, "differs": 0}

    def check(e):
        state = raw.game_state
        for seat in range(players):
            agent = f"player_{seat}"
            twin = _swapped(state, seat, pyrng)
            if twin is None:
                continue
            assert _same_obs(e.observe(agent), _with_state(raw, twin, lambda: e.observe(agent)))
            view = shown_to[seat]
            view.game_state = state
            assert view.render() == _with_state(view, twin, view.render)
            counts["obs"] += 1
        twin = _swapped(state, -1, pyrng)          # any hand: nobody can tell
        if twin is not None:
            public.game_state = state
            assert public.render() == _with_state(public, twin, public.render)
            counts["render"] += 1
            # the swap is a real change: the game's render with every hand shown tells them apart
            render = GAMES[game].render
            counts["differs"] += render(state, viewer=None) != render(twin, viewer=None)

    for seed in range(3):
        e.reset(seed=seed)
        for v in list(shown_to.values()) + [public]:
            v.reset(seed=seed)
        play(e, rng, check)
    assert counts["obs"] > 10 and counts["render"] > 3 and counts["differs"] == counts["render"]


def test_render_shows_the_viewer_hand_only_and_every_hand_at_the_end():
    e = raw_env("happy", render_mode="ansi", viewer="player_1")
    e.reset(seed=5)
    state = e.game_state
    from pipslab.envs.dominoes.tiles import format_tiles, tiles_of
    text = e.render()
    assert format_tiles(tiles_of(state.hands[1])) in text
    assert format_tiles(tiles_of(state.hands[0])) not in text and "seat 0: 7 tiles" in text
    assert raw_env("happy", render_mode="ansi", viewer=1).reset(seed=5) is None
    nobody = raw_env("happy", render_mode="ansi")
    nobody.reset(seed=5)
    assert "seat 0: 7 tiles" in nobody.render() and "seat 1: 7 tiles" in nobody.render()
    rng = np.random.default_rng(0)
    while not nobody.game_state.is_terminal:
        nobody.step(int(rng.choice(np.flatnonzero(nobody.observe(nobody.agent_selection)["action_mask"]))))
    assert nobody.render() == GAMES["happy"].render(nobody.game_state, viewer=None)
    with pytest.warns(UserWarning, match="render_mode"):
        quiet_env = raw_env("happy")
        quiet_env.reset(seed=0)
        assert quiet_env.render() is None
    bg = raw_env("backgammon", render_mode="ansi")
    bg.reset(seed=0)
    assert "Position ID" in bg.render()


# ------------------------------------------------------------------ seeding
def _trajectory(e, seed, actions_seed=0):
    e.reset(seed=seed)
    rng = np.random.default_rng(actions_seed)
    out = []
    for agent in e.agent_iter():
        obs, reward, terminated, _, _ = e.last()
        out.append((agent, obs["observation"].tobytes(), reward))
        e.step(None if terminated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return out


@pytest.mark.parametrize("game, options", [("troshin", {"players": 3, "match": True}), ("backgammon", {})])
def test_the_seed_alone_fixes_deals_and_dice(game, options):
    random.seed(1)
    np.random.seed(1)
    first = _trajectory(env(game, **options), 7)
    random.seed(2)                       # the global generators play no part
    np.random.seed(2)
    again = env(game, **options)
    assert _trajectory(again, 7) == first
    assert _trajectory(again, 8) != first                   # another seed, another game
    # without a seed the env's generator goes on: the next game is another one, and a
    # fresh env reseeded the same way replays both
    e = env(game, **options)
    a, b = _trajectory(e, 7), _trajectory(e, None)
    assert a == first and b != a
    f = env(game, **options)
    assert _trajectory(f, 7) == a and _trajectory(f, None) == b


def test_reset_from_a_position():
    game = GAMES["troshin"]
    state = game.new_state(np.random.default_rng(4), {"players": 3})
    text = game.format(state)
    e = raw_env("troshin", players=3)
    e.reset(seed=0, options={"position": text})
    assert game.format(e.game_state) == text and e.agent_selection == f"player_{state.current_player}"
    bg = raw_env("backgammon")
    bg.reset(seed=0, options={"position": "4HPwATDgc/ABMA"})
    assert bg.agent_selection == "player_0" and bg.game_state.roll        # seat 0 rolled, from np_random
    with pytest.raises(PipslabError, match="position"):
        e.reset(options={"position": ""})
    with pytest.warns(UserWarning, match="not used"):
        e.reset(options={"positon": text})


# ------------------------------------------------------------------ bad input, illegal actions
def test_illegal_action_ends_the_game_for_everyone_with_the_worst_reward(caplog):
    for game, options, worst in [("happy", {}, -1.0), ("backgammon", {}, -3.0),
                                 ("backgammon", {"gammons": False}, -1.0)]:
        e = env(game, **options)
        e.reset(seed=0)
        mover = e.agent_selection
        illegal = int(np.flatnonzero(e.observe(mover)["action_mask"] == 0)[0])
        caplog.clear()
        e.step(illegal)
        assert "Illegal move" in caplog.text             # PettingZoo's logger says so
        assert all(e.terminations.values())
        assert e.rewards[mover] == worst and all(r == 0 for a, r in e.rewards.items() if a != mover)
        last = {}
        for agent in e.agent_iter():                # every agent is stepped out with None
            last[agent] = e.last()[1]
            e.step(None)
        assert last[mover] == worst and sorted(last) == e.possible_agents
        assert e.agents == []
    raw = raw_env("happy")
    raw.reset(seed=0)
    illegal = int(np.flatnonzero(raw.observe(raw.agent_selection)["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError, match="legal"):
        raw.step(illegal)
    with pytest.raises(PipslabError):
        raw.step(1.5)
    with pytest.raises(PipslabError):
        raw.step(10_000)


def test_bad_arguments_are_one_line_errors():
    with pytest.raises(PipslabError, match="unknown game"):
        raw_env("chess")
    with pytest.raises(PipslabError, match="players"):
        raw_env("triple", players=5)
    with pytest.raises(PipslabError, match="no option"):
        raw_env("happy", players=3)
    with pytest.raises(PipslabError, match="render_mode"):
        raw_env("happy", render_mode="video")
    with pytest.raises(PipslabError, match="viewer"):
        raw_env("happy", viewer="player_2")
    with pytest.raises(PipslabError, match="viewer"):
        raw_env("happy", viewer=True)
    with pytest.raises(PipslabError, match="reset"):
        raw_env("happy").observe("player_0")
    e = raw_env("happy")
    e.reset(seed=0)
    with pytest.raises(PipslabError, match="no agent"):
        e.observe("player_2")


def test_spaces_names_and_action_ids():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        e = raw_env("troshin", players=4, pairs=True)
    assert isinstance(e, PipslabAECEnv) and e.possible_agents == [f"player_{i}" for i in range(4)]
    assert str(e) == "pipslab_troshin_4_pairs_v0" and str(env("happy", mode="draw")) == "pipslab_happy_draw_v0"
    spaces_ = [e.observation_space(a) for a in e.possible_agents]
    assert len({id(s) for s in spaces_}) == 4 and all(s == spaces_[0] for s in spaces_)
    assert spaces_[0]["observation"].shape == (191,) and spaces_[0]["action_mask"].shape == (58,)
    bg = raw_env("backgammon")
    encoder = GAMES["backgammon"].observation_encoder()        # whatever the encoding becomes
    space = bg.observation_space("player_1")["observation"]
    assert bg.action_space("player_0").n == 151 and space.shape == (encoder.size,)
    assert space.high.max() == encoder.high and space.low.min() == encoder.low
    bg.reset(seed=0)
    # the gym env's encoding: (from - 1) * 6 + (die - 1), bar = 25, PASS = 150
    from pipslab.envs.backgammon.game import decode_action
    legal = np.flatnonzero(bg.observe(bg.agent_selection)["action_mask"])
    assert len(legal) and 150 not in legal             # the opening roll always moves
    for a in legal:
        from_point, die = decode_action(int(a))
        assert die in bg.game_state.dice and 1 <= from_point <= 25


@quiet
def test_a_game_registered_later_gets_an_env_too():
    import toy_dice_race  # noqa: F401  (registers toy-race: a game with chance nodes, in one file)
    api_test(env("toy-race", players=3), num_cycles=1000)
    seed_test(lambda: env("toy-race", players=3), num_cycles=500)
    e = env("toy-race", players=3)
    e.reset(seed=2)
    final = play(e, np.random.default_rng(2))
    assert final == {f"player_{s}": float(r) for s, r in enumerate(e.unwrapped.game_state.returns())}


def test_a_match_deals_each_hand_inside_the_aec_env():
    """Between a match's hands the env deals the next one from its own generator: every
    agent the iterator hands over sees a decision (or the end), never a chance node."""
    e = raw_env("troshin", players=4, pairs=True, match=True)
    e.reset(seed=2)
    rng = np.random.default_rng(2)
    hands = set()
    for agent in e.agent_iter():
        s = e.game_state
        assert not s.is_chance
        hands.add(s.hand_index)
        obs, _reward, terminated, truncated, _info = e.last()
        if terminated or truncated:
            e.step(None)
            continue
        assert agent == f"player_{s.current_player}" and obs["action_mask"].any()
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert e.game_state.is_terminal and len(hands) == e.game_state.hand_index + 1 >= 3
