"""Train/test splits with fixed outcomes: per user by time (leave-last-out) and random with a seed.

Leave-last-out is how RecBole and PaddleRec evaluate sequential recommenders: each user's latest
interactions are the test set, so the model never sees the future of the user it is scored on.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .errors import ConfigError
from .table import Table


def leave_last_out(ratings: Table, n: int = 1, user: str = "user_id", time: str = "timestamp") -> tuple[Table, Table]:
    """``(train, test)``: per user, the ``n`` latest rows (ties keep file order) go to test.

    A user with ``n`` or fewer rows stays wholly in train, so every test user has a history.
    """
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ConfigError(f"leave_last_out needs n >= 1 (rows held out per user); got {n!r}")
    users, times = ratings[user], ratings[time]
    order = np.lexsort((np.arange(len(ratings)), times, users))  # by user, then time, then row
    sorted_users = users[order]
    starts = np.r_[0, np.flatnonzero(sorted_users[1:] != sorted_users[:-1]) + 1]
    counts = np.diff(np.r_[starts, len(order)])
    rank_from_end = np.repeat(starts + counts, counts) - np.arange(len(order))  # 1 for a user's latest row
    held = (rank_from_end <= n) & (np.repeat(counts, counts) > n)
    return ratings.take(np.sort(order[~held])), ratings.take(np.sort(order[held]))


def random_split(table: Table, fractions: Sequence[float] = (0.8, 0.2), seed: int = 0) -> tuple[Table, ...]:
    """One table per fraction, rows drawn by a seeded permutation (the same seed gives the same split)."""
    fractions = [float(f) for f in fractions]
    if len(fractions) < 2 or any(not 0 < f < 1 for f in fractions) or abs(sum(fractions) - 1) > 1e-9:
        raise ConfigError(f"random_split fractions must be two or more values in (0, 1) summing to 1; got {fractions}")
    order = np.random.default_rng(seed).permutation(len(table))
    bounds = np.round(np.cumsum(fractions)[:-1] * len(table)).astype(int)
    return tuple(table.take(np.sort(part)) for part in np.split(order, bounds))
