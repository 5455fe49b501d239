"""``pipslab bench harness``: what the tournament harness costs over the bare game loop.

Random agents on Happy block dominoes, one process, the same games (the tournament's seed
plan) played three ways, in ``--repeat`` interleaved rounds:

* **bare loop** — ``play_game`` on each game of the plan with fresh agents (built as the
  harness builds them, one set per game), nothing recorded;
* **harness, games** — ``pipslab tournament --workers 1 --no-plots``'s playing phase:
  every game played by id, turned into a record and appended to ``games.csv`` (flushed,
  fsynced every second), progress bar drawn;
* **harness, total** — the whole run: also reading the records back, the summary tables,
  ratings with 200 bootstrap resamples, CSV and Markdown files (plots excluded).

Besides, within each harness run the time spent inside ``play_game`` is clocked apart from
the whole games phase; their ratio is the harness's overhead measured under the very same
load, the steadiest of these numbers on a shared machine.

Times are CPU seconds of this process (``time.process_time``), so that other load on a
shared machine disturbs the comparison less.  Each way plays about ``--seconds`` of games in
all (at least 1,000 a round).
Also runnable as ``python -m pipslab.experiments.bench_harness``.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import tempfile
import time
from pathlib import Path

from pipslab.agents.registry import make_agent
from pipslab.envs.game import get_game

from .games import play_game
from .seedplan import Plan, game_units, new_seat_agents, seeds
from .tournament import TournamentArgs, run_tournament

AGENTS = ("random", "random2")   # random2: random under another name (a tournament needs two)


def _bare(n: int, seed: int, with_result: bool = False) -> float:
    """CPU seconds of ``play_game`` over games 0..n-1 of the plan (and ``state.result()``),
    each game with fresh agents, as the harness plays it (the two agents of :func:`_harness`)."""
    spec = get_game("happy")
    options = {"mode": "block"}
    plan = Plan(2, game_units(spec, options))
    start = time.process_time()
    for i in range(n):
        deal, _, seat_idx = plan.game(i)
        deal_seed, agent_seed = seeds(seed, deal, i)
        state, _, _ = play_game(spec, options, new_seat_agents([AGENTS[k] for k in seat_idx], "happy"), deal_seed,
                                agent_seed)
        if with_result:
            state.result()
    return time.process_time() - start


def _harness(n: int, seed: int, out: Path, progress: bool):
    args = TournamentArgs(game="happy", agents=list(AGENTS), games=n, seed=seed, out=str(out),
                          workers=1, plots=False, progress=progress)
    sink = io.StringIO()
    with contextlib.redirect_stderr(sink):   # the progress bar is drawn, into a buffer
        start = time.process_time()
        result = run_tournament(args)
        total = time.process_time() - start
    return result.cpu_timings["games"], total, result.timings["games"], result.timings["play_game"]


def _register_second_random() -> None:
    from pipslab.agents import registry
    if "random2" not in registry.agent_names("happy"):
        registry.register("random2", games=["happy"])(lambda game: make_agent("random", game))


def measure(seconds: float, seed: int, repeat: int = 7, min_games: int = 1000) -> dict:
    """Runs the bare loop, bare loop + result() and the harness in ``repeat`` interleaved
    rounds (their order rotating), each round worth ``seconds / repeat`` of bare play, and
    compares the total CPU time of each over all rounds — load that comes and goes on a
    shared machine falls on all three alike."""
    _register_second_random()
    _bare(100, seed)
    t = _bare(300, seed)
    n = max(min_games, int(seconds / repeat / max(t / 300, 1e-9)))
    times = {"bare": 0.0, "bare_result": 0.0, "games": 0.0, "total": 0.0, "wall": 0.0, "inside": 0.0}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(repeat):
            steps = ["bare", "bare_result", "harness"]
            for step in steps[r % 3:] + steps[:r % 3]:
                if step == "harness":
                    g, tot, wall, inside = _harness(n, seed, Path(tmp) / f"run{r}", progress=True)
                    times["games"] += g
                    times["total"] += tot
                    times["wall"] += wall
                    times["inside"] += inside
                else:
                    times[step] += _bare(n, seed, with_result=step == "bare_result")
    games = n * repeat
    b, br, g, tot = times["bare"], times["bare_result"], times["games"], times["total"]
    return {"games": games, "games_per_round": n, "repeat": repeat, "bare_s": b, "bare_result_s": br,
            "harness_games_s": g, "harness_total_s": tot, "bare_games_per_s": games / b,
            "bare_result_games_per_s": games / br, "harness_games_per_s": games / g,
            "harness_total_games_per_s": games / tot, "overhead_games": g / b - 1, "overhead_total": tot / b - 1,
            "overhead_games_vs_result": g / br - 1, "overhead_result": br / b - 1,
            "in_run_games_s": times["wall"], "in_run_play_game_s": times["inside"],
            "overhead_in_run": times["wall"] / times["inside"] - 1}


def format_table(r: dict) -> str:
    w = 40
    lines = [f"Happy block, random vs random, one process: {r['repeat']} interleaved rounds of "
             f"{r['games_per_round']:,} games each way (CPU seconds, all rounds)",
             f"{'':<{w}} {'CPU s':>7} {'games/s':>9} {'overhead':>9}", "-" * (w + 28),
             f"{'bare loop: play_game':<{w}} {r['bare_s']:>7.2f} {r['bare_games_per_s']:>9,.0f} {'':>9}",
             f"{'bare loop + state.result()':<{w}} {r['bare_result_s']:>7.2f} "
             f"{r['bare_result_games_per_s']:>9,.0f} {r['overhead_result']:>+9.1%}",
             f"{'harness: games, records, games.csv, bar':<{w}} {r['harness_games_s']:>7.2f} "
             f"{r['harness_games_per_s']:>9,.0f} {r['overhead_games']:>+9.1%}",
             f"{'harness: whole run (+ tables, ratings)':<{w}} {r['harness_total_s']:>7.2f} "
             f"{r['harness_total_games_per_s']:>9,.0f} {r['overhead_total']:>+9.1%}",
             "-" * (w + 28),
             f"overhead: over the bare play_game loop; the harness over play_game + result(): "
             f"{r['overhead_games_vs_result']:+.1%}",
             f"in the same runs (wall clock, immune to load that comes and goes): the harness's games "
             f"phase took {r['in_run_games_s']:.2f} s,",
             f"of which {r['in_run_play_game_s']:.2f} s inside play_game: harness overhead "
             f"{r['overhead_in_run']:+.1%}"]
    return "\n".join(lines)


def run(args) -> int:
    from .bench_report import report
    r = measure(args.seconds, args.seed, getattr(args, "repeat", 7))
    return report(args, r, format_table(r), "bench_harness.json")


def main(argv=None) -> int:
    from pipslab.envs.errors import PipslabError

    from .checks import check_out_dir, count_arg, out_arg, seconds_arg, seed_arg
    p = argparse.ArgumentParser(prog="python -m pipslab.experiments.bench_harness", description=__doc__)
    p.add_argument("--seconds", type=seconds_arg, default=5.0)
    p.add_argument("--seed", type=seed_arg, default=0)
    p.add_argument("--repeat", type=count_arg(1), default=7)
    p.add_argument("--json", action="store_true")
    p.add_argument("--out", type=out_arg, default=None)
    args = p.parse_args(argv)
    try:
        if args.out is not None:
            check_out_dir(args.out)
        return run(args)
    except PipslabError as exc:
        p.exit(2, f"{p.prog}: error: {exc}\n")


if __name__ == "__main__":
    raise SystemExit(main())
