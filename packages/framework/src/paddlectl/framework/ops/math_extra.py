"""More of Paddle's math: atan2/fmax/fmin/cumprod/cross/diagonal/diag/index_add/index_fill as ops,
and the rest (lerp, frac, logit, nansum, kron, outer, addmm, diff, moveaxis, meshgrid, ...) as
compositions of existing ops, so their gradients come from the tape."""

from __future__ import annotations

import numpy as np

from ..core.op import BROADCAST, OPAQUE, OpDef, Spec
from ..core.shapes import broadcast_shapes, normalize_axis
from ..core.tensor import Tensor
from ..errors import ShapeError
from . import elementwise as ew
from . import reduce
from ._util import constant, tensor_args, unbroadcast
from .elementwise import _binary, _needed
from .index import _as_index, _check_bounds, gather
from .linalg import matmul
from .shape import expand, flatten, reshape, transpose

# ----- elementwise ops ------------------------------------------------------------------------


def _atan2_grads(g, a, b, ctx):
    denom = a * a + b * b
    denom = ew.where_op(denom == 0, constant(1, denom.dtype), denom)
    return _needed(ctx, lambda: g * b / denom, lambda: -g * a / denom)


atan2_op = _binary("atan2", np.arctan2, _atan2_grads)


def _fext_grads(pick_a):
    def grads(g, a, b, ctx):
        mask = pick_a(a, b) | ew.isnan(b)
        return _needed(ctx, lambda: g * mask, lambda: g * ~mask)

    return grads


fmax_op = _binary("fmax", np.fmax, _fext_grads(lambda a, b: a >= b))
fmin_op = _binary("fmin", np.fmin, _fext_grads(lambda a, b: a <= b))


def atan2(x, y, name=None):
    x, y = tensor_args(x, y)
    if x.dtype.kind != "f":
        x, y = x.astype("float64"), y.astype("float64")
    return atan2_op(x, y)


def fmax(x, y, name=None):
    """Elementwise maximum that ignores NaN (the other value wins)."""
    return fmax_op(*tensor_args(x, y))


def fmin(x, y, name=None):
    return fmin_op(*tensor_args(x, y))


def lerp(x, y, weight, name=None):
    """``x + weight * (y - x)``; as in Paddle, no gradient flows into a tensor ``weight``."""
    if isinstance(weight, Tensor):
        weight = weight.detach()
    return x + weight * (y - x)


def frac(x, name=None, *, out=None):
    """The fractional part ``x - trunc(x)``; integer tensors give zeros."""
    return x - ew.UNARY["trunc"](x) if x.dtype.kind == "f" else x - x


def mod(x, y, name=None, *, out=None):
    return ew.BINARY["remainder"](x, y)


floor_mod = mod


def logit(x, eps=None, name=None):
    """``log(x / (1 - x))``; with ``eps`` the input is clipped to ``[eps, 1 - eps]`` first."""
    if eps is not None:
        x = ew.clip(x, float(eps), 1.0 - float(eps))
    return ew.UNARY["log"](x / (1.0 - x))


isclose_op = OpDef(
    "isclose",
    lambda ctx, x, y, rtol, atol, equal_nan: np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan),
    None,
    lambda x, y, **attrs: Spec(broadcast_shapes("isclose", x.shape, y.shape), np.dtype(bool)),
    BROADCAST,
)


def isclose(x, y, rtol=1e-05, atol=1e-08, equal_nan=False, name=None):
    return isclose_op(x, y, rtol=float(rtol), atol=float(atol), equal_nan=bool(equal_nan))


def allclose(x, y, rtol=1e-05, atol=1e-08, equal_nan=False, name=None):
    """A 0-D bool tensor: every element close (Paddle returns a tensor, not a Python bool)."""
    return reduce.all(isclose(x, y, rtol, atol, equal_nan))


def equal_all(x, y, name=None):
    """A 0-D bool tensor: same shape and every element equal (NaN never equals itself)."""
    if x.shape != y.shape:
        return constant(False)
    return reduce.all(ew.BINARY["equal"](x, y))


# ----- NaN-aware and counting reductions ------------------------------------------------------


def _nan_zeroed(x):
    return ew.where(ew.UNARY["isnan"](x), constant(0, x.dtype), x)


def nansum(x, axis=None, dtype=None, keepdim=False, name=None):
    return reduce.sum(_nan_zeroed(x) if x.dtype.kind == "f" else x, axis, dtype, keepdim)


def nanmean(x, axis=None, keepdim=False, name=None):
    count = reduce.sum(ew.logical_not(ew.UNARY["isnan"](x)).astype(x.dtype), axis, keepdim=keepdim)
    return nansum(x, axis, keepdim=keepdim) / count


def count_nonzero(x, axis=None, keepdim=False, name=None):
    return reduce.sum((x != 0).astype("int64"), axis, keepdim=keepdim)


# ----- cumulative product ---------------------------------------------------------------------


def _cumprod_forward(ctx, x, axis):
    out = np.cumprod(x, axis=axis, dtype=x.dtype)
    ctx.save(x, out)
    return out


def _cumprod_vjp(ctx, g):
    x, out = ctx.saved
    axis = ctx.attrs["axis"]
    if not np.any(x == 0):
        return np.flip(np.cumsum(np.flip(g * out, axis), axis=axis), axis) / x
    # d out_j / d x_i = prod_{k <= j, k != i} x_k: recompute with x_i replaced by 1, row by row.
    xm, gm = np.moveaxis(x, axis, -1), np.moveaxis(g, axis, -1)
    grad = np.empty_like(xm)
    for i in range(xm.shape[-1]):
        ones = xm.copy()
        ones[..., i] = 1
        partial = np.cumprod(ones, axis=-1)
        grad[..., i] = np.sum(gm[..., i:] * partial[..., i:], axis=-1)
    return np.moveaxis(grad, -1, axis)


cumprod_op = OpDef("cumprod", _cumprod_forward, _cumprod_vjp, lambda x, axis: x, OPAQUE)


def cumprod(x, dim=None, *, dtype=None, out=None, name=None):
    if dtype is not None:
        x = x.astype(dtype)
    if dim is None:
        x, dim = flatten(x), 0
    return cumprod_op(x, axis=normalize_axis("cumprod", int(dim), x.ndim))


# ----- cross, diagonal, diag, trace -----------------------------------------------------------


def _cross_forward(ctx, x, y, axis):
    if x.shape[axis] != 3 or y.shape[axis] != 3:
        raise ShapeError(f"cross: axis {axis} must have size 3 in both inputs, got x{list(x.shape)} y{list(y.shape)}")
    ctx.save(x, y)
    return np.cross(x, y, axis=axis)


def _cross_vjp(ctx, g):
    x, y = ctx.saved
    axis = ctx.attrs["axis"]
    gx = unbroadcast(np.cross(y, g, axis=axis), x.shape) if ctx.needs_input_grad[0] else None
    gy = unbroadcast(np.cross(g, x, axis=axis), y.shape) if ctx.needs_input_grad[1] else None
    return gx, gy


def _cross_infer(x: Spec, y: Spec, axis) -> Spec:
    return Spec(broadcast_shapes("cross", x.shape, y.shape), np.result_type(x.dtype, y.dtype))


cross_op = OpDef("cross", _cross_forward, _cross_vjp, _cross_infer, BROADCAST)


def cross(x, y, axis=9, name=None):
    """The 3-vector cross product along ``axis``; Paddle's default 9 means the first dim of size 3."""
    if axis == 9:
        axis = next((i for i, d in enumerate(x.shape) if d == 3), None)
        if axis is None:
            raise ShapeError(f"cross: x{x.shape} has no dim of size 3; pass axis")
    return cross_op(*tensor_args(x, y), axis=normalize_axis("cross", int(axis), x.ndim))


def _diagonal_forward(ctx, x, offset, axis1, axis2):
    ctx.save(x.shape)
    return np.diagonal(x, offset, axis1, axis2).copy()


def _diagonal_vjp(ctx, g):
    (shape,) = ctx.saved
    offset, a1, a2 = ctx.attrs["offset"], ctx.attrs["axis1"], ctx.attrs["axis2"]
    out = np.zeros(shape, g.dtype)
    view = np.diagonal(out, offset, a1, a2)
    view.setflags(write=True)
    view[...] = g
    return out


def _diagonal_infer(x: Spec, offset, axis1, axis2) -> Spec:
    n1, n2 = x.shape[axis1], x.shape[axis2]
    if isinstance(n1, int) and isinstance(n2, int):
        size = max(0, min(n1 + min(offset, 0), n2 - max(offset, 0)))
    else:
        size = n1 if offset == 0 else f"diag({n1},{n2},{offset})"
    rest = tuple(d for i, d in enumerate(x.shape) if i not in (axis1, axis2))
    return Spec(rest + (size,), x.dtype)


diagonal_op = OpDef("diagonal", _diagonal_forward, _diagonal_vjp, _diagonal_infer, OPAQUE)


def diagonal(x, offset=0, axis1=0, axis2=1, name=None):
    a1, a2 = normalize_axis("diagonal", int(axis1), x.ndim), normalize_axis("diagonal", int(axis2), x.ndim)
    if a1 == a2:
        raise ShapeError(f"diagonal: axis1 and axis2 must differ, got {axis1} and {axis2}")
    return diagonal_op(x, offset=int(offset), axis1=a1, axis2=a2)


def trace(x, offset=0, axis1=0, axis2=1, name=None):
    return reduce.sum(diagonal(x, offset, axis1, axis2), -1)


def _diag_embed_forward(ctx, x, offset, padding_value):
    n = x.shape[0] + abs(offset)
    out = np.full((n, n), padding_value, dtype=x.dtype)
    idx = np.arange(x.shape[0])
    out[idx + max(-offset, 0), idx + max(offset, 0)] = x
    return out


def _diag_embed_vjp(ctx, g):
    return np.diagonal(g, ctx.attrs["offset"]).copy()


def _diag_embed_infer(x: Spec, offset, padding_value) -> Spec:
    n = x.shape[0] + abs(offset) if isinstance(x.shape[0], int) else x.shape[0]
    return Spec((n, n), x.dtype)


diag_embed_op = OpDef("diag_vector_to_matrix", _diag_embed_forward, _diag_embed_vjp, _diag_embed_infer, OPAQUE)


def diag(x, offset=0, padding_value=0, name=None):
    """A 1-D ``x`` becomes a square matrix with it on diagonal ``offset``; a 2-D ``x`` gives that diagonal."""
    if x.ndim == 1:
        return diag_embed_op(x, offset=int(offset), padding_value=padding_value)
    if x.ndim == 2:
        return diagonal(x, offset, 0, 1)
    raise ShapeError(f"diag: x must be 1-D or 2-D, got shape {x.shape}")


# ----- index_add / index_fill / take ----------------------------------------------------------


def _index_add_forward(ctx, x, index, value, axis, alpha):
    _check_bounds("index_add", index, x.shape[axis], f"axis {axis} of x{list(x.shape)}")
    out = x.copy()
    moved = np.moveaxis(out, axis, 0)
    np.add.at(moved, index, np.moveaxis(value, axis, 0) * value.dtype.type(alpha))
    ctx.save(index)
    return out


def _index_add_vjp(ctx, g):
    (index,) = ctx.saved
    axis, alpha = ctx.attrs["axis"], ctx.attrs["alpha"]
    gv = np.take(g, index, axis=axis) * g.dtype.type(alpha) if ctx.needs_input_grad[2] else None
    return g, None, gv


index_add_op = OpDef("index_add", _index_add_forward, _index_add_vjp, lambda x, index, value, axis, alpha: x, OPAQUE)


def index_add(x, index, axis, value, alpha=1, name=None, *, out=None):
    axis = normalize_axis("index_add", int(axis), x.ndim)
    index = _as_index("index_add", index)
    expected = x.shape[:axis] + [index.shape[0]] + x.shape[axis + 1 :]
    if index.ndim != 1 or value.shape != expected:
        raise ShapeError(
            f"index_add: value must have shape {expected} for x{x.shape}, index{index.shape}, got {value.shape}"
        )
    return index_add_op(x, index, value.astype(x.dtype), axis=axis, alpha=float(alpha))


def _index_fill_forward(ctx, x, index, axis, value):
    _check_bounds("index_fill", index, x.shape[axis], f"axis {axis} of x{list(x.shape)}")
    out = x.copy()
    np.moveaxis(out, axis, 0)[index] = value
    ctx.save(index)
    return out


def _index_fill_vjp(ctx, g):
    (index,) = ctx.saved
    out = g.copy()
    np.moveaxis(out, ctx.attrs["axis"], 0)[index] = 0
    return out, None


index_fill_op = OpDef("index_fill", _index_fill_forward, _index_fill_vjp, lambda x, index, axis, value: x, OPAQUE)


def index_fill(x, index, axis, value, name=None):
    axis = normalize_axis("index_fill", int(axis), x.ndim)
    index = _as_index("index_fill", index)
    return index_fill_op(x, index, axis=axis, value=value.item() if isinstance(value, Tensor) else value)


def take(x, index, mode="raise", name=None):
    """Elements of the flattened ``x`` at ``index`` (shape of ``index``); mode 'wrap' or 'clip' fixes
    out-of-range indices, 'raise' rejects them."""
    index = _as_index("take", index)
    n = x.size
    idx = index.astype("int64")
    if mode == "wrap":
        idx = ew.BINARY["remainder"](idx, constant(n, "int64"))
    elif mode == "clip":
        idx = ew.clip(idx, 0, n - 1)
    elif mode != "raise":  # gather rejects an index out of [-n, n) and counts a negative one from the end
        raise ValueError(f"take: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    return reshape(gather(flatten(x), reshape(idx, [-1])), list(index.shape))


# ----- products -------------------------------------------------------------------------------


def outer(x, y, name=None, *, out=None):
    return reshape(flatten(x), [-1, 1]) * reshape(flatten(y), [1, -1])


def inner(x, y, name=None):
    """Sum over the last dims: shape ``x.shape[:-1] + y.shape[:-1]``."""
    if x.ndim == 0 or y.ndim == 0:
        return x * y
    if x.shape[-1] != y.shape[-1]:
        raise ShapeError(f"inner: the last dims must match, got x{x.shape} and y{y.shape}")
    out = matmul(reshape(x, [-1, x.shape[-1]]), reshape(y, [-1, y.shape[-1]]), transpose_y=True)
    return reshape(out, x.shape[:-1] + y.shape[:-1])


def kron(x, y, name=None):
    """The Kronecker product: every element of ``x`` times a copy of ``y``."""
    nd = max(x.ndim, y.ndim)
    xs, ys = [1] * (nd - x.ndim) + x.shape, [1] * (nd - y.ndim) + y.shape
    xe = reshape(x, [d for a in xs for d in (a, 1)])
    ye = reshape(y, [d for b in ys for d in (1, b)])
    return reshape(xe * ye, [a * b for a, b in zip(xs, ys, strict=True)])


def mv(x, vec, name=None):
    if x.ndim != 2 or vec.ndim != 1:
        raise ShapeError(f"mv: x must be 2-D and vec 1-D, got x{x.shape} and vec{vec.shape}")
    return matmul(x, vec)


def addmm(input, x, y, beta=1.0, alpha=1.0, name=None):  # noqa: A002 - Paddle's name
    """``beta * input + alpha * (x @ y)``."""
    return ew.scale(input, float(beta)) + ew.scale(matmul(x, y), float(alpha))


def dist(x, y, p=2, name=None):
    from .linalg_ext import vector_norm

    return vector_norm(x - y, float(p))


# ----- shape helpers --------------------------------------------------------------------------


def diff(x, n=1, axis=-1, prepend=None, append=None, name=None, *, out=None):
    """``n``-th forward difference along ``axis``, after concatenating ``prepend``/``append``."""
    from .shape import concat

    axis = normalize_axis("diff", int(axis), x.ndim)
    if prepend is not None or append is not None:
        x = concat([t for t in (prepend, x, append) if t is not None], axis)
    for _ in range(int(n)):
        lo = [slice(None)] * x.ndim
        hi = [slice(None)] * x.ndim
        lo[axis], hi[axis] = slice(None, -1), slice(1, None)
        x = ew.BINARY["not_equal"](x[tuple(hi)], x[tuple(lo)]) if x.dtype == np.bool_ else x[tuple(hi)] - x[tuple(lo)]
    return x


def moveaxis(x, source, destination, name=None):
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise ShapeError(f"moveaxis: source {src} and destination {dst} must have the same length")
    src = [normalize_axis("moveaxis", s, x.ndim) for s in src]
    dst = [normalize_axis("moveaxis", d, x.ndim) for d in dst]
    perm = [i for i in range(x.ndim) if i not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        perm.insert(d, s)
    return transpose(x, perm)


def unflatten(x, axis, shape, name=None):
    axis = normalize_axis("unflatten", int(axis), x.ndim)
    shape = shape.tolist() if isinstance(shape, Tensor) else [int(d) for d in shape]
    if -1 in shape:
        known = int(np.prod([d for d in shape if d != -1]))
        shape[shape.index(-1)] = x.shape[axis] // max(known, 1)
    if int(np.prod(shape)) != x.shape[axis]:
        raise ShapeError(f"unflatten: shape {shape} does not multiply to dim {axis} of x{x.shape} ({x.shape[axis]})")
    return reshape(x, x.shape[:axis] + shape + x.shape[axis + 1 :])


def meshgrid(*args, **kwargs):
    """Coordinate grids ('ij' indexing, Paddle's only mode): output ``i`` varies along dim ``i``."""
    tensors = list(args[0]) if len(args) == 1 and isinstance(args[0], list | tuple) else list(args)
    shape = [t.size for t in tensors]
    out = []
    for i, t in enumerate(tensors):
        view = [1] * len(tensors)
        view[i] = t.size
        out.append(expand(reshape(t, view), shape))
    return out


def repeat_interleave(x, repeats, axis=None, name=None, *, output_size=None):
    """Each element (along ``axis``; of the flattened ``x`` when None) repeated ``repeats`` times."""
    if axis is None:
        x, axis = flatten(x), 0
    axis = normalize_axis("repeat_interleave", int(axis), x.ndim)
    reps = np.asarray(repeats.numpy() if isinstance(repeats, Tensor) else repeats)  # sets the output size
    if reps.ndim == 1 and reps.size != x.shape[axis]:
        raise ShapeError(f"repeat_interleave: {reps.size} repeats for dim {axis} of size {x.shape[axis]} in x{x.shape}")
    index = np.repeat(np.arange(x.shape[axis]), reps)
    return gather(x, constant(index), axis)


def logcumsumexp(x, axis=None, dtype=None, name=None):
    """``log(cumsum(exp(x)))`` along ``axis`` (flattened when None), shifted by the max for stability."""
    if dtype is not None:
        x = x.astype(dtype)
    if axis is None:
        x, axis = flatten(x), 0
    axis = normalize_axis("logcumsumexp", int(axis), x.ndim)
    if x.size:
        shift = reduce.max(x, axis, keepdim=True).detach()
        shift = ew.where(ew.UNARY["isfinite"](shift), shift, constant(0, x.dtype))
    else:
        shift = constant(0, x.dtype)
    return ew.UNARY["log"](reduce.cumsum(ew.UNARY["exp"](x - shift), axis)) + shift


FUNCTIONAL: list[str] = []
TENSOR_METHODS = [
    "atan2", "fmax", "fmin", "lerp", "frac", "mod", "floor_mod", "logit", "isclose", "allclose", "equal_all",
    "nansum", "nanmean", "count_nonzero", "cumprod", "cross", "diagonal", "diag", "trace", "index_add",
    "index_fill", "take", "outer", "inner", "kron", "mv", "addmm", "dist", "diff", "moveaxis", "unflatten",
    "repeat_interleave", "logcumsumexp",
]  # fmt: skip
TOP_LEVEL = TENSOR_METHODS + ["meshgrid"]
