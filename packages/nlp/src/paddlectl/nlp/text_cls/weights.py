"""The fixed feature weights of ``FastText(weighting=...)``, computed from the training texts only
(never the validation or held-out ones) by running the model's own n-gram hashing over them, so a
weight belongs to exactly the embedding row the model reads:

- ``idf``: the inverse document frequency of scikit-learn's ``TfidfVectorizer`` (smoothed),
  ``log((1 + N) / (1 + df)) + 1``;
- ``nb``: NBSVM's log-count ratio (Wang & Manning, 2012), ``log((p / |p|_1) / (q / |q|_1))`` with
  ``p = alpha + `` the number of texts of the second label holding the feature and ``q`` the same for
  the first (binarised counts, ``alpha = 1``).

A row fewer than ``min_df`` training texts hold (at least: none, a bucket nothing hashed into, a
character below ``min_freq``) and the padding row weigh 0, as a vectoriser's vocabulary leaves out
features it never saw or (``min_df``) saw too rarely to learn from.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import paddlectl.framework as paddle
from paddlectl.framework.errors import DataError

BATCH = 512


def document_frequencies(model, rows: np.ndarray, labels: Sequence[int], num_classes: int) -> np.ndarray:
    """[num_classes, embedding rows]: how many texts of each label hold each feature row, for the
    texts' id rows ``rows`` ([texts, length]) through ``model.ngram_ids``."""
    labels = np.asarray(labels, dtype=np.int64)
    size = model.embedding.weight.shape[0]
    counts = np.zeros((num_classes, size), dtype=np.int64)
    for start in range(0, len(rows), BATCH):
        features = np.sort(model.ngram_ids(paddle.to_tensor(rows[start : start + BATCH])).numpy(), axis=1)
        first = np.ones_like(features, dtype=bool)  # each feature once per text
        first[:, 1:] = features[:, 1:] != features[:, :-1]
        first &= features != 0
        text_labels = np.broadcast_to(labels[start : start + BATCH, None], features.shape)
        np.add.at(counts, (text_labels[first], features[first]), 1)
    return counts


def feature_weights(weighting: str, counts: np.ndarray, texts: int, min_df: int = 1, alpha: float = 1.0) -> np.ndarray:
    """The per-row weights of ``weighting`` from ``document_frequencies``' counts over ``texts`` texts."""
    seen = counts.sum(axis=0)
    kept = seen >= max(min_df, 1)
    if weighting == "idf":
        weights = np.log((1.0 + texts) / (1.0 + seen)) + 1.0
    elif weighting == "nb":
        if counts.shape[0] != 2:
            raise DataError(f"naive-Bayes weights need two labels, the task has {counts.shape[0]}")
        p, q = alpha + counts[1], alpha + counts[0]
        weights = np.log((p / p[kept].sum()) / (q / q[kept].sum()))
    else:
        raise DataError(f"unknown feature weighting {weighting!r}; use idf or nb")
    weights[~kept] = 0.0
    weights[0] = 0.0
    return weights.astype(np.float32)
