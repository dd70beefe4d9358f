"""Order statistics and counting: median/nanmedian/quantile/nanquantile/kthvalue/mode (values are
differentiable, built on ``sort``/``take_along_axis``), unique, searchsorted, bincount, and the
samplers multinomial and bernoulli (drawing from the global generator ``paddle.seed`` resets)."""

from __future__ import annotations

import numpy as np

from ..core.dtype import convert_dtype
from ..core.shapes import normalize_axes, normalize_axis
from ..core.tensor import Tensor
from ..errors import DTypeError, ShapeError
from . import elementwise as ew
from . import random as _random
from .index import argsort, sort, take_along_axis
from .shape import reshape, squeeze, stack, transpose

_INTERPOLATIONS = ("linear", "lower", "higher", "nearest", "midpoint")


def _rows_last(x: Tensor, axis, op: str) -> tuple[Tensor, list[int]]:
    """``x`` with the reduced ``axis`` (int, list or None=all) merged into one last dim, and the
    shape the result takes with keepdim (1 on every reduced axis)."""
    axes = normalize_axes(op, axis, x.ndim)
    if axes is None:
        axes = tuple(range(x.ndim))
    if x.ndim == 0:
        return reshape(x, [1]), []
    keep = [i for i in range(x.ndim) if i not in axes]
    moved = transpose(x, keep + list(axes)) if keep + list(axes) != list(range(x.ndim)) else x
    merged = reshape(moved, [x.shape[i] for i in keep] + [-1]) if len(axes) != 1 else moved
    return merged, [1 if i in axes else d for i, d in enumerate(x.shape)]


def _finish(values: Tensor, keep_shape: list[int], keepdim: bool) -> Tensor:
    """Drop the trailing reduced dim, or restore the kept dims as 1s."""
    out = squeeze(values, -1)
    return reshape(out, keep_shape) if keepdim else out


def _quantile(x, qs, axis, keepdim, interpolation, ignore_nan, op):
    if x.dtype.kind != "f":
        raise DTypeError(f"{op}: x must be a float tensor, got {x.dtype.name}")
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(f"{op}: interpolation must be one of {_INTERPOLATIONS}, got {interpolation!r}")
    rows, keep_shape = _rows_last(x, axis, op)
    if rows.shape[-1] == 0:
        raise ShapeError(f"{op}: the reduced dims of x{x.shape} are empty")
    nan = np.isnan(rows._data)
    sorted_rows = sort(rows, -1)  # NaNs sort last
    count = (
        (rows.shape[-1] - np.sum(nan, axis=-1, keepdims=True))
        if ignore_nan
        else np.full(rows.shape[:-1] + [1], rows.shape[-1])
    )
    outs = []
    for q in qs:
        if not 0 <= q <= 1:
            raise ValueError(f"{op}: q must lie in [0, 1], got {q}")
        pos = q * (np.maximum(count, 1) - 1)
        lo, hi = np.floor(pos).astype(np.int64), np.ceil(pos).astype(np.int64)
        v_lo = take_along_axis(sorted_rows, Tensor._wrap(lo), -1)
        v_hi = take_along_axis(sorted_rows, Tensor._wrap(hi), -1)
        if interpolation == "lower":
            v = v_lo
        elif interpolation == "higher":
            v = v_hi
        elif interpolation == "nearest":
            v = take_along_axis(sorted_rows, Tensor._wrap(np.round(pos).astype(np.int64)), -1)
        elif interpolation == "midpoint":
            v = (v_lo + v_hi) * 0.5
        else:
            v = v_lo + (v_hi - v_lo) * Tensor._wrap((pos - lo).astype(x.dtype))
        invalid = (count == 0) if ignore_nan else np.any(nan, axis=-1, keepdims=True)
        if np.any(invalid):
            v = ew.where(Tensor._wrap(invalid), Tensor._wrap(np.asarray(np.nan, x.dtype)), v)
        outs.append(_finish(v, keep_shape, keepdim))
    return outs


def _q_list(q):
    if isinstance(q, Tensor):
        q = q.tolist()
    return (False, [float(q)]) if isinstance(q, int | float) else (True, [float(v) for v in q])


def quantile(x, q, axis=None, keepdim=False, interpolation="linear", name=None, *, out=None):
    many, qs = _q_list(q)
    outs = _quantile(x, qs, axis, keepdim, interpolation, False, "quantile")
    return stack(outs, 0) if many else outs[0]


def nanquantile(x, q, axis=None, keepdim=False, interpolation="linear", name=None):
    many, qs = _q_list(q)
    outs = _quantile(x, qs, axis, keepdim, interpolation, True, "nanquantile")
    return stack(outs, 0) if many else outs[0]


def _median(x, axis, keepdim, mode, ignore_nan, op):
    if mode == "avg":
        return _quantile(x, [0.5], axis, keepdim, "linear", ignore_nan, op)[0]
    if mode != "min":
        raise ValueError(f"{op}: mode must be 'avg' or 'min', got {mode!r}")
    if axis is None:
        values = _quantile(x, [0.5], None, keepdim, "lower", ignore_nan, op)[0]
        return values
    axis = normalize_axis(op, int(axis), x.ndim)
    nan = np.isnan(x._data)
    n = (x.shape[axis] - np.sum(nan, axis=axis, keepdims=True)) if ignore_nan else x.shape[axis]
    k = (np.maximum(n, 1) - 1) // 2
    order = argsort(x, axis)
    index = np.take_along_axis(
        order._data, np.broadcast_to(k, order._data.shape[:axis] + (1,) + order._data.shape[axis + 1 :]), axis
    )
    values = take_along_axis(x, Tensor._wrap(index), axis)
    if not keepdim:
        values, index = squeeze(values, axis), index.squeeze(axis)
    return values, Tensor._wrap(index.astype(np.int64))


def median(x, axis=None, keepdim=False, mode="avg", name=None, *, out=None):
    """The middle value; for an even count the mean of the two middle values (mode 'avg'), or the
    lower one with its index (mode 'min', which returns ``(values, indices)`` when ``axis`` is given)."""
    return _median(x, axis, keepdim, mode, False, "median")


def nanmedian(x, axis=None, keepdim=False, mode="avg", name=None):
    return _median(x, axis, keepdim, mode, True, "nanmedian")


def kthvalue(x, k, axis=None, keepdim=False, name=None):
    """The k-th smallest value along ``axis`` (default last) and its index (stable order for ties)."""
    axis = normalize_axis("kthvalue", -1 if axis is None else int(axis), x.ndim)
    n = x.shape[axis] if x.ndim else 1
    if not 1 <= k <= n:
        raise ValueError(f"kthvalue: k must be in [1, {n}] for dim {axis} of x{x.shape}, got {k}")
    order = argsort(x, axis)._data
    index = np.take(order, [k - 1], axis=axis)
    values = take_along_axis(x, Tensor._wrap(index), axis)
    if not keepdim:
        values, index = squeeze(values, axis), index.squeeze(axis)
    return values, Tensor._wrap(index)


def mode(x, axis=-1, keepdim=False, name=None):
    """The most frequent value along ``axis`` (the smallest among equally frequent ones) and the
    index of its last occurrence, as Paddle picks them."""
    axis = normalize_axis("mode", int(axis), x.ndim)
    moved = np.moveaxis(x._data, axis, -1)
    rows = moved.reshape(-1, moved.shape[-1]) if moved.size else moved.reshape(0, moved.shape[-1])
    n = rows.shape[-1]
    order = np.argsort(rows, axis=-1, kind="stable")
    s = np.take_along_axis(rows, order, -1)
    starts = np.concatenate([np.ones((rows.shape[0], 1), bool), s[:, 1:] != s[:, :-1]], axis=1)
    run_id = np.cumsum(starts, axis=1) - 1
    counts = np.zeros_like(run_id)
    np.add.at(counts, (np.arange(rows.shape[0])[:, None], run_id), 1)
    best_run = np.argmax(counts, axis=1)  # first (smallest value) among the most frequent
    last_pos = n - 1 - np.argmax(np.flip(run_id == best_run[:, None], axis=1), axis=1)
    index = order[np.arange(rows.shape[0]), last_pos].reshape(moved.shape[:-1] + (1,))
    index = np.moveaxis(index, -1, axis)
    values = take_along_axis(x, Tensor._wrap(index), axis)
    if not keepdim:
        values, index = squeeze(values, axis), index.squeeze(axis)
    return values, Tensor._wrap(index.astype(np.int64))


def unique(
    x, return_index=False, return_inverse=False, return_counts=False, axis=None, dtype="int64", sorted=True, name=None
):  # noqa: A002 - Paddle's name
    """Sorted unique values (of the flattened ``x``, or unique slices along ``axis``), and optionally
    the first-occurrence indices, the inverse map and the counts, in that order."""
    data = x._data
    if axis is not None:
        axis = normalize_axis("unique", int(axis), x.ndim)
    out, index, inverse, counts = np.unique(data, return_index=True, return_inverse=True, return_counts=True, axis=axis)
    idx_dtype = convert_dtype(dtype)
    results = [Tensor._wrap(out)]
    if return_index:
        results.append(Tensor._wrap(index.astype(idx_dtype)))
    if return_inverse:
        results.append(Tensor._wrap(inverse.reshape(-1).astype(idx_dtype)))
    if return_counts:
        results.append(Tensor._wrap(counts.astype(idx_dtype)))
    return results[0] if len(results) == 1 else tuple(results)


def unique_consecutive(x, return_inverse=False, return_counts=False, axis=None, dtype="int64", name=None):
    data = x._data.reshape(-1) if axis is None else np.moveaxis(x._data, normalize_axis("unique", int(axis), x.ndim), 0)
    flat = data.reshape(data.shape[0], -1)
    change = np.concatenate([[True], np.any(flat[1:] != flat[:-1], axis=1)]) if len(flat) else np.zeros(0, bool)
    out = data[change]
    if axis is not None:
        out = np.moveaxis(out, 0, int(axis))
    results = [Tensor._wrap(np.ascontiguousarray(out))]
    if return_inverse:
        results.append(Tensor._wrap((np.cumsum(change) - 1).astype(convert_dtype(dtype))))
    if return_counts:
        starts = np.flatnonzero(change)
        results.append(Tensor._wrap(np.diff(np.append(starts, len(change))).astype(convert_dtype(dtype))))
    return results[0] if len(results) == 1 else tuple(results)


def searchsorted(sorted_sequence, values, out_int32=False, right=False, name=None, *, side=None, out=None,
                 sorter=None):  # fmt: skip
    """Insertion points of ``values`` into the last dim of ``sorted_sequence`` (row by row when N-D)."""
    side = side or ("right" if right else "left")
    seq, vals = sorted_sequence._data, values._data if isinstance(values, Tensor) else np.asarray(values)
    dtype = np.int32 if out_int32 else np.int64
    if seq.ndim == 1:
        return Tensor._wrap(np.searchsorted(seq, vals, side=side).astype(dtype))
    if seq.shape[:-1] != vals.shape[:-1]:
        raise ShapeError(
            f"searchsorted: the leading dims of sorted_sequence{list(seq.shape)} and values{list(vals.shape)} must match"
        )
    seq2, vals2 = seq.reshape(-1, seq.shape[-1]), vals.reshape(-1, vals.shape[-1])
    result = np.stack([np.searchsorted(s, v, side=side) for s, v in zip(seq2, vals2, strict=True)])
    return Tensor._wrap(result.reshape(vals.shape).astype(dtype))


def bucketize(x, sorted_sequence, out_int32=False, right=False, name=None):
    if sorted_sequence.ndim != 1:
        raise ShapeError(f"bucketize: sorted_sequence must be 1-D, got shape {sorted_sequence.shape}")
    return searchsorted(sorted_sequence, x, out_int32, right)


def bincount(x, weights=None, minlength=0, name=None):
    if x.ndim != 1 or x.dtype.kind not in "iu":
        raise DTypeError(f"bincount: x must be a 1-D integer tensor, got {x.dtype.name}{x.shape}")
    if x.size and x._data.min() < 0:
        raise ValueError("bincount: x must be non-negative")
    w = None if weights is None else weights._data
    out = np.bincount(x._data, weights=w, minlength=int(minlength))
    return Tensor._wrap(out.astype(np.int64 if w is None else w.dtype))


def multinomial(x, num_samples=1, replacement=False, name=None, *, out=None):
    """Category indices drawn per row of (unnormalised) probabilities ``x`` (1-D or 2-D)."""
    probs = x._data.astype(np.float64)
    if x.ndim not in (1, 2):
        raise ShapeError(f"multinomial: x must be 1-D or 2-D, got shape {x.shape}")
    if np.any(probs < 0) or not np.all(np.isfinite(probs)):
        raise ValueError("multinomial: probabilities must be finite and non-negative")
    rows = probs.reshape(-1, probs.shape[-1])
    if not replacement and num_samples > rows.shape[-1]:
        raise ValueError(
            f"multinomial: cannot draw {num_samples} samples without replacement from {rows.shape[-1]} categories"
        )
    rng = _random.generator()
    draws = []
    for row in rows:
        total = row.sum()
        if total <= 0:
            raise ValueError("multinomial: every row of probabilities must have a positive sum")
        draws.append(rng.choice(row.shape[0], size=int(num_samples), replace=bool(replacement), p=row / total))
    return Tensor._wrap(np.stack(draws).reshape(x.shape[:-1] + [int(num_samples)]).astype(np.int64))


def bernoulli(x, p=None, name=None):
    """0/1 draws with probability ``x`` (or the constant ``p``), in ``x``'s dtype."""
    prob = x._data if p is None else np.full(x._data.shape, p)
    if np.any((prob < 0) | (prob > 1)):
        raise ValueError("bernoulli: probabilities must lie in [0, 1]")
    return Tensor._wrap((_random.generator().random(x._data.shape) < prob).astype(x.dtype))


def _cumulative_extremum(x, axis, dtype, accumulate, op):
    """Running extremum along ``axis`` and, per position, the latest index holding it (Paddle's choice
    for ties); values are gathered at those indices, so their gradient goes to the chosen entries."""
    if axis is None:
        from .shape import flatten

        x, axis = flatten(x), 0
    axis = normalize_axis(op, int(axis), x.ndim)
    data = x._data
    running = accumulate(data, axis=axis)
    shape = [1] * data.ndim
    shape[axis] = data.shape[axis]
    positions = np.arange(data.shape[axis]).reshape(shape)
    index = np.maximum.accumulate(np.where(data == running, positions, 0), axis=axis)
    return take_along_axis(x, Tensor._wrap(index), axis), Tensor._wrap(index.astype(convert_dtype(dtype)))


def cummax(x, axis=None, dtype="int64", name=None):
    return _cumulative_extremum(x, axis, dtype, np.maximum.accumulate, "cummax")


def cummin(x, axis=None, dtype="int64", name=None):
    return _cumulative_extremum(x, axis, dtype, np.minimum.accumulate, "cummin")


TENSOR_METHODS = [
    "median", "nanmedian", "quantile", "nanquantile", "kthvalue", "mode", "unique", "unique_consecutive",
    "bincount", "multinomial", "bucketize", "cummax", "cummin",
]  # fmt: skip
TOP_LEVEL = TENSOR_METHODS + ["searchsorted", "bernoulli"]
