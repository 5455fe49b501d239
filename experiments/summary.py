"""Summary tables of a tournament's per-game records (pandas).

A *unit* is a seat, or a team of partners in a pairs game.  Each game gives one row per
unit (:func:`unit_rows`) — its agent, outcome (win / draw / loss from the games' returns),
pips left (a team's total), the opponents' mean, points, blocked — and one row per pair of
units held by different agents (:func:`pairwise_rows`): who beat whom in that game (higher
return wins, equal is a draw).  Per-agent tables come from the first, head-to-head tables
and Bradley–Terry ratings from the second.
"""
from __future__ import annotations

from typing import List, Sequence

import numpy as np
import pandas as pd

from .ratings import bootstrap_ratings, cluster_interval, wilson_interval


def _col(df: pd.DataFrame, name: str, default=np.nan) -> pd.Series:
    return df[name] if name in df.columns else pd.Series(default, index=df.index)


def _unit_value(df: pd.DataFrame, prefix: str, unit: Sequence[int], how: str) -> pd.Series:
    cols = [f"{prefix}{s}" for s in unit]
    if not all(c in df.columns for c in cols):
        return pd.Series(np.nan, index=df.index)
    vals = df[cols].astype(float)
    return vals.sum(axis=1) if how == "sum" else vals.mean(axis=1)


def unit_rows(games: pd.DataFrame, units: Sequence[Sequence[int]]) -> pd.DataFrame:
    """One row per (game, unit)."""
    rets = [_unit_value(games, "return_", u, "mean") for u in units]
    pips = [_unit_value(games, "pips_left_", u, "sum") for u in units]
    best = pd.concat(rets, axis=1).max(axis=1)
    worst = pd.concat(rets, axis=1).min(axis=1)
    n_best = sum((r == best).astype(int) for r in rets)
    blocked = _col(games, "blocked", False).astype(bool)
    gammon = _col(games, "gammon", False).fillna(False).astype(bool)
    backgammon = _col(games, "backgammon", False).fillna(False).astype(bool)
    forfeit = _col(games, "result", "") == "forfeit"
    parts = []
    for j, unit in enumerate(units):
        others = [pips[k] for k in range(len(units)) if k != j]
        opp = pd.concat(others, axis=1).mean(axis=1) if others else pd.Series(np.nan, index=games.index)
        top = (rets[j] == best) & (best > worst)
        win = top & (n_best == 1)
        draw = (best == worst) | (top & (n_best > 1))
        parts.append(pd.DataFrame({
            "game_id": games["game_id"], "unit": j, "agent": games[f"seat{unit[0]}"],
            "win": win, "draw": draw, "loss": ~(win | draw),
            "pips_left": pips[j], "opp_pips_left": opp, "pip_diff": pips[j] - opp,
            "points": _unit_value(games, "points_", unit, "mean"),
            "blocked": blocked, "gammon": gammon, "backgammon": backgammon,
            "forfeit": forfeit & ~top,
        }))
    return pd.concat(parts, ignore_index=True)


def pairwise_rows(games: pd.DataFrame, units: Sequence[Sequence[int]]) -> pd.DataFrame:
    """One row per (game, pair of units with different agents): ``a`` scored ``score`` vs ``b``
    (1 win, ½ draw, 0 loss: the higher return wins), with both sides' pips and points."""
    rets = [_unit_value(games, "return_", u, "mean") for u in units]
    pips = [_unit_value(games, "pips_left_", u, "sum") for u in units]
    points = [_unit_value(games, "points_", u, "mean") for u in units]
    flags = {name: _col(games, name, False).fillna(False).astype(bool) for name in ("blocked", "gammon", "backgammon")}
    parts = []
    for j in range(len(units)):
        for k in range(j + 1, len(units)):
            a, b = games[f"seat{units[j][0]}"], games[f"seat{units[k][0]}"]
            score = np.where(rets[j] > rets[k], 1.0, np.where(rets[j] < rets[k], 0.0, 0.5))
            part = pd.DataFrame({"game_id": games["game_id"], "a": a, "b": b, "score": score,
                                 "a_pips": pips[j], "b_pips": pips[k], "pip_diff": pips[j] - pips[k],
                                 "a_points": points[j], "b_points": points[k], **flags})
            parts.append(part[a != b])
    if not parts:
        return pd.DataFrame(columns=["game_id", "a", "b", "score", "a_pips", "b_pips", "pip_diff", "a_points",
                                     "b_points", "blocked", "gammon", "backgammon"])
    return pd.concat(parts, ignore_index=True)


def _rate(part: pd.Series, n: int) -> float:
    return float(part.sum()) / n if n else float("nan")


def summarize(games: pd.DataFrame, agent_names: List[str], units: Sequence[Sequence[int]],
              rows: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per agent: its record, the win rate's Wilson interval (each seat a trial)
    and, where the games name their deals, the win rate's and points' intervals with
    each deal one cluster (:func:`~pipslab.experiments.ratings.cluster_interval`)."""
    rows = unit_rows(games, units) if rows is None else rows
    has_blocked = "blocked" in games.columns
    has_gammon = "gammon" in games.columns or "backgammon" in games.columns
    has_points = any(c.startswith("points_") for c in games.columns)
    has_forfeits = bool(rows["forfeit"].any())   # the column only appears when an agent forfeited
    out = []
    by_agent = dict(tuple(rows.groupby("agent", sort=False)))
    deals = rows["game_id"].map(games.set_index("game_id")["deal_id"]) if "deal_id" in games.columns else None
    for name in agent_names:
        s = by_agent.get(name, rows.iloc[0:0])
        n = len(s)
        wins, draws = int(s["win"].sum()), int(s["draw"].sum())
        low, high = wilson_interval(wins, n)
        row = {
            "agent": name, "games": n, "wins": wins, "draws": draws, "losses": n - wins - draws,
            "win_rate": wins / n if n else float("nan"), "win_rate_low": low, "win_rate_high": high,
            "score": (wins + 0.5 * draws) / n if n else float("nan"),
            "avg_pips_left": s["pips_left"].mean(), "avg_opp_pips_left": s["opp_pips_left"].mean(),
            "avg_pip_diff": s["pip_diff"].mean(),
        }
        if has_points:
            row["avg_points"] = s["points"].mean()
        if deals is not None and n:
            # the agent's seats on one deal share its luck: the deal is the cluster
            per = s.assign(deal=deals[s.index]).groupby("deal", sort=False)
            sizes = per.size()
            low, high = cluster_interval(per["win"].sum(), sizes)
            row["win_rate_deal_low"], row["win_rate_deal_high"] = max(low, 0.0), min(high, 1.0)
            if has_points:
                row["avg_points_low"], row["avg_points_high"] = cluster_interval(per["points"].sum(), sizes)
        if has_blocked:
            b = s[s["blocked"]]
            row["blocked_share"] = len(b) / n if n else float("nan")
            row["blocked_win_rate"] = _rate(b["win"], len(b))
        if has_gammon:
            row["gammon_rate"] = _rate(s["win"] & s["gammon"], n)
            row["backgammon_rate"] = _rate(s["win"] & s["backgammon"], n)
            row["gammon_loss_rate"] = _rate(s["loss"] & s["gammon"], n)
            row["backgammon_loss_rate"] = _rate(s["loss"] & s["backgammon"], n)
        if has_forfeits:
            row["forfeits"] = int(s["forfeit"].sum())
        out.append(row)
    return pd.DataFrame(out)


def summarize_pairings(games: pd.DataFrame, agent_names: List[str], units: Sequence[Sequence[int]],
                       pairs: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per pair of agents that met (in the order given): ``agent``'s record against ``opponent``
    — games, wins, draws, losses, win rate with its Wilson interval, score, pips left (own,
    opponent's, difference), points per game, blocked share and win rate when blocked, and
    (backgammon) gammon and backgammon rates of the agent's wins and losses."""
    pairs = pairwise_rows(games, units) if pairs is None else pairs
    order = {n: k for k, n in enumerate(agent_names)}
    flip = pairs["a"].map(order) > pairs["b"].map(order)

    def pick(x, y):
        return pairs[x].where(~flip, pairs[y])

    norm = pd.DataFrame({"agent": pick("a", "b"), "opponent": pick("b", "a"),
                         "score": pairs["score"].where(~flip, 1.0 - pairs["score"]),
                         "pips": pick("a_pips", "b_pips"), "opp_pips": pick("b_pips", "a_pips"),
                         "points": pick("a_points", "b_points"),
                         "blocked": pairs["blocked"], "gammon": pairs["gammon"], "backgammon": pairs["backgammon"]})
    groups = dict(tuple(norm.groupby(["agent", "opponent"], sort=False)))
    has_blocked = "blocked" in games.columns
    has_gammon = "gammon" in games.columns or "backgammon" in games.columns
    has_points = any(c.startswith("points_") for c in games.columns)
    empty = norm.iloc[0:0]
    rows = []
    for j, a in enumerate(agent_names):
        for b in agent_names[j + 1:]:
            g = groups.get((a, b), empty)
            n = len(g)
            if n == 0:  # never met (a gauntlet's field among itself)
                continue
            win, loss = g["score"] == 1.0, g["score"] == 0.0
            wins, losses = int(win.sum()), int(loss.sum())
            low, high = wilson_interval(wins, n)
            row = {"agent": a, "opponent": b, "games": n, "wins": wins, "draws": n - wins - losses,
                   "losses": losses, "win_rate": wins / n if n else float("nan"),
                   "win_rate_low": low, "win_rate_high": high,
                   "score": (wins + 0.5 * (n - wins - losses)) / n if n else float("nan"),
                   "avg_pips_left": g["pips"].mean(), "avg_opp_pips_left": g["opp_pips"].mean(),
                   "avg_pip_diff": (g["pips"] - g["opp_pips"]).mean()}
            if has_points:
                row["avg_points"] = g["points"].mean()
            if has_blocked:
                blocked = g[g["blocked"]]
                row["blocked_share"] = len(blocked) / n if n else float("nan")
                row["blocked_win_rate"] = _rate(blocked["score"] == 1.0, len(blocked))
            if has_gammon:
                row["gammon_rate"] = _rate(win & g["gammon"], n)
                row["backgammon_rate"] = _rate(win & g["backgammon"], n)
                row["gammon_loss_rate"] = _rate(loss & g["gammon"], n)
                row["backgammon_loss_rate"] = _rate(loss & g["backgammon"], n)
            rows.append(row)
    return pd.DataFrame(rows)


def head_to_head(pairings: pd.DataFrame, agent_names: List[str], value: str = "win_rate") -> pd.DataFrame:
    """Square table: row agent's ``value`` against the column agent (win rate by default)."""
    m = pd.DataFrame(np.nan, index=agent_names, columns=agent_names)
    for r in pairings.itertuples(index=False):
        if r.games:
            m.loc[r.agent, r.opponent] = getattr(r, value)
            if value == "win_rate":
                m.loc[r.opponent, r.agent] = r.losses / r.games
            elif value == "score":
                m.loc[r.opponent, r.agent] = 1.0 - r.score
    return m


def ratings_table(pairs: pd.DataFrame, agent_names: List[str], seed: int = 0, n_boot: int = 200) -> pd.DataFrame:
    """Bradley–Terry ratings (Elo scale, mean 0) with bootstrap 95% intervals over games."""
    order = {n: k for k, n in enumerate(agent_names)}
    i = pairs["a"].map(order).to_numpy(dtype=int)
    j = pairs["b"].map(order).to_numpy(dtype=int)
    s = pairs["score"].to_numpy(dtype=float)
    game = pairs["game_id"].to_numpy()
    fit, low, high = bootstrap_ratings(game, i, j, s, len(agent_names), n_boot=n_boot, seed=seed)
    games = np.bincount(np.concatenate([i, j]), minlength=len(agent_names))
    sc = np.bincount(i, weights=s, minlength=len(agent_names)) + np.bincount(j, weights=1 - s, minlength=len(agent_names))
    return pd.DataFrame({
        "agent": agent_names, "rating": fit.ratings, "rating_low": low, "rating_high": high,
        "games": games, "score": np.where(games > 0, sc / np.maximum(games, 1), np.nan),
        "prior": fit.prior,
    }).sort_values("rating", ascending=False, kind="stable").reset_index(drop=True)


def pip_margins(games: pd.DataFrame, units: Sequence[Sequence[int]]) -> pd.DataFrame:
    """Per game: the winner's pip margin (the best-placed other unit's pips minus the
    winner's; 0 for a draw), and whether the game was blocked."""
    rets = pd.concat([_unit_value(games, "return_", u, "mean") for u in units], axis=1)
    pips = pd.concat([_unit_value(games, "pips_left_", u, "sum") for u in units], axis=1)
    win_unit = rets.to_numpy().argmax(axis=1)
    p = pips.to_numpy()
    winner_pips = p[np.arange(len(p)), win_unit]
    masked = p.copy()
    masked[np.arange(len(p)), win_unit] = np.inf
    margin = np.where(games["result"].to_numpy() == "win", masked.min(axis=1) - winner_pips, 0.0)
    return pd.DataFrame({"game_id": games["game_id"], "margin": margin,
                         "blocked": _col(games, "blocked", False).astype(bool).to_numpy()})


def format_table(summary: pd.DataFrame, ratings: pd.DataFrame | None = None) -> str:
    cols = ["agent", "games", "wins", "draws", "losses", "win_rate", "win_rate_low", "win_rate_high",
            "avg_pips_left", "avg_pip_diff"]
    cols += [c for c in ("blocked_share", "gammon_rate", "backgammon_rate") if c in summary.columns]
    if "gammon_rate" in summary.columns and "avg_points" in summary.columns:
        cols.append("avg_points")
    table = summary[cols].copy()
    if ratings is not None:
        r = ratings.set_index("agent")
        table["elo"] = table["agent"].map(r["rating"])
        table["elo_low"] = table["agent"].map(r["rating_low"])
        table["elo_high"] = table["agent"].map(r["rating_high"])
    fmt = {c: (lambda x: f"{x:.1f}") for c in ("elo", "elo_low", "elo_high")}
    return table.to_string(index=False, float_format=lambda x: f"{x:.3f}", formatters=fmt)
