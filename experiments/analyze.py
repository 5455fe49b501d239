"""Error rates: every decision of a tournament's recorded games, valued by a reference.

``pipslab analyze --from TOURNAMENT_DIR [--games 0,5-9] [--reference SPEC] [--out DIR] [--workers N] [--resume]``

Each game is replayed from its record and checked against it (as ``pipslab play --replay``);
at every unforced decision the reference values the legal choices, and the chosen one's
loss is the best value minus its own, from the mover's view.  Backgammon: cubeless money
equity after each play, by GNU BG at 2 ply (gnubg-nn; without it
``expectimax:plies=2,eval=td``) or ``gnubg:plies=N`` or any backgammon evaluator spec;
blunder at a loss of 0.08.  Dominoes: the game's returns, by ``pimc:samples=N`` (worlds
from the mover's view solved exactly; the true position when nothing is hidden); blunder
at 0.5.  Writes ``decisions.csv``, ``analysis.csv``/``analysis.md`` (per agent: unforced
``decisions``, ``error_rate`` = mean loss x 1000 with a 95% bootstrap interval over games,
``blunders``, ``blunder_rate``; the worst decisions), ``phases.csv`` (per agent and phase of
the game — ``Game.phase``, in the game's own words —: its decisions, error rate and loss per
game, so the table says where an agent's losses lie) and ``error_rates.png`` into ``--out``
(default ``TOURNAMENT_DIR/analysis``), a resumable :class:`~pipslab.experiments.runner.Run`.
"""
from __future__ import annotations

import csv
import shlex
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import numpy as np

from pipslab.envs.errors import PipslabError, excerpt
from pipslab.envs.game import get_game

from .checks import count_arg, seed_arg

MANIFEST_VERSION = 2                           # 2: decisions.csv has a phase column
DEFAULT_SAMPLES = 50
DEFAULT_FILTER, FILTER_WITHIN = 8, 0.16        # GNU BG's 0-ply move filter
BACKGAMMON_BLUNDER, DOMINO_BLUNDER = 0.08, 0.5
FALLBACK = "expectimax:plies=2,eval=td"
BOOTSTRAP = 1000
WORST = 10
MAX_TURNS = 100_000                            # decision_id = game * MAX_TURNS + turn
COLUMNS = ("decision_id", "game", "turn", "seat", "agent", "forced", "choices", "position", "dice", "choice",
           "best", "loss", "how", "game_decisions", "phase")
PRODUCTS = ("decisions.csv", "decisions.csv.sums", "analysis.csv", "phases.csv", "analysis.md", "error_rates.png")
SUMMARY_COLUMNS = ("error_rate", "error_rate_low", "error_rate_high", "blunder_rate")


# ------------------------------------------------------------------ decisions
@dataclass
class Decision:
    """One decision of a game: ``state`` before it (dominoes: the state; backgammon: the
    Position at the turn's start, mover on roll), ``chosen`` (an action id; the Position
    after the play) and the game's ``phase`` there (``Game.phase_of``)."""
    turn: int
    seat: int
    agent: str
    state: object
    chosen: object
    roll: tuple = ()
    phase: str = ""


class DecisionRecorder:
    """``on_move`` for :func:`pipslab.experiments.games.play_game`: collects the game's
    decisions (backgammon: one per turn, from its first checker move to its last)."""

    def __init__(self, spec, names: Sequence[str]):
        self.spec = spec
        self.backgammon = getattr(spec, "family", "") == "backgammon"
        self.names = list(names)
        self.decisions: List[Decision] = []
        self._turn = None

    def on_move(self, state, player: int, action: int) -> None:
        if not self.backgammon:
            self.decisions.append(Decision(len(self.decisions), player, self.names[player], state.clone(), int(action),
                                           phase=self.spec.phase_of(state)))
            return
        if self._turn is None:
            self._turn = (state.turn_start, tuple(int(d) for d in state.roll), self.spec.phase_of(state))
        after = state.clone()
        after.apply(action)
        if after.is_terminal or after.current_player != player:
            start, roll, phase = self._turn
            self._turn = None
            self.decisions.append(Decision(len(self.decisions), player, self.names[player], start,
                                           after.position_from(player), roll, phase))


# ------------------------------------------------------------------ references
class DominoReference:
    """``pimc:samples=N``: each legal move's mean return for the mover's side over ``N``
    worlds dealt from his view and solved exactly; the true position, solved once, when
    his view leaves nothing hidden."""

    family = "dominoes"
    blunder = DOMINO_BLUNDER
    unit = "returns (+1 a win, -1 a loss)"

    def __init__(self, samples: int = DEFAULT_SAMPLES):
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
            raise PipslabError(f"pimc:samples=N needs a whole number of worlds, at least 1, got {excerpt(samples)}")
        self.samples = samples
        self.spec = f"pimc:samples={samples}"
        self.label = (f"pimc, {samples} worlds from the mover's view each solved exactly "
                      "(the true position when nothing is hidden)")
        self._solver = None

    def check_game(self, spec, options: dict) -> None:
        """One line unless the exact solver plays ``spec`` with ``options``."""
        label = spec.variant_label(options)
        if options.get("match"):
            raise PipslabError(f"no exact solver for {label}: the analysis solves single hands, not a match")
        if getattr(spec, "family", "") != "dominoes":
            raise PipslabError(f"{self.spec} values domino moves: {label} is not a domino game")
        refusal = spec.solver_support(options)
        if refusal:
            raise PipslabError(refusal)

    def judge(self, decision: Decision, rng) -> dict:
        """One decision's fields: ``position``, ``dice``, ``choices`` (distinct results),
        ``choice``; an unforced one's also ``best``, ``loss`` and ``how`` (worlds from ``rng``)."""
        from pipslab.agents.solver import Solver
        from pipslab.envs.dominoes.engine import world_sampler
        from pipslab.envs.dominoes.notation import format_position
        state, chosen = decision.state, decision.chosen
        legal = state.legal_actions()
        group = {a: _result_key(state, a) for a in legal}
        row = {"position": format_position(state), "dice": "", "choices": len(set(group.values())),
               "choice": _domino_name(state, chosen)}
        if row["choices"] < 2:
            return row
        if self._solver is None:
            self._solver = Solver("wdl")
        view = state.observe(state.current_player)
        if sees_every_tile(view):
            values, how = _by_group(self._solver.move_values(state), group), "exact"
        else:
            worlds = world_sampler(view)
            totals = dict.fromkeys(group.values(), 0.0)
            for _ in range(self.samples):
                for key, v in _by_group(self._solver.move_values(worlds(rng)), group).items():
                    totals[key] += v
            values, how = {key: v / self.samples for key, v in totals.items()}, f"sampled {self.samples}"
        best = _best_of(legal, lambda a: values[group[a]], chosen)
        return dict(row, best=_domino_name(state, best), loss=values[group[best]] - values[group[chosen]], how=how)


def sees_every_tile(view) -> bool:
    """Whether the mover can deduce every hand: one other hand holds tiles and exactly as
    many unseen tiles are left that it may hold (its passes rule the others out), and no
    draw can come (a draw game's boneyard is empty)."""
    from pipslab.envs.dominoes.tiles import SUIT, count
    v = view.variant
    others = [p for p in range(v.players) if p != view.player and view.hand_sizes[p] > 0]
    if len(others) != 1 or (v.draw and view.boneyard_size):
        return False
    void = view.voids(others[0])
    forbidden = 0
    for n, suit in enumerate(SUIT):
        if void >> n & 1:
            forbidden |= suit
    unseen = v.tile_set & ~view.hand & ~view.table
    return count(unseen & ~forbidden) == view.hand_sizes[others[0]]


def _result_key(state, action: int):
    """Moves with the same key lead to the same position (a tile at either end leaving
    the same two open numbers)."""
    child = state.clone()
    child.apply(action)
    return (action >> 1, min(child.left, child.right), max(child.left, child.right)) \
        if action < state.variant.draw_action else (action,)


def _by_group(values: Dict[int, float], group: Dict[int, tuple]) -> Dict[tuple, float]:
    """The solver's move values (it lists one move of each equivalent pair) by result."""
    return {group[a]: float(v) for a, v in values.items() if a in group}


def _domino_name(state, action: int) -> str:
    from pipslab.envs.dominoes.engine import action_name
    return action_name(state.variant, action)


def _best_of(choices, value, chosen):
    """The chosen choice when it is as good as any, else the first best one."""
    top = max(value(c) for c in choices)
    return chosen if value(chosen) >= top else next(c for c in choices if value(c) >= top)


class BackgammonReference:
    """Cubeless money equity (gammons and backgammons counted), for the mover, of the
    position after each legal play: ``gnubg:plies=0|1|2[,filter=K]`` (GNU BG through
    gnubg-nn) or a backgammon evaluator spec (``td``, ``pubeval``, ``rollout:N``,
    ``expectimax:plies=N,eval=E``).  Deeper than 0 ply, GNU BG's move filter: every play
    valued at 0 ply, the best ``K`` (default 8; ``filter=0``: all) within 0.16 of the best
    and the play chosen valued at full depth, the best of those the best play."""

    family = "backgammon"
    blunder = BACKGAMMON_BLUNDER
    unit = "cubeless equity"

    def __init__(self, spec: Optional[str] = None):
        from .moves import PlayValue
        self.filter = 0
        if spec is None:
            try:
                self._gnubg(2, DEFAULT_FILTER)
                return
            except PipslabError:
                self._value = PlayValue(FALLBACK)
                self.spec, note = FALLBACK, " (gnubg-nn is not installed)"
        else:
            name = spec.strip().partition(":")[0].strip()
            if name == "gnubg":
                from pipslab.agents.registry import parse_spec
                _, params = parse_spec(spec)
                unknown = sorted(set(params) - {"plies", "filter"})
                plies, filt = params.get("plies", 0), params.get("filter", DEFAULT_FILTER)
                if unknown or plies not in (0, 1, 2) or isinstance(plies, bool) \
                        or not isinstance(filt, int) or isinstance(filt, bool) or filt < 0:
                    raise PipslabError(f"bad reference {excerpt(spec)}: give gnubg:plies=0|1|2[,filter=K] "
                                       "(K plays kept by the 0-ply filter, 0 for all)")
                self._gnubg(plies, filt)
                return
            self._value = PlayValue(spec.strip())
            self.spec, note = spec.strip(), ""
        self.plies = self._value.plies
        self._zero = self._value.evaluator
        if self.plies:
            self.filter = DEFAULT_FILTER
        self.label = self.spec + self._filter_text() + note

    def _gnubg(self, plies: int, filt: int) -> None:
        from pipslab.agents.backgammon_evaluators import GnubgEvaluator
        self._zero = GnubgEvaluator()
        evaluator = GnubgEvaluator(plies)
        self._value = lambda rows: mover_equity(evaluator, rows)
        self.plies, self.filter = plies, filt if plies else 0
        self.spec = f"gnubg:plies={plies}" + (f",filter={filt}" if plies else "")
        version = getattr(sys.modules.get("gnubg_nn"), "__version__", None)
        version = getattr(version, "__version__", version)
        self.label = f"GNU BG {plies}-ply (gnubg-nn{' ' + str(version) if isinstance(version, str) else ''})" \
            + self._filter_text()

    def _filter_text(self) -> str:
        if not self.plies:
            return ""
        if not self.filter:
            return ", every play at full depth"
        return f", move filter: the best {self.filter} plays at 0 ply within {FILTER_WITHIN} and the play chosen"

    def check_game(self, spec, options: dict) -> None:
        """One line unless ``spec`` is backgammon."""
        if getattr(spec, "family", "") != "backgammon":
            raise PipslabError(f"the reference {self.spec} values backgammon plays: {spec.variant_label(options)} "
                               "is not backgammon")

    def judge(self, decision: Decision, rng) -> dict:
        """As :meth:`DominoReference.judge` (a rollout evaluator reseeded from ``rng``)."""
        from pipslab.envs.backgammon import legal_plays
        from pipslab.envs.backgammon.moves import dice_to_play
        start, roll = decision.state, decision.roll
        plays = legal_plays(start, dice_to_play(roll))
        row = {"position": start.id, "dice": f"{roll[0]}-{roll[1]}", "choices": len(plays), "choice": "pass"}
        if not plays:
            return row
        chosen = next((i for i, p in enumerate(plays) if p.position == decision.chosen), None)
        if chosen is None:
            raise PipslabError(f"turn {decision.turn}: the play chosen from {start.id} {row['dice']} "
                               "is not a legal play")
        row["choice"] = plays[chosen].notation
        if len(plays) < 2:
            return row
        values, kept = self.play_values(np.array([p.position for p in plays]), rng, also=(chosen,))
        best = _best_of([int(i) for i in kept], values.__getitem__, chosen)
        return dict(row, best=plays[best].notation, loss=values[best] - values[chosen], how=f"{self.plies}-ply")

    def play_values(self, rows, rng=None, also=()):
        """``(values, kept)``: the mover's equity after each play (``rows``, afterstates
        from his side) — at full depth for the plays GNU BG's move filter keeps (the best
        ``filter`` at 0 ply within 0.16; every play without a filter) and for ``also``, at
        0 ply for the others — and the indices valued at full depth, in the order valued.
        ``rng`` reseeds a random evaluator first."""
        from pipslab.agents.evaluators import reseed
        from pipslab.agents.search_backgammon import keep_best
        rows = np.asarray(rows, dtype=np.int64).reshape(-1, 26)
        if rng is not None:
            reseed(self._zero, rng)
        if not self.filter:
            return np.asarray(self._value(rows), dtype=float), np.arange(len(rows))
        values = mover_equity(self._zero, rows)
        kept = [int(i) for i in keep_best(values, self.filter, FILTER_WITHIN)]
        kept += [int(i) for i in also if int(i) not in kept]
        values[kept] = np.asarray(self._value(rows[kept]), dtype=float)
        return values, np.array(kept, dtype=np.int64)


def mover_equity(evaluator, rows) -> np.ndarray:
    """The seam's value for the player who just moved of afterstates (his side; a
    finished game its exact points)."""
    from pipslab.agents.backgammon_value import swap
    from pipslab.agents.evaluators import OPPONENT
    return np.asarray(evaluator.values(swap(np.asarray(rows, dtype=np.int64)), OPPONENT), dtype=float)


def make_reference(family: str, spec: Optional[str] = None):
    """The reference for a game ``family`` (``"dominoes"`` or ``"backgammon"``) by its spec
    (``None``: the default); one line for an unknown one."""
    if family == "backgammon":
        if spec is not None and spec.strip().partition(":")[0].strip() == "pimc":
            raise PipslabError(f"the reference {excerpt(spec)} values domino moves; backgammon takes gnubg:plies=N "
                               "or a backgammon evaluator (td, pubeval, expectimax:plies=N,eval=E …)")
        return BackgammonReference(spec)
    if family == "dominoes":
        if spec is None:
            return DominoReference()
        from pipslab.agents.registry import parse_spec
        name, params = parse_spec(spec)
        if name != "pimc" or set(params) - {"samples"}:
            raise PipslabError(f"unknown domino reference {excerpt(spec)}: give pimc:samples=N (worlds sampled from "
                               "the mover's view, each solved exactly)")
        return DominoReference(params.get("samples", DEFAULT_SAMPLES))
    raise PipslabError(f"no reference for {family or 'this game'}: pipslab analyze knows backgammon and the domino "
                       "line games")


def reference_for(game: str, options: dict, spec: Optional[str] = None):
    """:func:`make_reference` for ``game`` with ``options``, checked to play it."""
    gspec = get_game(game)
    reference = make_reference(getattr(gspec, "family", ""), spec)
    reference.check_game(gspec, gspec.options_for(options))
    return reference


# ------------------------------------------------------------------ a game's rows
def game_rows(game_id: int, decisions: Sequence[Decision], reference, seed: int) -> List[dict]:
    """``decisions.csv``'s rows of one game, forced decisions too (``forced``, no
    ``loss``); each decision's random draws come from ``[seed, 6, game_id, turn]``."""
    rows = []
    for d in decisions:
        if d.turn >= MAX_TURNS:
            raise PipslabError(f"game {game_id} has more than {MAX_TURNS:,} decisions")
        judged = reference.judge(d, np.random.default_rng([seed, 6, game_id, d.turn]))
        forced = "loss" not in judged
        rows.append({"decision_id": game_id * MAX_TURNS + d.turn, "game": game_id, "turn": d.turn, "seat": d.seat,
                     "agent": d.agent, "forced": forced, "choices": judged["choices"], "position": judged["position"],
                     "dice": judged["dice"], "choice": judged["choice"], "best": judged.get("best", ""),
                     "loss": "" if forced else round(max(0.0, float(judged["loss"])), 6),
                     "how": judged.get("how", ""), "game_decisions": len(decisions), "phase": d.phase})
    return rows


def analyze_record(record: dict, game_id: int, path, reference, seed: int) -> List[dict]:
    """Replay a recorded game (checked against its record) and return its rows."""
    from .play import replay_record
    recorder = DecisionRecorder(get_game(record["game"]), record["names"])
    replay_record(record, game_id, path, recorder.on_move)
    return game_rows(game_id, recorder.decisions, reference, seed)


class AnalyzeGames:
    """The executors' job: analyze a chunk of ``(game_id, record)``; returns
    ``[(game_id, rows)]``.  Each worker builds the reference once."""

    def __init__(self, family: str, spec: Optional[str], seed: int, path: str, imports: Sequence[str] = ()):
        self.family, self.spec, self.seed, self.path, self.imports = family, spec, seed, path, tuple(imports)
        self.reference = None

    def setup(self) -> None:
        if self.reference is None:
            from .imports import import_user_modules
            import_user_modules(self.imports)
            self.reference = make_reference(self.family, self.spec)

    def __call__(self, items):
        self.setup()
        return [(gid, analyze_record(rec, gid, self.path, self.reference, self.seed)) for gid, rec in items]

    def __getstate__(self):
        return dict(self.__dict__, reference=None)


# ------------------------------------------------------------------ tables
def _forced_and_loss(decisions):
    """``(forced, loss)``: each decision's forced flag and its loss as numbers, as
    ``decisions.csv`` holds them (read back, or as recorded)."""
    import pandas as pd
    return (decisions["forced"].astype(str).str.lower() == "true",
            pd.to_numeric(decisions["loss"], errors="coerce"))


def summarize_decisions(decisions, agents: Sequence[str], blunder: float, seed: int = 0, n_boot: int = BOOTSTRAP):
    """One row per agent: ``games``, ``decisions`` (unforced), ``forced``, ``error_rate``
    (mean loss x 1000) with a 95% bootstrap interval over games, ``blunders`` (loss >=
    ``blunder``), ``blunder_rate``, ``worst_loss``."""
    import pandas as pd
    df = decisions
    forced, loss = _forced_and_loss(df)
    rng = np.random.default_rng([seed, 7])
    out = []
    for name in agents:
        mine = df["agent"] == name
        un = mine & ~forced
        n, total = int(un.sum()), float(loss[un].sum())
        low, high = _error_interval(df.loc[un, "game"], loss[un], rng, n_boot)
        blunders = int((loss[un] >= blunder - 1e-9).sum())
        out.append({"agent": name, "games": int(df.loc[mine, "game"].nunique()), "decisions": n,
                    "forced": int((mine & forced).sum()),
                    "error_rate": 1000.0 * total / n if n else float("nan"), "error_rate_low": low,
                    "error_rate_high": high, "blunders": blunders, "blunder_rate": blunders / n if n else float("nan"),
                    "worst_loss": float(loss[un].max()) if n else float("nan")})
    return pd.DataFrame(out)


def _error_interval(games, loss, rng, n_boot: int):
    """A 95% bootstrap interval of the error rate (mean loss x 1000), resampling whole
    games (a game's decisions are not independent); NaNs when there are none."""
    import pandas as pd
    per_game = pd.DataFrame({"game": games, "loss": loss}).groupby("game")["loss"].agg(["sum", "count"])
    if not len(per_game):
        return float("nan"), float("nan")
    pick = rng.integers(0, len(per_game), size=(n_boot, len(per_game)))
    s, c = per_game["sum"].to_numpy()[pick].sum(axis=1), per_game["count"].to_numpy()[pick].sum(axis=1)
    low, high = np.percentile(1000.0 * s / c, [2.5, 97.5])
    return float(low), float(high)


def summarize_phases(decisions, agents: Sequence[str], seed: int = 0, n_boot: int = BOOTSTRAP):
    """One row per agent and phase of the game (``Game.phase``; phases in the order of
    their mean turn, so a game's early phases come first): ``decisions`` (unforced),
    ``error_rate`` (mean loss x 1000) with a 95% bootstrap interval over games,
    ``loss_per_game`` (the phase's loss summed over the agent's games, over their
    number: what its mistakes there cost a game on average) and ``loss_share`` (of the
    agent's whole loss).  Why: an error rate alone hides where the points go — many
    small slips early or a few costly ones late."""
    import pandas as pd
    df = decisions
    forced, loss = _forced_and_loss(df)
    phase = df["phase"].astype(str)
    order = list(pd.to_numeric(df["turn"]).groupby(phase).mean().sort_values(kind="stable").index)
    rng = np.random.default_rng([seed, 8])
    out = []
    for name in agents:
        mine = df["agent"] == name
        games = int(df.loc[mine, "game"].nunique())
        whole = float(loss[mine & ~forced].sum())
        for ph in order:
            un = mine & ~forced & (phase == ph)
            n, total = int(un.sum()), float(loss[un].sum())
            if not n:
                continue
            low, high = _error_interval(df.loc[un, "game"], loss[un], rng, n_boot)
            out.append({"agent": name, "phase": ph, "decisions": n, "error_rate": 1000.0 * total / n,
                        "error_rate_low": low, "error_rate_high": high,
                        "loss_per_game": total / games if games else float("nan"),
                        "loss_share": total / whole if whole > 0 else float("nan")})
    return pd.DataFrame(out, columns=["agent", "phase", "decisions", "error_rate", "error_rate_low",
                                      "error_rate_high", "loss_per_game", "loss_share"])


def _plot(summary, path: Path, title: str) -> None:
    from .files import atomic_path
    from .plots import new_figure
    s = summary.dropna(subset=["error_rate"]).sort_values("error_rate", ascending=False)
    y = np.arange(len(s))
    fig, ax = new_figure((6.5, 1.2 + 0.5 * max(1, len(s))))
    lo = (s["error_rate"] - s["error_rate_low"]).clip(lower=0).fillna(0)
    hi = (s["error_rate_high"] - s["error_rate"]).clip(lower=0).fillna(0)
    ax.errorbar(s["error_rate"], y, xerr=[lo, hi], fmt="o", capsize=4)
    ax.set_yticks(y, s["agent"])
    ax.set_xlabel("error rate (mean loss per unforced decision x 1000), 95% interval")
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    with atomic_path(path, suffix=".png") as tmp:
        fig.savefig(tmp, dpi=110, bbox_inches="tight", format="png")


# ------------------------------------------------------------------ the run
@dataclass
class AnalyzeArgs:
    from_dir: str
    games: Optional[str] = None          # "0,5-9"; None: every game
    reference: Optional[str] = None      # None: the game's default
    out: Optional[str] = None            # default FROM/analysis
    workers: int = 1
    seed: int = 0
    resume: bool = False
    progress: bool = True
    plots: bool = True
    finished: bool = True                # refuse a tournament whose run.json is not "done"
    command: Optional[str] = None


@dataclass
class AnalysisResult:
    summary: object
    decisions: object
    reference: str
    blunder: float
    out: Path
    phases: object = None
    files: List[str] = field(default_factory=list)
    analyzed: int = 0
    timings: Dict[str, float] = field(default_factory=dict)


def parse_games(text: str) -> List[int]:
    """``"0,5-9"`` -> ``[0, 5, 6, 7, 8, 9]`` (sorted, each once); one line when malformed."""
    ids = set()
    for part in str(text).split(","):
        item = part.strip()
        low, dash, high = item.partition("-")
        try:
            if not (low.strip().isdigit() and (not dash or high.strip().isdigit())):
                raise ValueError
            a, b = int(low), int(high) if dash else int(low)
        except ValueError:
            raise PipslabError(f"bad --games {excerpt(text)}: expected game ids and ranges like 0,5-9") from None
        if b < a:
            raise PipslabError(f"bad --games {excerpt(text)}: the range {item} runs backwards")
        if b - a > 10_000_000:
            raise PipslabError(f"bad --games {excerpt(text)}: the range {item} is too long")
        ids.update(range(a, b + 1))
    return sorted(ids)


def _manifest_of(folder: Path) -> Optional[dict]:
    """The tournament's run.json as a dict (None when missing or unreadable)."""
    import json
    try:
        data = json.loads((folder / "run.json").read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _command(args: AnalyzeArgs) -> str:
    parts = ["pipslab", "analyze", "--from", str(args.from_dir)]
    if args.games:
        parts += ["--games", args.games]
    if args.reference:
        parts += ["--reference", args.reference]
    if args.out:
        parts += ["--out", str(args.out)]
    parts += ["--seed", str(args.seed), "--workers", str(args.workers)]
    return shlex.join(parts)


def run_analysis(args: AnalyzeArgs) -> AnalysisResult:
    """Analyze (or, with ``resume``, finish analyzing) a tournament folder's games and
    write every file; every input is checked before anything is written."""
    from .executors import check_backend
    from .play import read_records, record_spec
    from .checks import check_seed
    from .runner import Run
    t0 = time.perf_counter()
    folder = Path(args.from_dir)
    check_seed(args.seed)
    check_backend("process", args.workers)
    manifest = _manifest_of(folder) if folder.is_dir() else None
    if args.finished and manifest is not None and manifest.get("kind") == "tournament" \
            and manifest.get("status") != "done":
        raise PipslabError(f"--from {excerpt(str(folder))}: the tournament is not finished (status "
                           f"{manifest.get('status')!r}); resume it first")
    records, path = read_records(folder)
    if not records:
        raise PipslabError(f"no records in {path}: it holds no games")
    ids = sorted(records) if args.games is None else parse_games(args.games)
    missing = [i for i in ids if i not in records]
    if missing:
        raise PipslabError(f"no game {missing[0]} in {path} (ids {min(records)}..{max(records)})")
    games = {records[i]["game"] for i in ids}
    if len(games) > 1:
        raise PipslabError(f"{path} holds games of {', '.join(sorted(games))}: analyze one game at a time (--games)")
    first = records[ids[0]]
    spec = record_spec(first, ids[0], path)
    options = spec.options_for(first["options"])
    label = spec.variant_label(options)
    reference = reference_for(first["game"], options, args.reference)
    from pipslab.agents.registry import make_agent
    names = list(dict.fromkeys(n for i in ids for n in records[i]["names"]))
    for name in names:   # a bad agent spec fails here, before anything is written
        make_agent(name, first["game"])
    listed = (manifest or {}).get("agents")
    agents = [a for a in listed if a in names] if isinstance(listed, list) else []
    agents += [a for a in names if a not in agents]
    out = Path(args.out) if args.out else folder / "analysis"
    command = args.command or _command(args)
    plan = {"version": MANIFEST_VERSION, "tournament": str(folder.resolve()), "games": args.games or "all",
            "reference": reference.spec, "seed": args.seed}
    existed = out.exists()
    run = Run("analysis", out, plan=plan, resume=args.resume, command=command, products=PRODUCTS,
              progress=args.progress, seeds={"seed": args.seed, "decision": "[seed, 6, game_id, turn]",
                                             "bootstrap": "[seed, 7]"})
    try:
        with run:
            decisions, analyzed = _analyze(run, args, reference, records, ids, path, label, command)
            t1 = time.perf_counter()
            summary = summarize_decisions(decisions, agents, reference.blunder, args.seed)
            phases = summarize_phases(decisions, agents, args.seed)
            files = _write_tables(run.out, summary, phases, decisions, reference, label, command, len(ids),
                                  args.plots)
            timings = {"analysis_s": round(t1 - t0, 2), "tables_s": round(time.perf_counter() - t1, 2)}
            run.update(results={"label": label, "reference": reference.label, "games": len(ids),
                                "decisions": int((~_forced_and_loss(decisions)[0]).sum()), **timings})
    except PipslabError:
        if run.manifest is not None and (not args.resume or run.previous is None):
            _undo(out, existed)   # a fresh run refused midway (a damaged record) leaves nothing behind
        raise
    return AnalysisResult(summary, decisions, reference.label, reference.blunder, out, phases, files, analyzed,
                          timings)


def _undo(out: Path, existed: bool) -> None:
    from .runner import MANIFEST
    if not existed:
        shutil.rmtree(out, ignore_errors=True)
        return
    for name in PRODUCTS + (MANIFEST,):
        (out / name).unlink(missing_ok=True)


def _analyze(run, args: AnalyzeArgs, reference, records, ids, path, label: str, command: str):
    """Analyze the games not yet in ``decisions.csv``; returns (its rows sorted, games analyzed now)."""
    import pandas as pd

    from .executors import chunked, plan_chunks
    from .records import RecordLog, recover_records, write_records_file
    from .runner import RunInterrupted
    decisions_path = run.path("decisions.csv")
    done: set = set()
    if args.resume and run.previous is not None:
        found = recover_records(decisions_path, key="decision_id", columns=run.previous.get("columns"),
                                required=COLUMNS, what="decisions")
        done = _complete_games(found)
        found.commit()
    run.start(columns=list(COLUMNS))
    todo = [i for i in ids if i not in done]
    analyzed = 0
    if todo:
        workers = min(args.workers, len(todo))
        job = AnalyzeGames(reference.family, reference.spec, args.seed, str(path),
                           (_manifest_of(Path(args.from_dir)) or {}).get("imports") or ())
        size = plan_chunks(len(todo), workers, "process", serial_size=1, process_max=10)
        items = ([(i, records[i]) for i in chunk] for chunk in chunked(todo, size))
        with run.executor(job, workers) as executor:
            existing = decisions_path.exists() and decisions_path.stat().st_size > 0
            log = RecordLog(decisions_path, COLUMNS if existing else ())   # a new file gets its header
            bar = run.bar(len(ids), len(ids) - len(todo), desc=f"{label} analysis")
            try:
                for batch in executor.run(items):
                    for chunk in batch:
                        for _gid, rows in chunk:
                            log.write(rows)
                            analyzed += 1
                            bar.update(1)
                log.close()
            except KeyboardInterrupt:
                executor.terminate()
                log.close()
                raise RunInterrupted(f"interrupted after {len(ids) - len(todo) + analyzed} games; resume with: "
                                     f"{command} --resume", analyzed, command) from None
            finally:
                log.close()
                bar.close()
    df = pd.read_csv(decisions_path, dtype={"position": str, "dice": str, "choice": str, "best": str, "how": str},
                     keep_default_na=False)
    df = df[df["game"].isin(ids)]
    if not df["decision_id"].is_monotonic_increasing:
        df = df.sort_values("decision_id", kind="stable").reset_index(drop=True)
        write_records_file(decisions_path, df.to_csv(index=False))
    return df, analyzed


def _complete_games(found) -> set:
    """The games whose every row survived in a recovered ``decisions.csv``; the rows of
    the others are dropped (those games are analyzed again)."""
    header = found.header
    if "game" not in header or "game_decisions" not in header:   # no header yet: nothing was written
        return set()
    g, n = header.index("game"), header.index("game_decisions")
    rows = [next(csv.reader([line.rstrip(b"\r").decode()])) for line in found.lines]
    counts: Dict[int, int] = {}
    expected: Dict[int, int] = {}
    for row in rows:
        try:
            game, total = int(row[g]), int(row[n])
        except ValueError:
            continue
        counts[game] = counts.get(game, 0) + 1
        expected[game] = total
    complete = {game for game, c in counts.items() if c == expected[game]}
    keep = [k for k, row in enumerate(rows) if row[g].isdigit() and int(row[g]) in complete]
    if len(keep) != len(rows):
        found.notes.append(f"{found.path}: dropped the decisions of {len(set(counts) - complete)} unfinished "
                           "game(s); they are analyzed again")
        found.lines = [found.lines[k] for k in keep]
        found.ids = [found.ids[k] for k in keep]
        found.rewrite = True
    return complete


def _write_tables(out: Path, summary, phases, decisions, reference, label: str, command: str, n_games: int,
                  plots: bool) -> List[str]:
    from .files import atomic_write_text
    atomic_write_text(out / "analysis.csv", summary.to_csv(index=False))
    atomic_write_text(out / "phases.csv", phases.to_csv(index=False))
    files = ["decisions.csv", "analysis.csv", "phases.csv", "analysis.md"]
    forced, loss = _forced_and_loss(decisions)
    un = decisions[~forced].copy()
    un["loss"] = loss[~forced]
    worst = un.sort_values(["loss", "decision_id"], ascending=[False, True], kind="stable").head(WORST)
    exact = int((un["how"] == "exact").sum())
    md = [f"# Error rates: {label}, {n_games} games", "", f"`{command}`", "",
          f"Reference: {reference.label}." + (f" {exact} of {len(un)} decisions solved exactly." if reference.family
                                               == "dominoes" else ""), "",
          summary.to_markdown(index=False, floatfmt=".3f"), "",
          f"Loss: the best choice's value minus the chosen one's, in {reference.unit}, from the mover's view; "
          "error rate: mean loss per unforced decision x 1000, with a 95% bootstrap interval over games "
          f"({BOOTSTRAP} resamples); blunder: a loss of {reference.blunder} or more.", "",
          "## By phase of the game", "",
          phases.to_markdown(index=False, floatfmt=".3f") if len(phases) else "(no unforced decisions)", "",
          "loss_per_game: the phase's loss summed over the agent's games, over their number; loss_share: "
          "of the agent's whole loss.", "",
          "## Worst decisions", "",
          worst[["game", "turn", "agent", "position"] + (["dice"] if reference.family == "backgammon" else [])
                + ["choice", "best", "loss"]].to_markdown(
              index=False, floatfmt=".3f") if len(worst) else "(no unforced decisions)", ""]
    if plots:
        _plot(summary, out / "error_rates.png", f"{label}: error rates ({reference.spec})")
        files.append("error_rates.png")
        md += ["![error rates](error_rates.png)", ""]
    atomic_write_text(out / "analysis.md", "\n".join(md))
    return files


def format_summary(summary) -> str:
    cols = ["agent", "games", "decisions", "error_rate", "error_rate_low", "error_rate_high", "blunders",
            "blunder_rate"]
    return summary[cols].to_string(index=False, float_format=lambda x: f"{x:.3f}")


def format_phases(phases) -> str:
    cols = ["agent", "phase", "decisions", "error_rate", "loss_per_game", "loss_share"]
    return phases[cols].to_string(index=False, float_format=lambda x: f"{x:.3f}")


# ------------------------------------------------------------------ CLI
def add_arguments(parser) -> None:
    parser.add_argument("--from", dest="from_dir", required=True, metavar="TOURNAMENT_DIR",
                        help="the tournament folder whose recorded games are analyzed")
    parser.add_argument("--games", default=None, metavar="IDS", help="only these game ids, e.g. 0,5-9")
    parser.add_argument("--reference", default=None, metavar="SPEC",
                        help="backgammon: gnubg:plies=0|1|2 (default 2, with gnubg-nn) or an evaluator "
                             f"(default without gnubg-nn {FALLBACK}); dominoes: pimc:samples=N "
                             f"(default {DEFAULT_SAMPLES})")
    parser.add_argument("--out", default=None, help="output folder (default TOURNAMENT_DIR/analysis)")
    parser.add_argument("--workers", type=count_arg(1), default=None, help="worker processes (default: all cores)")
    parser.add_argument("--seed", type=seed_arg, default=0, help="seed of the reference's sampled worlds (default 0)")
    parser.add_argument("--resume", action="store_true", help="continue an interrupted analysis in --out")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plot")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def run(ns) -> int:
    from .executors import default_workers
    from .runner import RunInterrupted
    args = AnalyzeArgs(from_dir=ns.from_dir, games=ns.games, reference=ns.reference, out=ns.out,
                       workers=ns.workers or default_workers(), seed=ns.seed, resume=ns.resume,
                       progress=not ns.no_progress, plots=not ns.no_plots)
    start = time.perf_counter()
    try:
        result = run_analysis(args)
    except RunInterrupted as exc:
        sys.stdout.flush()
        sys.stderr.write(f"{exc}\n")
        return 130
    n = int(result.summary["decisions"].sum())
    print(f"{len(result.decisions['game'].unique())} games, {n} unforced decisions, reference: {result.reference}, "
          f"{args.workers} worker{'s' if args.workers != 1 else ''}, {time.perf_counter() - start:.1f} s")
    print(format_summary(result.summary))
    print(f"error rate: mean loss per unforced decision x 1000; blunder: a loss of {result.blunder} or more")
    if result.phases["phase"].nunique() > 1:
        print(format_phases(result.phases))
    print(f"wrote {result.out}/{', '.join(result.files)}")
    return 0


__all__ = ["add_arguments", "run", "run_analysis", "AnalyzeArgs", "AnalysisResult", "Decision", "DecisionRecorder",
           "DominoReference", "BackgammonReference", "make_reference", "reference_for", "game_rows",
           "analyze_record", "summarize_decisions", "summarize_phases", "parse_games", "sees_every_tile", "SUMMARY_COLUMNS"]
