"""Search benchmarks, side by side in one run.

``pipslab bench solver [--json] [--deals N]`` — time to solve Happy block dominoes exactly
straight after the deal (7 + 7 tiles, boneyard out of play: the value of every legal move
and the principal line, a fresh solver per deal) over N random deals (default 200), by
the compiled search and, on the same deals, by the Python reference search
(``Solver(compiled=False)``); Troshin's four in pairs (``troshin-4-pairs``) on N positions
with 12 tiles left in the hands, reached by uniformly random moves (draws included) from
random deals, and right after the opening, solved the same way by the compiled search;
Happy draw right after the opening (the boneyard order known; N/10 deals: bigger
searches) by both searches; beside them, for scale, the
``dominoes`` package's ``omniscient`` player (its own alpha-beta over every hand) on its
4-player game, timed on one decision once 14 tiles are left in the hands (from a fresh
4-player deal it does not finish in minutes).  The compiled search is loaded (or, on a
fresh install, compiled) before the clock starts; that one-off time is reported apart.

``pipslab bench ismcts [--json] [--moves N]`` — seconds per move of our ``ismcts`` at 1,000
iterations on Happy block dominoes (its compiled iterations, and beside them the Python
loop, ``ismcts:compiled=false``, on a quarter as many decisions) against OpenSpiel's
Python ``ISMCTSBot`` at 1,000 simulations (random-rollout evaluator, UCT) on
``python_block_dominoes``, all on the first decisions of random deals.  The compiled code
is loaded (or compiled) before the clock starts.  OpenSpiel's game has no resampling hook, so the benchmark
gives its bot one: the opponent's hand and the deck re-dealt uniformly.

``pipslab bench ismcts --batch N [--json]`` — net-guided search, ``ismcts:eval=net`` on
Happy block (the shipped net), 200 iterations on each of the first decisions with a
choice of N random deals: iterations per second of the N searches run in lock-step
(``search_many``: one forward pass values the new nodes of all of them) beside the same
searches, the same seeds, run one at a time — and whether both gave the same moves —
for the compiled steps (:mod:`pipslab.agents.puct_compiled`) and the Python loop side by
side.  All run with one BLAS thread, as the trainer's workers do (on a busy machine a threaded BLAS
spends more waking its threads for these small products than it saves).
"""
from __future__ import annotations

import random
import signal
import statistics
import time
import numpy as np

from pipslab.agents.base import Observation
from pipslab.agents.search_dominoes import ISMCTSAgent, search_many
from pipslab.agents.solver import Solver
from pipslab.envs.dominoes.engine import deal
from pipslab.envs.errors import PipslabError
from pipslab.envs.dominoes.variants import HAPPY_BLOCK, HAPPY_DRAW, TROSHIN_4_PAIRS

from .bench_report import report


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
def solver_times(deals: int, seed: int, compiled: bool = True):
    """Seconds and nodes of a whole solve (move values and principal line) of each of
    ``deals`` Happy block deals, a fresh solver each."""
    rng = random.Random(seed)
    return _solve_times([deal(HAPPY_BLOCK, rng) for _ in range(deals)], compiled)


def _solve_times(states, compiled: bool = True):
    times, nodes = [], []
    for state in states:
        solver = Solver(compiled=compiled)
        start = time.perf_counter()
        solver.solve(state)
        times.append(time.perf_counter() - start)
        nodes.append(solver.nodes)
    return times, nodes


def pairs_positions(count: int, seed: int, tiles: int = 12):
    """``count`` unfinished Troshin 4-pairs positions with ``tiles`` tiles left in the
    hands, reached by uniformly random moves (draws and passes too) from random deals."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        s = deal(TROSHIN_4_PAIRS, rng)
        while not s.is_terminal and sum(bin(h).count("1") for h in s.hands) > tiles:
            legal = s.legal_actions()
            s.apply(legal[rng.randrange(len(legal))])
        if not s.is_terminal and sum(bin(h).count("1") for h in s.hands) == tiles:
            out.append(s)
    return out


def opened(variant, count: int, seed: int):
    """``count`` random deals of ``variant`` with the opening tile played."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        s = deal(variant, rng)
        s.apply(s.legal_actions()[0])
        out.append(s)
    return out


def warm_up() -> float:
    """Seconds to load (or compile) the compiled search: its first call."""
    start = time.perf_counter()
    s = deal(HAPPY_BLOCK, random.Random(0))
    s.apply(s.legal_actions()[0])
    Solver().solve(s)
    Solver().value(s)
    return time.perf_counter() - start


def _summary(times, nodes) -> dict:
    return {"median_s": statistics.median(times), "p90_s": _quantile(times, 0.9), "max_s": max(times),
            "median_nodes": statistics.median(nodes)}


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
    load_s = warm_up()
    times, nodes = solver_times(deals, args.seed)
    ref_times, ref_nodes = solver_times(deals, args.seed, compiled=False)
    pair_times, pair_nodes = _solve_times(pairs_positions(deals, args.seed))
    pair_deal_times, pair_deal_nodes = _solve_times(opened(TROSHIN_4_PAIRS, deals, args.seed))
    # the draw game's searches are bigger: a tenth as many, for the reference's sake
    draws = opened(HAPPY_DRAW, max(1, deals // 10), args.seed)
    draw_times, draw_nodes = _solve_times(draws)
    draw_ref_times, draw_ref_nodes = _solve_times(draws, compiled=False)
    result = {"deals": deals, "median_solve_s": statistics.median(times), "p90_solve_s": _quantile(times, 0.9),
              "max_solve_s": max(times), "median_nodes": statistics.median(nodes), "load_or_compile_s": load_s,
              "reference": _summary(ref_times, ref_nodes),
              "speedup_vs_reference": statistics.median(ref_times) / statistics.median(times),
              "speedup_vs_reference_happy_draw": statistics.median(draw_ref_times) / statistics.median(draw_times),
              "troshin_4_pairs_12_tiles": dict(_summary(pair_times, pair_nodes), positions=deals),
              "troshin_4_pairs_opened": dict(_summary(pair_deal_times, pair_deal_nodes), positions=deals),
              "happy_draw_opened": dict(_summary(draw_times, draw_nodes), positions=len(draws)),
              "happy_draw_opened_reference": dict(_summary(draw_ref_times, draw_ref_nodes), positions=len(draws)),
              "peers": {}}
    try:
        otimes, timeouts = omniscient_times(10, args.seed)
        result["peers"]["dominoes_omniscient_4p_14_tiles_left"] = {
            "positions": len(otimes) + timeouts, "median_s": statistics.median(otimes) if otimes else None,
            "timeouts_20s": timeouts}
    except ImportError as exc:
        result["peers"]["dominoes_omniscient_4p_14_tiles_left"] = None
        result["peer_errors"] = {"dominoes": f"not installed ({exc.name}); pip install .[bench]"}
    happy = {"median_s": result["median_solve_s"], "p90_s": result["p90_solve_s"], "max_s": result["max_solve_s"],
             "median_nodes": result["median_nodes"]}
    rows = [(f"Happy block after the deal, compiled ({deals})", happy),
            (f"Happy block after the deal, Python reference ({deals})", result["reference"]),
            (f"Troshin 4 in pairs, 12 tiles in hand, compiled ({deals})", result["troshin_4_pairs_12_tiles"]),
            (f"Troshin 4 in pairs, after the opening, compiled ({deals})", result["troshin_4_pairs_opened"]),
            (f"Happy draw, after the opening, compiled ({len(draws)})", result["happy_draw_opened"]),
            (f"Happy draw, after the opening, Python reference ({len(draws)})", result["happy_draw_opened_reference"])]
    lines = ["exact solve (move values and principal line; positions):",
             f"{'':<60} {'median':>10} {'p90':>10} {'max':>10} {'nodes':>8}"]
    lines += [f"{name:<60} {_ms(r['median_s'])} {_ms(r['p90_s'])} {_ms(r['max_s'])} {r['median_nodes']:>8.0f}"
              for name, r in rows]
    lines += [f"compiled is {result['speedup_vs_reference']:.1f}x faster than the reference on Happy block, "
              f"{result['speedup_vs_reference_happy_draw']:.1f}x on Happy draw (medians); loading the compiled search "
              f"took {load_s:.2f} s once, before timing"]
    peer = result["peers"].get("dominoes_omniscient_4p_14_tiles_left")
    if peer:
        med = f"{peer['median_s']:.3f} s" if peer["median_s"] is not None else "n/a"
        lines.append(f"dominoes package omniscient, 4 players, one decision with 14 tiles left: median {med} "
                     f"over {peer['positions']} positions ({peer['timeouts_20s']} over 20 s)")
    return report(args, result, "\n".join(lines), "bench_solver.json")


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:>7.2f} ms"


# ------------------------------------------------------------------ ISMCTS
def ours_ismcts(moves: int, iters: int, seed: int, compiled: bool = True):
    """Seconds per decision of ``ismcts`` (``compiled=False``: the Python loop and
    playouts) on the first decision with a choice of ``moves`` random Happy block deals."""
    rng = random.Random(seed)
    agent = ISMCTSAgent(iters=iters, compiled=compiled)
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


def warm_up_ismcts() -> float:
    """Seconds to load (or compile) the compiled engine and ISMCTS iterations."""
    from pipslab.agents import ismcts_compiled
    from pipslab.envs.dominoes import compiled
    start = time.perf_counter()
    compiled.warm_up()
    ismcts_compiled.warm_up()
    return time.perf_counter() - start


def run_ismcts(args) -> int:
    moves = args.moves or 20
    iters = 1000
    load_s = warm_up_ismcts()
    ours = ours_ismcts(moves, iters, args.seed)
    python = ours_ismcts(max(3, moves // 4), iters, args.seed, compiled=False)
    result = {"iterations": iters, "ours_s_per_move": statistics.mean(ours), "moves_timed": moves, "peers": {},
              "python_loop_s_per_move": statistics.mean(python), "python_loop_moves_timed": len(python),
              "speedup_vs_python_loop": statistics.mean(python) / statistics.mean(ours),
              "load_or_compile_s": load_s}
    try:
        theirs = openspiel_ismcts(max(3, moves // 4), iters, args.seed)
        result["peers"]["openspiel_ismcts_python_block_dominoes_s_per_move"] = statistics.mean(theirs)
        result["speedup_vs_openspiel"] = statistics.mean(theirs) / statistics.mean(ours)
    except ImportError as exc:
        result["peers"]["openspiel_ismcts_python_block_dominoes_s_per_move"] = None
        result["peer_errors"] = {"openspiel": f"not installed ({exc.name}); pip install .[bench]"}
    peer = result["peers"]["openspiel_ismcts_python_block_dominoes_s_per_move"]
    lines = [f"{'ISMCTS, 1,000 iterations per move':<50} {'s/move':>8}",
             f"{'pipslab ismcts, Happy block (compiled iterations)':<50} {result['ours_s_per_move']:>8.4f}",
             f"{'pipslab ismcts:compiled=false (the Python loop)':<50} {result['python_loop_s_per_move']:>8.4f}",
             f"{'OpenSpiel ISMCTSBot, python_block_dominoes':<50} {peer:>8.4f}" if peer else "OpenSpiel: n/a"]
    if result.get("speedup_vs_openspiel"):
        lines.append(f"ours is {result['speedup_vs_openspiel']:.1f}x faster per move than OpenSpiel's "
                     f"(the Python loop {peer / result['python_loop_s_per_move']:.1f}x); the compiled code "
                     f"loaded in {load_s:.2f} s once, before timing")
    return report(args, result, "\n".join(lines), "bench_ismcts.json")


# ------------------------------------------------------------------ lock-step ISMCTS
LOCKSTEP_ITERS = 200


def first_decisions(count: int, seed: int):
    """The first decision with a choice of each of ``count`` random Happy block deals (the
    moves before it uniformly random)."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        s = deal(HAPPY_BLOCK, rng)
        while not s.is_terminal and len(s.legal_actions()) == 1:
            s.apply(s.legal_actions()[0])
        if not s.is_terminal:
            out.append(s)
    return out


def lockstep_rates(searches: int, iters: int, seed: int) -> dict:
    """Iterations per second of ``searches`` net-guided searches run in lock-step and the
    same searches (same views, same seeds) run one at a time, by the compiled steps
    (:mod:`pipslab.agents.puct_compiled`, the default road: the un-prefixed keys) and by
    the Python loop (``python_*``); whether each road's moves agree with itself batched
    and alone, and how often the two roads pick the same move (other worlds: not always)."""
    agent = ISMCTSAgent(iters=iters, eval="net")
    views = [s.observe(s.current_player) for s in first_decisions(searches, seed)]
    seeds = [seed * 1000 + i for i in range(searches)]

    def run_all(batch: int, compiled: bool):
        out = []
        for i in range(0, searches, batch):
            out += search_many(views[i:i + batch], seeds[i:i + batch], agent.evaluator, iters, agent.c,
                               compiled=compiled)
        return out

    from threadpoolctl import threadpool_limits
    total = searches * iters
    out = {"searches": searches, "iterations_each": iters, "blas_threads": 1}
    moves = {}
    with threadpool_limits(1):
        for compiled, prefix in ((True, ""), (False, "python_")):
            run_all(searches, compiled)          # load the net and warm caches outside the clock
            t0 = time.perf_counter()
            together = run_all(searches, compiled)
            lockstep_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            alone = run_all(1, compiled)
            alone_s = time.perf_counter() - t0
            moves[compiled] = together
            out.update({f"{prefix}lockstep_iters_per_s": total / lockstep_s,
                        f"{prefix}one_at_a_time_iters_per_s": total / alone_s,
                        f"{prefix}speedup": alone_s / lockstep_s,
                        f"{prefix}lockstep_s_per_search": lockstep_s / searches,
                        f"{prefix}one_at_a_time_s_per_search": alone_s / searches,
                        f"{prefix}same_moves": sum(a.action == b.action for a, b in zip(together, alone)) / searches})
    out["compiled_vs_python_lockstep"] = out["lockstep_iters_per_s"] / out["python_lockstep_iters_per_s"]
    out["compiled_vs_python_one_at_a_time"] = (out["one_at_a_time_iters_per_s"]
                                               / out["python_one_at_a_time_iters_per_s"])
    out["compiled_python_same_moves"] = sum(a.action == b.action for a, b in zip(moves[True], moves[False])) / searches
    return out


def run_lockstep(args) -> int:
    if args.moves is not None:
        raise PipslabError("--moves does not apply to bench ismcts --batch: --batch N is the number of searches")
    r = lockstep_rates(args.batch, LOCKSTEP_ITERS, args.seed)
    lines = [f"ismcts:eval=net, Happy block, {r['searches']} searches of {r['iterations_each']} iterations "
             f"(first decisions of random deals)",
             f"{'iterations per second':<40} {'compiled':>11} {'Python loop':>12}"]
    for label, key in (("lock-step (one forward pass a step)", "lockstep_iters_per_s"),
                       ("one at a time", "one_at_a_time_iters_per_s")):
        lines.append(f"{label:<40} {r[key]:>11.0f} {r['python_' + key]:>12.0f}")
    lines += [f"lock-step is {r['speedup']:.2f}x the searches one at a time compiled ({r['python_speedup']:.2f}x "
              f"in Python); compiled is {r['compiled_vs_python_lockstep']:.1f}x the Python loop in lock-step, "
              f"{r['compiled_vs_python_one_at_a_time']:.1f}x one at a time",
              f"the same move batched and alone in {r['same_moves']:.0%} (compiled) and {r['python_same_moves']:.0%} "
              f"(Python) of the searches; the two roads (other worlds) agree on {r['compiled_python_same_moves']:.0%}"]
    return report(args, r, "\n".join(lines), "bench_ismcts_lockstep.json")


def run(args) -> int:
    """Entry for ``pipslab bench solver`` and ``pipslab bench ismcts`` (``--batch``: lock-step)."""
    if args.game == "solver":
        return run_solver(args)
    return run_lockstep(args) if getattr(args, "batch", None) else run_ismcts(args)
