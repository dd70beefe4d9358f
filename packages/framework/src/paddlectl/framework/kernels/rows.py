"""Row helpers the softmax, cross-entropy and CTC kernels share (inlined into each)."""

from __future__ import annotations

import numpy as np

from . import njit


@njit(cache=True, inline="always")
def row_max(xr):
    """The largest entry of a 1-D row (-inf for an empty one), in the row's dtype."""
    m = xr.dtype.type(-np.inf)
    for j in range(xr.size):
        v = xr[j]
        m = v if v > m else m
    return m
