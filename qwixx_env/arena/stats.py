"""The statistics of a tournament: shared wins, Wilson intervals (plain and deal-clustered), means, ratings.

Every function takes plain numbers or arrays, so each can be checked on hand-computed cases.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TypedDict

import numpy as np
from openskill.models import PlackettLuce

Z95 = 1.959963984540054  # the two-sided 95% quantile of the standard normal


class Rating(TypedDict):
    """One bot's openskill rating: mu, sigma, the 95% interval [mu - Z95 sigma, mu + Z95 sigma]
    and openskill's ordinal (a conservative estimate, mu - 3 sigma)."""

    mu: float
    sigma: float
    interval: list[float]
    ordinal: float


def win_shares(scores: np.ndarray) -> np.ndarray:
    """(G, P) scores -> (G, P) win shares: the top score wins, a k-way tie gives each 1/k."""
    top = scores == scores.max(axis=1, keepdims=True)
    return top / top.sum(axis=1, keepdims=True)


def ranks(scores: Sequence[int]) -> list[int]:
    """Finishing places from scores, 1 = best; equal scores share the better place."""
    return [1 + sum(other > s for other in scores) for s in scores]


def wilson_interval(wins: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for a win rate of `wins` (may be fractional) in `n` games.

    With p = wins / n:  (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n).
    """
    if n <= 0:
        raise ValueError(f"n: got {n!r}; expected at least one game")
    return _wilson(wins / n, n, z)


def _wilson(p: float, n: float, z: float) -> tuple[float, float]:
    """The Wilson interval at win rate `p` over `n` games (`n` may be an effective, fractional count)."""
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(max(p * (1 - p), 0.0) / n + z2 / (4 * n * n)) / denom
    # At p = 0 or 1 the bound is exactly 0 or 1; computed, it would be off by rounding.
    low = 0.0 if p <= 0 else max(0.0, centre - half)
    high = 1.0 if p >= 1 else min(1.0, centre + half)
    return low, high


def clustered_interval(shares: np.ndarray, z: float = Z95) -> tuple[float, float]:
    """The 95% interval of a win rate from games grouped by deal, the games of a deal sharing dice.

    `shares` is (D, k): row d holds the bot's win shares in its k games of deal d (k the same
    for every deal). The games of a deal are not independent, so the standard error is taken
    over deals: se = s / sqrt(D), s the sample standard deviation (D - 1) of the D per-deal
    mean shares. The interval is the Wilson interval (`wilson_interval`) at the win rate p and
    the effective number of games n_eff = p(1 - p) / se² (Kish's design effect: n_eff is kD
    when the games are independent, D when the k games of a deal always agree); where that is
    undefined (one deal, p at 0 or 1, or every deal alike) n_eff is D, each deal counting as
    one game.
    """
    x = np.asarray(shares, np.float64)
    if x.ndim != 2 or x.size == 0:
        raise ValueError(f"shares: got an array of shape {x.shape}; expected (deals, games per deal), both >= 1")
    deals = x.shape[0]
    p = float(x.mean())
    n_eff = float(deals)
    if deals > 1 and 0 < p < 1:
        se = float(x.mean(axis=1).std(ddof=1)) / math.sqrt(deals)
        if se > 0:
            n_eff = p * (1 - p) / se**2
    return _wilson(p, n_eff, z)


def mean_and_se(values: Sequence[float] | np.ndarray) -> tuple[float, float | None]:
    """The mean and its standard error s / sqrt(n) (s with n - 1); the error is None for n < 2."""
    x = np.asarray(values, np.float64)
    if x.size == 0:
        raise ValueError("values: expected at least one value")
    if x.size < 2:
        return float(x.mean()), None
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))


def openskill_ratings(
    labels: Sequence[str], seat_bots: np.ndarray, scores: np.ndarray
) -> list[Rating] | None:
    """Plackett-Luce ratings (openskill) of the pool, updated game by game in game order.

    Each game is a free-for-all of one-player teams ranked by final score (ties share a
    place). Games in which a bot holds more than one seat say nothing about it against the
    others and are skipped; None if no game is left (or solo).
    """
    model = PlackettLuce()
    ratings = [model.rating(name=label) for label in labels]
    rated = 0
    for seats, points in zip(seat_bots.tolist(), scores.tolist()):
        if len(seats) < 2 or len(set(seats)) < len(seats):
            continue
        places: list[float] = list(ranks(points))  # openskill takes float places (a list: invariant)
        new = model.rate([[ratings[b]] for b in seats], ranks=places)
        for b, (r,) in zip(seats, new):
            ratings[b] = r
        rated += 1
    if not rated:
        return None
    return [
        {
            "mu": r.mu,
            "sigma": r.sigma,
            "interval": [r.mu - Z95 * r.sigma, r.mu + Z95 * r.sigma],
            "ordinal": r.ordinal(),
        }
        for r in ratings
    ]
