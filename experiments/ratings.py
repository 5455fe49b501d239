"""Intervals and ratings: Wilson score intervals, Bradley–Terry on the Elo scale, bootstrap.

* :func:`wilson_interval` — the Wilson score interval of a proportion (95% by default).
* :func:`fit_bradley_terry` — maximum-likelihood Bradley–Terry strengths from a matrix of
  pairwise scores (a draw counts half a win to each side), fitted with Hunter's (2004) MM
  iteration, reported on the Elo scale: ``rating_i - rating_j = 400·log10(p_i / p_j)``, so
  an agent that scores a fraction ``p`` against another sits ``400·log10(p/(1-p))`` above
  it.  Ratings are centred on a mean of 0.
* :func:`bootstrap_ratings` — percentile intervals from refits on games resampled with
  replacement (a seeded RNG, so the intervals are reproducible).

When some agent has scored everything or nothing the maximum-likelihood ratings are
infinite; the fit then adds ``prior`` virtual drawn games between every pair that met
(a standard regularisation) and says so in its result.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

ELO = 400.0 / math.log(10.0)   # ratings = ELO * ln(strength)
Z95 = 1.959963984540054


def wilson_interval(successes: float, n: int, z: float = Z95):
    """Wilson score interval for a proportion; ``(nan, nan)`` when ``n == 0``."""
    if n <= 0:
        return float("nan"), float("nan")
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(max(p * (1 - p) / n + z * z / (4 * n * n), 0.0)) / denom
    low, high = centre - half, centre + half
    return (0.0 if low < 1e-12 else low), (1.0 if high > 1 - 1e-12 else high)


def cluster_interval(totals: Sequence[float], sizes: Sequence[float], z: float = Z95):
    """A normal interval for the ratio ``sum(totals) / sum(sizes)`` with each (total, size) one
    cluster (the cluster-robust variance of a ratio estimator): the seats one agent holds
    on one duplicate deal share its luck, so they are not independent trials as Wilson's
    interval assumes.  ``(nan, nan)`` with fewer than two clusters."""
    t = np.asarray(totals, dtype=float)
    n = np.asarray(sizes, dtype=float)
    k, size = len(t), float(n.sum())
    if k < 2 or size <= 0:
        return float("nan"), float("nan")
    ratio = float(t.sum()) / size
    half = z * math.sqrt(k / (k - 1) * float(((t - ratio * n) ** 2).sum())) / size
    return ratio - half, ratio + half


def elo_difference(score: float) -> float:
    """Rating gap that makes the expected score ``score`` (Bradley–Terry on the Elo scale)."""
    return 400.0 * math.log10(score / (1.0 - score))


@dataclass
class BTFit:
    ratings: np.ndarray          # Elo scale, mean 0
    iterations: int
    converged: bool
    prior: float                 # virtual drawn games added per pair (0 = plain MLE)


def _degenerate(scores: np.ndarray, games: np.ndarray) -> bool:
    """True when the plain MLE does not exist (some agent scored all or nothing, or the
    comparison graph is disconnected)."""
    k = len(scores)
    total = scores.sum(axis=1)
    played = games.sum(axis=1)
    if np.any((played > 0) & ((total <= 0) | (total >= played))):
        return True
    # connectivity of agents that played
    seen, stack = {0}, [0]
    while stack:
        i = stack.pop()
        for j in np.nonzero(games[i] > 0)[0]:
            if j not in seen:
                seen.add(int(j))
                stack.append(int(j))
    return len(seen) < k


def fit_bradley_terry(scores: np.ndarray, prior: Optional[float] = None, tol: float = 1e-10,
                      max_iter: int = 20000, start: Optional[np.ndarray] = None) -> BTFit:
    """Bradley–Terry fit.  ``scores[i, j]`` = points agent i took from agent j (win 1, draw
    ½ each); games between them are ``scores[i, j] + scores[j, i]``.

    ``prior=None`` fits the plain MLE and falls back to one virtual draw per pair
    (``prior=1``) only when the MLE does not exist; a number forces that prior.
    """
    scores = np.asarray(scores, dtype=float)
    k = scores.shape[0]
    games = scores + scores.T
    if prior is None:
        prior = 1.0 if _degenerate(scores, games) else 0.0
    if prior > 0:
        met = games > 0
        if not met.any():
            met = ~np.eye(k, dtype=bool)
        scores = scores + np.where(met, prior / 2.0, 0.0)
        games = scores + scores.T
    np.fill_diagonal(games, 0.0)
    wins = scores.sum(axis=1) - np.diag(scores)
    p = np.ones(k) if start is None else np.exp(np.asarray(start, dtype=float) / ELO)
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        denom = (games / (p[:, None] + p[None, :])).sum(axis=1)
        new = np.where(denom > 0, wins / np.where(denom > 0, denom, 1.0), p)
        new = np.maximum(new, 1e-300)
        new = new / math.exp(np.log(new).mean())
        delta = np.max(np.abs(np.log(new) - np.log(p)))
        p = new
        if delta < tol:
            converged = True
            break
    ratings = ELO * np.log(p)
    return BTFit(ratings - ratings.mean(), it, converged, prior)


def score_matrix(i: np.ndarray, j: np.ndarray, s: np.ndarray, k: int,
                 weights: Optional[np.ndarray] = None) -> np.ndarray:
    """Scores matrix from pairwise results: agent ``i[n]`` scored ``s[n]`` against ``j[n]``."""
    w = np.ones(len(i)) if weights is None else weights
    m = np.bincount(i * k + j, weights=w * s, minlength=k * k)
    m += np.bincount(j * k + i, weights=w * (1.0 - s), minlength=k * k)
    return m.reshape(k, k)


def bootstrap_ratings(game: np.ndarray, i: np.ndarray, j: np.ndarray, s: np.ndarray, k: int,
                      n_boot: int = 200, seed: int = 0, level: float = 0.95):
    """Bootstrap over games: returns ``(fit, low, high)`` on the Elo scale.

    ``game[n]`` is the game each pairwise result comes from (a multi-seat game gives
    several), so resampling a game keeps its results together.
    """
    fit = fit_bradley_terry(score_matrix(i, j, s, k))
    if len(game) == 0 or n_boot <= 0:
        nan = np.full(k, np.nan)
        return fit, nan, nan
    _, game_index = np.unique(game, return_inverse=True)
    n_games = int(game_index.max()) + 1
    rng = np.random.default_rng([seed, 7])
    samples = np.empty((n_boot, k))
    if len(game) == n_games:
        # One result per game (two sides): games with the same (i, j, score) are
        # interchangeable, so resampling games with replacement is a multinomial draw over
        # those few kinds — the same distribution, far cheaper.
        code = (i * k + j) * 3 + np.rint(2 * s).astype(int)
        kinds, counts = np.unique(code, return_counts=True)
        ki, kj, ks = (kinds // 3) // k, (kinds // 3) % k, (kinds % 3) / 2.0
        p = counts / n_games
        for b in range(n_boot):
            w = rng.multinomial(n_games, p).astype(float)
            samples[b] = fit_bradley_terry(score_matrix(ki, kj, ks, k, w), tol=1e-8, start=fit.ratings).ratings
    else:
        for b in range(n_boot):
            counts = np.bincount(rng.integers(n_games, size=n_games), minlength=n_games)
            samples[b] = fit_bradley_terry(score_matrix(i, j, s, k, counts[game_index].astype(float)),
                                           tol=1e-8, start=fit.ratings).ratings
    alpha = (1.0 - level) / 2.0
    return fit, np.quantile(samples, alpha, axis=0), np.quantile(samples, 1.0 - alpha, axis=0)


def expected_score(rating_a: float, rating_b: float) -> float:
    return 1.0 / (1.0 + 10 ** ((rating_b - rating_a) / 400.0))


__all__: Sequence[str] = ["wilson_interval", "elo_difference", "fit_bradley_terry", "score_matrix",
                          "bootstrap_ratings", "expected_score", "BTFit"]
