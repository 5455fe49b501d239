"""The fish study's tables and plots, from its three frames (also used by the notebook).

* ``tour``: the tournament's ``games.csv`` (every game: blocked or not, pips left, winner);
* ``games``: the study's ``games.csv`` (studied games: tiles and pips per seat and side at
  the end, ``decided_k``);
* ``positions``: the study's ``positions.csv`` (kept positions, solved).

:func:`summarize_study` gives one long table, a row per answer: ``question, pairing,
agent, k, n, value, low, high`` — ``pairing`` is a table's agents by side or ``all``;
``agent`` is set for per-agent answers; ``k`` for ``decided_by_k``.  Shares carry Wilson
95% intervals, means normal ones (1.96 standard errors).  The questions:

* ``fish_share`` — games that ended blocked;
* ``fewer_tiles_side_wins`` — blocked games where the sides hold different numbers of
  tiles: the side with fewer tiles wins (RULES §2, ``003``: fewer tiles is not a win);
* ``fewer_pips_side_wins`` — blocked games with different pip counts: the side with fewer
  pips wins (the rule itself; a check, 1.0 expected);
* ``equal_sums_share`` — blocked games whose sides count the same; ``equal_sums_draw`` —
  of those, the share that are draws (the rule again);
* ``lowest_seat_side_wins`` — with pairs, blocked games with one seat counting least: its
  pair wins (only pair totals count);
* ``margin_fish_mean`` / ``margin_out_mean`` (and ``_median``) — the winner's margin
  (blocked: losers' count minus winners'; out: losers' count) over decided games;
* ``decided_by_k`` — blocked games with at least ``k`` kept placements: the perfect-play
  result was already the final one at every kept position from ``k`` placements before
  the block on (``decided_by_k_out``: the same for the comparison games, where a hand went
  out);
* ``closing_optimal`` — positions of blocked games where a closing move exists: one is
  among the best moves; per agent ``closes_when_optimal`` (it closed, given closing was
  optimal) and ``closes_when_not_optimal`` (it closed although closing was not optimal);
* per agent, over its decisions in blocked games (positions with two or more distinct
  moves): ``error_rate`` (a move that lost outcome against perfect play),
  ``regret_outcome_mean``, ``regret_pips_mean`` (pips given away against the best move),
  ``bad_move_share`` (of its errors, those that were worse from its own view too — the
  rest was bad luck in the hidden tiles) and ``luck_gap_mean`` (how far, on average, the
  perfect-play outcome lay from the outcome its view expected: ``|outcome − view_value|``).
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import numpy as np
import pandas as pd

from .files import atomic_path, atomic_write_text
from .plots import new_figure
from .ratings import wilson_interval

COLUMNS = ["question", "pairing", "agent", "k", "n", "value", "low", "high"]
ALL = "all"


def _truthy(series: pd.Series) -> pd.Series:
    if series.dtype == bool:
        return series
    return series.astype(str).str.lower().isin(("true", "1"))


def tour_frame(tour: pd.DataFrame, teams: Sequence[int]) -> pd.DataFrame:
    """Per tournament game: ``pairing``, ``fish``, the winning side (−1: draw) and the margin."""
    n = len(teams)
    n_sides = max(teams) + 1
    out = pd.DataFrame({"game_id": tour["game_id"]})
    out["fish"] = _truthy(tour["blocked"]).to_numpy()
    names = tour[[f"seat{s}" for s in range(n)]].astype(str).to_numpy()
    out["pairing"] = [" vs ".join(sorted("+".join(row[s] for s in range(n) if teams[s] == t) for t in range(n_sides)))
                      for row in names]
    pips = tour[[f"pips_left_{s}" for s in range(n)]].to_numpy(dtype=float)
    side_pips = np.stack([pips[:, [s for s in range(n) if teams[s] == t]].sum(axis=1) for t in range(n_sides)], axis=1)
    winner_seat = tour["winner_seat"].to_numpy(dtype=int)
    win_side = np.where(winner_seat >= 0, np.array(teams)[np.maximum(winner_seat, 0)], -1)
    margins = np.zeros(len(tour))
    for i in range(len(tour)):
        w = win_side[i]
        if w < 0:
            continue
        losers = side_pips[i].sum() - side_pips[i, w]
        margins[i] = losers - side_pips[i, w] if out["fish"].iat[i] else losers
    out["winner_side"] = win_side
    out["margin"] = margins
    return out


def _share_row(question, pairing, hits, n, agent="", k=None) -> dict:
    low, high = wilson_interval(hits, n)
    return {"question": question, "pairing": pairing, "agent": agent, "k": k, "n": int(n),
            "value": hits / n if n else float("nan"), "low": low, "high": high}


def _mean_row(question, pairing, values, agent="", k=None) -> dict:
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    n = len(values)
    if n == 0:
        return {"question": question, "pairing": pairing, "agent": agent, "k": k, "n": 0,
                "value": float("nan"), "low": float("nan"), "high": float("nan")}
    mean = float(values.mean())
    half = 1.96 * float(values.std(ddof=1)) / math.sqrt(n) if n > 1 else float("nan")
    return {"question": question, "pairing": pairing, "agent": agent, "k": k, "n": n, "value": mean,
            "low": mean - half, "high": mean + half}


def _median_row(question, pairing, values) -> dict:
    values = np.asarray(values, dtype=float)
    return {"question": question, "pairing": pairing, "agent": "", "k": None, "n": len(values),
            "value": float(np.median(values)) if len(values) else float("nan"), "low": float("nan"),
            "high": float("nan")}


def _groups(frame: pd.DataFrame):
    """``("all", frame)`` then one group per pairing (when there are several)."""
    yield ALL, frame
    if "pairing" in frame and frame["pairing"].nunique() > 1:
        for pairing, group in frame.groupby("pairing", sort=True):
            yield pairing, group


def summarize_study(tour: pd.DataFrame, games: pd.DataFrame, positions: pd.DataFrame, teams: Sequence[int],
                    before: int) -> pd.DataFrame:
    rows: List[dict] = []
    tf = tour_frame(tour, teams)
    n_sides = max(teams) + 1
    for pairing, g in _groups(tf):
        rows.append(_share_row("fish_share", pairing, int(g["fish"].sum()), len(g)))
    for pairing, g in _groups(tf):
        decided = g[g["winner_side"] >= 0]
        for end, name in ((True, "fish"), (False, "out")):
            m = decided.loc[decided["fish"] == end, "margin"]
            rows.append(_mean_row(f"margin_{name}_mean", pairing, m))
            rows.append(_median_row(f"margin_{name}_median", pairing, m))
    fish_games = games[games["end"] == "fish"] if len(games) else games
    for pairing, g in _groups(fish_games):
        rows.extend(_at_block(pairing, g, teams, n_sides))
    for pairing, g in _groups(fish_games):
        for k in range(1, before + 1):
            have = g[g["kept"] >= k] if len(g) else g
            rows.append(_share_row("decided_by_k", pairing, int((have["decided_k"] >= k).sum()) if len(have) else 0,
                                   len(have), k=k))
    fish_pos = positions[positions["end"] == "fish"] if len(positions) else positions
    for pairing, p in _groups(fish_pos):
        rows.extend(_closing(pairing, p))
        rows.extend(_regret(pairing, p))
    # the comparison: the same measures where a hand went out
    out_games = games[games["end"] == "out"] if len(games) else games
    for pairing, g in _groups(out_games):
        for k in range(1, before + 1):
            have = g[g["kept"] >= k] if len(g) else g
            rows.append(_share_row("decided_by_k_out", pairing,
                                   int((have["decided_k"] >= k).sum()) if len(have) else 0, len(have), k=k))
    out_pos = positions[positions["end"] == "out"] if len(positions) else positions
    for pairing, p in _groups(out_pos):
        rows.extend(_regret(pairing, p, suffix="_out"))
    return pd.DataFrame(rows, columns=COLUMNS)


def _at_block(pairing: str, g: pd.DataFrame, teams, n_sides: int) -> List[dict]:
    if not len(g):
        return []
    tiles = g[[f"side_tiles_{t}" for t in range(n_sides)]].to_numpy()
    pips = g[[f"side_pips_{t}" for t in range(n_sides)]].to_numpy()
    win = g["winner_side"].to_numpy(dtype=int)
    rows = []
    for question, counts in (("fewer_tiles_side_wins", tiles), ("fewer_pips_side_wins", pips)):
        low = counts.min(axis=1)
        unique = (counts == low[:, None]).sum(axis=1) == 1
        fewest = counts.argmin(axis=1)
        rows.append(_share_row(question, pairing, int((unique & (win == fewest)).sum()), int(unique.sum())))
    equal = (pips == pips.min(axis=1)[:, None]).sum(axis=1) > 1
    rows.append(_share_row("equal_sums_share", pairing, int(equal.sum()), len(g)))
    rows.append(_share_row("equal_sums_draw", pairing, int((equal & (win < 0)).sum()), int(equal.sum())))
    if len(teams) > n_sides:   # pairs: does the seat that counts least carry its pair?
        seats = g[[f"pips_{s}" for s in range(len(teams))]].to_numpy()
        low = seats.min(axis=1)
        unique = (seats == low[:, None]).sum(axis=1) == 1
        side_of_low = np.array(teams)[seats.argmin(axis=1)]
        rows.append(_share_row("lowest_seat_side_wins", pairing, int((unique & (win == side_of_low)).sum()),
                               int(unique.sum())))
    return rows


def _bool(p: pd.DataFrame, col: str) -> np.ndarray:
    return _truthy(p[col]).to_numpy()


def _closing(pairing: str, p: pd.DataFrame) -> List[dict]:
    if not len(p):
        return []
    avail = _bool(p, "closing_available")
    optimal = _bool(p, "closing_optimal")
    closed = _bool(p, "closed")
    rows = [_share_row("closing_optimal", pairing, int((avail & optimal).sum()), int(avail.sum()))]
    agents = p["agent"].to_numpy()
    for agent in sorted(set(agents)):
        mine = agents == agent
        should = mine & avail & optimal
        should_not = mine & avail & ~optimal
        rows.append(_share_row("closes_when_optimal", pairing, int((should & closed).sum()), int(should.sum()), agent))
        rows.append(_share_row("closes_when_not_optimal", pairing, int((should_not & closed).sum()),
                               int(should_not.sum()), agent))
    return rows


def _regret(pairing: str, p: pd.DataFrame, suffix: str = "") -> List[dict]:
    """Per agent, over its decisions (two or more distinct moves); ``suffix="_out"`` for the
    comparison positions, where only the three regret measures are kept."""
    if not len(p):
        return []
    decisions = p[p["choices"] >= 2]
    rows = []
    for agent, d in sorted(decisions.groupby("agent"), key=lambda kv: kv[0]):
        errors = d["regret_outcome"] > 0
        rows.append(_share_row("error_rate" + suffix, pairing, int(errors.sum()), len(d), agent))
        rows.append(_mean_row("regret_outcome_mean" + suffix, pairing, d["regret_outcome"], agent))
        rows.append(_mean_row("regret_pips_mean" + suffix, pairing, d["regret_pips"], agent))
        if suffix:
            continue
        viewed = d[errors & d["view_regret"].notna()]
        if len(viewed):
            rows.append(_share_row("bad_move_share", pairing, int((viewed["view_regret"] > 0).sum()), len(viewed), agent))
        rows.append(_mean_row("luck_gap_mean", pairing, d["luck"].abs(), agent))
    return rows


# ------------------------------------------------------------------ text
def _pct(x: float) -> str:
    return "nan" if x != x else f"{100 * x:.1f}%"


def format_answer(row) -> str:
    """One answer of :func:`summarize_study` as text: ``65.9% [65.3%, 66.6%]`` for a share,
    ``6.15 [6.06, 6.23]`` for a mean, ``5`` for a median (no interval)."""
    q = row["question"]
    shares = "_mean" not in q and "_median" not in q   # margin_fish_mean, regret_outcome_mean_out …
    f = _pct if shares else (lambda x: "nan" if x != x else f"{x:.3g}")
    interval = "" if row["low"] != row["low"] else f" [{f(row['low'])}, {f(row['high'])}]"
    return f"{f(row['value'])}{interval}"


def read_summary(path) -> pd.DataFrame:
    """A study's ``summary.csv`` as :func:`summarize_study` gave it (``agent`` ``""`` where
    unset; ``k`` a number, NaN where unset)."""
    summary = pd.read_csv(path, dtype={"question": str, "pairing": str, "agent": str})
    return summary.assign(agent=summary["agent"].fillna(""))[COLUMNS]


def format_summary(summary: pd.DataFrame, pairing: str = ALL) -> str:
    """The answers over all pairings, one per line (the terminal's view of summary.csv)."""
    lines = []
    for _, row in summary[summary["pairing"] == pairing].iterrows():
        who = f" {row['agent']}" if row["agent"] else ""
        k = "" if row["k"] is None or row["k"] != row["k"] else f" k={int(row['k'])}"
        lines.append(f"{row['question']}{who}{k}: {format_answer(row)} (n={int(row['n'])})")
    return "\n".join(lines)


def _table(frame: pd.DataFrame, index: str) -> str:
    cols = ["pairing", index, "n", "answer"] if index else ["pairing", "n", "answer"]
    frame = frame.assign(answer=[format_answer(r) for _, r in frame.iterrows()])
    if index == "k":
        frame = frame.assign(k=frame["k"].astype(int))
    return frame[cols].to_markdown(index=False)


def write_summary_md(path: Path, summary: pd.DataFrame, info: Dict) -> None:
    s = summary
    def one(question, pairing=ALL, agent=""):
        r = s[(s["question"] == question) & (s["pairing"] == pairing) & (s["agent"] == agent)]
        return None if r.empty else r.iloc[0]

    parts = [f"# Fish study: {info['label']}", "",
             f"`{info['command']}`", "",
             f"{info['games']:,} games; {info['studied']:,} studied (every blocked game and a sample of the others); "
             f"{info['positions']:,} positions solved" + (f" ({info['positions_per_s']:,} positions/s)"
                                                          if info.get("positions_per_s") else "") + ".", ""]
    r = one("fish_share")
    if r is not None:
        parts += [f"**How often a fish**: {format_answer(r)} of {int(r['n']):,} games ended blocked.", "",
                  _table(s[s["question"] == "fish_share"], ""), ""]
    parts += ["## At the block", ""]
    for q, text in (("fewer_tiles_side_wins", "the side with fewer tiles wins"),
                    ("fewer_pips_side_wins", "the side with fewer pips wins (the rule)"),
                    ("equal_sums_share", "the sides' sums are equal"),
                    ("equal_sums_draw", "equal sums are a draw (the rule)"),
                    ("lowest_seat_side_wins", "the seat that counts least carries its pair")):
        r = one(q)
        if r is not None:
            parts.append(f"- {text}: **{format_answer(r)}** (n={int(r['n']):,})")
    at_block = s[s["question"].isin(["fewer_tiles_side_wins", "fewer_pips_side_wins", "equal_sums_share",
                                     "equal_sums_draw", "lowest_seat_side_wins"])]
    parts += ["", at_block.assign(answer=[format_answer(x) for _, x in at_block.iterrows()])[
        ["question", "pairing", "n", "answer"]].to_markdown(index=False), ""]
    parts += ["## Final margins (winner's pips)", ""]
    m = s[s["question"].str.startswith("margin_")]
    parts += [m.assign(answer=[format_answer(x) for _, x in m.iterrows()])[["question", "pairing", "n", "answer"]]
              .to_markdown(index=False), "", "![margins](margins.png)", ""]
    d = s[(s["question"] == "decided_by_k") & (s["pairing"] == ALL)]
    parts += ["## How early a fish is decided", "",
              "Share of blocked games whose perfect-play result was already the final one at every kept position "
              "from k placements before the block on:", "", _table(d, "k"), "", "![decided](decided.png)", ""]
    dout = s[(s["question"] == "decided_by_k_out") & (s["pairing"] == ALL)]
    if len(dout):
        parts += ["For comparison, the games where a hand went out:", "", _table(dout, "k"), ""]
    parts += ["## Closing the game", ""]
    r = one("closing_optimal")
    if r is not None:
        parts.append(f"When a move that closes the game exists, closing is optimal in **{format_answer(r)}** "
                     f"of {int(r['n']):,} positions.")
    c = s[s["question"].isin(["closes_when_optimal", "closes_when_not_optimal"]) & (s["pairing"] == ALL)]
    parts += ["", c.assign(answer=[format_answer(x) for _, x in c.iterrows()])[["question", "agent", "n", "answer"]]
              .to_markdown(index=False), "", "![closing](closing.png)", ""]
    parts += ["## Regret in blocked endings (per agent, decisions with two or more distinct moves)", ""]
    reg = s[s["question"].isin(["error_rate", "regret_outcome_mean", "regret_pips_mean", "bad_move_share",
                                "luck_gap_mean"]) & (s["pairing"] == ALL)]
    if len(reg):
        wide = reg.assign(answer=[format_answer(x) for _, x in reg.iterrows()]).pivot(index="agent", columns="question",
                                                                             values="answer")
        order = reg[reg["question"] == "regret_outcome_mean"].sort_values("value")["agent"].tolist()
        wide = wide.reindex(order)
        parts += ["Agents ranked by outcome regret (lower is better):", "", wide.to_markdown(), "",
                  "![regret](regret.png)", ""]
    cmp_rows = s[s["question"].isin(["error_rate", "error_rate_out", "regret_outcome_mean",
                                     "regret_outcome_mean_out"]) & (s["pairing"] == ALL)]
    if (cmp_rows["question"] == "error_rate_out").any():
        wide = cmp_rows.assign(answer=[format_answer(x) for _, x in cmp_rows.iterrows()]).pivot(
            index="agent", columns="question", values="answer")
        parts += ["The same agents where a hand went out (the comparison sample):", "", wide.to_markdown(), ""]
    atomic_write_text(path, "\n".join(parts) + "\n")


# ------------------------------------------------------------------ plots
def _save(fig, path: Path) -> None:
    with atomic_path(path, suffix=".png") as tmp:
        fig.savefig(tmp, dpi=110, bbox_inches="tight", format="png")


def figures(tour: pd.DataFrame, games: pd.DataFrame, positions: pd.DataFrame, teams, before: int,
            summary: Optional[pd.DataFrame] = None) -> Dict[str, object]:
    """The study's five figures (matplotlib, outside pyplot: see :func:`new_figure`), by file name."""
    if summary is None:
        summary = summarize_study(tour, games, positions, teams, before)
    s = summary
    figs = {}

    fs = s[s["question"] == "fish_share"]
    fig, ax = new_figure((7, 0.5 + 0.45 * len(fs)))
    y = np.arange(len(fs))
    ax.barh(y, fs["value"], xerr=[fs["value"] - fs["low"], fs["high"] - fs["value"]], color="tab:blue", alpha=0.8)
    ax.set_yticks(y, fs["pairing"])
    ax.set_xlabel("share of games ending blocked (Wilson 95%)")
    ax.invert_yaxis()
    figs["fish_share.png"] = fig

    tf = tour_frame(tour, teams)
    decided = tf[tf["winner_side"] >= 0]
    fig, ax = new_figure((7, 3.2))
    top = max(1, int(decided["margin"].max()) if len(decided) else 1)
    bins = np.arange(0, top + 2) - 0.5
    for end, label, color in ((True, "fish (blocked)", "tab:red"), (False, "a hand went out", "tab:green")):
        m = decided.loc[decided["fish"] == end, "margin"]
        if len(m):
            ax.hist(m, bins=bins, density=True, histtype="step", linewidth=1.6, color=color,
                    label=f"{label}: median {np.median(m):.0f}, n={len(m):,}")
    ax.set_xlabel("winner's final margin (pips)")
    ax.set_ylabel("share of games")
    ax.legend()
    figs["margins.png"] = fig

    d = s[(s["question"] == "decided_by_k") & (s["pairing"] == ALL)]
    fig, ax = new_figure((6, 3.2))
    ax.plot(d["k"], d["value"], marker="o", color="tab:purple")
    ax.fill_between(d["k"].astype(float), d["low"], d["high"], alpha=0.2, color="tab:purple")
    ax.set_xlabel("placements before the block (k)")
    ax.set_ylabel("result already fixed")
    ax.set_ylim(0, 1.02)
    ax.set_xticks(range(1, before + 1))
    figs["decided.png"] = fig

    c = s[s["question"].isin(["closes_when_optimal", "closes_when_not_optimal"]) & (s["pairing"] == ALL)]
    agents = sorted(set(c["agent"]))
    fig, ax = new_figure((7, 3.2))
    x = np.arange(len(agents))
    for j, (q, label, color) in enumerate((("closes_when_optimal", "closes when it should", "tab:green"),
                                           ("closes_when_not_optimal", "closes when it should not", "tab:red"))):
        vals = c[c["question"] == q].set_index("agent").reindex(agents)
        ax.bar(x + (j - 0.5) * 0.38, vals["value"], width=0.38, color=color, label=label,
               yerr=[vals["value"] - vals["low"], vals["high"] - vals["value"]])
    ax.set_xticks(x, agents, rotation=15)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("share of positions")
    ax.legend()
    figs["closing.png"] = fig

    e = s[(s["question"] == "error_rate") & (s["pairing"] == ALL)].set_index("agent")
    b = s[(s["question"] == "bad_move_share") & (s["pairing"] == ALL)].set_index("agent")
    agents = e.sort_values("value").index.tolist()
    fig, ax = new_figure((7, 3.2))
    err = e.reindex(agents)["value"].to_numpy()
    bad = b.reindex(agents)["value"].fillna(0).to_numpy() if len(b) else np.zeros(len(agents))
    ax.bar(agents, err * bad, color="tab:red", label="bad move (worse from its own view too)")
    ax.bar(agents, err * (1 - bad), bottom=err * bad, color="tab:orange", label="bad luck (best from its view)")
    ax.errorbar(agents, err, yerr=[err - e.reindex(agents)["low"], e.reindex(agents)["high"] - err], fmt="none",
                color="black", capsize=3)
    ax.set_ylabel("decisions that lost outcome")
    ax.legend()
    ax.tick_params(axis="x", labelrotation=15)
    figs["regret.png"] = fig
    return figs


def write_plots(out: Path, tour, games, positions, teams, before: int, summary=None) -> List[str]:
    figs = figures(tour, games, positions, teams, before, summary)
    for name, fig in figs.items():
        _save(fig, Path(out) / name)
    return list(figs)
