"""Small helpers shared by the domino tests."""
import numpy as np

from pipslab.envs.dominoes.engine import deal, encode_place
from pipslab.envs.dominoes.notation import parse_position
from pipslab.envs.dominoes.tiles import FULL_SET, count, format_tiles, mask_of, parse_tile, tiles_of


def played_at_random(variant, rng, low: int, high: int):
    """A deal of ``variant`` from ``rng`` (a ``random.Random``), then ``rng.randrange(low,
    high)`` uniformly random moves, fewer if the hand ends first: the positions the search
    and teacher tests draw their decisions from."""
    s = deal(variant, rng)
    for _ in range(rng.randrange(low, high)):
        if s.is_terminal:
            break
        legal = s.legal_actions()
        s.apply(legal[rng.randrange(len(legal))])
    return s


def t(name: str) -> int:
    return parse_tile(name)


def hand(state, seat) -> str:
    return format_tiles(tiles_of(state.hands[seat]))


def place(state, tile: str, end: str) -> int:
    return encode_place(state.variant, t(tile), {"left": 0, "right": 1}[end])


def rest_of(*groups: str) -> str:
    """The tiles in none of the given space-separated groups, as a tile list."""
    used = mask_of(t(x) for g in groups for x in g.split())
    return format_tiles(tiles_of(FULL_SET & ~used))


def position(text: str):
    return parse_position(text)


def accounted(state) -> bool:
    """Every one of the 28 tiles is in exactly one place: a hand, the table or the boneyard."""
    places = list(state.hands) + [state.table, sum(1 << x for x in state.boneyard_tiles())]
    union = total = 0
    for m in places:
        union |= m
        total += count(m)
    return union == FULL_SET and total == 28


def swap_hidden(state, observer: int, rng=None):
    """A copy of ``state`` in which a tile of another seat's hand and a boneyard tile trade
    places: a state ``observer`` cannot tell from ``state``.  ``None`` when there is no such
    pair (no other seat holds a tile, or the boneyard is empty).

    Without ``rng`` the lowest tile of the first other seat that has one and the next
    boneyard tile; with a ``random.Random``, a random seat, tile and boneyard place.  A
    lucky tile that must be placed now (Triple) is known to every seat and never moves.
    """
    if not state.boneyard_size:
        return None
    lucky = getattr(state, "lucky", -1)
    pairs = [(p, x) for p in range(state.variant.players) if p != observer
             for x in tiles_of(state.hands[p]) if x != lucky]
    if not pairs:
        return None
    bone = list(state.boneyard_tiles())
    if rng is None:
        (seat, held), i = pairs[0], 0
    else:
        (seat, held), i = rng.choice(pairs), rng.randrange(len(bone))
    bone[i], buried = held, bone[i]   # the held tile goes to the boneyard, the buried one to the hand
    c = state.clone()
    c.hands[seat] = (c.hands[seat] & ~(1 << held)) | (1 << buried)
    c.boneyard, c.bpos = tuple(bone), 0
    return c


def run_episodes(env, episodes, max_steps=2000):
    """Play ``episodes`` episodes of a domino env (seeds 0, 1, …) with uniformly random legal
    actions, checking at every step that the mask is the engine's legal actions (in the
    observation, in ``info`` and from ``action_masks()``) and the observation's type and
    range; at the end that the reward is the learner's return.  The rewards and last info."""
    rng = np.random.default_rng(0)
    rewards = []
    info = None
    for episode in range(episodes):
        obs, info = env.reset(seed=episode)
        done = False
        steps = 0
        while not done:
            mask = obs["action_mask"]
            assert mask.dtype == np.int8 and obs["observation"].dtype == np.float32
            assert obs["observation"].shape == (env.obs_size,)
            assert 0.0 <= obs["observation"].min() and obs["observation"].max() <= 1.0
            assert np.array_equal(mask, info["action_mask"])
            assert np.array_equal(env.action_masks(), mask) and env.action_masks().dtype == np.int8
            assert list(np.flatnonzero(mask)) == info["legal_actions"] == env.state.legal_actions()
            obs, reward, done, truncated, info = env.step(rng.choice(np.flatnonzero(mask)))
            assert not truncated
            steps += 1
            assert steps < max_steps
        assert reward == env.state.returns()[env.learner_seat]
        outcome = env.outcome()
        assert info["winner"] == (-1 if outcome.winner is None else outcome.winner)
        assert info["draw"] == outcome.draw
        assert [info[f"pips_left_{s}"] for s in range(env.players)] == list(outcome.pips_left)
        rewards.append(reward)
    return rewards, info
