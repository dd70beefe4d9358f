"""The ``fused_elementwise`` op: one generated kernel for a whole group of elementwise ops.

Attrs (all printed in the IR text and parsed back): ``body`` (the group's SSA statements over
inputs ``x0..xk``, see ``codegen``), ``ops`` (the fused ops' names, for people and reports),
``dtype`` (the result's), ``reduce``/``axis``/``keepdim`` for a trailing reduction over the
last axes, and ``inplace``: the index of an input the result may overwrite (a matmul/conv output
read by nothing else; the group is then that op's epilogue and needs no buffer of its own).

At run time the inputs are viewed as flat arrays with per-dim strides in elements (0 where an
input broadcasts), and dims that are contiguous for every input are merged, so an all-same-shape
group is one flat loop whatever its rank.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..core import symbolic
from ..core.op import OPAQUE, OpDef, Spec
from ..core.shapes import broadcast_shapes, normalize_axes
from ..errors import ShapeError
from .codegen import check_body
from .kernel_cache import get_kernel
from .scalar_exprs import REDUCTIONS

_ROW_TARGET = 4096  # elements per row when a flat loop is cut into rows


def _broadcast_strides(own: tuple, shape: tuple) -> list[int]:
    """Element strides of a C-contiguous array of shape ``own`` broadcast to ``shape`` (0 on broadcast dims)."""
    pad = len(shape) - len(own)
    strides = [0] * len(shape)
    step = 1
    for axis in range(len(own) - 1, -1, -1):
        if own[axis] != 1:
            strides[pad + axis] = step
        step *= own[axis]
    return strides


def _coalesce(shape: list[int], strides: list[list[int]]) -> tuple[list[int], list[list[int]]]:
    """Merge neighbouring dims that every operand walks contiguously (stride[d] == stride[d+1]*shape[d+1])."""
    dims = [[shape[d], [s[d] for s in strides]] for d in range(len(shape)) if shape[d] != 1]
    merged: list = []
    for size, st in dims:
        if merged and all(prev == cur * size for prev, cur in zip(merged[-1][1], st, strict=True)):
            merged[-1] = [merged[-1][0] * size, st]
        else:
            merged.append([size, st])
    return [m[0] for m in merged], [[m[1][i] for m in merged] for i in range(len(strides))]


def _rows(shape: list[int], strides: list[list[int]]):
    """At least two dims (the kernel's rows and inner loop); a single long dim is cut into rows."""
    if len(shape) >= 2:
        return shape, strides
    if not shape:
        return [1, 1], [[0, 0] for _ in strides]
    n = shape[0]
    inner = math.gcd(n, _ROW_TARGET) if n > _ROW_TARGET else n
    if inner < 256:
        inner = n
    return [n // inner, inner], [[s[0] * inner, s[0]] for s in strides]


@functools.lru_cache(maxsize=4096)
def _iteration(shapes: tuple, full: tuple, split: int | None):
    """(shape, strides, materialise) for inputs of these shapes: computed once per shape combination,
    so a warm run pays a dict lookup, not the coalescing, per fused op."""
    strides = [_broadcast_strides(s, full) for s in shapes]
    if split is None:
        shape, strides = _rows(*_coalesce(list(full), strides))
        return np.asarray(shape, np.int64), np.asarray(strides, np.int64).reshape(len(shapes), -1), False
    outer, so = _coalesce(list(full[:split]), [s[:split] for s in strides])
    inner, si = _coalesce(list(full[split:]), [s[split:] for s in strides])
    if len(inner) > 1:  # a leaf broadcasting inside the reduced dims: materialise it, then it coalesces
        shape, strides, _ = _iteration((full,) * len(shapes), full, split)
        return shape, strides, True
    inner = inner or [1]
    si = [s or [0] for s in si]
    shape = [*outer, *inner] if outer else [1, *inner]
    strides = [[*a, *b] if outer else [0, *b] for a, b in zip(so, si, strict=True)]
    return np.asarray(shape, np.int64), np.asarray(strides, np.int64).reshape(len(shapes), -1), False


def layout(arrays: list[np.ndarray], full: tuple, split: int | None = None):
    """(flat inputs, shape, strides) for the kernel: ``split`` dims (the reduced ones) stay the inner one."""
    shape, strides, materialise = _iteration(tuple(a.shape for a in arrays), tuple(full), split)
    if materialise:
        arrays = [np.broadcast_to(a, full) for a in arrays]
    return [np.ascontiguousarray(a).reshape(-1) for a in arrays], shape, strides


def _reduced(shape: tuple, axis, keepdim: bool) -> tuple:
    axes = normalize_axes("fused_elementwise", axis, len(shape))
    if keepdim:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _check_trailing(axis, ndim: int) -> int:
    axes = sorted(normalize_axes("fused_elementwise", axis, ndim))
    if axes != list(range(ndim - len(axes), ndim)):
        raise ShapeError(f"fused_elementwise: a fused reduction must be over the last axes, got axis={axis}")
    return ndim - len(axes)


def _forward(ctx, *arrays, body, ops, dtype, reduce=None, axis=None, keepdim=False, inplace=None):
    dtype = np.dtype(dtype)
    kernel = get_kernel(body, [a.dtype for a in arrays], dtype, reduce)
    try:
        full = np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        shapes = ", ".join(str(list(a.shape)) for a in arrays)
        raise ShapeError(f"fused_elementwise ({'+'.join(ops)}): inputs {shapes} do not broadcast together") from None
    if reduce is None:
        split = None
        target = arrays[inplace] if inplace is not None else None
        if (
            target is not None and target.shape == full and target.dtype == dtype
            and target.flags.c_contiguous and target.flags.writeable
        ):  # fmt: skip
            out = target
        else:
            out = np.empty(full, dtype)
    else:
        split = _check_trailing(axis, len(full))
        out = np.empty(_reduced(full, axis, keepdim), dtype)
    flat, shape, strides = layout(list(arrays), full, split)
    if out.size:
        kernel.function(out.reshape(-1), shape, strides, *flat)
    return out


def _infer(*specs, body, ops, dtype, reduce=None, axis=None, keepdim=False, inplace=None):
    if not specs:
        raise ValueError("fused_elementwise takes at least one input")
    check_body(body, len(specs))  # a model file's body is refused at load, before any source is generated
    if reduce is not None and reduce not in REDUCTIONS:
        raise ValueError(f"fused_elementwise: reduce={reduce!r} is not one of {sorted(REDUCTIONS)}")
    shape = broadcast_shapes("fused_elementwise", *(s.shape for s in specs))
    if reduce is not None:
        _check_trailing(axis, len(shape))
        shape = _reduced(shape, axis, keepdim)
    if inplace is not None and not (isinstance(inplace, int) and 0 <= inplace < len(specs)):
        raise ValueError(f"fused_elementwise: inplace={inplace!r} is not an input index")
    return Spec(tuple(symbolic.simplify(d) if isinstance(d, str) else d for d in shape), np.dtype(dtype))


fused_elementwise_op = OpDef("fused_elementwise", _forward, None, _infer, OPAQUE)
