"""Row helpers the softmax, cross-entropy and CTC kernels share (inlined into each)."""

from __future__ import annotations

import numpy as np

from . import njit

_LANES = 16
"""Running maxima ``row_max`` keeps: one vector's worth."""


@njit(cache=True, inline="always")
def row_max(xr):
    """The largest entry of a 1-D row (-inf for an empty one; NaN entries skipped), in the row's dtype.

    One running maximum per lane of ``_LANES`` consecutive entries, combined at the end: LLVM does
    not vectorise a single ``v if v > m else m`` chain (it would need fast-math's no-NaN flag), and
    the per-lane form it does (PP-OCRv4 rec's [240, 6625] softmax: its max pass 1.6 -> 0.34 ms)."""
    n = xr.size
    lanes = np.full(_LANES, xr.dtype.type(-np.inf))
    j = 0
    while j + _LANES <= n:
        for lane in range(_LANES):
            v = xr[j + lane]
            lanes[lane] = v if v > lanes[lane] else lanes[lane]
        j += _LANES
    m = xr.dtype.type(-np.inf)
    for lane in range(_LANES):
        m = lanes[lane] if lanes[lane] > m else m
    for q in range(j, n):
        v = xr[q]
        m = v if v > m else m
    return m
