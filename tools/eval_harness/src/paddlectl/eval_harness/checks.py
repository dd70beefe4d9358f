"""Format checks on results: a NaN, an infinity or an out-of-range score is an error, not a number.

A model that returns garbage quickly must not look fast and accurate; these checks turn bad
outputs into counted errors with a message saying which input and what was wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def nonfinite_rows(outputs: Sequence[np.ndarray], batch: int) -> set[int]:
    """Indices of batch rows whose outputs hold NaN or Inf (rows = leading axis of each output)."""
    bad: set[int] = set()
    for out in outputs:
        arr = np.asarray(out)
        if not np.issubdtype(arr.dtype, np.floating) or arr.size == 0:
            continue
        finite = np.isfinite(arr.reshape(arr.shape[0], -1)) if arr.ndim and arr.shape[0] == batch else None
        if finite is None:
            if not np.isfinite(arr).all():
                bad.update(range(batch))
            continue
        bad.update(int(i) for i in np.flatnonzero(~finite.all(axis=1)))
    return bad


def batch_problems(task: Any, outputs: Sequence[np.ndarray], predictions: Sequence[Any], batch: int) -> dict[int, str]:
    """Row index -> what is wrong with that input's result (non-finite output, task check, count)."""
    problems = {i: "output holds NaN or Inf" for i in sorted(nonfinite_rows(outputs, batch))}
    if len(predictions) != batch:
        return {i: f"post-processing returned {len(predictions)} predictions for {batch} inputs" for i in range(batch)}
    for i, prediction in enumerate(predictions):
        if i in problems:
            continue
        message = task.check_prediction(prediction)
        if message:
            problems[i] = message
    return problems
