"""Seeded episodes through the built-in Gym ids, recorded as plain data: the golden file
``tests/envs/data/playthroughs.json.gz`` was written by the hand-written env classes before
issue 20 derived every env from the ``Game`` alone; ``test_playthroughs.py`` replays the
same cases through today's ids and compares observations (hashes), rewards, ``info`` and
the ``ansi`` renders.

Regenerate (only when an observation, reward or info change is intended, with a version
bump of the id): ``.venv/bin/python tests/envs/playthroughs.py``.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import os
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "data", "playthroughs.json.gz")

HAPPY_POSITION = ("happy-block; turn=0; passes=0; line=-; hands=0-3 1-4 2-4 3-5 5-5 5-6 6-6 / 0-0 1-2 1-3 1-5 "
                  "1-6 2-2 3-3; boneyard=2-6 0-6 0-1 0-2 4-5 2-5 2-3 0-4 1-1 4-4 0-5 3-6 3-4 4-6")

# name -> (id, constructor kwargs, episodes, illegal step (-1: none), reset options of episode 0)
CASES = {
    "happy-block": ("pipslab/HappyDominoes-v0", {}, 6, -1, None),
    "happy-block-seat1-forced": ("pipslab/HappyDominoes-v0", {"learner_seat": 1, "auto_forced": True}, 6, -1, None),
    "happy-draw": ("pipslab/HappyDominoes-v0", {"mode": "draw", "render_mode": "ansi"}, 6, -1, None),
    "happy-draw-heaviest-reveal": ("pipslab/HappyDominoes-v0",
                                   {"mode": "draw", "opponents": "heaviest", "reveal": True}, 4, -1, None),
    "happy-lose": ("pipslab/HappyDominoes-v0", {"illegal_action": "lose"}, 3, 2, None),
    "happy-position": ("pipslab/HappyDominoes-v0", {"render_mode": "ansi"}, 1, -1, {"position": HAPPY_POSITION}),
    "troshin-2": ("pipslab/TroshinDominoes-v0", {"players": 2, "render_mode": "ansi"}, 4, -1, None),
    "troshin-3": ("pipslab/TroshinDominoes-v0", {"players": 3, "learner_seat": 2}, 4, -1, None),
    "troshin-4": ("pipslab/TroshinDominoes-v0", {"players": 4, "reveal": True}, 3, -1, None),
    "troshin-4-pairs": ("pipslab/TroshinDominoes-v0", {"players": 4, "pairs": True, "learner_seat": 1}, 3, -1, None),
    "troshin-2-match": ("pipslab/TroshinDominoes-v0", {"players": 2, "match": True}, 1, -1, None),
    "troshin-4-pairs-match": ("pipslab/TroshinDominoes-v0", {"players": 4, "pairs": True, "match": True,
                                                             "render_mode": "ansi"}, 1, -1, None),
    "troshin-3-lose": ("pipslab/TroshinDominoes-v0", {"players": 3, "illegal_action": "lose"}, 2, 1, None),
    "triple-2": ("pipslab/TripleDominoes-v0", {"players": 2, "render_mode": "ansi"}, 3, -1, None),
    "triple-3": ("pipslab/TripleDominoes-v0", {"players": 3, "learner_seat": 1, "reveal": True}, 3, -1, None),
    "triple-4": ("pipslab/TripleDominoes-v0", {"players": 4, "auto_forced": True}, 2, -1, None),
    "backgammon": ("pipslab/Backgammon-v0", {"render_mode": "ansi"}, 2, -1, None),
    "backgammon-seat1-nogammons": ("pipslab/Backgammon-v0", {"learner_seat": 1, "gammons": False}, 2, -1, None),
    "backgammon-random-agent": ("pipslab/Backgammon-v0", {"opponents": "random"}, 1, -1, None),
    "backgammon-lose": ("pipslab/Backgammon-v0", {"illegal_action": "lose"}, 2, 5, None),
    "backgammon-position": ("pipslab/Backgammon-v0", {}, 1, -1,
                            {"position": "4HPwATDgc/ABMA", "dice": (5, 2), "player": 0}),
}


def _digest(*arrays) -> str:
    h = hashlib.sha1()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(str(a.dtype).encode() + str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()[:16]


def _value(v):
    if isinstance(v, np.ndarray):
        return ["ndarray", str(v.dtype), _digest(v)]
    if isinstance(v, (list, tuple)):
        return [type(v).__name__, [_value(x) for x in v]]
    if isinstance(v, np.generic):
        return ["np." + type(v).__name__, v.item()]
    return [type(v).__name__, v]


def _info(info: dict) -> list:
    return [[k, _value(v)] for k, v in info.items()]


def _text(text) -> str:
    return None if text is None else hashlib.sha1(text.encode()).hexdigest()[:16]


def play(make, episodes: int, illegal_step: int, first_options) -> dict:
    """Episodes of ``make()`` (seeds 0, 1, …) with a seeded uniform learner over the mask;
    an illegal action at step ``illegal_step`` of each episode when >= 0."""
    env = make()
    out = {"action_space": str(env.action_space), "observation_space": str(env.observation_space),
           "episodes": []}
    for episode in range(episodes):
        rng = np.random.default_rng(1000 + episode)
        obs, info = env.reset(seed=episode, options=first_options if episode == 0 else None)
        steps = [{"obs": _digest(obs["observation"], obs["action_mask"]), "info": _info(info),
                  "render": _text(env.render()) if env.render_mode == "ansi" else None}]
        done, k = bool(env.unwrapped.state.is_terminal), 0
        while not done:
            legal = np.flatnonzero(obs["action_mask"])
            if k == illegal_step:
                action = int(next(a for a in range(env.action_space.n) if a not in set(legal.tolist())))
            else:
                action = int(rng.choice(legal))
            obs, reward, terminated, truncated, info = env.step(action)
            done = terminated or truncated
            steps.append({"action": action, "obs": _digest(obs["observation"], obs["action_mask"]),
                          "reward": float(reward), "terminated": bool(terminated), "truncated": bool(truncated),
                          "info": _info(info),
                          "render": _text(env.render()) if env.render_mode == "ansi" and (done or k % 7 == 0)
                          else None})
            k += 1
        outcome = env.unwrapped.outcome()
        steps[-1]["returns"] = None if outcome is None else [float(r) for r in outcome.returns]
        out["episodes"].append(steps)
    env.close()
    return out


def record(resolve_id=lambda env_id: env_id) -> dict:
    import gymnasium as gym
    import pipslab  # noqa: F401  (registers the ids, installs the agent factory)

    out = {}
    for name, (env_id, kwargs, episodes, illegal, options) in CASES.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out[name] = play(lambda: gym.make(resolve_id(env_id), **kwargs), episodes, illegal, options)
    return out


# OpenSpiel: (short name, parameters, games)
SPIEL_CASES = {
    "happy-block": ("pipslab_happy", {}, 3),
    "happy-draw-d3": ("pipslab_happy", {"mode": "draw", "max_pip": 3, "hand_size": 3}, 3),
    "troshin-3": ("pipslab_troshin", {"players": 3}, 2),
    "troshin-4-pairs": ("pipslab_troshin", {"players": 4, "pairs": True}, 2),
    "triple-3": ("pipslab_triple", {"players": 3}, 2),
    "backgammon": ("pipslab_backgammon", {}, 1),
    "backgammon-nogammons": ("pipslab_backgammon", {"gammons": False}, 1),
}


def play_spiel(game, games: int) -> dict:
    """Games of an OpenSpiel game: chance by its probabilities, seats uniformly, from a
    seeded generator; per step the action, and per game the hashes of every seat's
    observation tensors and strings and information state strings, and the returns."""
    import pyspiel

    out = {"info": [game.num_distinct_actions(), game.max_chance_outcomes(), game.num_players(),
                    game.min_utility(), game.max_utility(), game.max_game_length(),
                    list(game.observation_tensor_shape())], "games": []}
    for g in range(games):
        rng = np.random.default_rng(2000 + g)
        state = game.new_initial_state()
        actions, seen = [], hashlib.sha1()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                action = int(outcomes[rng.choice(len(outcomes), p=np.asarray(probs) / sum(probs))])
            else:
                p = state.current_player()
                seen.update(np.asarray(state.observation_tensor(p), np.float32).tobytes())
                seen.update(state.observation_string(p).encode())
                seen.update(state.information_state_string(p).encode())
                action = int(rng.choice(state.legal_actions()))
            actions.append(action)
            state.apply_action(action)
        out["games"].append({"actions": actions, "seen": seen.hexdigest()[:16], "returns": state.returns(),
                             "str": _text(str(state))})
    return out


def record_spiel() -> dict:
    import pyspiel
    import pipslab.envs.openspiel_games  # noqa: F401  (registers the games)

    return {name: play_spiel(pyspiel.load_game(short, params), games)
            for name, (short, params, games) in SPIEL_CASES.items()}


# PettingZoo: (game, options, games)
AEC_CASES = {
    "happy-draw": ("happy", {"mode": "draw"}, 3),
    "troshin-4-pairs-match": ("troshin", {"players": 4, "pairs": True, "match": True}, 1),
    "triple-3": ("triple", {"players": 3}, 2),
    "backgammon": ("backgammon", {}, 1),
}


def play_aec(make, games: int) -> dict:
    env = make()
    out = []
    for g in range(games):
        rng = np.random.default_rng(3000 + g)
        env.reset(seed=g)
        steps = []
        for agent in env.agent_iter():
            obs, reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                action = None
            else:
                action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            steps.append([agent, _digest(obs["observation"], obs["action_mask"]), float(reward), action])
            env.step(action)
        out.append(steps)
    return out


def record_aec() -> dict:
    from pipslab.envs.pettingzoo_env import env as aec_env

    return {name: play_aec(lambda: aec_env(game, **options), games)
            for name, (game, options, games) in AEC_CASES.items()}


def load() -> dict:
    with gzip.open(GOLDEN, "rt") as f:
        return json.load(f)


if __name__ == "__main__":
    data = record()
    data["openspiel"] = record_spiel()
    data["pettingzoo"] = record_aec()
    os.makedirs(os.path.dirname(GOLDEN), exist_ok=True)
    with gzip.open(GOLDEN, "wt", compresslevel=9) as f:
        json.dump(data, f, separators=(",", ":"))
    print(f"wrote {GOLDEN}: {os.path.getsize(GOLDEN):,} bytes", file=sys.stderr)
