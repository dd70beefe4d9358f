"""Shape ops: reshape, transpose, squeeze/unsqueeze, flatten, concat/stack/split and friends."""

from __future__ import annotations

import numpy as np

from ..core.op import OPAQUE, OpDef, Spec
from ..core.shapes import normalize_axis
from ..core.tensor import Tensor
from ..errors import ShapeError


def _resolve_shape(op: str, in_shape: tuple, shape) -> tuple:
    """Paddle's reshape rules: 0 copies the input's dim at that position, one -1 is inferred."""
    if isinstance(shape, Tensor):
        shape = shape.tolist()
    dims = [int(d.item()) if isinstance(d, Tensor) else int(d) for d in shape]
    dims = [in_shape[i] if d == 0 and i < len(in_shape) else d for i, d in enumerate(dims)]
    if dims.count(-1) > 1:
        raise ShapeError(f"{op}: only one dimension can be -1, got {dims}")
    total = int(np.prod(in_shape))
    if -1 in dims:
        known = int(np.prod([d for d in dims if d != -1]))
        if known == 0 or total % known:
            raise ShapeError(f"{op}: cannot reshape a tensor of shape {list(in_shape)} ({total} elements) into {dims}")
        dims[dims.index(-1)] = total // known
    if int(np.prod(dims)) != total:
        raise ShapeError(f"{op}: cannot reshape a tensor of shape {list(in_shape)} ({total} elements) into {dims}")
    return tuple(dims)


def _reshape_forward(ctx, x, shape):
    ctx.save(x.shape)
    return x.reshape(shape)


def _reshape_infer(x: Spec, shape) -> Spec:
    return Spec(tuple(shape), x.dtype)


reshape_op = OpDef("reshape", _reshape_forward, lambda ctx, g: g.reshape(ctx.saved[0]), _reshape_infer, OPAQUE)


def reshape(x, shape, name=None):
    return reshape_op(x, shape=_resolve_shape("reshape", tuple(x.shape), shape))


def _transpose_forward(ctx, x, perm):
    return np.transpose(x, perm)


def _transpose_vjp(ctx, g):
    return np.transpose(g, np.argsort(ctx.attrs["perm"]))


def _transpose_infer(x: Spec, perm) -> Spec:
    return Spec(tuple(x.shape[p] for p in perm), x.dtype)


transpose_op = OpDef("transpose", _transpose_forward, _transpose_vjp, _transpose_infer, OPAQUE)


def transpose(x, perm, name=None):
    perm = tuple(normalize_axis("transpose", int(p), x.ndim) for p in perm)
    if sorted(perm) != list(range(x.ndim)):
        raise ShapeError(f"transpose: perm {list(perm)} is not a permutation of the {x.ndim} axes of x{x.shape}")
    return transpose_op(x, perm=perm)


def flatten(x, start_axis=0, stop_axis=-1, name=None):
    if x.ndim == 0:
        return reshape(x, [1])
    start = normalize_axis("flatten", start_axis, x.ndim)
    stop = normalize_axis("flatten", stop_axis, x.ndim)
    if start > stop:
        raise ShapeError(f"flatten: start_axis ({start_axis}) must not come after stop_axis ({stop_axis})")
    shape = x.shape
    return reshape(x, shape[:start] + [int(np.prod(shape[start : stop + 1]))] + shape[stop + 1 :])


def squeeze(x, axis=None, name=None):
    shape = x.shape
    if axis is None:
        axes = {i for i, d in enumerate(shape) if d == 1}
    else:
        axes = {normalize_axis("squeeze", int(a), x.ndim) for a in ([axis] if isinstance(axis, int) else axis)}
        axes = {a for a in axes if shape[a] == 1}  # Paddle ignores axes whose size is not 1
    return reshape(x, [d for i, d in enumerate(shape) if i not in axes])


def unsqueeze(x, axis, name=None):
    axes = [axis] if isinstance(axis, int) else [int(a.item()) if isinstance(a, Tensor) else int(a) for a in axis]
    shape = list(x.shape)
    for a in axes:
        a = normalize_axis("unsqueeze", a, len(shape) + 1)
        shape.insert(a, 1)
    return reshape(x, shape)


def _concat_forward(ctx, *xs, axis):
    ctx.save([x.shape[axis] for x in xs])
    return np.concatenate(xs, axis=axis)


def _concat_vjp(ctx, g):
    sizes = ctx.saved[0]
    return tuple(np.split(g, np.cumsum(sizes)[:-1], axis=ctx.attrs["axis"]))


def _concat_infer(*xs: Spec, axis) -> Spec:
    shape = list(xs[0].shape)
    dims = [x.shape[axis] for x in xs]
    shape[axis] = sum(dims) if all(isinstance(d, int) for d in dims) else "+".join(map(str, dims))
    return Spec(tuple(shape), np.result_type(*[x.dtype for x in xs]))


concat_op = OpDef("concat", _concat_forward, _concat_vjp, _concat_infer, OPAQUE)


def concat(x, axis=0, name=None):
    xs = list(x)
    if not xs:
        raise ValueError("concat: needs at least one tensor")
    axis = normalize_axis("concat", int(axis.item() if isinstance(axis, Tensor) else axis), xs[0].ndim)
    ref = xs[0].shape
    for i, t in enumerate(xs):
        if t.ndim != len(ref) or any(a != b for k, (a, b) in enumerate(zip(t.shape, ref, strict=True)) if k != axis):
            raise ShapeError(f"concat: tensor {i} has shape {t.shape}, which differs from {ref} outside axis {axis}")
    return concat_op(*xs, axis=axis)


def stack(x, axis=0, name=None):
    xs = list(x)
    if not xs:
        raise ValueError("stack: needs at least one tensor")
    for i, t in enumerate(xs):
        if t.shape != xs[0].shape:
            raise ShapeError(f"stack: tensor {i} has shape {t.shape}, tensor 0 has {xs[0].shape}; all must match")
    axis = normalize_axis("stack", axis, xs[0].ndim + 1)
    return concat([unsqueeze(t, axis) for t in xs], axis=axis)


TENSOR_METHODS = ["reshape", "transpose", "flatten", "squeeze", "unsqueeze"]
