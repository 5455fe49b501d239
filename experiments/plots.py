"""PNG plots of a tournament (matplotlib, no display needed).

* ``head_to_head.png`` — heatmap of the row agent's win rate against the column agent;
* ``ratings.png``      — Bradley–Terry ratings (Elo scale) with bootstrap 95% intervals;
* ``pip_margins.png``  — histogram of the winner's final pip margin, blocked games beside
  games where a hand went out.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import List

import numpy as np
import pandas as pd


def new_figure(figsize):
    """``(fig, ax)``: a matplotlib figure outside pyplot, so drawing here neither changes the
    caller's backend (a notebook keeps showing its own figures inline) nor leaks figures."""
    from matplotlib.figure import Figure
    fig = Figure(figsize=figsize)
    return fig, fig.subplots()


def _save(fig, path: Path) -> None:
    tmp = path.with_name(path.stem + ".tmp.png")
    fig.savefig(tmp, dpi=110, bbox_inches="tight")
    os.replace(tmp, path)


def heatmap(h2h: pd.DataFrame, path: Path, title: str) -> None:
    n = len(h2h)
    fig, ax = new_figure((1.6 + 1.1 * n, 1.2 + 0.9 * n))
    data = h2h.to_numpy(dtype=float)
    im = ax.imshow(np.ma.masked_invalid(data), cmap="RdBu", vmin=0.0, vmax=1.0)
    ax.set_xticks(range(n), h2h.columns, rotation=30, ha="right")
    ax.set_yticks(range(n), h2h.index)
    for r in range(n):
        for c in range(n):
            if np.isfinite(data[r, c]):
                ax.text(c, r, f"{data[r, c]:.2f}", ha="center", va="center",
                        color="white" if abs(data[r, c] - 0.5) > 0.3 else "black")
    ax.set_xlabel("opponent")
    ax.set_ylabel("agent")
    ax.set_title(title)
    fig.colorbar(im, ax=ax, label="win rate (row vs column)")
    _save(fig, path)


def ratings_plot(ratings: pd.DataFrame, path: Path, title: str) -> None:
    r = ratings.sort_values("rating")
    y = np.arange(len(r))
    fig, ax = new_figure((6.5, 1.2 + 0.5 * len(r)))
    lo = (r["rating"] - r["rating_low"]).clip(lower=0).fillna(0)
    hi = (r["rating_high"] - r["rating"]).clip(lower=0).fillna(0)
    ax.errorbar(r["rating"], y, xerr=[lo, hi], fmt="o", capsize=4)
    for yy, (_, row) in zip(y, r.iterrows()):
        ax.annotate(f"{row['rating']:+.0f}", (row["rating"], yy), textcoords="offset points",
                    xytext=(0, 7), ha="center", fontsize=8)
    ax.set_yticks(y, r["agent"])
    ax.axvline(0.0, color="grey", lw=0.8, ls=":")
    ax.set_xlabel("Bradley–Terry rating, Elo scale (mean 0), bootstrap 95% interval")
    ax.set_title(title)
    _save(fig, path)


def margin_histogram(margins: pd.DataFrame, path: Path, title: str) -> None:
    fig, ax = new_figure((7, 4))
    m = margins.dropna(subset=["margin"])
    if len(m):
        top = max(1, int(np.ceil(m["margin"].max())))
        bins = np.arange(-0.5, top + 1.5, 1.0 if top <= 60 else max(1.0, top / 60))
        groups = [("went out", m[~m["blocked"]]["margin"]), ("blocked", m[m["blocked"]]["margin"])]
        ax.hist([g for _, g in groups], bins=bins, stacked=False,
                label=[f"{name} ({len(g)} games)" for name, g in groups], alpha=0.8)
        ax.legend()
    ax.set_xlabel("winner's final pip margin (best other hand's pips − winner's; 0 = draw)")
    ax.set_ylabel("games")
    ax.set_title(title)
    _save(fig, path)


def write_plots(out: Path, label: str, h2h: pd.DataFrame, ratings: pd.DataFrame,
                margins: pd.DataFrame) -> List[str]:
    names = []
    heatmap(h2h, out / "head_to_head.png", f"{label}: head-to-head win rate")
    names.append("head_to_head.png")
    ratings_plot(ratings, out / "ratings.png", f"{label}: ratings")
    names.append("ratings.png")
    margin_histogram(margins, out / "pip_margins.png", f"{label}: final pip margins")
    names.append("pip_margins.png")
    return names
