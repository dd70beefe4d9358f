"""Reductions: sum, mean, extrema, products, statistics, logsumexp, NaN-ignoring sums and means,
counts, cumulative sums. Their vjps broadcast the output gradient back with ops, so they
differentiate again."""

from __future__ import annotations

import builtins

import numpy as np

from ..core.op import OPAQUE, REDUCE, OpDef, Sample, Spec
from ..core.shapes import normalize_axes, normalize_axis
from ..core.tensor import Tensor
from ..errors import ShapeError
from . import elementwise as ew
from ._util import constant, refuse_complex
from .elementwise import exp, sqrt
from .shape import reshape


def _reduced_shape(shape, axes, keepdim):
    axes = range(len(shape)) if axes is None else axes
    if keepdim:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def reduce_infer(dtype_rule=None):
    def infer(x: Spec, axis=None, keepdim=False, **attrs) -> Spec:
        axes = normalize_axes("reduce", axis, len(x.shape))
        dtype = dtype_rule(x.dtype) if dtype_rule else x.dtype
        return Spec(_reduced_shape(x.shape, axes, keepdim), dtype)

    return infer


def expand_back(g: Tensor, shape, axes, keepdim: bool) -> Tensor:
    """A reduced gradient with its reduced axes back (size 1), ready to broadcast over the input."""
    return g if keepdim else reshape(g, _reduced_shape(tuple(shape), axes, True))


def _spread_forward(ctx, g, x, axis=None, keepdim=False, ddof=None):
    axes = normalize_axes("reduce", axis, x.ndim)
    out = np.broadcast_to(g.reshape(_reduced_shape(x.shape, axes, True)), x.shape)
    if ddof is None:
        return np.array(out)
    return out / g.dtype.type(builtins.max(_count(x.shape, axes) - ddof, 1))


def _spread_vjp(ctx, gg):
    attrs = ctx.attrs
    axis, keepdim, ddof = attrs.get("axis"), attrs.get("keepdim", False), attrs.get("ddof")
    if ddof is None:
        return sum_op(gg, axis=axis, keepdim=keepdim), None
    if ddof == 0:
        return mean_op(gg, axis=axis, keepdim=keepdim), None
    count = _count(ctx.input(1).shape, normalize_axes("reduce", axis, ctx.input(1).ndim))
    return sum_op(gg, axis=axis, keepdim=keepdim) / float(builtins.max(count - ddof, 1)), None


spread_op = OpDef(
    "spread",
    _spread_forward,
    _spread_vjp,
    lambda g, x, **attrs: Spec(tuple(x.shape), g.dtype),
    OPAQUE,
    samples=lambda rng: [
        Sample((rng.standard_normal((1, 1)), rng.standard_normal((3, 4))), {"keepdim": True}),
        Sample((rng.standard_normal(4), rng.standard_normal((3, 4))), {"axis": (0,), "ddof": 0}),
        Sample((rng.standard_normal((3, 1)), rng.standard_normal((3, 4))), {"axis": (1,), "keepdim": True, "ddof": 1}),
    ],
)
"""A reduction's output gradient ``g`` broadcast over its input ``x`` (read for its shape only): the
vjp of ``sum``; with ``ddof``, divided by the reduced count less ``ddof`` (``mean``: 0, ``var``). One
op, so a traced backward takes the sizes from ``x`` as it runs rather than from the trace."""


def keepdim_output(ctx) -> Tensor:
    """The op's output with its reduced axes kept (size 1), graph-connected."""
    return expand_back(ctx.output(0), ctx.input(0).shape, ctx.attrs.get("axis"), ctx.attrs.get("keepdim", False))


def sum_dtype(dtype):
    return np.dtype("int64") if dtype.kind in "biu" else dtype


def _sum_forward(ctx, x, axis=None, keepdim=False, dtype=None):
    out_dtype = np.dtype(dtype) if dtype else sum_dtype(x.dtype)
    axes = normalize_axes("sum", axis, x.ndim) if axis is not None else None
    if axes and out_dtype == x.dtype and _outer_sum_applies(x, axes):
        out = _outer_sum(x, axes)
        return out.reshape(_reduced_shape(x.shape, axes, True)) if keepdim else out
    return np.asarray(np.sum(x, axis=axis, keepdims=keepdim, dtype=out_dtype))


def _outer_sum_applies(x: np.ndarray, axes) -> bool:
    """Whether ``x``'s rows after the last reduced axis are contiguous runs of several elements:
    NumPy then adds the reduced slices one after another (its pairwise summation only runs along
    a contiguous reduced axis), the order ``_outer_sum`` keeps."""
    return (
        x.dtype.kind == "f"
        and x.dtype.itemsize >= 4
        and 0 < x.size
        and x.ndim <= 26  # one einsum letter per axis
        and x.flags.c_contiguous
        and int(np.prod(x.shape[axes[-1] + 1 :])) > 1  # axes: sorted
    )


def _outer_sum(x: np.ndarray, axes) -> np.ndarray:
    """``np.sum(x, axes)``, bit for bit, through ``einsum``, which walks such slices 2-6x faster than
    the ufunc reduction's per-element inner loops (a DeepFM field sum over ``[512, 9, 16]``'s axis 1:
    190 -> 30 us)."""
    letters = "".join(chr(ord("a") + i) for i in range(x.ndim))
    kept = "".join(c for i, c in enumerate(letters) if i not in axes)
    return np.asarray(np.einsum(f"{letters}->{kept}", x))


_SUM = ("0.0", "{acc} + {v}", "{acc}")
"""A reduce op's ``expr``: (initial accumulator, combine(acc, v), finish(acc, count)) for the fused
loops ``kernels/codegen`` generates; sums accumulate in float64, a NaN wins max/min as in NumPy."""


def _sum_vjp(ctx, g):
    return spread_op(g, ctx.input(0), axis=ctx.attrs.get("axis"), keepdim=ctx.attrs.get("keepdim", False))


sum_op = OpDef("sum", _sum_forward, _sum_vjp, reduce_infer(sum_dtype), REDUCE, expr=_SUM)


def _count(shape, axes) -> int:
    """How many elements a reduction over ``axes`` (all when None) averages, at least 1."""
    return builtins.max(int(np.prod([shape[a] for a in axes] if axes is not None else shape)), 1)


def _mean_forward(ctx, x, axis=None, keepdim=False):
    return np.asarray(np.mean(x, axis=axis, keepdims=keepdim, dtype=x.dtype))


def _mean_vjp(ctx, g):
    axis, keepdim = ctx.attrs.get("axis"), ctx.attrs.get("keepdim", False)
    return spread_op(g, ctx.input(0), axis=axis, keepdim=keepdim, ddof=0)


mean_op = OpDef("mean", _mean_forward, _mean_vjp, reduce_infer(), REDUCE, expr=("0.0", "{acc} + {v}", "{acc} / {n}"))


def _refuse_empty(name: str, x: np.ndarray, axes) -> None:
    """An extremum (or its index) of no elements does not exist: Paddle refuses max/min so, and
    returns uninitialised memory for amax/argmax; every one of them is refused here."""
    sizes = x.shape if axes is None else [x.shape[a] for a in np.atleast_1d(axes)]
    if 0 in sizes:
        where = "all axes" if axes is None else f"axis {', '.join(str(a) for a in np.atleast_1d(axes))}"
        raise ShapeError(
            f"{name}: cannot reduce an input of shape {list(x.shape)} over {where}, which has no elements; "
            "check that the input is not empty, or reduce over non-empty axes"
        )


def _extremum(name: str, fn, keep: str):
    """max/min; ``keep`` is the comparison under which the accumulator stays (NaN stays too)."""

    def forward(ctx, x, axis=None, keepdim=False):
        _refuse_empty(name, x, axis)
        refuse_complex(name, x)
        return np.asarray(fn(x, axis=axis, keepdims=keepdim))

    def vjp(ctx, g):
        # Paddle gives the full gradient to every element equal to the extremum; the mask is an op,
        # so a traced gradient finds the extremum of the data it runs on.
        x = ctx.input(0)
        g = expand_back(g, x.shape, ctx.attrs.get("axis"), ctx.attrs.get("keepdim", False))
        return g * (x == keepdim_output(ctx)).astype(g.dtype)

    expr = (
        "-math.inf" if name == "max" else "math.inf",
        f"{{acc}} if {{acc}} != {{acc}} or {{acc}} {keep} {{v}} else {{v}}",
        "{acc}",
    )
    return OpDef(name, forward, vjp, reduce_infer(), REDUCE, expr=expr)


max_op = _extremum("max", np.max, ">=")
min_op = _extremum("min", np.min, "<=")


def _var_forward(ctx, x, axis=None, keepdim=False, unbiased=True):
    mean = np.mean(x, axis=axis, keepdims=True)
    centered = x - mean
    out = np.asarray(
        np.sum(centered * centered, axis=axis, keepdims=keepdim)
        / x.dtype.type(_var_denominator(x.shape, axis, unbiased))
    )
    return out.astype(x.dtype, copy=False)


def _var_denominator(shape, axis, unbiased) -> int:
    return builtins.max(_count(shape, axis) - (1 if unbiased else 0), 1)


def _var_vjp(ctx, g):
    x = ctx.input(0)
    axis = ctx.attrs.get("axis")
    centered = x - mean_op(x, axis=axis, keepdim=True)
    ddof = 1 if ctx.attrs.get("unbiased", True) and _count(x.shape, axis) > 1 else 0
    return spread_op(g * 2.0, x, axis=axis, keepdim=ctx.attrs.get("keepdim", False), ddof=ddof) * centered


UNFUSED = {"compile": "no accumulator rule (expr) for the fused loops: only sum, mean, max and min have one"}
"""The exemption of the reductions the compiler leaves as they are."""

var_op = OpDef("var", _var_forward, _var_vjp, reduce_infer(), REDUCE, exempt=UNFUSED)


def _logsumexp_forward(ctx, x, axis=None, keepdim=False):
    """Over no elements the sum is 0 and its log -inf, as Paddle gives."""
    m = np.max(x, axis=axis, keepdims=True, initial=-np.inf)
    m = np.where(np.isfinite(m), m, 0)
    s = np.sum(np.exp(x - m), axis=axis, keepdims=True)
    with np.errstate(divide="ignore"):
        out_k = np.log(s) + m
    out = out_k if keepdim else (out_k.reshape(()) if axis is None else np.squeeze(out_k, axis=axis))
    return out.astype(x.dtype, copy=False)


def _logsumexp_vjp(ctx, g):
    """The gradient is the softmax of x over the reduced axes: ``exp(x - logsumexp(x))``."""
    x = ctx.input(0)
    g = expand_back(g, x.shape, ctx.attrs.get("axis"), ctx.attrs.get("keepdim", False))
    return g * exp(x - keepdim_output(ctx))


logsumexp_op = OpDef("logsumexp", _logsumexp_forward, _logsumexp_vjp, reduce_infer(), REDUCE, exempt=UNFUSED)


def _arg_infer(x: Spec, axis=None, keepdim=False, dtype="int64") -> Spec:
    axes = None if axis is None else (axis,)
    return Spec(_reduced_shape(x.shape, axes, keepdim), np.dtype(dtype))


def _argext(name: str, fn):
    def forward(ctx, x, axis=None, keepdim=False, dtype="int64"):
        _refuse_empty(name, x, axis)
        refuse_complex(name, x)
        if axis is None:
            out = np.asarray(fn(x.reshape(-1)))
            return out.reshape((1,) * x.ndim if keepdim else ()).astype(dtype)
        return fn(x, axis=axis, keepdims=keepdim).astype(dtype)

    return OpDef(name, forward, None, _arg_infer, REDUCE)


argmax_op = _argext("argmax", np.argmax)
argmin_op = _argext("argmin", np.argmin)


all_op = OpDef(
    "all", lambda ctx, x, axis=None, keepdim=False: np.asarray(np.all(x, axis=axis, keepdims=keepdim)),
    None, reduce_infer(lambda d: np.dtype(bool)), REDUCE,
)  # fmt: skip
any_op = OpDef(
    "any", lambda ctx, x, axis=None, keepdim=False: np.asarray(np.any(x, axis=axis, keepdims=keepdim)),
    None, reduce_infer(lambda d: np.dtype(bool)), REDUCE,
)  # fmt: skip

# ----- public functions ----------------------------------------------------------------------


def reduce_axes(name: str, x: Tensor, axis):
    if isinstance(axis, Tensor):
        axis = axis.tolist()
    return normalize_axes(name, axis, x.ndim)


def sum(x, axis=None, dtype=None, keepdim=False, name=None):  # noqa: A001
    from ..core.dtype import convert_dtype

    return sum_op(
        x, axis=reduce_axes("sum", x, axis), keepdim=keepdim, dtype=convert_dtype(dtype).name if dtype else None
    )


def mean(x, axis=None, keepdim=False, name=None, *, dtype=None):
    """The mean over ``axis``; ``dtype`` casts ``x`` first, so the sum accumulates in it (Paddle 3.3's keyword)."""
    from ..core.dtype import convert_dtype

    if dtype is not None and convert_dtype(dtype) != x.dtype:
        x = ew.cast(x, convert_dtype(dtype))
    return mean_op(x, axis=reduce_axes("mean", x, axis), keepdim=keepdim)


def max(x, axis=None, keepdim=False, name=None):  # noqa: A001
    return max_op(x, axis=reduce_axes("max", x, axis), keepdim=keepdim)


def min(x, axis=None, keepdim=False, name=None):  # noqa: A001
    return min_op(x, axis=reduce_axes("min", x, axis), keepdim=keepdim)


amax, amin = max, min


def var(x, axis=None, unbiased=True, keepdim=False, name=None):
    return var_op(x, axis=reduce_axes("var", x, axis), keepdim=keepdim, unbiased=unbiased)


def std(x, axis=None, unbiased=True, keepdim=False, name=None):
    return sqrt(var(x, axis, unbiased, keepdim))


def logsumexp(x, axis=None, keepdim=False, name=None):
    return logsumexp_op(x, axis=reduce_axes("logsumexp", x, axis), keepdim=keepdim)


def _nan_zeroed(x):
    return ew.where(ew.UNARY["isnan"](x), constant(0, x.dtype), x)


def nansum(x, axis=None, dtype=None, keepdim=False, name=None):
    return sum(_nan_zeroed(x) if x.dtype.kind == "f" else x, axis, dtype, keepdim)


def nanmean(x, axis=None, keepdim=False, name=None):
    count = sum(ew.logical_not(ew.UNARY["isnan"](x)).astype(x.dtype), axis, keepdim=keepdim)
    return nansum(x, axis, keepdim=keepdim) / count


def count_nonzero(x, axis=None, keepdim=False, name=None):
    return sum((x != 0).astype("int64"), axis, keepdim=keepdim)


def argmax(x, axis=None, keepdim=False, dtype="int64", name=None):
    if axis is not None:
        axis = normalize_axis("argmax", int(axis), x.ndim)
    return argmax_op(x, axis=axis, keepdim=keepdim, dtype=str(np.dtype(dtype)))


def argmin(x, axis=None, keepdim=False, dtype="int64", name=None):
    if axis is not None:
        axis = normalize_axis("argmin", int(axis), x.ndim)
    return argmin_op(x, axis=axis, keepdim=keepdim, dtype=str(np.dtype(dtype)))


def all(x, axis=None, keepdim=False, name=None):  # noqa: A001
    return all_op(x, axis=reduce_axes("all", x, axis), keepdim=keepdim)


def any(x, axis=None, keepdim=False, name=None):  # noqa: A001
    return any_op(x, axis=reduce_axes("any", x, axis), keepdim=keepdim)


TENSOR_METHODS = [
    "nansum", "nanmean", "count_nonzero", "sum", "mean", "max", "min", "amax", "amin", "var", "std", "logsumexp",
    "argmax", "argmin", "all", "any",
]  # fmt: skip
