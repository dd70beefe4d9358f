"""The floor a CTR model must clear: scikit-learn's LogisticRegression on one-hot features.

It sees exactly what the model sees: the same split of ``Train.dataset`` and the same encoder
(vocabulary rows one-hot encoded, dense columns standardised), so the gap is the model's, not the
data's. ``benchmarks/rec.py`` reports it beside DeepFM and recbole.
"""

from __future__ import annotations

import numpy as np


def logistic_floor(config: dict, max_iter: int = 1000) -> dict[str, float]:
    """``{"auc", "logloss", "train_rows", "eval_rows"}`` of a one-hot logistic regression on the
    evaluation split of a ``rec.ctr`` config."""
    from scipy import sparse
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import log_loss, roc_auc_score
    from sklearn.preprocessing import OneHotEncoder

    from .ctr.sources import prepare

    data = prepare(config)
    slots = len(data.encoder.spec.sparse)
    (x_train, _), (x_eval, _) = data.encoder.encode(data.train), data.encoder.encode(data.eval)
    y_train, y_eval = data.encoder.labels(data.train).ravel(), data.encoder.labels(data.eval).ravel()
    onehot = OneHotEncoder(handle_unknown="ignore").fit(x_train[:, :slots])

    def design(x: np.ndarray):
        return sparse.hstack([onehot.transform(x[:, :slots]), sparse.csr_matrix(x[:, slots:])]).tocsr()

    model = LogisticRegression(max_iter=max_iter).fit(design(x_train), y_train)
    p = model.predict_proba(design(x_eval))[:, 1]
    return {
        "auc": float(roc_auc_score(y_eval, p)),
        "logloss": float(log_loss(y_eval, p)),
        "train_rows": len(y_train),
        "eval_rows": len(y_eval),
    }
