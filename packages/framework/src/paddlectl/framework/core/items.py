"""Item independence: whether an op computes each item along a batched axis from that item alone.

A predictor may run a batch as parts on several threads (``inference.batch_split``) only when every
op of its program keeps the items apart. Each op says so in its record (``OpDef.items``): a rule
``items(attrs, axes, out_axes, shapes, out_shapes)`` given the batched axis of each input (None for
an input without one, a weight say) and of each output, and their shapes, or True for every case;
an op without one keeps a program whole. Elementwise and broadcasting ops get ``aligned`` and
reductions ``off_axis("axis")`` from their kind. The rules below are the shared shapes of answers.
"""

from __future__ import annotations

from . import symbolic


def _axes(value, rank: int) -> set[int]:
    """An ``axis`` attr (an int, a sequence, or None for every axis) as non-negative axes of ``rank``."""
    if value is None:
        return set(range(rank))
    values = value if isinstance(value, list | tuple) else (value,)
    return {int(a) % rank for a in values} if rank else set()


def leading(attrs, axes, out_axes, shapes, out_shapes) -> bool:
    """Ops over images in NCHW or NHWC (convolutions, pools, resizes): the batch is axis 0 throughout."""
    return axes[0] == 0 and all(a in (None, 0) for a in axes) and all(a == 0 for a in out_axes)


def aligned(attrs, axes, out_axes, shapes, out_shapes) -> bool:
    """Broadcasting ops: each batched input's axis is the output's, counted from the last axis."""
    out_from_end = len(out_shapes[0]) - out_axes[0]
    return all(a is None or len(s) - a == out_from_end for a, s in zip(axes, shapes, strict=True))


def off_axis(key: str, default=None):
    """The rule of ops that work along ``attrs[key]`` (softmax, concat, reductions): the items stay
    apart when that axis is not the batched one."""

    def rule(attrs, axes, out_axes, shapes, out_shapes) -> bool:
        along = attrs.get(key, default)
        return all(a is None or a not in _axes(along, len(s)) for a, s in zip(axes, shapes, strict=True))

    return rule


def transposed(attrs, axes, out_axes, shapes, out_shapes) -> bool:
    """A transpose moves the batched axis and nothing else about it."""
    return tuple(attrs["perm"])[out_axes[0]] == axes[0]


def regrouped(attrs, axes, out_axes, shapes, out_shapes) -> bool:
    """A reshape keeps each item whole when as many elements precede the batched axis before as after
    (row-major order: item i is then the same elements, in the same order, in both)."""
    before = symbolic.simplify(symbolic.product(shapes[0][: axes[0]]))
    after = symbolic.simplify(symbolic.product(out_shapes[0][: out_axes[0]]))
    return before == after


def sliced(attrs, axes, out_axes, shapes, out_shapes) -> bool:
    """Indexing by ints and slices that takes the batched axis whole."""
    spec = attrs["spec"]
    if any(item[0] not in ("int", "slice") for item in spec):
        return False
    return axes[0] >= len(spec) or tuple(spec[axes[0]]) == ("slice", None, None, None)


def fused(attrs, axes, out_axes, shapes, out_shapes) -> bool:
    """A fused elementwise group: aligned, and its trailing reduction (if any) off the batched axis."""
    if "reduce" in attrs:
        return off_axis("axis")(attrs, axes, out_axes, shapes, out_shapes)
    return aligned(attrs, axes, out_axes, shapes, out_shapes)


def whole_along_batch(attrs, axes, out_axes, shapes, out_shapes) -> bool:
    """A strided slice (``index``: start, stop, step per leading axis) that takes the batched axis whole."""
    index = attrs["index"]
    return axes[0] >= len(index) or tuple(index[axes[0]]) == (None, None, None)


def normalised_after(attrs, axes, out_axes, shapes, out_shapes) -> bool:
    """Layer norm over the axes from ``begin_axis``: the batched axis must come before them."""
    return axes[0] < int(attrs["begin_axis"]) % len(shapes[0]) and all(a is None for a in axes[1:])


def running_stats(attrs, axes, out_axes, shapes, out_shapes) -> bool:
    """Batch norm with its running statistics (inference): per item; with the batch's own, not."""
    inference = not attrs.get("use_batch_stats", False) and not attrs.get("training", False)
    return inference and leading(attrs, axes, out_axes, shapes, out_shapes)
