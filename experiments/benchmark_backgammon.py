"""A backgammon benchmark set: fixed decisions whose every legal play was valued once by a
reference, so an agent's (or a :class:`~pipslab.agents.td.TDNet`'s) error rate takes
seconds and no GNU BG (GNU BG's "benchmark databases").

``python -m pipslab.experiments.benchmark_backgammon make [--decisions N] [--seed S] [--reference SPEC] [--out FILE]``
``python -m pipslab.experiments.benchmark_backgammon rate SPEC [SPEC ...] [--benchmark FILE]``

The shipped file, ``experiments/benchmarks/backgammon.npz`` (:data:`SHIPPED`), was made by::

    python -m pipslab.experiments.benchmark_backgammon make --decisions 1200 --seed 0 \\
        --reference gnubg:plies=2,filter=0 --out experiments/benchmarks/backgammon.npz

Decisions: unforced turns (at least two distinct legal plays) of games whose sides are
drawn from ``td`` and ``gnubg`` (0-ply), each play random with probability 0.1; a turn is
taken with probability 0.15, so contact, race and bear-off come in their natural
proportions.  Reference value of a play: the cubeless money equity, for the mover, of the
position after it (as :class:`~pipslab.experiments.analyze.BackgammonReference`; a play
that ends the game is worth its points).  Loss of a play: the decision's best value minus
its own; error rate: mean loss of the plays chosen x 1000; blunder: a loss of 0.08 or more.

File (``np.load(..., allow_pickle=False)``): ``positions`` (N, S14: the Position ID before
the play, mover on roll), ``dice`` (N x 2 uint8, larger first), ``offsets`` (N + 1 int64:
decision i's plays are ``offsets[i]:offsets[i+1]``, in :func:`legal_plays` order),
``plays`` (P, S14: each play's resulting position, still from the mover's side),
``equity`` (P float32), ``plies`` (P uint8: the depth each was valued at) and ``meta`` (a
JSON string: ``format``, ``version``, ``reference``, ``reference_spec``, ``command``,
``seed``, ``decisions``, ``seconds`` ...).
"""
from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Optional, Sequence

import numpy as np

from pipslab.envs.errors import PipslabError, excerpt

from .analyze import BACKGAMMON_BLUNDER, FILTER_WITHIN

FORMAT, VERSION = "pipslab-backgammon-benchmark", 1
SHIPPED = Path(__file__).resolve().parent / "benchmarks" / "backgammon.npz"
DEFAULT_OUT = Path("results") / "benchmarks" / "backgammon.npz"
DEFAULT_REFERENCE = "gnubg:plies=2,filter=0"
DRIVERS = ("td", "gnubg")
EPSILON, TAKE = 0.1, 0.15
BOOTSTRAP = 1000
PHASES = ("contact", "race", "bearoff")
MODULE = "python -m pipslab.experiments.benchmark_backgammon"
_ARRAYS = {"positions": "S", "dice": "u", "offsets": "i", "plays": "S", "equity": "f", "plies": "u", "meta": "U"}


# ------------------------------------------------------------------ the set
@dataclass
class Benchmark:
    """Decisions and their plays' reference equities (the file's arrays, see the module
    docstring); ``loss`` per play, ``best`` per decision, ``rows``/``starts`` the boards."""
    positions: np.ndarray
    dice: np.ndarray
    offsets: np.ndarray
    plays: np.ndarray
    equity: np.ndarray
    plies: np.ndarray
    meta: dict
    source: str = ""
    _rows: Optional[np.ndarray] = field(default=None, repr=False)
    _starts: Optional[np.ndarray] = field(default=None, repr=False)

    @property
    def decisions(self) -> int:
        return len(self.positions)

    @property
    def reference(self) -> str:
        return str(self.meta.get("reference", "?"))

    @property
    def counts(self) -> np.ndarray:
        return np.diff(self.offsets)

    @property
    def decision_of(self) -> np.ndarray:
        """Each play's decision index."""
        return np.repeat(np.arange(self.decisions), self.counts)

    @property
    def best(self) -> np.ndarray:
        """Each decision's best reference equity."""
        return np.maximum.reduceat(self.equity.astype(np.float64), self.offsets[:-1])

    @property
    def loss(self) -> np.ndarray:
        """Each play's loss: its decision's best equity minus its own (0 for the best)."""
        return self.best[self.decision_of] - self.equity.astype(np.float64)

    @property
    def rows(self) -> np.ndarray:
        """The plays' resulting boards (P x 26 int8, the mover's side)."""
        if self._rows is None:
            self._rows = decode_ids(self.plays)
        return self._rows

    @property
    def starts(self) -> np.ndarray:
        """The decisions' boards (N x 26 int8, mover on roll)."""
        if self._starts is None:
            self._starts = decode_ids(self.positions)
        return self._starts

    def phases(self) -> np.ndarray:
        """Each decision's phase: 0 contact, 1 race, 2 bear-off (race, mover all home)."""
        from pipslab.agents.backgammon_value import race_mask
        s = self.starts
        race = race_mask(s)
        home = (s[:, 7:26] <= 0).all(axis=1)
        return np.where(~race, 0, np.where(home, 2, 1))

    def select(self, indices) -> "Benchmark":
        """The decisions ``indices`` (in that order) as a benchmark of their own."""
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        if idx.size and (idx.min() < 0 or idx.max() >= self.decisions):
            raise PipslabError(f"decision indices run 0..{self.decisions - 1}")
        spans = [np.arange(self.offsets[i], self.offsets[i + 1]) for i in idx]
        take = np.concatenate(spans) if spans else np.zeros(0, dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(self.counts[idx])]).astype(np.int64)
        return Benchmark(self.positions[idx], self.dice[idx], offsets, self.plays[take], self.equity[take],
                         self.plies[take], dict(self.meta, decisions=int(idx.size)), self.source)

    def arrays(self) -> Dict[str, np.ndarray]:
        return {"positions": self.positions, "dice": self.dice, "offsets": self.offsets, "plays": self.plays,
                "equity": self.equity, "plies": self.plies, "meta": np.array(json.dumps(self.meta, sort_keys=True))}


def decode_ids(ids) -> np.ndarray:
    """GNU BG Position IDs (an S14 array) as boards (k x 26 int8), by
    :meth:`Position.from_id` (its checks, its one-line errors)."""
    from pipslab.envs.backgammon import Position
    ids = np.asarray(ids).astype("S14").tolist()
    return np.array([Position.from_id(i.decode("ascii", "replace")) for i in ids], dtype=np.int8).reshape(-1, 26)


def _ids(positions) -> np.ndarray:
    from pipslab.envs.backgammon import position_id
    return np.array([position_id(p) for p in positions], dtype="S14")


# ------------------------------------------------------------------ files
def save(bench: Benchmark, out) -> Path:
    """Write ``bench`` to ``out`` atomically (compressed npz, no pickles)."""
    from .files import atomic_path
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(out) as tmp:
        with open(tmp, "wb") as f:
            np.savez_compressed(f, **bench.arrays())
    return out


_CACHE: Dict[tuple, Benchmark] = {}


def load(path=None) -> Benchmark:
    """The benchmark in ``path`` (default: the shipped one), checked; one line
    (:class:`PipslabError`) for a missing or damaged file.  Cached by file and mtime."""
    path = Path(SHIPPED if path is None else path)
    try:
        key = (str(path.resolve()), path.stat().st_mtime_ns)
    except OSError:
        raise PipslabError(f"no benchmark file {excerpt(str(path))}") from None
    if key not in _CACHE:
        _CACHE.clear()
        _CACHE[key] = _read(path)
    return _CACHE[key]


def _read(path: Path) -> Benchmark:
    def damaged(why: str) -> PipslabError:
        return PipslabError(f"damaged benchmark file {excerpt(str(path))}: {why}")
    try:
        with np.load(path, allow_pickle=False) as z:
            missing = [k for k in _ARRAYS if k not in z.files]
            if missing:
                raise damaged(f"no {', '.join(missing)} array")
            a = {k: z[k] for k in _ARRAYS}
    except PipslabError:
        raise
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, zipfile.LargeZipFile) as exc:
        first = str(exc).strip().splitlines()[0][:120] if str(exc).strip() else type(exc).__name__
        raise damaged(f"not a readable npz ({first})") from None
    for k, kind in _ARRAYS.items():
        if a[k].dtype.kind != kind:
            raise damaged(f"{k} has dtype {a[k].dtype}")
    try:
        meta = json.loads(str(a["meta"]))
    except ValueError:
        raise damaged("meta is not JSON") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("version") != VERSION:
        raise damaged(f"not a {FORMAT} file of version {VERSION}")
    n, p = len(a["positions"]), len(a["plays"])
    off = a["offsets"].astype(np.int64)
    if a["positions"].ndim != 1 or a["dice"].shape != (n, 2) or off.shape != (n + 1,) \
            or a["equity"].shape != (p,) or a["plies"].shape != (p,) or a["plays"].ndim != 1:
        raise damaged("the arrays' shapes do not fit together")
    if n == 0 or off[0] != 0 or off[-1] != p or (np.diff(off) < 2).any():
        raise damaged("offsets do not split the plays into decisions of two plays or more")
    if (a["dice"] < 1).any() or (a["dice"] > 6).any() or not np.isfinite(a["equity"]).all() \
            or (np.abs(a["equity"]) > 3.0001).any():
        raise damaged("dice or equities out of range")
    # the shipped file is named as the repository has it (no machine path in printed tables)
    shown = "experiments/benchmarks/backgammon.npz" if path.resolve() == SHIPPED.resolve() else str(path)
    bench = Benchmark(a["positions"], a["dice"], off, a["plays"], a["equity"], a["plies"], meta, shown)
    try:
        bench.starts, bench.rows          # noqa: B018 (decoded and checked now)
    except PipslabError as exc:
        raise damaged(str(exc)) from None
    return bench


# ------------------------------------------------------------------ references
class Reference:
    """Values afterstates (k x 26, the mover's side) for the mover: ``(equity, plies)``.
    ``gnubg:plies=0|1|2[,filter=K]`` (GNU BG through gnubg-nn; ``filter=K``: the best K at
    0 ply within 0.16 at full depth, the others at 0 ply; ``0``: all at full depth) or any
    backgammon evaluator spec (:class:`~pipslab.experiments.moves.PlayValue`, every play) —
    :meth:`~pipslab.experiments.analyze.BackgammonReference.play_values`, as analyze values
    plays."""

    def __init__(self, spec: str = DEFAULT_REFERENCE):
        from .analyze import BackgammonReference
        spec = str(spec).strip()
        self._ref = BackgammonReference(spec)         # checks the spec; one line without gnubg-nn
        if spec.partition(":")[0].strip() == "gnubg":
            self.label = self._ref.label.split(",")[0] + (
                ", every play at full depth" if not self._ref.filter else
                f", the best {self._ref.filter} plays at 0 ply within {FILTER_WITHIN} at full depth, the others at 0 ply")
        else:
            self._ref.filter = 0                        # an evaluator spec: every play at its full depth
            self.label = f"{spec}, every play"
        self.spec, self.plies, self.filter = self._ref.spec, self._ref.plies, self._ref.filter

    def __call__(self, rows, rng=None):
        values, kept = self._ref.play_values(rows, rng)
        plies = np.zeros(len(values), dtype=np.uint8)
        plies[kept] = self.plies
        return values, plies


def build(decisions: Sequence[tuple], reference="td", meta: Optional[dict] = None, seed: int = 0,
          progress=None) -> Benchmark:
    """A benchmark of ``decisions`` (``(Position, (die, die))`` pairs, each with two legal
    plays or more) valued by ``reference`` (a spec or a :class:`Reference`)."""
    from pipslab.envs.backgammon import legal_plays
    from pipslab.envs.backgammon.moves import dice_to_play
    ref = reference if isinstance(reference, Reference) else Reference(reference)
    positions, dice, offsets, plays, equity, plies = [], [], [0], [], [], []
    t0 = time.perf_counter()
    for i, (position, roll) in enumerate(decisions):
        a, b = sorted((int(roll[0]), int(roll[1])), reverse=True)
        found = legal_plays(position, dice_to_play((a, b)))
        if len(found) < 2:
            raise PipslabError(f"{position.id} {a}-{b} has {len(found)} legal play(s): a decision needs two or more")
        values, depth = ref(np.array([p.position for p in found]), np.random.default_rng([seed, 9, i]))
        positions.append(position)
        dice.append((a, b))
        plays += [p.position for p in found]
        equity.append(values)
        plies.append(depth)
        offsets.append(offsets[-1] + len(found))
        if progress is not None:
            progress(i + 1, time.perf_counter() - t0)
    if not positions:
        raise PipslabError("a benchmark needs one decision or more")
    info = {"format": FORMAT, "version": VERSION, "reference": ref.label, "reference_spec": ref.spec,
            "decisions": len(positions), "plays": offsets[-1], "blunder": BACKGAMMON_BLUNDER,
            "equity": "cubeless money equity for the mover after the play (gammons counted)",
            "reference_seconds": round(time.perf_counter() - t0, 1)}
    info.update(meta or {})
    return Benchmark(_ids(positions), np.array(dice, dtype=np.uint8), np.array(offsets, dtype=np.int64),
                     _ids(plays), np.concatenate(equity).astype(np.float32), np.concatenate(plies).astype(np.uint8),
                     info)


# ------------------------------------------------------------------ making one
def agent_play(agent, position, roll, rng):
    """The position (the mover's side) after ``agent`` plays ``roll`` from ``position``
    (mover on roll), asked checker by checker as in a game (:func:`play_game`)."""
    from pipslab.envs.backgammon import BackgammonState
    from pipslab.envs.observation import Observation
    state = BackgammonState(position, 0, tuple(int(d) for d in roll), gammons=True, opening=False)
    agent.reset(0)
    while not state.is_terminal and not state.is_chance:
        legal = state.legal_actions()
        action = agent.act(Observation(0, state.observe(0), legal, state.num_actions), rng)
        if action not in legal:
            raise PipslabError(f"agent {agent.name!r} chose {action!r}, not a legal action, from {position.id} "
                               f"{roll[0]}-{roll[1]}")
        state.apply(action)
    return state.position_from(0)


def collect(decisions: int, seed: int = 0, drivers: Sequence[str] = DRIVERS, epsilon: float = EPSILON,
            take: float = TAKE) -> list:
    """``decisions`` unforced ``(Position, roll)`` from games whose sides are drawn from
    ``drivers`` (agent specs), each play random with probability ``epsilon``, each unforced
    turn taken with probability ``take``; all from ``seed``."""
    from pipslab.agents.registry import make_agent
    from pipslab.envs.backgammon import Position, legal_plays
    from pipslab.envs.backgammon.moves import dice_to_play
    for spec in drivers:
        make_agent(spec, "backgammon")    # a bad spec fails before any game
    rng = np.random.default_rng([seed, 1])
    out: list = []
    while len(out) < decisions:
        seats = [make_agent(drivers[int(rng.integers(len(drivers)))], "backgammon") for _ in range(2)]
        position, turn = Position.start(), 0
        while len(out) < decisions:
            a, b = int(rng.integers(1, 7)), int(rng.integers(1, 7))
            while turn == 0 and a == b:
                a, b = int(rng.integers(1, 7)), int(rng.integers(1, 7))
            plays = legal_plays(position, dice_to_play((a, b)))
            if len(plays) >= 2 and rng.random() < take:
                out.append((position, (max(a, b), min(a, b))))
            if not plays:
                after = position
            elif len(plays) == 1:
                after = plays[0].position
            elif rng.random() < epsilon:
                after = plays[int(rng.integers(len(plays)))].position
            else:
                after = agent_play(seats[turn % 2], position, (a, b), rng)
            if after.borne_off == 15:
                break
            position, turn = after.swap(), turn + 1
    return out


def make(out, decisions: int = 1000, seed: int = 0, reference: str = DEFAULT_REFERENCE,
         drivers: Sequence[str] = DRIVERS, epsilon: float = EPSILON, command: Optional[str] = None,
         progress: bool = False) -> Benchmark:
    """Collect ``decisions`` (:func:`collect`), value every play by ``reference``
    (:func:`build`) and write the file to ``out`` atomically; returns the benchmark."""
    from .checks import check_seed
    check_seed(seed)
    if isinstance(decisions, bool) or not isinstance(decisions, int) or decisions < 1:
        raise PipslabError(f"decisions must be a whole number, at least 1, got {excerpt(decisions)}")
    ref = Reference(reference)            # one line (gnubg-nn missing, a bad spec) before any game
    t0 = time.perf_counter()
    found = collect(decisions, seed, drivers, epsilon)
    t1 = time.perf_counter()

    def report(i, seconds):
        if progress and (i % 50 == 0 or i == decisions):
            sys.stderr.write(f"\r{i}/{decisions} decisions valued, {seconds:.0f} s, "
                             f"{seconds / i * (decisions - i):.0f} s left  ")
            sys.stderr.flush()
    command = command or shlex.join([*MODULE.split(), "make", "--decisions", str(decisions), "--seed", str(seed),
                                     "--reference", ref.spec, "--out", str(out)])
    bench = build(found, ref, {"seed": seed, "drivers": list(drivers), "epsilon": epsilon, "take": TAKE,
                               "command": command, "games_seconds": round(t1 - t0, 1)}, seed, report)
    if progress:
        sys.stderr.write("\n")
    save(bench, out)
    bench.source = str(out)
    return bench


# ------------------------------------------------------------------ rating
def choices(chooser, benchmark=None, seed: int = 0) -> np.ndarray:
    """The index (into ``benchmark.plays``) of the play ``chooser`` makes at each decision:
    a :class:`~pipslab.agents.td.TDNet` (every play valued in one forward pass, chosen as
    the ``td`` agent chooses) or an agent spec (asked position by position, decision ``i``
    with ``default_rng([seed, i])``)."""
    bench = benchmark if isinstance(benchmark, Benchmark) else load(benchmark)
    if isinstance(chooser, str):
        return _agent_choices(chooser, bench, seed)
    from pipslab.agents.td import TDNet, play_scores
    if not isinstance(chooser, TDNet):
        raise PipslabError(f"a chooser is a TDNet or an agent spec, got {type(chooser).__name__}")
    from pipslab.agents.search_backgammon import first_best
    return first_best(play_scores(chooser, bench.rows)[0], bench.offsets)


def _agent_choices(spec: str, bench: Benchmark, seed: int) -> np.ndarray:
    from pipslab.agents.registry import make_agent
    from pipslab.envs.backgammon import Position
    make_agent(spec, "backgammon")           # a bad spec: one line before any decision
    plays = bench.plays
    out = np.empty(bench.decisions, dtype=np.int64)
    for i in range(bench.decisions):
        start = Position(bench.starts[i].tolist())
        after = agent_play(make_agent(spec, "backgammon"), start, tuple(bench.dice[i]), np.random.default_rng([seed, i]))
        lo, hi = bench.offsets[i], bench.offsets[i + 1]
        hit = np.flatnonzero(plays[lo:hi] == after.id.encode())
        if not hit.size:
            raise PipslabError(f"{spec} played {start.id} {bench.dice[i][0]}-{bench.dice[i][1]} to {after.id}, "
                               "which is none of the benchmark's plays")
        out[i] = lo + hit[0]
    return out


def error_rate(chooser, benchmark=None, seed: int = 0) -> dict:
    """``chooser``'s error rate on ``benchmark`` (a :class:`Benchmark`, a file, or None: the
    shipped one): ``error_rate`` (mean loss x 1000), ``error_rate_low``/``_high`` (95%
    bootstrap interval over decisions, :data:`BOOTSTRAP` resamples from ``seed``),
    ``decisions``, ``blunders`` (loss >= 0.08), ``blunder_rate``, ``phases`` (per phase:
    ``decisions``, ``error_rate``), ``reference``, ``seconds``.  See :func:`choices`."""
    t0 = time.perf_counter()
    bench = benchmark if isinstance(benchmark, Benchmark) else load(benchmark)
    chosen = choices(chooser, bench, seed)
    return summarize(bench.loss[chosen], bench, seed, time.perf_counter() - t0)


def summarize(losses, bench: Benchmark, seed: int = 0, seconds: float = 0.0) -> dict:
    """:func:`error_rate`'s dict of the chosen plays' ``losses`` (one per decision)."""
    losses = np.asarray(losses, dtype=float).reshape(-1)
    n = len(losses)
    if n == 0:
        raise PipslabError("no decisions to rate")
    means = losses[np.random.default_rng([seed, 7]).integers(0, n, (BOOTSTRAP, n))].mean(axis=1)
    phase = bench.phases()
    return {"error_rate": 1000 * float(losses.mean()),
            "error_rate_low": 1000 * float(np.percentile(means, 2.5)),
            "error_rate_high": 1000 * float(np.percentile(means, 97.5)),
            "interval": f"95% bootstrap over decisions ({BOOTSTRAP} resamples)",
            "decisions": n, "blunders": int((losses >= BACKGAMMON_BLUNDER - 1e-9).sum()),
            "blunder_rate": float((losses >= BACKGAMMON_BLUNDER - 1e-9).mean()),
            "phases": {name: {"decisions": int((phase == k).sum()),
                              "error_rate": 1000 * float(losses[phase == k].mean()) if (phase == k).any() else None}
                       for k, name in enumerate(PHASES)},
            "reference": bench.reference, "seconds": round(seconds, 2)}


def _fast_net(spec: str):
    """The net of a ``td`` / ``td:net=NAME`` spec (rated by the fast path), else None."""
    from pipslab.agents.registry import parse_spec
    name, params = parse_spec(spec)
    if name != "td" or set(params) - {"net"}:
        return None
    from pipslab.agents.td import DEFAULT_NET, load_net
    return load_net(str(params.get("net", DEFAULT_NET)))


# ------------------------------------------------------------------ CLI
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog=MODULE, description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    from .checks import count_arg, seed_arg
    sub = ap.add_subparsers(dest="what", required=True)
    m = sub.add_parser("make", help="collect decisions and value every play (needs gnubg-nn for gnubg)")
    m.add_argument("--decisions", type=count_arg(1), default=1000)
    m.add_argument("--seed", type=seed_arg, default=0)
    m.add_argument("--reference", default=DEFAULT_REFERENCE, metavar="SPEC",
                   help="gnubg:plies=0|1|2[,filter=K] or a backgammon evaluator spec (default %(default)s)")
    m.add_argument("--out", default=str(DEFAULT_OUT), help="the file to write (default %(default)s)")
    m.add_argument("--no-progress", action="store_true")
    r = sub.add_parser("rate", help="error rates of agents on a benchmark")
    r.add_argument("specs", nargs="+", metavar="SPEC", help="agent specs (td and td:net=NAME by the fast path)")
    r.add_argument("--benchmark", default=None, metavar="FILE", help="default: the shipped one")
    r.add_argument("--seed", type=seed_arg, default=0)
    args = ap.parse_args(argv)
    from .cliargs import guarded
    return guarded("benchmark_backgammon", lambda: _make(args) if args.what == "make" else _rate(args))


def _make(args) -> int:
    command = shlex.join([*MODULE.split(), "make", "--decisions", str(args.decisions), "--seed", str(args.seed),
                          "--reference", args.reference, "--out", args.out])
    bench = make(args.out, args.decisions, args.seed, args.reference, command=command, progress=not args.no_progress)
    size = Path(args.out).stat().st_size
    print(f"wrote {args.out}: {bench.decisions} decisions, {len(bench.plays)} plays, {size / 1024:.0f} KiB; "
          f"reference {bench.reference}; games {bench.meta['games_seconds']} s, "
          f"reference {bench.meta['reference_seconds']} s")
    return 0


def _rate(args) -> int:
    bench = load(args.benchmark)
    rows = []
    for spec in args.specs:
        net = _fast_net(spec)
        result = error_rate(net if net is not None else spec, bench, args.seed)
        rows.append([spec + (" (net)" if net is not None else ""), result["decisions"],
                     f"{result['error_rate']:.1f}", f"{result['error_rate_low']:.1f}-{result['error_rate_high']:.1f}",
                     result["blunders"]] + [_fmt(result["phases"][p]["error_rate"]) for p in PHASES]
                    + [f"{result['seconds']:.1f}"])
    from tabulate import tabulate
    phase = bench.phases()
    print(f"{bench.source}: {bench.decisions} decisions ({', '.join(f'{int((phase == k).sum())} {p}' for k, p in enumerate(PHASES))}), "
          f"reference {bench.reference}")
    print(tabulate(rows, headers=["agent", "decisions", "error rate", "95% interval", "blunders",
                                  *PHASES, "seconds"], disable_numparse=True))
    print(f"error rate: mean loss per decision x 1000 (95% bootstrap interval over decisions); "
          f"blunder: a loss of {BACKGAMMON_BLUNDER} or more")
    return 0


def _fmt(x) -> str:
    return "-" if x is None else f"{x:.1f}"


if __name__ == "__main__":
    sys.exit(main())
