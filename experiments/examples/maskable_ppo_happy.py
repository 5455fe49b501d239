"""MaskablePPO (sb3-contrib) on ``pipslab/HappyDominoes-v0`` as it is, judged by ``pipslab tournament``.

Train (``pip install "pipslab[rl]"``)::

    python -m pipslab.experiments.examples.maskable_ppo_happy --steps 300000 --seed 0 --out results/ppo-happy

then enter the saved model into a tournament as it is, with the ``sb3`` agent::

    pipslab tournament happy --agents sb3:path=results/ppo-happy/model.zip,random \\
        --games 2000 --seed 1 --out results/ppo-happy/vs-random

* **The env unchanged.**  ``pipslab.make_env("happy", learner_seat=…, opponents=…)`` — no
  wrapper: the observation dict carries its own ``action_mask`` and ``action_masks()`` is
  what sb3-contrib reads.  The ``--envs`` copies (default 8) alternate the learner's seat
  and the opponent (``--opponents random,heaviest``), so one policy learns both seats.
* **Seeds.**  ``--seed`` seeds the model (torch, the sampled actions) and each env copy
  (``seed + i``: the deals and the opponents' choices).
* **The file.**  ``model.save`` writes sb3's zip; the ``sb3`` agent
  (:mod:`pipslab.agents.policies`) reads it without unpickling anything.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from pipslab.envs.errors import PipslabError


# ------------------------------------------------------------------ training
def make_env(index: int, mode: str, opponents, seed: int):
    """Env copy ``index``: the learner's seat alternates, the opponents cycle."""
    from pipslab import make_env

    def thunk():
        env = make_env("happy", mode=mode, learner_seat=index % 2, opponents=opponents[(index // 2) % len(opponents)])
        env.reset(seed=seed + index)
        env.action_space.seed(seed + index)
        return env
    return thunk


def train(steps: int, seed: int, out: Path, mode: str = "block", opponents=("random", "heaviest"), envs: int = 8,
          net_arch=(128, 128), progress=print) -> dict:
    """Train MaskablePPO for ``steps`` env steps; save ``out/model.zip`` and ``out/train.json``.
    Returns the run's summary."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv
    from pipslab.experiments.files import atomic_path, atomic_write_text

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
    out.mkdir(parents=True, exist_ok=True)
    with atomic_path(out / "model.zip", suffix=".zip") as tmp:
        model.save(tmp)
    atomic_write_text(out / "train.json", json.dumps(meta, indent=2) + "\n")
    venv.close()
    progress(f"trained {meta['steps']} steps in {wall:.0f} s -> {out / 'model.zip'}")
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
    except ModuleNotFoundError as exc:
        sys.stderr.write(f"maskable_ppo_happy: error: {exc.name} is not installed (pip install \"pipslab[rl]\")\n")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
