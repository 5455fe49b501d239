"""The evaluation harness: play many games between agents and tabulate who wins.

``pipslab tournament [GAME] --agents A,B,C --games N --seed S --out DIR``

Round-robin or gauntlet, duplicate deals with the seats rotated, one replayable record a
game in ``DIR/games.csv``, the tables (summary, pairings, Bradley–Terry ratings) and plots,
in a resumable run folder (:class:`~pipslab.experiments.runner.Run`).  With no arguments:
Happy block dominoes, ``random``, ``heaviest`` and ``suits``, 600 games, seed 0.  Formats,
records, tables, config files and ``--resume``: docs/harness.md.
"""
from __future__ import annotations

import json
import re
import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pandas as pd

from pipslab.envs.errors import PipslabError
from pipslab.envs.game import get_game

from .checks import check_int, check_out, check_seed
from .cliargs import (BOOL, INT, STR, STRINGS, TABLE, add_option_flags, flag_options_given, kind_of_type,
                      parse_option_items, split_agent_list)
from .cliargs import load_config as load_toml
from .executors import BACKENDS, check_backend, chunked, default_workers, plan_chunks
from .files import atomic_write_text
from .imports import import_specs, import_user_modules
from .records import RecordLog, recover_records, write_records_file
from .runner import Run, RunInterrupted
from .seedplan import FORMATS, GameRunner, Plan, Task, game_units, options_json, seed_text, seeds
from .summary import (format_table, head_to_head, pairwise_rows, pip_margins, ratings_table, summarize,
                      summarize_pairings, unit_rows)

DEFAULT_AGENTS = ["random", "heaviest", "suits"]
CONFIG_DIR = Path(__file__).resolve().parent / "configs"
MANIFEST_VERSION = 1
MAX_GAMES = 10_000_000   # games.csv of gigabytes; a bigger study is several runs (--seed)
# what a fresh run in an old folder removes first (nothing of an earlier run may be mistaken for this one's)
PRODUCTS = ("games.csv", "games.csv.sums", "summary.csv", "pairings.csv", "ratings.csv", "summary.md",
            "head_to_head.png", "ratings.png", "pip_margins.png")


@dataclass
class TournamentArgs:
    game: str = "happy"
    agents: List[str] = field(default_factory=lambda: list(DEFAULT_AGENTS))
    games: int = 600
    seed: int = 0
    out: Optional[str] = None
    mode: Optional[str] = None          # Happy's --mode, as a field (default: the game's own default)
    duplicate: bool = True
    progress: bool = True
    fmt: str = "round-robin"
    hero: Optional[str] = None          # gauntlet: the agent against the field (default: first)
    workers: int = 1                    # the CLI's default is every core
    backend: str = "process"
    resume: bool = False
    plots: bool = True
    extra_options: Dict[str, object] = field(default_factory=dict)   # --players, --pairs, --match, --option
    imports: Tuple[str, ...] = ()       # modules to import first (they may register agents)
    fsync_every_s: float = 1.0
    bootstrap: int = 200
    config: Optional[str] = None        # only to reproduce the command line
    analyze: Optional[str] = None       # --analyze: the reference spec ("" the default), None: no analysis

    def options(self) -> dict:
        """The game's options as the run records them (the game's ``always`` options with
        their defaults, then those given)."""
        given = {} if self.mode is None else {"mode": self.mode}
        given.update(self.extra_options)
        return get_game(self.game).options_for(given)

    def label(self) -> str:
        return get_game(self.game).variant_label(self.options())

    def out_dir(self) -> Path:
        return Path(self.out if self.out is not None else f"results/tournament-{self.label()}")

    def command(self, resume: bool = True) -> str:
        """The command line that runs (or resumes) this tournament."""
        parts = ["pipslab", "tournament", self.game, "--agents", ",".join(self.agents),
                 "--games", str(self.games), "--seed", str(self.seed), "--out", str(self.out_dir())]
        opts = self.options()
        shown = [o.name for o in get_game(self.game).options_spec if o.always and o.flag]   # e.g. --mode
        for key in shown:
            value = opts[key]
            parts += [f"--{key}"] if value is True else ([] if value is False else [f"--{key}", str(value)])
        for key, value in self.extra_options.items():
            if key not in shown:
                parts += ["--option", f"{key}={json.dumps(value) if isinstance(value, bool) else value}"]
        if self.fmt != "round-robin":
            parts += ["--format", self.fmt]
        if self.hero:
            parts += ["--hero", self.hero]
        if not self.duplicate:
            parts.append("--no-duplicate")
        for module in self.imports:
            parts += ["--import", module]
        if self.analyze is not None:
            parts += ["--analyze"] + ([self.analyze] if self.analyze else [])
        parts += ["--workers", str(self.workers)]
        if self.backend != "process":
            parts += ["--backend", self.backend]
        if resume:
            parts.append("--resume")
        return shlex.join(parts)


class TournamentInterrupted(RunInterrupted):
    def __init__(self, done: int, total: int, command: str):
        super().__init__(f"interrupted after {done} games; resume with: {command}", done, command)
        self.total = total


class PlayGames:
    """The tournament's job for the executors: play a chunk of game ids, return their
    records.  Each worker process sets up one :class:`GameRunner` (the plan; agents are
    built afresh for every game)."""

    def __init__(self, task: Task):
        self.task = task
        self.runner: Optional[GameRunner] = None

    def setup(self) -> None:
        if self.runner is None:
            self.runner = GameRunner(self.task)

    def __call__(self, ids) -> List[dict]:
        return self.runner.records(ids)

    def __getstate__(self):
        return {"task": self.task, "runner": None}

    def __eq__(self, other):
        return isinstance(other, PlayGames) and other.task == self.task

    def __hash__(self):
        return hash(self.task)


class TournamentResult:
    """``games, summary, pairings = result`` unpacks; ratings and paths are attributes."""

    def __init__(self, games, summary, pairings, ratings, out: Path, played: int, files: List[str]):
        self.games, self.summary, self.pairings, self.ratings = games, summary, pairings, ratings
        self.out, self.played, self.files = out, played, files
        self.analysis = None   # --analyze: the analysis (pipslab.experiments.analyze.AnalysisResult)
        # wall seconds: "games" (playing + records), "analysis" (--analyze), "tables" (the rest),
        # "play_game" (serial runs: the part of "games" spent inside the game loop itself)
        self.timings: Dict[str, float] = {}
        self.cpu_timings: Dict[str, float] = {}   # the same in CPU seconds of this process

    def __iter__(self):
        return iter((self.games, self.summary, self.pairings))


# ------------------------------------------------------------------ records on disk
def _manifest(args: TournamentArgs) -> dict:
    return {"version": MANIFEST_VERSION, "game": args.game, "options": args.options(), "agents": list(args.agents),
            "seed": args.seed, "format": args.fmt, "hero": _hero_index(args), "duplicate": args.duplicate,
            "games": args.games, "imports": list(args.imports)}


_PLAN_KEYS = ("version", "game", "options", "agents", "seed", "format", "hero", "duplicate")


def _hero_index(args: TournamentArgs) -> int:
    if args.hero is None:
        return 0
    if args.hero not in args.agents:
        raise PipslabError(f"--hero {args.hero!r} is not one of the agents {args.agents}")
    return args.agents.index(args.hero)


def read_games(path: Path, with_order: bool = False):
    """games.csv as a DataFrame sorted by ``game_id`` (and, with ``with_order``, whether the
    file already was)."""
    df = pd.read_csv(path, dtype={"winner": str, "winners": str, "options": str}, keep_default_na=False)
    was_sorted = bool(df["game_id"].is_monotonic_increasing)
    if not was_sorted:
        df = df.sort_values("game_id", kind="stable").reset_index(drop=True)
    return (df, was_sorted) if with_order else df


# ------------------------------------------------------------------ run
_FIXED_COLUMNS = ("game_id", "game", "variant", "options", "deal_id", "rotation", "deal_seed", "agent_seed", "players",
                  "moves", "result", "winner_seat", "winner", "winners", "duration_s")
_NUMBER = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|-?inf|nan")


def check_args(args: TournamentArgs) -> None:
    """Every argument checked before anything is written (one line each)."""
    check_int("--games", args.games, 1, MAX_GAMES)
    check_seed(args.seed)
    if not isinstance(args.agents, (list, tuple)) or not all(isinstance(a, str) for a in args.agents):
        raise PipslabError(f"--agents must be agent names, got {args.agents!r}")
    if len(args.agents) < 2:
        raise PipslabError("a tournament needs at least two agents (--agents A,B)")
    if len(set(args.agents)) != len(args.agents):
        raise PipslabError(f"agent names repeat in {args.agents}: give each agent once")
    if args.fmt not in FORMATS:
        raise PipslabError(f"unknown tournament format {args.fmt!r}; expected {' or '.join(FORMATS)}")
    if args.hero is not None and args.fmt != "gauntlet":
        raise PipslabError("--hero goes with --format gauntlet")
    check_backend(args.backend, args.workers)
    check_out(args.out if args.out is not None else args.out_dir())


def _row_checker(args: TournamentArgs, task: Task, plan: Plan, label: str):
    """What a games.csv row no checksum covers must agree with: the seed plan's deal,
    seats and seeds for its id, and numbers where numbers go."""
    def check(row: dict) -> Optional[str]:
        i = int(row["game_id"])
        deal, rot, seat_idx = plan.game(i)
        deal_seed, agent_seed = seeds(args.seed, deal, i)
        expect = {"game": args.game, "variant": label, "options": task.options_json, "deal_id": str(deal),
                  "rotation": str(rot), "deal_seed": seed_text(deal_seed), "agent_seed": seed_text(agent_seed),
                  "players": str(len(seat_idx))}
        expect.update((f"seat{s}", args.agents[a]) for s, a in enumerate(seat_idx))
        for key, value in expect.items():
            if row.get(key) != value:
                return f"game {i}: {key} {row.get(key)!r} where the plan says {value!r}"
        for key, value in row.items():
            if (key in ("moves", "winner_seat", "duration_s") or key.startswith(("return_", "pips_left_", "points_"))) \
                    and value != "" and not _NUMBER.fullmatch(value):
                return f"game {i}: {key} {value!r} is not a number"
        return None
    return check


def run_tournament(args: TournamentArgs) -> TournamentResult:
    """Play the tournament (or what is left of it, with ``resume``), write every file,
    return the tables.  Raises :class:`TournamentInterrupted` on Ctrl-C (or ``kill``),
    records saved."""
    check_args(args)
    import_user_modules(args.imports)
    spec = get_game(args.game)
    options = args.options()
    label = spec.variant_label(options)
    task = Task(args.game, options_json(options), tuple(args.agents), args.seed, args.fmt, args.duplicate,
                _hero_index(args), tuple(args.imports))
    # build every agent once here: a bad spec fails now, with one line, before any worker starts
    from pipslab.agents.registry import make_agent
    for name in args.agents:
        make_agent(name, args.game).check_table(args.game, options)
    if args.analyze is not None:   # an unknown reference (or gnubg-nn missing) fails now, before any game
        from .analyze import reference_for
        reference_for(args.game, options, args.analyze or None)
    units = game_units(spec, options)
    plan = Plan(len(args.agents), units, args.fmt, args.duplicate, task.hero)

    out = args.out_dir()
    games_path = out / "games.csv"
    run = Run("tournament", args.out if args.out is not None else out, plan=_manifest(args), compare=_PLAN_KEYS, resume=args.resume,
              command=args.command(resume=False), products=PRODUCTS, progress=args.progress,
              seeds={"seed": args.seed, "deal": "[seed, 0, deal_id]", "agents": "[seed, 1, game_id]",
                     "duplicate": args.duplicate})
    played = 0
    play_seconds = float("nan")
    with run:
        header: List[str] = []
        done: set = set()
        if args.resume:
            if (games_path.exists() or games_path.is_symlink()) and run.previous is None:
                raise PipslabError(f"--resume: {out} has games.csv but no run.json, so its seed plan is unknown; "
                                   "run without --resume to start again")
            seats = spec.players(options)
            found = recover_records(games_path, columns=(run.previous or {}).get("columns"),
                                    check_row=_row_checker(args, task, plan, label),
                                    required=_FIXED_COLUMNS + tuple(f"seat{s}" for s in range(seats)))
            if any(i >= args.games for i in found.ids):
                raise PipslabError(f"--resume: {out} already holds games up to id {max(found.ids)}; "
                                   f"--games {args.games} is smaller")
            found.commit()
            header, done = found.header, set(found.ids)
        run.start(**({"columns": header} if header else {}))

        remaining = args.games - len(done)
        t0, c0 = time.perf_counter(), time.process_time()
        if remaining:
            workers = min(args.workers, max(1, remaining))
            todo = (i for i in range(args.games) if i not in done)
            size = plan_chunks(remaining, workers, args.backend, serial_size=1)
            job = PlayGames(task)
            # the executor before the bar: fork with no extra threads
            with run.executor(job, workers, args.backend) as executor:
                log = RecordLog(games_path, header, args.fsync_every_s,
                                on_header=lambda columns: run.update(columns=columns))
                bar = run.bar(args.games, len(done), desc=f"{label} tournament")
                try:
                    for batch in executor.run(chunked(todo, size)):
                        records = [r for chunk in batch for r in chunk]
                        counted = log.write(records)
                        if counted:
                            bar.update(counted)
                        played += len(records)
                    bar.update(log.close())
                    if job.runner is not None:   # serial: how much of the time was the game loop
                        play_seconds = job.runner.play_seconds
                except KeyboardInterrupt:
                    executor.terminate()
                    log.close()
                    bar.close()
                    raise TournamentInterrupted(len(done) + played, args.games, args.command()) from None
                finally:
                    log.close()
                    bar.close()

        t1, c1 = time.perf_counter(), time.process_time()
        games_df, was_sorted = read_games(games_path, with_order=True)
        if len(games_df) != args.games or not games_df["game_id"].is_unique:
            raise PipslabError(f"{games_path} holds {len(games_df)} games ({games_df['game_id'].nunique()} distinct), "
                               f"expected {args.games}")
        if not was_sorted:   # parallel or resumed runs append in arrival order; the final file is in id order
            write_records_file(games_path, games_df.to_csv(index=False))
        analysis = _analyze(args, out) if args.analyze is not None else None
        t2 = time.perf_counter()
        result = _write_tables(args, games_df, units, label, out, played, analysis)
    result.timings = {"games": t1 - t0, "analysis": t2 - t1, "tables": time.perf_counter() - t2,
                      "play_game": play_seconds}
    result.cpu_timings = {"games": c1 - c0, "tables": time.process_time() - c1}
    return result


def _analyze(args: TournamentArgs, out: Path):
    """``--analyze``: every game of the tournament analyzed into ``out/analysis``."""
    from .analyze import AnalyzeArgs, run_analysis
    try:
        return run_analysis(AnalyzeArgs(from_dir=str(out), reference=args.analyze or None, out=str(out / "analysis"),
                                        workers=args.workers, seed=args.seed, resume=args.resume,
                                        progress=args.progress, plots=args.plots, finished=False,
                                        command=args.command(resume=False)))
    except RunInterrupted:
        raise TournamentInterrupted(args.games, args.games, args.command()) from None


def with_error_rates(table: str, summary: pd.DataFrame) -> str:
    """The printed table (:func:`format_table`) with the error-rate columns of
    ``--analyze`` beside it, when the summary has them."""
    from .analyze import SUMMARY_COLUMNS
    if not set(SUMMARY_COLUMNS) <= set(summary.columns):
        return table
    extra = summary[list(SUMMARY_COLUMNS)].to_string(index=False, float_format=lambda x: f"{x:.3f}").splitlines()
    lines = table.splitlines()
    if len(extra) != len(lines):
        return table
    return "\n".join(f"{a}  {b}" for a, b in zip(lines, extra))


def _write_tables(args: TournamentArgs, games_df: pd.DataFrame, units, label: str, out: Path,
                  played: int, analysis=None) -> TournamentResult:
    rows = unit_rows(games_df, units)
    pairs = pairwise_rows(games_df, units)
    summary_df = summarize(games_df, args.agents, units, rows)
    if analysis is not None:
        from .analyze import SUMMARY_COLUMNS
        summary_df = summary_df.merge(analysis.summary[["agent", *SUMMARY_COLUMNS]], on="agent", how="left")
    pairings_df = summarize_pairings(games_df, args.agents, units, pairs)
    ratings_df = ratings_table(pairs, args.agents, seed=args.seed, n_boot=args.bootstrap)
    atomic_write_text(out / "summary.csv", summary_df.to_csv(index=False))
    atomic_write_text(out / "pairings.csv", pairings_df.to_csv(index=False))
    atomic_write_text(out / "ratings.csv", ratings_df.to_csv(index=False))
    files = ["games.csv", "summary.csv", "pairings.csv", "ratings.csv", "summary.md"]
    if args.plots:
        from .plots import write_plots
        files += write_plots(out, label, head_to_head(pairings_df, args.agents), ratings_df,
                             pip_margins(games_df, units))
    how = f"{args.fmt}, {'duplicate deals' if args.duplicate else 'fresh deals'}"
    md = [f"# {label}: {len(games_df)} games, seed {args.seed} ({how})", "",
          f"`{args.command(resume=False)}`", "", "## Agents", "",
          summary_df.to_markdown(index=False, floatfmt=".3f"), "",
          "Win rates with Wilson 95% intervals (each seat one trial) and, as `win_rate_deal_low`/`_high` "
          "(and `avg_points_low`/`_high`), 95% intervals with each deal one cluster (an agent's seats on one "
          "deal share its luck); pips are the hand's (team's) pips left at the end."
          + ("" if analysis is None else
             f" Error rates (mean loss per unforced decision x 1000, 95% bootstrap intervals; blunder: a loss of "
             f"{analysis.blunder} or more): reference {analysis.reference}, see analysis/analysis.md."), "",
          "## Ratings", "", ratings_df.to_markdown(index=False, floatfmt=[".1f" if c.startswith("rating") or c == "prior" else ".3f" for c in ratings_df.columns]), "",
          f"Bradley–Terry on the Elo scale (mean 0), {args.bootstrap} bootstrap resamples of the games.", "",
          "## Head to head", "", pairings_df.to_markdown(index=False, floatfmt=".3f"), ""]
    if args.plots:
        md += ["## Plots", "", "![head to head](head_to_head.png)", "![ratings](ratings.png)",
               "![pip margins](pip_margins.png)", ""]
    atomic_write_text(out / "summary.md", "\n".join(md))
    result = TournamentResult(games_df, summary_df, pairings_df, ratings_df, out, played, files)
    result.analysis = analysis
    return result


# ------------------------------------------------------------------ config files
_RUN_KEYS = {"game": STR, "agents": STRINGS, "games": INT, "seed": INT, "format": STR, "hero": STR,
             "duplicate": BOOL, "workers": INT, "backend": STR, "out": STR, "options": TABLE, "imports": STRINGS,
             "plots": BOOL, "progress": BOOL, "analyze": STR}


def config_schema() -> dict:
    """Each key a config may hold and its type: the run's keys and the games' flag
    options (``mode``, ``players``, ``pairs``, ``match``, typed as the games declare them)."""
    from pipslab.envs import GAMES
    schema = dict(_RUN_KEYS)
    for name, entries in GAMES.flag_options().items():
        schema[name] = kind_of_type(entries[0][1].type)
    return schema


def load_config(path_text: str) -> dict:
    """A tournament config (``[tournament]`` table or the whole file), keys and types checked."""
    return load_toml(path_text, config_schema(), section="tournament", config_dir=CONFIG_DIR)


def args_from_namespace(ns) -> TournamentArgs:
    """Flags given on the command line, then the config file, then the defaults."""
    cfg = load_config(ns.config) if ns.config else {}

    def pick(flag, key, default):
        value = getattr(ns, flag, None)
        if value is not None:
            return value
        return cfg.get(key, default)

    agents = pick("agents", "agents", None)
    if agents is None:
        agents = list(DEFAULT_AGENTS)
    elif isinstance(agents, str):
        agents = split_agent_list(agents)
    else:
        agents = list(agents)
    extra = dict(cfg.get("options", {}))
    extra.update(flag_options_given(ns, cfg))     # --mode, --players, --pairs, --match (from GAMES)
    extra.update(parse_option_items(ns.option))
    duplicate = False if ns.no_duplicate else cfg.get("duplicate", True)
    cfg_imports = cfg.get("imports", ())
    imports = ((cfg_imports,) if isinstance(cfg_imports, str) else tuple(cfg_imports)) + tuple(ns.imports or ())
    imports = tuple(import_specs(imports))     # a .py path made absolute (workers, --resume, run.json)
    return TournamentArgs(
        game=pick("game", "game", "happy"), agents=agents, games=pick("games", "games", 600),
        seed=pick("seed", "seed", 0), out=pick("out", "out", None),
        duplicate=duplicate, progress=not ns.no_progress and cfg.get("progress", True),
        fmt=pick("format", "format", "round-robin"), hero=pick("hero", "hero", None),
        workers=pick("workers", "workers", default_workers()), backend=pick("backend", "backend", "process"),
        resume=ns.resume, plots=not ns.no_plots and cfg.get("plots", True), extra_options=extra,
        imports=imports, config=ns.config, analyze=pick("analyze", "analyze", None))


# ------------------------------------------------------------------ CLI
def add_arguments(parser) -> None:
    parser.add_argument("game", nargs="?", default=None, help="game to play (default: happy)")
    parser.add_argument("--agents", default=None,
                        help="comma-separated agent specs, e.g. heaviest,random or pimc:samples=50 "
                             f"(default: {','.join(DEFAULT_AGENTS)})")
    parser.add_argument("--games", type=int, default=None, help="total games (default 600)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the deals and the agents' choices (default 0)")
    parser.add_argument("--out", default=None, help="output folder (default results/tournament-VARIANT)")
    add_option_flags(parser)   # the games' own flags: --mode, --players, --pairs, --match (pipslab.envs.GAMES)
    parser.add_argument("--option", action="append", metavar="KEY=VALUE",
                        help="another game option (repeatable), e.g. --option gammons=false")
    parser.add_argument("--format", default=None, choices=list(FORMATS),
                        help="round-robin (default) or gauntlet (--hero against the field)")
    parser.add_argument("--hero", default=None, help="gauntlet: the agent that meets the field (default: the first)")
    parser.add_argument("--no-duplicate", action="store_true",
                        help="fresh deal every game instead of duplicate deals with the seats rotated")
    parser.add_argument("--workers", type=int, default=None, help=f"worker processes (default: all cores, here {default_workers()})")
    parser.add_argument("--backend", default=None, choices=list(BACKENDS),
                        help="process (default) or ray (pip install 'pipslab[ray]'; RAY_ADDRESS for a cluster)")
    parser.add_argument("--resume", action="store_true", help="continue an interrupted run in --out")
    parser.add_argument("--config", default=None, metavar="FILE.toml",
                        help="read the tournament from a TOML file (flags given here win); "
                             "a bare NAME means experiments/configs/NAME.toml")
    parser.add_argument("--import", dest="imports", action="append", metavar="MODULE",
                        help="import MODULE first (e.g. one that registers your own agents): a module name, also one in the "
                             "current folder, or the path of a .py file")
    parser.add_argument("--analyze", nargs="?", const="", default=None, metavar="SPEC",
                        help="then analyze every decision (pipslab analyze; SPEC: its --reference) and add error "
                             "rates to the summary")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def run(ns) -> int:
    args = args_from_namespace(ns)
    start = time.perf_counter()
    try:
        result = run_tournament(args)
    except TournamentInterrupted as exc:
        sys.stdout.flush()
        sys.stderr.write(f"{exc}\n")
        return 130
    wall = time.perf_counter() - start
    how = f"{args.fmt}, {'duplicate deals' if args.duplicate else 'fresh deals'}"
    resumed = f" ({result.played} played now, the rest resumed)" if result.played < len(result.games) else ""
    print(f"{args.label()}: {len(result.games)} games, seed {args.seed}, {how}, "
          f"{args.workers} worker{'s' if args.workers != 1 else ''}{resumed}, {wall:.1f} s")
    print(with_error_rates(format_table(result.summary, result.ratings), result.summary))
    if result.analysis is not None:
        print(f"error rates: mean loss per unforced decision x 1000, reference {result.analysis.reference}; "
              f"blunder: a loss of {result.analysis.blunder} or more ({result.out}/analysis/analysis.md)")
    print(f"wrote {result.out}/{', '.join(result.files)}")
    return 0
