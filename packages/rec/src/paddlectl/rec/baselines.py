"""The floor a CTR model must clear: scikit-learn's LogisticRegression on one-hot features.

It sees exactly what the model sees: the same split of ``Train.dataset`` and the same encoder
(vocabulary rows one-hot encoded, a multi-valued feature's rows multi-hot with the model's pooling
weights: ``1 / values`` under mean pooling, so a film's genres or a user's history count as much as
one id; dense columns standardised), so the gap is the model's, not the data's. What it cannot
have is a product of two features (history item x target item): that is the model's to show.
``benchmarks/rec.py`` reports it beside DeepFM and recbole.
"""

from __future__ import annotations

import numpy as np


def _multi_hot(ids: np.ndarray, size: int, mean: bool):
    """``[N, max_len]`` rows (``PAD`` < 0 unused) -> ``[N, size]`` CSR, each row's weights summing
    to 1 under mean pooling (0 for a row with no values), else 1 per value."""
    from scipy import sparse

    filled = ids >= 0
    counts = filled.sum(axis=1, keepdims=True)
    weights = np.broadcast_to(1.0 / np.maximum(counts, 1) if mean else np.ones_like(counts, float), ids.shape)
    rows = np.broadcast_to(np.arange(len(ids))[:, None], ids.shape)
    return sparse.csr_matrix((weights[filled], (rows[filled], ids[filled])), shape=(len(ids), size))


def logistic_floor(config: dict, max_iter: int = 1000, predictions: bool = False) -> dict:
    """``{"auc", "logloss", "train_rows", "eval_rows"}`` of a one-hot (and multi-hot) logistic
    regression on the evaluation split of a ``rec.ctr`` config; with ``predictions`` also its
    probabilities per evaluation row (for a paired comparison with a model's)."""
    from scipy import sparse
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import log_loss, roc_auc_score
    from sklearn.preprocessing import OneHotEncoder

    from .ctr.sources import prepare

    data = prepare(config)
    encoder = data.encoder
    starts = np.r_[0, np.cumsum(encoder.spec.field_lengths)]
    single = [int(starts[i]) for i, f in enumerate(encoder.spec.sparse) if not f.max_len]
    (x_train, _), (x_eval, _) = encoder.encode(data.train), encoder.encode(data.eval)
    y_train, y_eval = encoder.labels(data.train).ravel(), encoder.labels(data.eval).ravel()
    onehot = OneHotEncoder(handle_unknown="ignore").fit(x_train[:, single]) if single else None

    def design(x: np.ndarray):
        multi = [
            _multi_hot(x[:, a:b].astype(np.int64), size, f.pooling == "mean")
            for a, b, size, f in zip(starts[:-1], starts[1:], encoder.field_sizes, encoder.spec.sparse, strict=True)
            if f.max_len
        ]
        dense = sparse.csr_matrix(x[:, starts[-1] :])
        one = [onehot.transform(x[:, single])] if onehot else []
        return sparse.hstack([*one, *multi, dense]).tocsr()

    model = LogisticRegression(max_iter=max_iter).fit(design(x_train), y_train)
    p = model.predict_proba(design(x_eval))[:, 1]
    result = {
        "auc": float(roc_auc_score(y_eval, p)),
        "logloss": float(log_loss(y_eval, p)),
        "train_rows": len(y_train),
        "eval_rows": len(y_eval),
    }
    return {**result, "predictions": p} if predictions else result
