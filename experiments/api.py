"""The Python API at the package root: ``pipslab.make_env``, ``make_agent``, ``load_net``,
``tournament``, ``analyze`` and ``register_policy`` — what the CLI does, for a user's own program.

Each is a thin front over the road the CLI takes (the Gymnasium adapters, the agent
registry, the shipped nets, the tournament harness), so a result got here is the one the
command gives for the same seed.  ``docs/api.md`` is the guide; every example below is run
by the tests (``tests/test_api.py`` runs these docstrings and the README's code blocks).
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Optional, Sequence, Union

import numpy as np
import pandas as pd

from pipslab.agents.policies import register_policy
from pipslab.agents.registry import make_agent as _registry_agent
from pipslab.envs.errors import PipslabError
from pipslab.envs.game import get_game

__all__ = ["make_env", "make_agent", "load_net", "tournament", "analyze", "register_policy", "Net",
           "TournamentTables", "Analysis"]

def make_env(game: str, **kwargs):
    """The Gymnasium env of ``game`` (one learner seat; every other seat an agent)::

        >>> import pipslab
        >>> env = pipslab.make_env("happy", mode="draw", opponents="heaviest")
        >>> obs, info = env.reset(seed=0)
        >>> sorted(obs)
        ['action_mask', 'observation']
        >>> bool(obs["action_mask"].any())
        True

    ``gymnasium.make`` of the game's Gym id (``get_game(game).gym_id()``), with its checks.
    Keywords are the env's (``learner_seat``, ``opponents``, ``render_mode``,
    ``illegal_action``, ``reveal``, ``auto_forced``) and the game's options (``mode``,
    ``players``, ``max_pip`` … as ``pipslab tournament --help`` lists them)."""
    import gymnasium as gym

    return gym.make(get_game(game).gym_id(), **kwargs)


def make_agent(spec: str, game: str, **options):
    """An agent from any spec the CLI takes (``"pimc:samples=20"``, ``"net"``,
    ``"sb3:path=MODEL.zip"`` …), checked against ``game`` with ``options``::

        >>> import numpy as np, pipslab
        >>> from pipslab.envs.observation import Observation
        >>> agent = pipslab.make_agent("heaviest", "happy", mode="block")
        >>> state = pipslab.get_game("happy").new_state(np.random.default_rng(0), {"mode": "block"})
        >>> seat = state.current_player
        >>> obs = Observation(seat, state.observe(seat), state.legal_actions(), state.num_actions)
        >>> agent.act(obs, np.random.default_rng(1)) in state.legal_actions()
        True

    ``act(observation, rng)`` takes what the seat may see (:class:`Observation`: the view
    and the legal actions) and draws every random choice from ``rng``.  An agent lives
    for one game: build a fresh one per game, as the harness does."""
    spec_game = get_game(game)
    agent = _registry_agent(spec, spec_game.name)
    agent.check_table(spec_game.name, spec_game.options_for(options))
    return agent


# ------------------------------------------------------------------ nets
class Net:
    """A shipped or trained network, read-only.

    Domino nets: ``policy(observation, mask)`` — probabilities over every action id, zero
    on the illegal ones, summing to 1 over the legal ones; ``value(observation)`` — the
    seat's expected return in ``[-1, 1]``.  ``observation`` is the env's observation
    vector or its whole ``{"observation", "action_mask"}`` dict.  Backgammon nets:
    ``probabilities(position)`` — ``[win, win gammon, win backgammon, lose gammon, lose
    backgammon]`` of the player on roll (a :class:`~pipslab.envs.backgammon.board.Position`,
    its GNU BG Position ID or 26 checker counts), ``equity(position)`` the cubeless money
    equity, ``value`` the same equity."""

    def __init__(self, kind: str, model, source: str):
        self.kind, self.model, self.source = kind, model, source
        self.game = model.config.get("game", "backgammon") if kind == "dominoes" else "backgammon"
        self.config = dict(model.config)

    def __repr__(self) -> str:
        return f"Net({self.source!r}, {self.kind})"

    def _domino(self, what: str):
        if self.kind != "dominoes":
            raise PipslabError(f"{self.source} is a backgammon net: it values positions "
                               f"(probabilities(position), equity(position)), it has no {what}")
        return self.model

    def policy(self, observation, mask=None) -> np.ndarray:
        from pipslab.agents.domino_net import masked_softmax
        player = self._domino("policy")
        x, mask = _split_observation(observation, mask)
        if mask is None:
            raise PipslabError("policy(observation, mask): give the legal-action mask (or the env's observation dict)")
        logits, _ = player.forward(x[None])
        return masked_softmax(logits, np.asarray(mask)[None])[0]

    def value(self, observation) -> float:
        if self.kind == "backgammon":
            return self.equity(observation)
        x, _ = _split_observation(observation, None)
        return float(self._domino("value").forward(x[None])[1][0])

    def probabilities(self, position) -> np.ndarray:
        if self.kind != "backgammon":
            raise PipslabError(f"{self.source} is a domino net: use policy(observation, mask) and value(observation)")
        return self.model.probabilities(_position_rows(position))[0]

    def equity(self, position) -> float:
        from pipslab.agents.evaluators import equity
        return float(equity(self.probabilities(position)[None])[0])


def _split_observation(observation, mask):
    if isinstance(observation, dict):
        mask = observation.get("action_mask") if mask is None else mask
        observation = observation["observation"]
    return np.asarray(observation, dtype=np.float32).reshape(-1), mask


def _position_rows(position) -> np.ndarray:
    from pipslab.envs.backgammon.board import Position
    if isinstance(position, str):
        position = Position.from_id(position)
    return np.asarray(position, dtype=np.int8).reshape(1, 26)


def load_net(name_or_path: str) -> Net:
    """A shipped net by name (``"happy-block"``, ``"happy-draw"``, ``"troshin-4-pairs"``,
    ``"triple-3"``, ``"backgammon"``) or a file written by ``pipslab train``::

        >>> import pipslab
        >>> net = pipslab.load_net("happy-block")
        >>> obs, _ = pipslab.make_env("happy").reset(seed=0)
        >>> p = net.policy(obs)
        >>> round(float(p.sum()), 6), bool((p[obs["action_mask"] == 0] == 0).all())
        (1.0, True)
        >>> round(float(pipslab.load_net("backgammon").probabilities("4HPwATDgc/ABMA")[0]), 1)
        0.5
    """
    from pipslab.agents.netfiles import net_path
    path = net_path(name_or_path)
    if not path.is_file():
        from pipslab.agents.netfiles import shipped_nets
        raise PipslabError(f"no network {name_or_path!r} (shipped: {', '.join(shipped_nets())}; or a file path)")
    import torch
    data = torch.load(path, map_location="cpu", weights_only=True) if path.suffix == ".pt" else None
    fmt = data.get("format") if isinstance(data, dict) else None
    from pipslab.agents import domino_net, td
    if fmt == td.NET_FORMAT:
        return Net("backgammon", td.load_net(str(name_or_path)), str(name_or_path))
    if fmt == domino_net.NET_FORMAT:
        return Net("dominoes", domino_net.load_player(str(name_or_path)), str(name_or_path))
    raise PipslabError(f"{path}: not a pipslab network file")


# ------------------------------------------------------------------ tournaments
@dataclass
class TournamentTables:
    """The tables of a tournament as DataFrames (``summary``: one row per agent;
    ``pairings``: one per pair that met; ``ratings``; ``games``: one per game) and the
    folder its files went to (``None`` when none was asked for)."""

    summary: pd.DataFrame
    pairings: pd.DataFrame
    ratings: pd.DataFrame
    games: pd.DataFrame
    out: Optional[Path]


AgentLike = Union[str, Callable]


def tournament(game: str, agents: Sequence[AgentLike], games: int = 600, seed: int = 0, *,
               out: Optional[str] = None, workers: int = 1, backend: str = "process", duplicate: bool = True,
               progress: bool = False, imports: Iterable[str] = (), **options) -> TournamentTables:
    """Play a tournament on duplicate deals and return its tables::

        >>> import pipslab
        >>> t = pipslab.tournament("happy", ["heaviest", "random"], games=40, seed=3, mode="block")
        >>> list(t.summary["agent"]), int(t.summary["games"].sum())
        (['heaviest', 'random'], 80)

    ``agents`` are specs (``"pimc:samples=20"``, ``"sb3:path=MODEL.zip"`` …) or Python
    callables ``act(observation, mask, rng)`` (registered by their function name for this
    process; with ``workers > 1`` they reach the workers through ``fork``).  ``options``
    are the game's (``mode="draw"``, ``players=4``, ``pairs=True`` …).  Files are written
    to ``out`` when given (as ``pipslab tournament --out``), else to a temporary folder
    that is removed."""
    from pipslab.experiments.tournament import TournamentArgs, run_tournament
    spec = get_game(game)
    specs = [_agent_spec(a, spec.name) for a in agents]
    with tempfile.TemporaryDirectory(prefix="pipslab-tournament-") as tmp:
        args = TournamentArgs(game=spec.name, agents=specs, games=games, seed=seed,
                              out=str(out) if out is not None else tmp, duplicate=duplicate, progress=progress,
                              workers=workers, backend=backend, plots=out is not None,
                              extra_options=dict(options), imports=tuple(imports))
        result = run_tournament(args)
    return TournamentTables(result.summary, result.pairings, result.ratings, result.games,
                            Path(out) if out is not None else None)


def _agent_spec(agent: AgentLike, game: str) -> str:
    if isinstance(agent, str):
        return agent
    if callable(agent):
        name = getattr(agent, "__name__", "") or type(agent).__name__
        if not name.isidentifier() or name == "<lambda>":
            raise PipslabError("a callable agent needs a function name (def my_bot(observation, mask, rng): ...)")
        register_policy(name, agent, games=[game])
        return name
    raise PipslabError(f"an agent is a spec string or a callable act(observation, mask, rng), got {type(agent).__name__}")



# ------------------------------------------------------------------ analysis
@dataclass
class Analysis:
    """Error rates of a tournament's agents (``pipslab analyze``): ``summary`` one row per
    agent (``decisions``, ``error_rate`` ×1000 with ``error_rate_low``/``_high``,
    ``blunders``, ``blunder_rate``); ``decisions`` one row per decision with its loss;
    ``reference`` what valued them; ``blunder`` the blunder threshold; ``phases`` one row
    per agent and phase of the game (``Game.phase``: error rate, loss per game, share)."""

    summary: pd.DataFrame
    decisions: pd.DataFrame
    reference: str
    blunder: float
    out: Path
    phases: Optional[pd.DataFrame] = None


def analyze(tournament_dir, reference: Optional[str] = None, games: Optional[str] = None, *, out=None,
            workers: int = 1, seed: int = 0, progress: bool = False) -> Analysis:
    """Value every decision of a tournament's recorded games with ``reference`` and return
    each agent's error rate (what ``pipslab analyze --from DIR`` writes)::

        >>> import pipslab, tempfile
        >>> folder = tempfile.mkdtemp()
        >>> _ = pipslab.tournament("happy", ["heaviest", "random"], games=4, seed=2, out=folder)
        >>> a = pipslab.analyze(folder, reference="pimc:samples=4")
        >>> sorted(a.summary["agent"]), a.reference.startswith("pimc")
        (['heaviest', 'random'], True)

    ``reference``: backgammon ``gnubg:plies=0|1|2`` or an evaluator spec (default GNU BG
    2-ply when gnubg-nn is installed); dominoes ``pimc:samples=N`` (default 50).  ``games``
    like ``"0,5-9"``.  Files go to ``out`` (default ``tournament_dir/analysis``)."""
    from pipslab.experiments.analyze import AnalyzeArgs, run_analysis
    result = run_analysis(AnalyzeArgs(from_dir=str(tournament_dir), games=games, reference=reference,
                                      out=None if out is None else str(out), workers=workers, seed=seed,
                                      progress=progress))
    return Analysis(result.summary, result.decisions, result.reference, result.blunder, result.out, result.phases)
