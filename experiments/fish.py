"""Fish research: a solver-backed study of blocked endings, and a puzzle book.

``pipslab fish study GAME [game options] --agents A,B[,...] --games N --seed S --out DIR``
    plays a tournament (``DIR/tournament/``, exactly ``pipslab tournament`` with the same
    arguments: duplicate deals, records, ``--resume``), then studies its games: every
    game that ended blocked and, for comparison, a share (``--compare``, default 0.1) of
    the others.  Each studied game is replayed from its record and checked against it;
    the positions before its last ``K`` placements (``--before K``, default 8) are solved
    exactly with every hand open and valued from the mover's own view
    (``--view-samples``, default 8, worlds from ``sample_world``) — see
    :mod:`pipslab.experiments.fish_positions`.
``pipslab fish study --from TOURNAMENT_DIR --out DIR``
    studies the games of a tournament already played, through its replayable records.
``pipslab fish puzzles GAME [game options] --n N --seed S --out DIR``
    see :mod:`pipslab.experiments.puzzles`.

The study writes, atomically, into ``DIR``: ``games.csv`` (one row per studied game: the
agents, every seat's and side's tiles and pips at the end, the winner, the margin, how
many placements before the end the perfect-play result was already fixed),
``positions.csv`` (one row per kept position: its position string — ``pipslab solve``
checks it —, the solver's value and best moves, the move played and its regret, closing
moves, the view values), ``summary.csv`` and ``summary.md`` (the questions below, per
pairing and over all, with Wilson 95% intervals for shares and normal ones for means),
``study.json`` (the run's manifest: arguments, seeds, timings) and the plots
(:mod:`pipslab.experiments.fish_tables`).

Questions answered (per variant — one per run —, per pairing, over all): how often games
end in a fish; at the block, how often the side with fewer tiles wins, how often the side
with fewer pips wins and how often equal sums draw; the final margins of fish against
games where a hand went out; how early a fish is decided (k = 1..K); whether closing the
game is optimal when it is possible and how each agent closes; each agent's regret in
blocked endings (outcome and pips), split into bad moves (worse from the agent's own view
too) and bad luck (best from its view, wrong only in the hidden tiles).

Solvers: 2-player line games (Happy block and draw, Troshin for 2) and Troshin for 4 in
pairs (two sides, zero-sum).  Three or four players each for themselves, and Triple, are
refused in one line.  Resumable: the study is done in blocks of games, each saved
atomically in ``DIR/parts/`` when finished (removed once the study's files are written);
``--resume`` continues the tournament and skips the finished blocks.
"""
from __future__ import annotations

import shlex
import shutil
import sys
import time
from pathlib import Path

import pandas as pd

from pipslab.envs.errors import PipslabError
from pipslab.envs.game import get_game

from .checks import count_arg, seed_arg, share_arg
from .executors import default_workers
from .files import atomic_write_text
from .fish_positions import (DEFAULT_BEFORE, DEFAULT_COMPARE, DEFAULT_VIEW_SAMPLES, GameStudy, StudySettings,
                             keep_game, variant_of)
from .cliargs import add_option_flags, flag_options_given, parse_option_items, split_agent_list
from .runner import Run, RunInterrupted, read_manifest
from .seedplan import Task, options_json
from .tournament import MANIFEST_VERSION, TournamentArgs, TournamentInterrupted, read_games, run_tournament

BLOCK = 250          # games per saved block of the study (independent of the workers)
STUDY_PRODUCTS = ("games.csv", "positions.csv", "summary.csv", "summary.md", "fish_share.png", "margins.png",
                  "decided.png", "closing.png", "regret.png")


def add_arguments(parser) -> None:
    sub = parser.add_subparsers(dest="fish_command", metavar="{study,puzzles}", parser_class=type(parser))
    sub.required = True
    study = sub.add_parser("study", help="solve the endings of a tournament's blocked games",
                           description=__doc__)
    study.add_argument("game", nargs="?", default=None, help="happy (default) or troshin")
    study.add_argument("--agents", default=None, help="comma-separated agent specs (default heaviest,suits)")
    study.add_argument("--games", type=count_arg(1), default=None, help="games of the tournament (default 2000)")
    study.add_argument("--seed", type=seed_arg, default=None, help="the tournament's and the study's seed (default 0)")
    study.add_argument("--from", dest="from_dir", default=None, metavar="TOURNAMENT_DIR",
                       help="study the games of this tournament folder instead of playing new ones")
    study.add_argument("--out", default=None, help="output folder (default results/fish-VARIANT)")
    add_option_flags(study)
    study.add_argument("--option", action="append", metavar="KEY=VALUE", help="another game option (repeatable)")
    study.add_argument("--before", type=count_arg(1), default=DEFAULT_BEFORE, metavar="K",
                       help=f"placements kept before the end of each game (default {DEFAULT_BEFORE})")
    study.add_argument("--compare", type=share_arg, default=DEFAULT_COMPARE, metavar="SHARE",
                       help=f"share of the games without a block studied beside them (default {DEFAULT_COMPARE})")
    study.add_argument("--view-samples", type=count_arg(0), default=DEFAULT_VIEW_SAMPLES, metavar="M",
                       help=f"worlds sampled to value a position from the mover's view (default {DEFAULT_VIEW_SAMPLES}; "
                            "0: none)")
    study.add_argument("--workers", type=count_arg(1), default=None,
                       help=f"worker processes (default: all cores, here {default_workers()})")
    study.add_argument("--import", dest="imports", action="append", metavar="MODULE",
                       help="import MODULE first (e.g. one that registers your own agents)")
    study.add_argument("--resume", action="store_true", help="continue an interrupted study in --out")
    study.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    study.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    study.set_defaults(_fish=run_study_command)

    from . import puzzles
    pz = sub.add_parser("puzzles", help="only-move puzzles from real games' endings, with their solutions",
                        description=puzzles.__doc__)
    puzzles.add_arguments(pz)
    pz.set_defaults(_fish=puzzles.run)


def run(ns) -> int:
    return ns._fish(ns)


# ------------------------------------------------------------------ the study
def _task_of(manifest: dict, where: Path) -> Task:
    try:
        return Task(manifest["game"], options_json(manifest["options"]), tuple(manifest["agents"]),
                    int(manifest["seed"]), manifest.get("format", "round-robin"), bool(manifest.get("duplicate", True)),
                    int(manifest.get("hero", 0)), tuple(manifest.get("imports", ())))
    except (KeyError, TypeError, ValueError):
        raise PipslabError(f"{where} is not a tournament's manifest (no game, options, agents or seed)") from None


def read_tournament(folder: Path):
    """``(task, manifest, games DataFrame)`` of a finished tournament folder, or one line why not."""
    folder = Path(folder)
    if not folder.is_dir():
        raise PipslabError(f"--from {str(folder)!r} is not a folder")
    manifest_path, games_path = folder / "run.json", folder / "games.csv"
    if not manifest_path.is_file() or not games_path.is_file():
        raise PipslabError(f"--from {str(folder)!r} is not a tournament folder (it needs run.json and games.csv, "
                           "as pipslab tournament writes them)")
    manifest = read_manifest(manifest_path, required=("game", "options", "agents", "seed"))
    if manifest.get("kind") != "tournament":
        raise PipslabError(f"--from {str(folder)!r} holds a {manifest.get('kind')!r} run, not a tournament")
    if manifest.get("status") != "done":
        raise PipslabError(f"--from {str(folder)!r}: the tournament is not finished (status "
                           f"{manifest.get('status')!r}); resume it first")
    task = _task_of(manifest, manifest_path)
    try:
        games = read_games(games_path)
    except Exception as exc:   # pandas' many ways to fail on a damaged file
        raise PipslabError(f"--from {str(folder)!r}: games.csv cannot be read ({type(exc).__name__})") from None
    needed = {"game_id", "blocked", "moves", "result", "winner_seat"}
    if not needed <= set(games.columns):
        raise PipslabError(f"--from {str(folder)!r}: games.csv lacks the columns {sorted(needed - set(games.columns))}")
    return task, manifest, games


class StudyBlock:
    """A worker's job: study the kept games of one block of game ids."""

    def __init__(self, task: Task, settings: StudySettings):
        self.task, self.settings = task, settings
        self.study = None

    def setup(self) -> None:
        from .imports import import_user_modules
        import_user_modules(self.task.imports)
        self.study = GameStudy(self.task, self.settings)

    def __call__(self, item):
        block, records = item
        if self.study is None:
            self.setup()
        games, positions = [], []
        for rec in records:
            g, rows = self.study.study(int(rec["game_id"]), rec)
            games.append(g)
            positions.extend(rows)
        return block, games, positions

    def __getstate__(self):
        return {"task": self.task, "settings": self.settings, "study": None}


def _tournament_args(ns) -> TournamentArgs:
    """The tournament a fresh study plays (its ``out`` is set once the study's is known)."""
    game = ns.game or "happy"
    given = flag_options_given(ns)
    given.update(parse_option_items(ns.option or []))
    mode = given.pop("mode", None)
    agents = split_agent_list(ns.agents) if ns.agents else ["heaviest", "suits"]
    return TournamentArgs(game=game, agents=agents, games=ns.games or 2000, seed=0 if ns.seed is None else ns.seed,
                          out=None, mode=mode, workers=ns.workers or default_workers(),
                          resume=ns.resume, plots=False, extra_options=given, imports=tuple(ns.imports or ()),
                          progress=not ns.no_progress)


def run_study_command(ns) -> int:
    start = time.perf_counter()
    try:
        out, summary = run_study(ns)
    except (TournamentInterrupted, RunInterrupted) as exc:
        sys.stdout.flush()
        sys.stderr.write(f"{exc}\n")
        return 130
    except KeyboardInterrupt:
        sys.stdout.flush()
        again = shlex.join(["pipslab"] + sys.argv[1:] + ([] if "--resume" in sys.argv else ["--resume"]))
        sys.stderr.write(f"pipslab: the fish study stopped; its finished blocks are saved: resume with {again}\n")
        return 130
    from .fish_tables import format_summary
    print(format_summary(summary))
    print(f"wrote {out}/ ({time.perf_counter() - start:.1f} s)")
    return 0


def run_study(ns):
    """Run (or resume) a study from parsed flags; returns ``(out, summary DataFrame)``.
    Every argument is checked before anything is written."""
    settings_kw = dict(before=ns.before, compare=ns.compare, view_samples=ns.view_samples)
    targs = None
    if ns.from_dir is not None:
        given = [f for f, v in (("GAME", ns.game), ("--agents", ns.agents), ("--games", ns.games)) if v is not None]
        if given:
            raise PipslabError(f"--from studies an existing tournament: drop {', '.join(given)}")
        tour_dir = Path(ns.from_dir).resolve()
        task, _manifest, tour_games = read_tournament(tour_dir)
        game, options = task.game, task.options
        seed = task.seed if ns.seed is None else ns.seed
    else:
        targs = _tournament_args(ns)
        game, options, seed = targs.game, targs.options(), targs.seed
        _check_tournament(targs)
    label = get_game(game).variant_label(options)
    variant = variant_of(game, options, label)
    out = Path(ns.out or f"results/fish-{label}")
    if targs is not None:
        targs.out = str(out / "tournament")
        tour_dir = (out / "tournament").resolve()
    settings = StudySettings(seed=seed, **settings_kw)
    command = shlex.join(["pipslab"] + sys.argv[1:]) if sys.argv[1:2] == ["fish"] else "pipslab fish study"
    plan = {"version": MANIFEST_VERSION, "tournament": str(tour_dir), "label": label, "seed": seed,
            "before": settings.before, "compare": settings.compare, "view_samples": settings.view_samples}
    workers = ns.workers or default_workers()
    with Run("fish-study", out, plan=plan, resume=ns.resume, command=command, products=STUDY_PRODUCTS,
             progress=not ns.no_progress, noun="fish study",
             seeds={"seed": seed, "compare": "[seed, 4, game_id]", "view samples": "[seed, 3, game_id, k]"}) as run:
        run.start()
        if run.previous is None:   # a fresh study: no block of an earlier one may be taken for its own
            shutil.rmtree(run.path("parts"), ignore_errors=True)
        timings = {}
        t0 = time.perf_counter()
        if targs is not None:
            run_tournament(targs)
            timings["tournament_s"] = round(time.perf_counter() - t0, 2)
            task, _manifest, tour_games = read_tournament(tour_dir)   # the records just played
        t1 = time.perf_counter()
        games, positions, studied = _study_blocks(run, task, settings, tour_games, workers, label)
        timings["study_s"] = round(time.perf_counter() - t1, 2)
        from .fish_tables import summarize_study, write_plots, write_summary_md
        teams = variant.teams
        summary = summarize_study(tour_games, games, positions, teams, settings.before)
        atomic_write_text(out / "games.csv", games.to_csv(index=False))
        atomic_write_text(out / "positions.csv", positions.to_csv(index=False))
        atomic_write_text(out / "summary.csv", summary.to_csv(index=False))
        info = {"label": label, "teams": list(teams), "games": len(tour_games), "studied": studied, "positions": len(positions),
                "command": command, "tournament": str(tour_dir), **timings,
                "positions_per_s": round(len(positions) / timings["study_s"], 1) if timings["study_s"] else None}
        write_summary_md(out / "summary.md", summary, info)
        if not ns.no_plots:
            write_plots(out, tour_games, games, positions, teams, settings.before)
        timings["total_s"] = round(time.perf_counter() - t0, 2)
        run.update(results={**info, **timings})
        # the blocks were only for --resume: games.csv and positions.csv now hold them all
        shutil.rmtree(run.path("parts"), ignore_errors=True)
    return out, summary


def _check_tournament(targs: TournamentArgs) -> None:
    """The tournament's own checks and its agents built once, before the study writes anything."""
    from pipslab.agents.registry import make_agent
    from .imports import import_user_modules
    from .tournament import check_args
    check_args(targs)
    import_user_modules(targs.imports)
    for name in targs.agents:
        make_agent(name, targs.game).check_table(targs.game, targs.options())


def _study_blocks(run: Run, task: Task, settings: StudySettings, tour_games: pd.DataFrame, workers: int, label: str):
    parts = run.path("parts")
    parts.mkdir(exist_ok=True)
    records = tour_games.to_dict("records")
    n = len(records)
    blocks = []
    for b, first in enumerate(range(0, n, BLOCK)):
        kept = [r for r in records[first:first + BLOCK]
                if keep_game(settings, int(r["game_id"]), str(r["blocked"]).lower() == "true")]
        blocks.append((b, kept))
    done = {b for b, _ in blocks if (parts / f"games-{b:05d}.csv").exists()}
    todo = [(b, kept) for b, kept in blocks if b not in done]
    studied = sum(len(k) for _, k in blocks)
    if todo:
        job = StudyBlock(task, settings)
        bar = run.bar(studied, sum(len(k) for b, k in blocks if b in done), desc=f"{label} fish study")
        try:
            with run.executor(job, min(workers, len(todo))) as ex:
                for batch in ex.run(iter(todo)):
                    for b, games, positions in batch:
                        # positions first: a block counts as done once its games part exists
                        atomic_write_text(parts / f"positions-{b:05d}.csv", pd.DataFrame(positions).to_csv(index=False))
                        atomic_write_text(parts / f"games-{b:05d}.csv", pd.DataFrame(games).to_csv(index=False))
                        bar.update(len(games))
        finally:
            bar.close()
    games = _concat(parts, "games", len(blocks))
    positions = _concat(parts, "positions", len(blocks))
    return games, positions, studied


def _concat(parts: Path, name: str, n_blocks: int) -> pd.DataFrame:
    frames = []
    for b in range(n_blocks):
        p = parts / f"{name}-{b:05d}.csv"
        if p.stat().st_size > 1:
            try:
                frames.append(pd.read_csv(p, keep_default_na=False, na_values=["nan", "NaN", ""]))
            except pd.errors.EmptyDataError:
                pass
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
