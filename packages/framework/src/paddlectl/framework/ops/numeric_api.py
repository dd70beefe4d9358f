"""Paddle's smaller numeric functions: add_n, baddbmm, diagflat, msort, matrix_transpose, cdist,
pdist, vander, trapezoid, cumulative_trapezoid, combinations, renorm, sinc, stanh, increment,
reduce_as, rank, broadcast_shapes, ldexp, gammaln, multigammaln; nextafter and frexp as records.

The compositions differentiate through the ops they are made of; positions that depend only on
shapes (pdist's pairs, combinations) are constants, so a traced program keeps them."""

from __future__ import annotations

import itertools
import math

import numpy as np

from ..core.op import OPAQUE, OpDef, Sample
from ..core.shapes import elementwise
from ..errors import ConfigError, ShapeError
from . import elementwise as ew
from . import reduce
from ._util import constant, tensor_args
from .broadcast import sum_to
from .diagonal import diag
from .index import index_select, where
from .lapack import mT
from .linalg import bmm
from .norms import vector_norm
from .scan import cumsum
from .shape import flatten, reshape, stack, tile, unsqueeze
from .sorting import sort
from .special import lgamma


def add_n(inputs, name=None):
    """``paddle.add_n``: the elementwise sum of a list of same-shaped tensors."""
    inputs = [inputs] if not isinstance(inputs, list | tuple) else list(inputs)
    if not inputs:
        raise ShapeError("add_n: inputs is empty; give at least one tensor")
    total = inputs[0]
    for t in inputs[1:]:
        total = total + t
    return total


def baddbmm(input, x, y, beta=1.0, alpha=1.0, name=None):  # noqa: A002 - Paddle's name
    """``paddle.baddbmm``: ``beta * input + alpha * bmm(x, y)``."""
    return input * beta + bmm(x, y) * alpha


def repeat(input, repeats):  # noqa: A002 - Paddle's name
    """``Tensor.repeat``: ``tile`` with ``repeats`` (an int, ints, or a list)."""
    return tile(input, [repeats] if isinstance(repeats, int) else list(repeats))


def crop(x, shape=None, offsets=None, name=None):
    """``paddle.crop``: the block of ``shape`` (-1: to the end) starting at ``offsets`` (default 0)."""
    shape = (
        list(x.shape) if shape is None else [int(v) for v in (shape.tolist() if hasattr(shape, "tolist") else shape)]
    )
    offsets = (
        [0] * x.ndim
        if offsets is None
        else [int(v) for v in (offsets.tolist() if hasattr(offsets, "tolist") else offsets)]
    )
    if len(shape) != x.ndim or len(offsets) != x.ndim:
        raise ShapeError(f"crop: shape {shape} and offsets {offsets} need one entry per dim of x{x.shape}")
    ends = [x.shape[i] if s == -1 else o + s for i, (s, o) in enumerate(zip(shape, offsets, strict=True))]
    if any(o < 0 or e > d or e <= o for o, e, d in zip(offsets, ends, x.shape, strict=True)):
        raise ShapeError(f"crop: offsets {offsets} + shape {shape} leave x{x.shape}")
    return x[tuple(slice(o, e) for o, e in zip(offsets, ends, strict=True))]


def diagflat(x, offset=0, name=None):
    """``paddle.diagflat``: a 2-D matrix with the flattened ``x`` on its ``offset`` diagonal."""
    return diag(flatten(x), offset)


def msort(input, *, out=None):  # noqa: A002
    """``paddle.msort``: sorted along the first axis."""
    return sort(input, axis=0)


def matrix_transpose(x, name=None):
    """``paddle.matrix_transpose``: the last two dims swapped."""
    if x.ndim < 2:
        raise ShapeError(f"matrix_transpose: x must have at least 2 dims, got x{x.shape}")
    return mT(x)


def cdist(x, y, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary", name=None):
    """``paddle.cdist``: ``out[..., i, j] = ||x[..., i, :] - y[..., j, :]||_p``."""
    if x.ndim < 2 or y.ndim < 2 or x.shape[-1] != y.shape[-1]:
        raise ShapeError(f"cdist: x[..., P, M] and y[..., R, M] must share M, got x{x.shape}, y{y.shape}")
    return vector_norm(unsqueeze(x, -2) - unsqueeze(y, -3), float(p), -1)


def pdist(x, p=2.0, name=None):
    """``paddle.pdist``: the distances between the rows of ``x[N, M]`` for ``i < j``, row-major."""
    if x.ndim != 2:
        raise ShapeError(f"pdist: x must be [N, M], got x{x.shape}")
    i, j = np.triu_indices(x.shape[0], 1)
    rows = index_select(x, constant(i.astype(np.int64))) - index_select(x, constant(j.astype(np.int64)))
    return vector_norm(rows, float(p), -1)


def vander(x, n=None, increasing=False, name=None):
    """``paddle.vander``: columns ``x^0 .. x^(n-1)`` (reversed unless ``increasing``), by repeated
    products so the gradient at 0 is finite."""
    if x.ndim != 1:
        raise ShapeError(f"vander: x must be 1-D, got x{x.shape}")
    n = x.shape[0] if n is None else int(n)
    if n < 0:
        raise ConfigError(f"vander: n must be non-negative, got {n}")
    columns, power = [], x * 0 + 1
    for _ in range(n):
        columns.append(power)
        power = power * x
    if not increasing:
        columns.reverse()
    return stack(columns, 1) if columns else reshape(x[:0], [x.shape[0], 0])


def _trapezoids(y, x, dx, axis: int):
    axis = axis % y.ndim
    length = y.shape[axis]
    head = [slice(None)] * axis
    mid = (y[(*head, slice(1, None))] + y[(*head, slice(None, length - 1))]) * 0.5
    if x is None:
        return mid * (1.0 if dx is None else float(dx)), axis
    if x.ndim == 1:
        widths = x[1:] - x[:-1]
        widths = reshape(widths, [-1] + [1] * (y.ndim - axis - 1))
    else:
        widths = x[(*head, slice(1, None))] - x[(*head, slice(None, length - 1))]
    return mid * widths, axis


def trapezoid(y, x=None, dx=None, axis=-1, name=None):
    """``paddle.trapezoid``: the integral of ``y`` along ``axis`` by the trapezoid rule."""
    if x is not None and dx is not None:
        raise ConfigError("trapezoid: give x or dx, not both")
    pieces, axis = _trapezoids(y, x, dx, axis)
    return reduce.sum(pieces, axis)


def cumulative_trapezoid(y, x=None, dx=None, axis=-1, name=None):
    """``paddle.cumulative_trapezoid``: the running trapezoid integral (one entry fewer than y)."""
    if x is not None and dx is not None:
        raise ConfigError("cumulative_trapezoid: give x or dx, not both")
    pieces, axis = _trapezoids(y, x, dx, axis)
    return cumsum(pieces, axis)


def combinations(x, r=2, with_replacement=False, name=None):
    """``paddle.combinations``: the length-``r`` combinations of a 1-D tensor's entries, one per row."""
    if x.ndim != 1:
        raise ShapeError(f"combinations: x must be 1-D, got x{x.shape}")
    if r < 0:
        raise ConfigError(f"combinations: r must be non-negative, got {r}")
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    index = np.asarray(list(pick(range(x.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    if r == 0 or index.shape[0] == 0:
        return reshape(x[:0], [0, r]) if r else x[:0]
    return reshape(index_select(x, constant(index.reshape(-1))), [index.shape[0], r])


def renorm(x, p, axis, max_norm):
    """``paddle.renorm``: each slice along ``axis`` whose p-norm exceeds ``max_norm`` is scaled to it
    (``max_norm / (norm + 1e-7)``, as Paddle)."""
    axis = axis % x.ndim
    others = [a for a in range(x.ndim) if a != axis]
    norm = vector_norm(x, float(p), others, keepdim=True)
    scale = where(norm > max_norm, max_norm / (norm + 1e-7), norm * 0 + 1)
    return x * scale


def sinc(x, name=None):
    """``paddle.sinc``: ``sin(pi x) / (pi x)``, 1 at 0 (the division is guarded, so is the gradient)."""
    zero = ew.BINARY["equal"](x, 0.0)
    safe = where(zero, x * 0 + 1, x) * math.pi
    return where(zero, x * 0 + 1, ew.sin(safe) / safe)


def stanh(x, scale_a=0.67, scale_b=1.7159, name=None):
    """``paddle.stanh``: ``scale_b * tanh(scale_a * x)``."""
    return ew.tanh(x * scale_a) * scale_b


def increment(x, value=1.0, name=None):
    """``paddle.increment``: ``x + value`` for a one-element tensor."""
    if x.size != 1:
        raise ShapeError(f"increment: x must hold one element, got x{x.shape}")
    return x + value


def reduce_as(x, target, name=None):
    """``paddle.reduce_as``: ``x`` summed over the dims broadcasting would add or stretch to reach target's shape."""
    return sum_to(x, tuple(target.shape))


def rank(input):  # noqa: A002
    """``paddle.rank``: the number of dims, an int32 0-D tensor."""
    return constant(np.asarray(input.ndim, dtype=np.int32))


def broadcast_shapes(*shapes):
    """``paddle.broadcast_shapes``: the shape the given shapes broadcast to, as a list."""
    try:
        return list(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise ShapeError(f"broadcast_shapes: {[list(s) for s in shapes]} cannot be broadcast together") from None


def ldexp(x, y, name=None):
    """``paddle.ldexp``: ``x * 2**y`` (float result)."""
    x = x if x.dtype.kind == "f" else ew.cast(x, "float32")
    return x * ew.pow(constant(np.asarray(2.0, dtype=x.dtype)), ew.cast(y, x.dtype))


def gammaln(x, name=None):
    """``paddle.gammaln``: log |Gamma(x)| (lgamma)."""
    return lgamma(x)


def multigammaln(x, p, name=None):
    """``paddle.multigammaln``: the log multivariate gamma, ``sum_j lgamma(x - j / 2) + p(p-1)/4 log(pi)``."""
    if not isinstance(p, int) or p < 1:
        raise ConfigError(f"multigammaln: p must be a positive int, got {p!r}")
    total = lgamma(x)
    for j in range(1, p):
        total = total + lgamma(x - j / 2)
    return total + p * (p - 1) / 4 * math.log(math.pi)


def _nextafter_forward(ctx, x, y):
    return np.nextafter(x, y).astype(np.result_type(x, y))


nextafter_op = OpDef(
    "nextafter",
    _nextafter_forward,
    None,
    elementwise("nextafter"),
    OPAQUE,
    samples=lambda rng: [Sample((rng.standard_normal((3, 4)), rng.standard_normal(4)))],
)


def nextafter(x, y, name=None):
    """``paddle.nextafter``: the next representable float after ``x`` towards ``y``."""
    return nextafter_op(*tensor_args(x, y))


def _frexp_forward(ctx, x):
    mantissa, exponent = np.frexp(x)
    return mantissa.astype(x.dtype), exponent.astype(x.dtype)


def _frexp_vjp(ctx, g_mantissa, g_exponent):
    """``mantissa = x * 2**-exponent`` with the exponent piecewise constant."""
    return g_mantissa * ew.pow(constant(np.asarray(2.0, dtype=g_mantissa.dtype)), -ctx.output(1))


frexp_op = OpDef(
    "frexp",
    _frexp_forward,
    _frexp_vjp,
    lambda x: (x, x),
    OPAQUE,
    samples=lambda rng: [Sample((rng.uniform(0.6, 0.9, (3, 4)) * 2.0 ** rng.integers(-3, 4, (3, 4)),))],
)


def frexp(x, name=None):
    """``paddle.frexp``: ``(mantissa, exponent)`` with ``x = mantissa * 2**exponent``, |mantissa| in [0.5, 1)."""
    return frexp_op(x if x.dtype.kind == "f" else ew.cast(x, "float32"))


TENSOR_METHODS = [
    "add_n", "baddbmm", "diagflat", "msort", "matrix_transpose", "cdist", "vander", "trapezoid",
    "cumulative_trapezoid", "combinations", "renorm", "sinc", "stanh", "increment", "reduce_as", "rank",
    "broadcast_shapes", "ldexp", "gammaln", "multigammaln", "nextafter", "frexp",
]  # fmt: skip
TOP_LEVEL = [*TENSOR_METHODS, "pdist", "crop"]
TENSOR_METHODS += ["repeat"]
