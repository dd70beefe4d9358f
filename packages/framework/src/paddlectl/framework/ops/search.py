"""Order statistics and counting: median/nanmedian/quantile/nanquantile/kthvalue/mode (values are
differentiable, built on ``sort``/``take_along_axis``), unique, searchsorted, bincount, and the
samplers multinomial and bernoulli (drawing from the global generator ``paddle.seed`` resets)."""

from __future__ import annotations

import numpy as np

from ..core.dtype import convert_dtype
from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..core.shapes import normalize_axes, normalize_axis
from ..core.tensor import Tensor
from ..errors import DTypeError, ShapeError
from . import elementwise as ew
from . import random as _random
from . import reduce
from ._util import constant
from .creation import full_like
from .index import take_along_axis
from .index import where as where_
from .shape import flatten, reshape, squeeze, stack, transpose
from .sorting import argsort, sort

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


def _quantile_positions(rows: Tensor, q: float, ignore_nan: bool):
    """Where quantile ``q`` lies in each sorted row: the lower, upper and nearest index (int64
    tensors, broadcast over the row) and the fraction between lower and upper. Counting the
    non-NaN entries is a tensor op, so a traced program recomputes the positions."""
    if not ignore_nan:
        pos = q * (rows.shape[-1] - 1)
        first = rows[..., :1]  # one entry per row, so the indices keep the rows' (symbolic) shape
        lo, hi, near = (full_like(first, int(v), "int64") for v in (np.floor(pos), np.ceil(pos), np.round(pos)))
        return lo, hi, near, float(pos - np.floor(pos))
    count = reduce.sum(ew.UNARY["logical_not"](ew.UNARY["isnan"](rows)).astype("int64"), -1, keepdim=True)
    pos = (ew.BINARY["maximum"](count, 1) - 1).astype("float64") * q
    lo, hi, near = (ew.UNARY[f](pos).astype("int64") for f in ("floor", "ceil", "round"))
    return lo, hi, near, (pos - ew.UNARY["floor"](pos)).astype(rows.dtype)


def _quantile(x, qs, axis, keepdim, interpolation, ignore_nan, op):
    if x.dtype.kind != "f":
        raise DTypeError(f"{op}: x must be a float tensor, got {x.dtype.name}")
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(f"{op}: interpolation must be one of {_INTERPOLATIONS}, got {interpolation!r}")
    rows, keep_shape = _rows_last(x, axis, op)
    if rows.shape[-1] == 0:
        raise ShapeError(f"{op}: the reduced dims of x{x.shape} are empty")
    nan = ew.UNARY["isnan"](rows)
    # A row is NaN where it has a NaN (quantile) or nothing else (nanquantile).
    invalid = reduce.all(nan, -1, keepdim=True) if ignore_nan else reduce.any(nan, -1, keepdim=True)
    sorted_rows = sort(rows, -1)  # NaNs sort last
    outs = []
    for q in qs:
        if not 0 <= q <= 1:
            raise ValueError(f"{op}: q must lie in [0, 1], got {q}")
        lo, hi, near, frac = _quantile_positions(rows, q, ignore_nan)
        v_lo = take_along_axis(sorted_rows, lo, -1)
        v_hi = take_along_axis(sorted_rows, hi, -1)
        if interpolation == "lower":
            v = v_lo
        elif interpolation == "higher":
            v = v_hi
        elif interpolation == "nearest":
            v = take_along_axis(sorted_rows, near, -1)
        elif interpolation == "midpoint":
            v = (v_lo + v_hi) * 0.5
        else:
            v = v_lo + (v_hi - v_lo) * frac
        v = ew.where(invalid, constant(np.nan, x.dtype), v)
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
    if axis is None or isinstance(axis, list | tuple):  # over several axes: the value only, as Paddle
        return _quantile(x, [0.5], axis, keepdim, "lower", ignore_nan, op)[0]
    axis = normalize_axis(op, int(axis), x.ndim)
    if ignore_nan:
        n = reduce.sum(ew.UNARY["logical_not"](ew.UNARY["isnan"](x)).astype("int64"), axis, keepdim=True)
        k = ew.BINARY["floor_divide"](ew.BINARY["maximum"](n, 1) - 1, 2)
    else:
        first = x[(slice(None),) * axis + (slice(0, 1),)]  # one entry per slice, symbolic dims kept
        k = full_like(first, (max(x.shape[axis], 1) - 1) // 2, "int64")
    index = take_along_axis(argsort(x, axis), k, axis)
    values = take_along_axis(x, index, axis)
    if not ignore_nan and x.dtype.kind == "f":  # a slice holding NaN has median NaN, at its first NaN
        nan = ew.UNARY["isnan"](x).astype("int64")
        has_nan = ew.BINARY["greater_than"](reduce.max(nan, axis, keepdim=True), 0)
        index = where_(has_nan, reduce.argmax(nan, axis, keepdim=True), index)
        values = where_(has_nan, take_along_axis(x, index, axis), values)
    if not keepdim:
        values, index = squeeze(values, axis), squeeze(index, axis)
    return values, index


def median(x, axis=None, keepdim=False, mode="avg", name=None, *, out=None):
    """The middle value; for an even count the mean of the two middle values (mode 'avg'), or the
    lower one with its index (mode 'min', which returns ``(values, indices)`` when ``axis`` is given).
    Integer input: 'avg' gives float32 as Paddle's, 'min' keeps the dtype."""
    if x.dtype.kind in "iu" and (mode == "avg" or axis is None):
        out = _median(x.astype("float64" if mode == "min" else "float32"), axis, keepdim, mode, False, "median")
        return out.astype(x.dtype) if mode == "min" else out
    return _median(x, axis, keepdim, mode, False, "median")


def nanmedian(x, axis=None, keepdim=False, mode="avg", name=None):
    return _median(x, axis, keepdim, mode, True, "nanmedian")


def kthvalue(x, k, axis=None, keepdim=False, name=None):
    """The k-th smallest value along ``axis`` (default last) and its index (stable order for ties)."""
    axis = normalize_axis("kthvalue", -1 if axis is None else int(axis), x.ndim)
    n = x.shape[axis] if x.ndim else 1
    if not 1 <= k <= n:
        raise ValueError(f"kthvalue: k must be in [1, {n}] for dim {axis} of x{x.shape}, got {k}")
    index = argsort(x, axis)[(slice(None),) * axis + (slice(k - 1, k),)]
    values = take_along_axis(x, index, axis)
    if not keepdim:
        values, index = squeeze(values, axis), squeeze(index, axis)
    return values, index


def _mode_forward(ctx, x, axis):
    moved = np.moveaxis(x, axis, -1)
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
    return np.moveaxis(index, -1, axis).astype(np.int64)


def _keep_one(x: Spec, axis: int) -> Spec:
    return Spec(tuple(1 if i == axis else d for i, d in enumerate(x.shape)), np.dtype(np.int64))


def _repeats(rng, shape):
    """Small whole numbers as float64, so values repeat (what mode and unique are about)."""
    return rng.integers(0, 3, shape).astype(np.float64)


mode_index_op = OpDef(
    "mode_index",
    _mode_forward,
    None,
    _keep_one,
    OPAQUE,
    samples=lambda rng: [Sample((_repeats(rng, (3, 5)),), {"axis": 1}), Sample((_repeats(rng, (4, 2)),), {"axis": 0})],
)
"""Per slice along ``axis``, the index of the last occurrence of its most frequent value."""


def mode(x, axis=-1, keepdim=False, name=None):
    """The most frequent value along ``axis`` (the smallest among equally frequent ones) and the
    index of its last occurrence, as Paddle picks them."""
    axis = normalize_axis("mode", int(axis), x.ndim)
    index = mode_index_op(x, axis=axis)
    values = take_along_axis(x, index, axis)
    if not keepdim:
        values, index = squeeze(values, axis), squeeze(index, axis)
    return values, index


def _data_dependent(op: str):
    """The shape rule of an op whose output size depends on its input's values: none exists, so a
    traced program refuses it (ConversionError) instead of freezing the example's result."""

    def infer(*specs, **attrs):
        raise ShapeError(
            f"{op}: the output's size depends on the input's values; call {op} outside the traced function"
        )

    return infer


def _unique_forward(ctx, x, axis, dtype, flags):
    out, index, inverse, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=axis)
    extra = (index, inverse.reshape(-1), counts)
    results = (out, *(a.astype(dtype) for a, wanted in zip(extra, flags, strict=True) if wanted))
    return results[0] if len(results) == 1 else results


_DATA_DEPENDENT = {
    "infer": "the output's size depends on the input's values: no shape rule exists",
    "trace": "the output's size depends on the input's values: a traced program refuses the op",
}
unique_op = OpDef(
    "unique",
    _unique_forward,
    None,
    _data_dependent("unique"),
    OPAQUE,
    samples=lambda rng: [
        Sample((_repeats(rng, (6,)),), {"axis": None, "dtype": "int64", "flags": (True, True, True)}),
        Sample((_repeats(rng, (3, 2)),), {"axis": 0, "dtype": "int32", "flags": (False, True, False)}),
    ],
    exempt=_DATA_DEPENDENT,
)


def unique(
    x, return_index=False, return_inverse=False, return_counts=False, axis=None, dtype="int64", sorted=True, name=None
):  # noqa: A002 - Paddle's name
    """Sorted unique values (of the flattened ``x``, or unique slices along ``axis``), and optionally
    the first-occurrence indices, the inverse map and the counts, in that order."""
    if axis is not None:
        axis = normalize_axis("unique", int(axis), x.ndim)
    flags = (bool(return_index), bool(return_inverse), bool(return_counts))
    return unique_op(x, axis=axis, dtype=convert_dtype(dtype).name, flags=flags)


def _unique_consecutive_forward(ctx, x, axis, dtype, flags):
    data = x.reshape(-1) if axis is None else np.moveaxis(x, axis, 0)
    flat = data.reshape(data.shape[0], -1)
    change = np.concatenate([[True], np.any(flat[1:] != flat[:-1], axis=1)]) if len(flat) else np.zeros(0, bool)
    out = data[change]
    results = [np.ascontiguousarray(out if axis is None else np.moveaxis(out, 0, axis))]
    if flags[0]:
        results.append((np.cumsum(change) - 1).astype(dtype))
    if flags[1]:
        results.append(np.diff(np.append(np.flatnonzero(change), len(change))).astype(dtype))
    return results[0] if len(results) == 1 else tuple(results)


unique_consecutive_op = OpDef(
    "unique_consecutive",
    _unique_consecutive_forward,
    None,
    _data_dependent("unique_consecutive"),
    OPAQUE,
    samples=lambda rng: [
        Sample((_repeats(rng, (8,)),), {"axis": None, "dtype": "int64", "flags": (True, True)}),
        Sample((_repeats(rng, (4, 2)),), {"axis": 1, "dtype": "int64", "flags": (False, False)}),
    ],
    exempt=_DATA_DEPENDENT,
)


def unique_consecutive(x, return_inverse=False, return_counts=False, axis=None, dtype="int64", name=None):
    axis = None if axis is None else normalize_axis("unique", int(axis), x.ndim)
    flags = (bool(return_inverse), bool(return_counts))
    return unique_consecutive_op(x, axis=axis, dtype=convert_dtype(dtype).name, flags=flags)


def _searchsorted_forward(ctx, seq, vals, side, dtype):
    if seq.ndim == 1:
        return np.searchsorted(seq, vals, side=side).astype(dtype)
    seq2, vals2 = seq.reshape(-1, seq.shape[-1]), vals.reshape(-1, vals.shape[-1])
    result = np.stack([np.searchsorted(s, v, side=side) for s, v in zip(seq2, vals2, strict=True)])
    return result.reshape(vals.shape).astype(dtype)


searchsorted_op = OpDef(
    "searchsorted",
    _searchsorted_forward,
    None,
    lambda seq, vals, side, dtype: Spec(vals.shape, np.dtype(dtype)),
    OPAQUE,
    samples=lambda rng: [
        Sample((np.sort(rng.standard_normal(5)), rng.standard_normal((2, 3))), {"side": "left", "dtype": "int64"}),
        Sample(
            (np.sort(rng.standard_normal((2, 4))), rng.standard_normal((2, 3))), {"side": "right", "dtype": "int32"}
        ),
    ],
)


def searchsorted(sorted_sequence, values, out_int32=False, right=False, name=None, *, side=None, out=None,
                 sorter=None):  # fmt: skip
    """Insertion points of ``values`` into the last dim of ``sorted_sequence`` (row by row when N-D)."""
    side = side or ("right" if right else "left")
    values = values if isinstance(values, Tensor) else constant(values)
    seq_shape, vals_shape = sorted_sequence.shape, values.shape
    if len(seq_shape) > 1 and seq_shape[:-1] != vals_shape[:-1]:
        raise ShapeError(
            f"searchsorted: the leading dims of sorted_sequence{seq_shape} and values{vals_shape} must match"
        )
    return searchsorted_op(sorted_sequence, values, side=side, dtype="int32" if out_int32 else "int64")


def bucketize(x, sorted_sequence, out_int32=False, right=False, name=None):
    if sorted_sequence.ndim != 1:
        raise ShapeError(f"bucketize: sorted_sequence must be 1-D, got shape {sorted_sequence.shape}")
    return searchsorted(sorted_sequence, x, out_int32, right)


def _bincount_forward(ctx, x, weights, minlength):
    if x.size and x.min() < 0:
        raise ValueError("bincount: x must be non-negative")
    out = np.bincount(x, weights=weights, minlength=minlength)
    return out.astype(np.int64 if weights is None else weights.dtype)


bincount_op = OpDef(
    "bincount",
    _bincount_forward,
    None,
    _data_dependent("bincount"),
    OPAQUE,
    samples=lambda rng: [
        Sample((rng.integers(0, 4, 7), None), {"minlength": 0}),
        Sample((rng.integers(0, 4, 7), rng.standard_normal(7)), {"minlength": 6}),
    ],
    exempt=_DATA_DEPENDENT,
)


def bincount(x, weights=None, minlength=0, name=None):
    if x.ndim != 1 or x.dtype.kind not in "iu":
        raise DTypeError(f"bincount: x must be a 1-D integer tensor, got {x.dtype.name}{x.shape}")
    return bincount_op(x, weights, minlength=int(minlength))


def multinomial(x, num_samples=1, replacement=False, name=None, *, out=None):
    """Category indices drawn per row of (unnormalised) probabilities ``x`` (1-D or 2-D). A sampler,
    not an op (the graph passes would merge or fold a random op), so tracing refuses a traced ``x``.
    Paddle's CPU kernel: per draw, the first category whose normalised cumulative probability (in
    x's precision) reaches a uniform draw; without replacement the drawn category's weight drops to 0."""
    if x.ndim not in (1, 2):
        raise ShapeError(f"multinomial: x must be 1-D or 2-D, got shape {x.shape}")
    probs = x.numpy()
    if np.any(probs < 0) or not np.all(np.isfinite(probs)):
        raise ValueError("multinomial: probabilities must be finite and non-negative")
    rows = probs.reshape(-1, probs.shape[-1]).astype(probs.dtype if probs.dtype == np.float64 else np.float32)
    if not replacement and num_samples > rows.shape[-1]:
        raise ValueError(
            f"multinomial: cannot draw {num_samples} samples without replacement from {rows.shape[-1]} categories"
        )
    if np.any(rows.sum(-1) <= 0):
        raise ValueError("multinomial: every row of probabilities must have a positive sum")
    draws = np.empty((rows.shape[0], int(num_samples)), np.int64)
    for i, row in enumerate(rows):
        weights = row.copy()
        for k in range(int(num_samples)) if not replacement else [None]:
            cumulative = np.cumsum(weights, dtype=weights.dtype)
            cumulative = (cumulative / cumulative[-1]).astype(weights.dtype)
            cumulative[-1] = 1
            u = _random.uniform([1 if k is not None else int(num_samples)], 0.0, 1.0, weights.dtype)
            picked = np.searchsorted(cumulative, u, side="left")
            if k is None:
                draws[i] = picked
            else:
                draws[i, k] = picked[0]
                weights[picked[0]] = 0
    return constant(draws.reshape(x.shape[:-1] + [int(num_samples)]), np.int64)


def bernoulli(x, p=None, name=None):
    """0/1 draws with probability ``x`` (or the constant ``p``), in ``x``'s dtype; a sampler like
    ``multinomial``."""
    prob = x.numpy() if p is None else np.full(x.shape, p)
    if np.any((prob < 0) | (prob > 1)):
        raise ValueError("bernoulli: probabilities must lie in [0, 1]")
    return constant(_random.uniform(x.shape, 0.0, 1.0, x.dtype) < prob, x.dtype)


def _cumulative_extremum(x, axis, dtype, accumulate, op):
    """Running extremum along ``axis`` and, per position, the latest index holding it (Paddle's choice
    for ties); values are gathered at those indices, so their gradient goes to the chosen entries."""
    if axis is None:
        x, axis = flatten(x), 0
    axis = normalize_axis(op, int(axis), x.ndim)
    index = cum_extremum_index_op(x, axis=axis, largest=accumulate == "max")
    return take_along_axis(x, index, axis), index.astype(dtype)


def _cum_extremum_forward(ctx, x, axis, largest):
    running = (np.maximum if largest else np.minimum).accumulate(x, axis=axis)
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    positions = np.arange(x.shape[axis]).reshape(shape)
    return np.maximum.accumulate(np.where(x == running, positions, 0), axis=axis).astype(np.int64)


cum_extremum_index_op = OpDef(
    "cum_extremum_index",
    _cum_extremum_forward,
    None,
    lambda x, axis, largest: Spec(x.shape, np.dtype(np.int64)),
    OPAQUE,
    samples=lambda rng: [
        Sample((_repeats(rng, (3, 5)),), {"axis": 1, "largest": True}),
        Sample((rng.standard_normal((4, 2)),), {"axis": 0, "largest": False}),
    ],
)
"""Per position, the latest index holding the running max (``largest``) or min so far."""


def cummax(x, axis=None, dtype="int64", name=None):
    return _cumulative_extremum(x, axis, dtype, "max", "cummax")


def cummin(x, axis=None, dtype="int64", name=None):
    return _cumulative_extremum(x, axis, dtype, "min", "cummin")


TENSOR_METHODS = [
    "median", "nanmedian", "quantile", "nanquantile", "kthvalue", "mode", "unique", "unique_consecutive",
    "bincount", "multinomial", "bucketize", "cummax", "cummin",
]  # fmt: skip
TOP_LEVEL = TENSOR_METHODS + ["searchsorted", "bernoulli"]
