"""Search benchmarks, side by side in one run.

``pipslab bench solver [--json] [--deals N]`` — time to solve Happy block dominoes exactly
straight after the deal (7 + 7 tiles, boneyard out of play: the value of every legal move
and the principal line, a fresh transposition table per deal) over N random deals (default
200); beside it, for scale, the ``dominoes`` package's ``omniscient`` player (its own
alpha-beta over every hand) on its 4-player game, timed on one decision once 14 tiles
are left in the hands (from a fresh 4-player deal it does not finish in minutes).

``pipslab bench ismcts [--json] [--moves N]`` — seconds per move of our ``ismcts`` at 1,000
iterations on Happy block dominoes against OpenSpiel's Python ``ISMCTSBot`` at 1,000
simulations (random-rollout evaluator, UCT) on ``python_block_dominoes``, both on the
first decisions of random deals.  OpenSpiel's game has no resampling hook, so the benchmark
gives its bot one: the opponent's hand and the deck re-dealt uniformly.
"""
from __future__ import annotations

import random
import signal
import statistics
import time
import numpy as np

from pipslab.agents.base import Observation
from pipslab.agents.search_dominoes import ISMCTSAgent
from pipslab.agents.solver import Solver
from pipslab.envs.dominoes.engine import deal
from pipslab.envs.dominoes.variants import HAPPY_BLOCK

from .bench import report


def _quantile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


class _Timeout(Exception):
    pass


def _with_alarm(seconds, fn):
    def handler(signum, frame):
        raise _Timeout()
    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


# ------------------------------------------------------------------ solver
def solver_times(deals: int, seed: int):
    rng = random.Random(seed)
    times, nodes = [], []
    for _ in range(deals):
        state = deal(HAPPY_BLOCK, rng)
        solver = Solver()
        start = time.perf_counter()
        solver.solve(state)
        times.append(time.perf_counter() - start)
        nodes.append(solver.nodes)
    return times, nodes


def omniscient_times(positions: int, seed: int, cap_s: float = 20.0):
    """The dominoes package's omniscient player: one decision with 14 tiles left in hands."""
    import dominoes
    rng = random.Random(seed)
    times, timeouts = [], 0
    while len(times) + timeouts < positions:
        g = dominoes.Game.new()
        while g.result is None and sum(len(h) for h in g.hands) > 14:
            moves = g.valid_moves
            g.make_move(*moves[rng.randrange(len(moves))])
        if g.result is not None or len(g.valid_moves) < 2:
            continue
        player = dominoes.players.omniscient()
        start = time.perf_counter()
        try:
            _with_alarm(cap_s, lambda: player(g))
            times.append(time.perf_counter() - start)
        except _Timeout:
            timeouts += 1
    return times, timeouts


def run_solver(args) -> int:
    deals = args.deals or 200
    times, nodes = solver_times(deals, args.seed)
    result = {"deals": deals, "median_solve_s": statistics.median(times), "p90_solve_s": _quantile(times, 0.9),
              "max_solve_s": max(times), "median_nodes": statistics.median(nodes), "peers": {}}
    try:
        otimes, timeouts = omniscient_times(10, args.seed)
        result["peers"]["dominoes_omniscient_4p_14_tiles_left"] = {
            "positions": len(otimes) + timeouts, "median_s": statistics.median(otimes) if otimes else None,
            "timeouts_20s": timeouts}
    except ImportError as exc:
        result["peers"]["dominoes_omniscient_4p_14_tiles_left"] = None
        result["peer_errors"] = {"dominoes": f"not installed ({exc.name}); pip install .[bench]"}
    lines = [f"exact solve, Happy block after the deal, {deals} deals: median {result['median_solve_s'] * 1e3:.2f} ms, "
             f"p90 {result['p90_solve_s'] * 1e3:.2f} ms, max {result['max_solve_s'] * 1e3:.1f} ms, "
             f"median {result['median_nodes']:.0f} nodes"]
    peer = result["peers"].get("dominoes_omniscient_4p_14_tiles_left")
    if peer:
        med = f"{peer['median_s']:.3f} s" if peer["median_s"] is not None else "n/a"
        lines.append(f"dominoes package omniscient, 4 players, one decision with 14 tiles left: median {med} "
                     f"over {peer['positions']} positions ({peer['timeouts_20s']} over 20 s)")
    return report(args, result, "\n".join(lines), "bench_solver.json")


# ------------------------------------------------------------------ ISMCTS
def ours_ismcts(moves: int, iters: int, seed: int):
    rng = random.Random(seed)
    agent = ISMCTSAgent(iters=iters)
    nprng = np.random.default_rng(seed)
    times = []
    while len(times) < moves:
        s = deal(HAPPY_BLOCK, rng)
        while not s.is_terminal and len(times) < moves:
            legal = s.legal_actions()
            if len(legal) > 1:
                p = s.current_player
                start = time.perf_counter()
                a = agent.act(Observation(p, s.observe(p), legal, s.num_actions), nprng)
                times.append(time.perf_counter() - start)
                s.apply(a)
                break  # one timed decision per deal: the first with a choice
            s.apply(legal[0] if len(legal) == 1 else legal[rng.randrange(len(legal))])
    return times


def openspiel_ismcts(moves: int, iters: int, seed: int):
    import pyspiel
    from open_spiel.python.algorithms import ismcts, mcts
    from open_spiel.python.games import block_dominoes  # noqa: F401  (registers the game)
    game = pyspiel.load_game("python_block_dominoes")
    rng = random.Random(seed)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, np.random.RandomState(seed)), uct_c=2.0,
                           max_simulations=iters, random_state=np.random.RandomState(seed))

    def resample(state, player):
        s = state.clone()
        opp = 1 - player
        unseen = list(s.hands[opp]) + list(s.deck)
        rng.shuffle(unseen)
        k = len(s.hands[opp])
        s.hands[opp] = unseen[:k]
        s.deck = unseen[k:]
        return s

    bot.set_resampler(resample)
    times = []
    while len(times) < moves:
        s = game.new_initial_state()
        while not s.is_terminal() and len(times) < moves:
            if s.is_chance_node():
                outs = s.chance_outcomes()
                s.apply_action(outs[rng.randrange(len(outs))][0])
                continue
            legal = s.legal_actions()
            if len(legal) > 1:
                start = time.perf_counter()
                a = bot.step(s)
                times.append(time.perf_counter() - start)
                s.apply_action(a)
                break
            s.apply_action(legal[0])
    return times


def run_ismcts(args) -> int:
    moves = args.moves or 20
    iters = 1000
    ours = ours_ismcts(moves, iters, args.seed)
    result = {"iterations": iters, "ours_s_per_move": statistics.mean(ours), "moves_timed": moves, "peers": {}}
    try:
        theirs = openspiel_ismcts(max(3, moves // 4), iters, args.seed)
        result["peers"]["openspiel_ismcts_python_block_dominoes_s_per_move"] = statistics.mean(theirs)
        result["speedup_vs_openspiel"] = statistics.mean(theirs) / statistics.mean(ours)
    except ImportError as exc:
        result["peers"]["openspiel_ismcts_python_block_dominoes_s_per_move"] = None
        result["peer_errors"] = {"openspiel": f"not installed ({exc.name}); pip install .[bench]"}
    peer = result["peers"]["openspiel_ismcts_python_block_dominoes_s_per_move"]
    lines = [f"{'ISMCTS, 1,000 iterations per move':<50} {'s/move':>8}",
             f"{'pipslab ismcts, Happy block':<50} {result['ours_s_per_move']:>8.3f}",
             f"{'OpenSpiel ISMCTSBot, python_block_dominoes':<50} {peer:>8.3f}" if peer else "OpenSpiel: n/a"]
    if result.get("speedup_vs_openspiel"):
        lines.append(f"ours is {result['speedup_vs_openspiel']:.1f}x faster per move")
    return report(args, result, "\n".join(lines), "bench_ismcts.json")


def run(args) -> int:
    """Entry for ``pipslab bench solver`` and ``pipslab bench ismcts``."""
    return run_solver(args) if args.game == "solver" else run_ismcts(args)
