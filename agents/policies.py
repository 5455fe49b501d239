"""Your own policy as an agent, no glue: ``sb3:path=MODEL.zip``, ``torch:path=MODULE.pt`` and
Python callables registered with :func:`register_policy`.

Each plays from the same input the Gymnasium env gives a learner — the game's observation
encoder of the seat's view (``Game.observation_encoder``) and the legal-action mask — so a
policy trained on ``pipslab.make_env(GAME)`` plays in ``tournament``, ``play``, ``serve``
and as a league opponent unchanged.  The action is the most probable legal one (ties to
the lowest id), or drawn from the masked policy with the game's ``rng`` (``sample=true``).

* ``sb3:path=MODEL.zip`` — a stable-baselines3 / sb3-contrib actor-critic model (PPO, A2C,
  MaskablePPO; ``MultiInputPolicy`` on the env's dict observation or ``MlpPolicy`` on the
  observation vector alone) saved with ``model.save``.  The zip is read **without
  unpickling anything**: the policy class, its keyword arguments and the spaces are read
  from the readable parts of sb3's ``data`` file, the weights with
  ``torch.load(..., weights_only=True)``, and the policy is rebuilt for the game's own
  spaces — so a model that does not fit the game is refused with one line.
* ``torch:path=MODULE.pt`` — a TorchScript module (``torch.jit.save``; or ``MODULE.pt2``
  of ``torch.export.save``) called as ``module(observation[1, size], mask[1, actions]) ->
  logits[1, actions]``.
* a callable ``act(observation, mask, rng) -> action`` given to :func:`register_policy`
  in a file loaded with ``--import FILE.py``.

A policy that returns an illegal action forfeits the game (the tournament records it).
Loaded models are cached per process, keyed by the file and its modification time: the
harness builds fresh agents for every game and a model is read-only.
"""
from __future__ import annotations

import ast
import io
import json
import re
import zipfile
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Optional, Tuple

import numpy as np

from pipslab.envs.errors import PipslabError
from pipslab.envs.game import get_game

from .base import Agent, Observation
from .registry import register

__all__ = ["PolicyAgent", "register_policy", "load_sb3", "load_torchscript"]

Policy = Callable[[np.ndarray, np.ndarray, np.random.Generator], Any]


class PolicyAgent(Agent):
    """Plays ``policy(observation, mask, rng)`` from its seat: the policy gets the env's
    observation vector (float32) and int8 mask and returns an action id or a vector of
    scores over every action (logits; the best legal one is played, or one is drawn from
    their masked softmax with ``sample``)."""

    def __init__(self, game: str, policy: Policy, label: str, sample: bool = False,
                 check: Optional[Callable[[int, int], None]] = None):
        self.game, self.policy, self.label, self.sample = game, policy, label, bool(sample)
        self.check = check
        self.encoder = None

    def check_table(self, game: str, options: dict) -> None:
        """Builds one observation of a fresh game with these options and checks the model
        takes it (one line naming the sizes when it does not)."""
        encoder = self.encoder = _encoder(game, options)
        state = get_game(game).new_state(np.random.default_rng(0), options)
        while state.is_chance:
            state.apply_chance(np.random.default_rng(0))
        if self.check is not None:
            self.check(encoder.size, state.num_actions)
        obs = Observation(state.current_player, state.observe(state.current_player), state.legal_actions(),
                          state.num_actions)
        self._choose(obs, np.random.default_rng(0), probe=True)

    def act(self, observation: Observation, rng: np.random.Generator) -> int:
        return self._choose(observation, rng)

    def _choose(self, observation: Observation, rng: np.random.Generator, probe: bool = False) -> int:
        if self.encoder is None:        # a worker's fresh agent: the game's encoder (it reads the view)
            self.encoder = _encoder(self.game, None)
        mask = observation.action_mask
        x = np.asarray(self.encoder.encode(observation.view), dtype=np.float32)
        try:
            out = self.policy(x, mask, rng)
        except PipslabError:
            raise
        except Exception as exc:   # noqa: BLE001 - a user's model failing is one line, not a traceback
            raise PipslabError(f"agent {self.label}: the policy failed on an observation of "
                               f"{x.size} floats and a mask of {mask.size} actions "
                               f"({type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''})") from None
        return self._action(out, mask, rng, probe)

    def _action(self, out, mask: np.ndarray, rng: np.random.Generator, probe: bool) -> int:
        scores = np.asarray(out, dtype=np.float64)
        if scores.ndim == 0:
            if not float(scores).is_integer():
                raise PipslabError(f"agent {self.label}: the policy returned {scores.item()!r}, not an action id")
            return int(scores)        # an action id, legal or not: an illegal one forfeits the game
        scores = scores.reshape(-1)
        if scores.size != mask.size:
            raise PipslabError(f"agent {self.label}: the policy returned {scores.size} scores; "
                               f"the game has {mask.size} actions")
        legal = np.flatnonzero(mask)
        z = scores[legal]
        if self.sample and not probe:
            p = np.exp(z - z.max())
            p /= p.sum()
            return int(legal[min(int(np.searchsorted(np.cumsum(p), rng.random() * p.sum(), side="right")),
                                 len(legal) - 1)])
        return int(legal[int(np.argmax(z))])


def _encoder(game: str, options: Optional[dict]):
    try:
        return get_game(game).observation_encoder(options)
    except PipslabError as exc:
        raise PipslabError(f"{game} has no observation a policy could read ({exc})") from None


# ------------------------------------------------------------------ callables
def register_policy(name: str, policy: Policy, games: Optional[Iterable[str]] = None) -> None:
    """Make ``policy(observation, mask, rng) -> action id (or scores per action)`` the agent
    ``name`` for ``games`` (``None``: every game with an observation encoder), with one
    parameter ``sample`` (draw from the masked softmax of returned scores).  Call it in a
    file given to ``--import``, or before :func:`pipslab.tournament`."""
    if not callable(policy):
        raise PipslabError(f"register_policy({name!r}): the policy must be callable, got {type(policy).__name__}")

    @register(name, games=games)
    def factory(game: str, sample: bool = False) -> PolicyAgent:
        return PolicyAgent(game, policy, name, sample)


# ------------------------------------------------------------------ file cache
_MODELS: Dict[Tuple[str, str, float], Any] = {}


def _cached(kind: str, path: str, load: Callable[[Path], Any], what: str):
    p = Path(path).expanduser()
    if not p.is_file():
        raise PipslabError(f"{kind}: no {what} file {path!r}")
    key = (kind, str(p.resolve()), p.stat().st_mtime)
    if key not in _MODELS:
        _MODELS[key] = load(p)
    return _MODELS[key]


# ------------------------------------------------------------------ TorchScript
def load_torchscript(path: str):
    """A TorchScript module from ``path`` (``.pt2``: a ``torch.export`` program), one line for
    a missing or foreign file."""
    def load(p: Path):
        import warnings

        import torch
        try:
            with warnings.catch_warnings():          # TorchScript's deprecation notice, once per file
                warnings.simplefilter("ignore", DeprecationWarning)
                if p.suffix == ".pt2":
                    return torch.export.load(str(p)).module()
                module = torch.jit.load(str(p), map_location="cpu")
        except Exception as exc:  # noqa: BLE001
            raise PipslabError(f"torch: {p} is not a TorchScript (.pt) or torch.export (.pt2) module file "
                               f"({type(exc).__name__}; save one with torch.jit.save(torch.jit.script(model)) "
                               f"or torch.export.save)") from None
        module.eval()
        return module
    return _cached("torch", path, load, "TorchScript")


def _torch_policy(module) -> Policy:
    def policy(x: np.ndarray, mask: np.ndarray, rng) -> np.ndarray:
        import torch
        with torch.no_grad():
            out = module(torch.from_numpy(x)[None], torch.from_numpy(mask)[None])
        if isinstance(out, (tuple, list)):
            out = out[0]
        return out.detach().cpu().numpy().reshape(-1)
    return policy


@register("torch")
def _make_torch(game: str, path: str = "", sample: bool = False) -> PolicyAgent:
    if not path:
        raise PipslabError("agent torch: give the module file: torch:path=MODULE.pt")
    return PolicyAgent(game, _torch_policy(load_torchscript(path)), f"torch:path={path}", sample)


# ------------------------------------------------------------------ stable-baselines3
# The actor-critic policy classes an sb3 zip may name: (module, class) -> how it is fed.
_SB3_POLICIES = {
    ("stable_baselines3.common.policies", "ActorCriticPolicy"): ("vector", False),
    ("stable_baselines3.common.policies", "MultiInputActorCriticPolicy"): ("dict", False),
    ("sb3_contrib.common.maskable.policies", "MaskableActorCriticPolicy"): ("vector", True),
    ("sb3_contrib.common.maskable.policies", "MaskableMultiInputActorCriticPolicy"): ("dict", True),
}
_ACTIVATIONS = ("Tanh", "ReLU", "LeakyReLU", "ELU", "GELU", "SiLU", "Sigmoid", "Softplus")
_POLICY_KWARGS = ("net_arch", "activation_fn", "ortho_init", "share_features_extractor", "normalize_images")


class SB3Model:
    """The readable description of an sb3 zip and its weights (nothing unpickled)."""

    def __init__(self, path: Path):
        self.path = path
        try:
            with zipfile.ZipFile(path) as z:
                names = set(z.namelist())
                data = json.loads(z.read("data")) if "data" in names else None
                weights = z.read("policy.pth") if "policy.pth" in names else None
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            raise PipslabError(f"sb3: {path} is not a stable-baselines3 model zip ({type(exc).__name__})") from None
        if not isinstance(data, dict) or weights is None:
            raise PipslabError(f"sb3: {path} is not a stable-baselines3 model (no data and policy.pth inside)")
        cls = data.get("policy_class") or {}
        found = re.match(r"<function (\w+)\.__init__", str(cls.get("__init__", "")))
        key = (cls.get("__module__"), found.group(1) if found else None)
        if key not in _SB3_POLICIES:
            raise PipslabError(f"sb3: {path}: policy {key[1] or '?'} is not supported (actor-critic policies of "
                               f"PPO, A2C and MaskablePPO are: {', '.join(n for _, n in _SB3_POLICIES)})")
        self.module, self.class_name = key
        self.feed, self.masked = _SB3_POLICIES[key]
        self.kwargs = _policy_kwargs(data.get("policy_kwargs") or {}, path)
        self.actions = _space_number(data.get("action_space"), "n")
        self.obs_sizes = _obs_sizes(data.get("observation_space"))
        import torch
        try:
            self.state_dict = torch.load(io.BytesIO(weights), map_location="cpu", weights_only=True)
        except Exception as exc:  # noqa: BLE001
            raise PipslabError(f"sb3: {path}: the policy weights are unreadable ({type(exc).__name__})") from None
        self.policies: Dict[Tuple[str, str], Any] = {}

    def policy_for(self, game: str, encoder, actions: int):
        """The policy rebuilt for ``game``'s spaces: ``encoder``'s vector and ``actions``
        (cached per shape)."""
        key = (encoder.size, float(encoder.low), float(encoder.high), actions)
        if key not in self.policies:
            self.policies[key] = self._build(game, encoder, actions)
        return self.policies[key]

    def check(self, game: str, obs_size: int, actions: int) -> None:
        want = {"observation": obs_size, "action_mask": actions} if self.feed == "dict" else {"": obs_size}
        if self.actions is not None and self.actions != actions:
            raise PipslabError(f"sb3: {self.path}: the model has {self.actions} actions; {game} has {actions}")
        if self.obs_sizes is not None and self.obs_sizes != want:
            raise PipslabError(f"sb3: {self.path}: the model's observation ({_sizes_text(self.obs_sizes)}) does not "
                               f"fit {game}'s ({_sizes_text(want)})")

    def _build(self, game: str, encoder, actions: int):
        import importlib

        import gymnasium as gym
        import torch
        self.check(game, encoder.size, actions)
        vector = gym.spaces.Box(encoder.low, encoder.high, (encoder.size,), np.float32)
        mask = gym.spaces.Box(0, 1, (actions,), np.int8)
        obs_space = gym.spaces.Dict({"observation": vector, "action_mask": mask}) if self.feed == "dict" else vector
        cls = getattr(importlib.import_module(self.module), self.class_name)
        try:
            policy = cls(obs_space, gym.spaces.Discrete(actions), lambda _: 0.0, **self.kwargs)
            policy.load_state_dict(self.state_dict, strict=True)
        except (RuntimeError, TypeError, ValueError) as exc:
            raise PipslabError(f"sb3: {self.path}: the weights do not fit a policy for {game} "
                               f"({str(exc).splitlines()[0][:160]})") from None
        policy.set_training_mode(False)
        torch.set_num_threads(1)       # one decision at a time: threads only cost
        return policy


def _sizes_text(sizes: dict) -> str:
    return ", ".join(f"{k} {v}" if k else str(v) for k, v in sizes.items())


def _policy_kwargs(raw: dict, path: Path) -> dict:
    """sb3's policy_kwargs from their JSON, or from the readable text beside a pickled dict
    (the activation class by name, ``net_arch`` as a Python literal)."""
    import torch
    out = {}
    for key in _POLICY_KWARGS:
        if key not in raw:
            continue
        value = raw[key]
        if key == "activation_fn":
            name = re.search(r"\.(\w+)'>$", str(value))
            if not name or name.group(1) not in _ACTIVATIONS:
                raise PipslabError(f"sb3: {path}: activation {value!r} is not one of {', '.join(_ACTIVATIONS)}")
            out[key] = getattr(torch.nn, name.group(1))
            continue
        if isinstance(value, str):
            try:
                value = ast.literal_eval(value)
            except (ValueError, SyntaxError):
                raise PipslabError(f"sb3: {path}: policy_kwargs {key}={value[:60]!r} is not readable") from None
        out[key] = value
    unknown = [k for k in raw if k not in _POLICY_KWARGS and not k.startswith(":")]
    if unknown:
        raise PipslabError(f"sb3: {path}: policy_kwargs {', '.join(unknown)} are not supported")
    return out


def _space_number(space, key: str) -> Optional[int]:
    try:
        return int(space[key])
    except (TypeError, KeyError, ValueError):
        return None


def _obs_sizes(space) -> Optional[Dict[str, int]]:
    """``{"observation": n, "action_mask": m}`` of a dict space, ``{"": n}`` of a vector,
    read from sb3's readable text of the space; None when it cannot be read."""
    if not isinstance(space, dict):
        return None
    if "spaces" in space:
        found = re.findall(r"'(\w+)': Box\([^()]*\((\d+),\)", str(space["spaces"]))
        return {k: int(n) for k, n in found} or None
    shape = space.get("_shape") or space.get("shape")
    if isinstance(shape, list) and len(shape) == 1:
        return {"": int(shape[0])}
    return None


def load_sb3(path: str) -> SB3Model:
    """The sb3 model in ``path`` (cached; one line for a missing or foreign file)."""
    return _cached("sb3", path, SB3Model, "model")


def _sb3_policy(model: SB3Model, agent: PolicyAgent) -> Policy:
    def policy(x: np.ndarray, mask: np.ndarray, rng) -> np.ndarray:
        import torch
        net = model.policy_for(agent.game, agent.encoder, mask.size)
        obs = {"observation": x[None], "action_mask": mask[None]} if model.feed == "dict" else x[None]
        with torch.no_grad():
            tensor, _ = net.obs_to_tensor(obs)
            logits = net.get_distribution(tensor).distribution.logits[0]
        return logits.numpy().astype(np.float64)
    return policy


@register("sb3")
def _make_sb3(game: str, path: str = "", sample: bool = False) -> PolicyAgent:
    if not path:
        raise PipslabError("agent sb3: give the model file: sb3:path=MODEL.zip")
    model = load_sb3(path)
    agent = PolicyAgent(game, None, f"sb3:path={path}", sample,
                        check=lambda size, actions: model.check(game, size, actions))
    agent.policy = _sb3_policy(model, agent)
    return agent
