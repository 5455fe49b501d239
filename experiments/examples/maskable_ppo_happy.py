"""MaskablePPO (sb3-contrib) on ``pipslab/HappyDominoes-v0`` as it is, judged by ``pipslab tournament``.

Train (``stable-baselines3`` and ``sb3-contrib`` are in the ``dev`` extra)::

    python experiments/examples/maskable_ppo_happy.py --steps 300000 --seed 0 --out results/ppo-happy

then evaluate the saved policy through the tournament harness, this file imported for its
``ppo`` agent (``ppo:path=FILE``; the default path is ``results/ppo-happy/policy.pt``)::

    pipslab tournament happy --import experiments/examples/maskable_ppo_happy.py \\
        --agents ppo,random --games 2000 --seed 1 --out results/ppo-happy/vs-random

Why it is written this way:

* **The env unchanged.**  ``gym.make("pipslab/HappyDominoes-v0", learner_seat=…,
  opponents=…)`` — no wrapper: the observation dict carries its own ``action_mask`` and
  ``action_masks()`` is what sb3-contrib reads (through ``get_wrapper_attr``).  The
  ``--envs`` copies (default 8) alternate the learner's seat and the opponent
  (``--opponents random,heaviest``), so one policy learns both seats against both.
* **Seeds.**  ``--seed`` seeds the model (torch, the sampled actions) and each env copy
  (``seed + i``: the deals and the opponents' choices).  One run is repeatable on one
  machine; torch does not promise the same floats across machines or thread counts.
* **Safe files.**  The policy is saved as a plain ``state_dict`` with its configuration
  (``torch.save`` of tensors, numbers and strings, written atomically) and read back with
  ``torch.load(..., weights_only=True)`` into a freshly built policy — never sb3's
  ``MaskablePPO.load``, which unpickles whatever the zip holds.
* **The agent.**  ``ppo`` plays the policy's most probable legal action (``sample=true``:
  draws from its masked distribution with the game's ``rng``, so a seeded tournament
  replays).  The loaded policy is cached per process (the harness builds fresh agents
  every game; the network is read-only).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from pipslab.agents.base import Agent, Observation
from pipslab.agents.registry import register
from pipslab.envs.errors import PipslabError

ENV_ID = "pipslab/HappyDominoes-v0"
FORMAT = "pipslab-maskable-ppo-happy/1"
DEFAULT_PATH = "results/ppo-happy/policy.pt"
_POLICIES: dict = {}


# ------------------------------------------------------------------ the policy file
def _spaces(mode: str):
    import gymnasium as gym
    env = gym.make(ENV_ID, mode=mode)
    return env.observation_space, env.action_space


def _build_policy(mode: str, net_arch):
    import torch
    from sb3_contrib.common.maskable.policies import MaskableMultiInputActorCriticPolicy
    obs_space, act_space = _spaces(mode)
    policy = MaskableMultiInputActorCriticPolicy(obs_space, act_space, lambda _: 0.0,
                                                 net_arch=list(net_arch), activation_fn=torch.nn.Tanh)
    policy.set_training_mode(False)
    return policy


def save_policy(model, path: Path, meta: dict) -> None:
    """The trained policy's weights and configuration, written atomically (no pickled objects)."""
    import torch
    from pipslab.experiments.files import atomic_path
    data = {"format": FORMAT, "config": {"mode": meta["mode"], "net_arch": list(meta["net_arch"])},
            "meta": {k: v for k, v in meta.items() if isinstance(v, (int, float, str))},
            "policy": model.policy.state_dict()}
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        torch.save(data, tmp)


def load_policy(path) -> tuple:
    """``(policy, config)`` of a file written by :func:`save_policy`, read with
    ``weights_only=True``; one-line errors for a missing or foreign file.  Cached."""
    key = str(Path(path).resolve())
    if key in _POLICIES:
        return _POLICIES[key]
    import torch
    torch.set_num_threads(1)       # one game at a time per process: threads only cost
    p = Path(path)
    if not p.is_file():
        raise PipslabError(f"ppo: no policy file {path} (train one: python experiments/examples/maskable_ppo_happy.py)")
    try:
        data = torch.load(p, map_location="cpu", weights_only=True)
    except Exception as exc:   # noqa: BLE001 - any unreadable file is one line
        raise PipslabError(f"ppo: cannot read {path}: {str(exc).splitlines()[0][:160]}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise PipslabError(f"ppo: {path} is not a policy file of this example (format {FORMAT})")
    cfg = data["config"]
    policy = _build_policy(cfg["mode"], cfg["net_arch"])
    try:
        policy.load_state_dict(data["policy"], strict=True)
    except RuntimeError as exc:
        raise PipslabError(f"ppo: {path}: the weights do not fit the policy ({str(exc).splitlines()[0][:160]})") from None
    _POLICIES[key] = (policy, cfg)
    return _POLICIES[key]


# ------------------------------------------------------------------ the agent
class PPOAgent(Agent):
    """The saved MaskablePPO policy as a Happy seat (module docstring)."""

    name = "ppo"

    def __init__(self, path: str = DEFAULT_PATH, sample: bool = False):
        self.policy, self.config = load_policy(path)
        self.sample = sample

    def check_table(self, game: str, options: dict) -> None:
        if game != "happy" or options.get("mode", "block") != self.config["mode"]:
            raise PipslabError(f"ppo: this policy plays happy --mode {self.config['mode']}, "
                               f"not {game} {options.get('mode', '')}".rstrip())

    def act(self, observation: Observation, rng: np.random.Generator) -> int:
        import torch
        from pipslab.envs.dominoes.env import encode_view
        mask = observation.action_mask
        obs = {"observation": encode_view(observation.view)[None, :], "action_mask": mask[None, :]}
        with torch.no_grad():
            tensor, _ = self.policy.obs_to_tensor(obs)
            dist = self.policy.get_distribution(tensor, action_masks=mask[None, :])
            probs = dist.distribution.probs[0].numpy().astype(np.float64)
        probs[mask == 0] = 0.0
        if self.sample:
            return int(rng.choice(len(probs), p=probs / probs.sum()))
        return int(np.argmax(probs))


@register("ppo", games=["happy"])
def _make_ppo(game: str, path: str = DEFAULT_PATH, sample: bool = False) -> PPOAgent:
    return PPOAgent(path, sample)


# ------------------------------------------------------------------ training
def make_env(index: int, mode: str, opponents, seed: int):
    """Env copy ``index``: the learner's seat alternates, the opponents cycle."""
    import gymnasium as gym

    def thunk():
        env = gym.make(ENV_ID, mode=mode, learner_seat=index % 2, opponents=opponents[(index // 2) % len(opponents)])
        env.reset(seed=seed + index)
        env.action_space.seed(seed + index)
        return env
    return thunk


def train(steps: int, seed: int, out: Path, mode: str = "block", opponents=("random", "heaviest"), envs: int = 8,
          net_arch=(128, 128), progress=print) -> dict:
    """Train MaskablePPO for ``steps`` env steps; save ``out/policy.pt`` and ``out/train.json``.
    Returns the run's summary."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv
    from pipslab.experiments.files import atomic_write_text

    torch.set_num_threads(1)
    start = time.perf_counter()
    venv = DummyVecEnv([make_env(i, mode, list(opponents), seed) for i in range(envs)])
    venv.seed(seed)
    model = MaskablePPO("MultiInputPolicy", venv, seed=seed, n_steps=256, batch_size=512, n_epochs=4,
                        learning_rate=3e-4, gamma=0.99, gae_lambda=0.95, ent_coef=0.01,
                        policy_kwargs={"net_arch": list(net_arch), "activation_fn": torch.nn.Tanh}, verbose=0)
    model.learn(total_timesteps=steps)
    wall = time.perf_counter() - start
    meta = {"mode": mode, "net_arch": list(net_arch), "steps": int(model.num_timesteps), "seed": seed,
            "opponents": ",".join(opponents), "envs": envs, "wall_s": round(wall, 1)}
    save_policy(model, out / "policy.pt", meta)
    atomic_write_text(out / "train.json", json.dumps(meta, indent=2) + "\n")
    venv.close()
    progress(f"trained {meta['steps']} steps in {wall:.0f} s -> {out / 'policy.pt'}")
    return meta


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=300_000, help="env steps to train (default 300000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("results/ppo-happy"))
    parser.add_argument("--mode", choices=("block", "draw"), default="block")
    parser.add_argument("--opponents", default="random,heaviest", help="agents the env copies cycle through")
    parser.add_argument("--envs", type=int, default=8, help="env copies (DummyVecEnv)")
    ns = parser.parse_args(argv)
    if ns.steps < 1 or ns.envs < 1:
        parser.error("--steps and --envs must be positive")
    try:
        train(ns.steps, ns.seed, ns.out, ns.mode, tuple(ns.opponents.split(",")), ns.envs)
    except PipslabError as exc:
        sys.stderr.write(f"maskable_ppo_happy: error: {exc}\n")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
