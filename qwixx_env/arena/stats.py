"""The statistics of a tournament: shared wins, Wilson intervals, means, ratings.

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
    p = wins / n
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(max(p * (1 - p), 0.0) / n + z2 / (4 * n * n)) / denom
    # At p = 0 or 1 the bound is exactly 0 or 1; computed, it would be off by rounding.
    low = 0.0 if p <= 0 else max(0.0, centre - half)
    high = 1.0 if p >= 1 else min(1.0, centre + half)
    return low, high


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
