"""``pipslab bench agents GAME-OPTIONS --agents A,B,... [--moves N]``: seconds per move of
domino agents on the same decisions, side by side in one run.

The decisions are the first ``N`` (default 20) positions with a choice met in games of
``heaviest`` against itself on deals from ``--seed`` (Happy block unless ``--mode``,
``--players``, ``--pairs`` say otherwise); every agent is built fresh for each decision
(as the harness builds them per game) and acts on that seat's observation with a
generator seeded from the decision's index, so each agent sees exactly the same
positions (after one untimed move, which loads nets and compiled code).  Reported per
agent: mean, median and 90th-percentile seconds per move.  This is how search budgets
are compared (``ismcts:iters=100,net=shipped`` against ``ismcts:iters=500``); strength
is the tournament's business.
"""
from __future__ import annotations

import statistics
import time

import numpy as np

from pipslab.agents.base import Observation
from pipslab.agents.registry import make_agent
from pipslab.envs.errors import PipslabError
from pipslab.envs.game import GAMES, get_game

from .bench_report import report
from .cliargs import split_agent_list


def positions(game: str, options: dict, count: int, seed: int) -> list:
    """The first ``count`` states with more than one legal action in ``heaviest`` self-play."""
    g = get_game(game)
    out, deal = [], 0
    while len(out) < count:
        rng = np.random.default_rng([seed, deal])
        state = g.new_state(rng, options)
        agents = [make_agent("heaviest", game) for _ in range(g.players(options))]
        while not state.is_terminal and len(out) < count:
            p = state.current_player
            legal = state.legal_actions()
            obs = Observation(p, state.observe(p), legal, state.num_actions)
            if len(legal) > 1:
                out.append(state.clone())
            state.apply(agents[p].act(obs, rng))
        deal += 1
    return out


def seconds_per_move(spec: str, game: str, states: list, options: dict) -> list:
    """Each decision's time, after one untimed move on the first (loading a net or compiled
    code once per process is not a move's cost)."""
    warm = make_agent(spec, game)
    warm.check_table(game, options)
    first = states[0]
    warm.act(Observation(first.current_player, first.observe(first.current_player), first.legal_actions(),
                         first.num_actions), np.random.default_rng([0, 0]))
    times = []
    for i, state in enumerate(states):
        agent = make_agent(spec, game)
        p = state.current_player
        obs = Observation(p, state.observe(p), state.legal_actions(), state.num_actions)
        rng = np.random.default_rng([i, 1])
        t0 = time.perf_counter()
        action = agent.act(obs, rng)
        times.append(time.perf_counter() - t0)
        if action not in obs.legal_actions:
            raise PipslabError(f"{spec} played the illegal action {action}")
    return times


def run(args) -> int:
    game = args.bench_game or "happy"
    if getattr(get_game(game), "family", "") != "dominoes":
        dominoes = ", ".join(GAMES.family("dominoes"))
        raise PipslabError(f"bench agents times domino agents: --game {dominoes}, not {game!r}")
    if not args.agents:
        raise PipslabError("give the agents to time with --agents A,B (e.g. ismcts:iters=500,net)")
    options = {}
    if args.mode is not None:
        options["mode"] = args.mode
    if args.players is not None:
        options["players"] = args.players
    if args.pairs:
        options["pairs"] = True
    options = get_game(game).resolve(options)
    specs = split_agent_list(args.agents)
    for spec in specs:
        make_agent(spec, game).check_table(game, options)     # a bad spec fails before any timing
    states = positions(game, options, args.moves or 20, args.seed)
    rows = {}
    for spec in specs:
        t = seconds_per_move(spec, game, states, options)
        rows[spec] = {"mean_s": statistics.fmean(t), "median_s": statistics.median(t),
                      "p90_s": sorted(t)[int(0.9 * (len(t) - 1))], "moves": len(t)}
    label = get_game(game).variant_label(options)
    lines = [f"{label}: seconds per move on the same {len(states)} decisions (heaviest self-play, seed {args.seed})",
             f"{'agent':60s} {'mean':>9s} {'median':>9s} {'p90':>9s}"]
    lines += [f"{spec:60s} {r['mean_s']:9.4f} {r['median_s']:9.4f} {r['p90_s']:9.4f}" for spec, r in rows.items()]
    result = {"game": game, "options": options, "seed": args.seed, "agents": rows}
    return report(args, result, "\n".join(lines), "bench_agents.json")
