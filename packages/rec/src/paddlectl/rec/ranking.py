"""Top-K ranking metrics over a whole catalogue: Recall@K, NDCG@K and HitRate@K.

Retrieval is judged the way RecBole's full-sort evaluation and PaddleRec's recall metrics judge it:
every item the user has not rated in training is a candidate, the model's scores rank them, and the
held-out items are the relevant ones (binary relevance). The functions take the scores and masks as
arrays so the trainer, the eval harness and the benchmark all compute the same numbers.
"""

from __future__ import annotations

import numpy as np

from .errors import DataError

__all__ = ["MASKED", "hits_at", "ranking_metrics", "top_k"]

MASKED = -np.inf
"""The score an excluded item (rated in training, or a reserved slot) is given before ranking."""


def _scores(scores) -> np.ndarray:
    scores = np.asarray(scores)
    if scores.ndim != 2 or scores.shape[1] == 0:
        raise DataError(f"scores must be [users, items] with at least one item; got shape {scores.shape}")
    if not np.issubdtype(scores.dtype, np.floating):
        raise DataError(f"scores must be floating point; got {scores.dtype}")
    if np.isnan(scores).any():
        raise DataError("scores hold NaN; the model diverged (lower the learning rate)")
    return scores


def top_k(scores, k: int, exclude=None) -> np.ndarray:
    """The indices of each row's ``k`` highest scores, best first (ties: the lower index first).

    ``exclude`` is a boolean mask of ``scores``' shape; excluded items are never returned, and a row
    with fewer than ``k`` candidates is padded with -1.
    """
    scores = _scores(scores)
    if not isinstance(k, int | np.integer) or k < 1:
        raise DataError(f"k must be a positive integer; got {k!r}")
    if exclude is not None:
        exclude = np.asarray(exclude, bool)
        if exclude.shape != scores.shape:
            raise DataError(f"the exclusion mask has shape {exclude.shape}, the scores {scores.shape}")
        scores = np.where(exclude, MASKED, scores)
    k_eff = min(int(k), scores.shape[1])
    # a stable sort of the negated scores keeps the lower index first among ties
    order = np.argsort(-scores, axis=1, kind="stable")[:, :k_eff]
    order = np.where(np.take_along_axis(scores, order, axis=1) == MASKED, -1, order)
    if k_eff < k:
        order = np.pad(order, ((0, 0), (0, k - k_eff)), constant_values=-1)
    return order


def hits_at(top: np.ndarray, relevant: np.ndarray) -> np.ndarray:
    """``[users, K]`` booleans: whether each retrieved item is one of the user's relevant items.

    ``relevant`` is ``[users, T]`` item indices padded with -1 (users hold different numbers of
    held-out items); a -1 in ``top`` (no candidate left) is never a hit.
    """
    top, relevant = np.asarray(top), np.asarray(relevant)
    if top.ndim != 2 or relevant.ndim != 2 or top.shape[0] != relevant.shape[0]:
        raise DataError(f"top {top.shape} and relevant {relevant.shape} must be [users, K] and [users, T]")
    return ((top[:, :, None] == relevant[:, None, :]) & (relevant[:, None, :] >= 0)).any(axis=2)


def ranking_metrics(top, relevant, ks: tuple[int, ...]) -> dict[str, np.ndarray]:
    """Per user, for each ``k`` in ``ks``: ``recall_at_k`` (relevant items found / relevant items),
    ``ndcg_at_k`` (binary gains discounted by log2(rank + 1), over the ideal ordering's DCG) and
    ``hit_rate_at_k`` (1 when any relevant item is found). Users without a relevant item are refused:
    their metrics are undefined."""
    top, relevant = np.asarray(top), np.asarray(relevant)
    if not ks or any(not isinstance(k, int | np.integer) or k < 1 for k in ks):
        raise DataError(f"ks must be positive integers; got {ks!r}")
    if max(ks) > top.shape[1]:
        raise DataError(f"top holds {top.shape[1]} items per user, fewer than k={max(ks)}")
    n_relevant = (relevant >= 0).sum(axis=1)
    if (n_relevant == 0).any():
        raise DataError(f"{int((n_relevant == 0).sum())} user(s) have no held-out item; drop them from evaluation")
    hits = hits_at(top, relevant).astype(np.float64)
    discount = 1.0 / np.log2(np.arange(2, top.shape[1] + 2))
    ideal = np.concatenate([[0.0], np.cumsum(discount)])
    results: dict[str, np.ndarray] = {}
    for k in ks:
        found = hits[:, :k].sum(axis=1)
        results[f"recall_at_{k}"] = found / n_relevant
        results[f"ndcg_at_{k}"] = (hits[:, :k] * discount[:k]).sum(axis=1) / ideal[np.minimum(n_relevant, k)]
        results[f"hit_rate_at_{k}"] = (found > 0).astype(np.float64)
    return results
