"""``paddle.histogram``, ``histogram_bin_edges`` and ``histogramdd``: counts in equal-width bins
(NumPy's kernels, Paddle's range rule: ``min == max == 0`` takes the data's own range). Records
without gradients (counts are piecewise constant in the data); a traced program recomputes them."""

from __future__ import annotations

import numpy as np

from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..errors import ConfigError, ShapeError


def _range(x: np.ndarray, lo: float, hi: float) -> tuple[float, float]:
    if lo == 0 and hi == 0 and x.size:
        lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    return lo, hi


def _histogram_forward(ctx, x, weight=None, bins=100, lo=0.0, hi=0.0, density=False):
    lo, hi = _range(x, lo, hi)
    counts, _ = np.histogram(
        x.reshape(-1), bins, (lo, hi), weights=None if weight is None else weight.reshape(-1), density=density
    )
    if weight is None and not density:
        return counts.astype(np.int64)
    return counts.astype(np.float32)  # Paddle's float32 whatever the input's dtype


def _histogram_infer(x: Spec, weight=None, bins=100, lo=0.0, hi=0.0, density=False) -> Spec:
    counted = weight is None and not density
    return Spec((bins,), np.dtype(np.int64 if counted else np.float32))


histogram_op = OpDef(
    "histogram",
    _histogram_forward,
    None,
    _histogram_infer,
    OPAQUE,
    samples=lambda rng: [
        Sample((rng.standard_normal(20), None), {"bins": 5}),
        Sample((rng.standard_normal(20), rng.uniform(0, 1, 20)), {"bins": 4, "lo": -1.0, "hi": 1.0, "density": True}),
    ],
)


def _edges_forward(ctx, x, bins=100, lo=0.0, hi=0.0):
    lo, hi = _range(x, lo, hi)
    return np.linspace(lo, hi, bins + 1).astype(np.float32)


bin_edges_op = OpDef(
    "histogram_bin_edges",
    _edges_forward,
    None,
    lambda x, bins=100, lo=0.0, hi=0.0: Spec((bins + 1,), np.dtype(np.float32)),
    OPAQUE,
    samples=lambda rng: [Sample((rng.standard_normal(20),), {"bins": 5})],
)


def _check_bins(op: str, bins, lo, hi) -> None:
    if not isinstance(bins, int | np.integer) or bins < 1:
        raise ConfigError(f"{op}: bins must be a positive int, got {bins!r}")
    if lo > hi:
        raise ConfigError(f"{op}: min ({lo}) must not exceed max ({hi})")


def histogram(input, bins=100, min=0.0, max=0.0, weight=None, density=False, name=None):  # noqa: A002
    """``paddle.histogram``: counts (int64; float with ``weight`` or ``density``) of ``input`` in
    ``bins`` equal bins over ``[min, max]`` (the data's range when both are 0)."""
    _check_bins("histogram", bins, min, max)
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        raise ShapeError(f"histogram: weight{weight.shape} must have input's shape {input.shape}")
    return histogram_op(input, weight, bins=int(bins), lo=float(min), hi=float(max), density=bool(density))


def histogram_bin_edges(input, bins=100, min=0.0, max=0.0, name=None):  # noqa: A002
    """``paddle.histogram_bin_edges``: the ``bins + 1`` float32 edges ``histogram`` uses."""
    _check_bins("histogram_bin_edges", bins, min, max)
    return bin_edges_op(input, bins=int(bins), lo=float(min), hi=float(max))


def _histogramdd_forward(ctx, x, weights=None, bins=(), ranges=None, density=False):
    pairs = None if ranges is None else list(zip(ranges[::2], ranges[1::2], strict=True))
    points = x.reshape(-1, x.shape[-1])
    w = None if weights is None else weights.reshape(-1)
    counts, edges = np.histogramdd(points, list(bins), range=pairs, density=density, weights=w)
    return (counts.astype(x.dtype), *(e.astype(x.dtype) for e in edges))


def _histogramdd_infer(x: Spec, weights=None, bins=(), ranges=None, density=False):
    return (Spec(tuple(bins), x.dtype), *(Spec((b + 1,), x.dtype) for b in bins))


histogramdd_op = OpDef(
    "histogramdd",
    _histogramdd_forward,
    None,
    _histogramdd_infer,
    OPAQUE,
    samples=lambda rng: [
        Sample((rng.standard_normal((10, 2)), None), {"bins": (3, 4)}),
        Sample(
            (rng.uniform(0, 1, (10, 2)), rng.uniform(0, 1, 10)),
            {"bins": (2, 2), "ranges": (0.0, 1.0, 0.0, 1.0), "density": True},
        ),
    ],
)


def histogramdd(x, bins=10, ranges=None, density=False, weights=None, name=None):
    """``paddle.histogramdd``: ``(hist, edges)`` of the points ``x[..., D]`` in a D-dim grid of bins."""
    if x.ndim < 2:
        raise ShapeError(f"histogramdd: x must be [..., D] points, got x{x.shape}")
    d = x.shape[-1]
    bins = (bins,) * d if isinstance(bins, int | np.integer) else tuple(int(b) for b in bins)
    if len(bins) != d or min(bins) < 1:
        raise ConfigError(f"histogramdd: bins must be a positive int or {d} positive ints, got {bins}")
    if ranges is not None and len(ranges) != 2 * d:
        raise ConfigError(f"histogramdd: ranges must hold 2 * {d} numbers (min, max per dim), got {len(ranges)}")
    ranges = None if ranges is None else tuple(float(r) for r in ranges)
    out = histogramdd_op(x, weights, bins=bins, ranges=ranges, density=bool(density))
    return out[0], list(out[1:])


TENSOR_METHODS = ["histogram", "histogram_bin_edges", "histogramdd"]
TOP_LEVEL = TENSOR_METHODS
