"""Import rules for ONNX's tensor-making, shape and indexing ops: ConstantOfShape, Range, EyeLike,
Expand, Tile, Size, Split, Trilu, Pad, Gather*/Scatter*, TopK, NonZero, OneHot, Depth/SpaceToDepth,
CastLike.

Sizes, repeats, split points, pads and ``k`` must be known at import (initializers, Constants or
shape arithmetic) because a paddlectl program has static ranks and symbolic sizes, never sizes read
from data; a value that depends on the input data is refused by name (``Builder.require_known``).
"""

from __future__ import annotations

import numpy as np

from ...errors import ConversionError
from ..builder import is_symbolic
from ..dependency import onnx
from ..validate import tensor_array
from .base import Rule, attr_or_input, axis_of, dtype_of, known_list, one_of, rank, static_shape

_ALL = ["slice", None, None, None]


def _constant_of_shape(b, node, a, opset):
    shape = b.require_known(node.input[0], "the ConstantOfShape shape")
    value = tensor_array(a["value"], f"{b.where()}: attribute 'value'") if "value" in a else np.zeros(1, np.float32)
    if is_symbolic(shape):  # a fill shaped like a symbolic-size tensor: full_like needs that tensor
        raise ConversionError(f"{b.where()}: ConstantOfShape over symbolic sizes {shape.tolist()} is not supported")
    return [np.full([int(d) for d in shape.tolist()], value.reshape(-1)[0], dtype=value.dtype)]


def _range(b, node, a, opset):
    start, limit, delta = (b.require_known(n, f"the Range {w}") for n, w in zip(node.input, ("start", "limit", "delta"), strict=True))  # fmt: skip
    count = max(int(np.ceil((limit - start) / delta)), 0)
    return [(start + np.arange(count, dtype=start.dtype) * delta).astype(start.dtype)]


def _eye_like(b, node, a, opset):
    shape = static_shape(b, node.input[0], "EyeLike")
    dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(a["dtype"])) if "dtype" in a else dtype_of(b, node.input[0])
    return [np.eye(shape[0], shape[1], k=int(a.get("k", 0)), dtype=dtype)]


def _size(b, node, a, opset):
    shape = b.get(node.input[0]).shape
    if not all(isinstance(d, int) for d in shape):
        return [np.asarray("*".join(str(d) for d in shape), dtype=object)]
    return [np.asarray(int(np.prod(shape)), dtype=np.int64)]


def _expand(b, node, a, opset):
    """ONNX's Expand broadcasts both ways: a target dim of 1 keeps the input's size."""
    x = node.input[0]
    shape = tuple(b.get(x).shape)
    target = b.require_known(node.input[1], "the Expand shape").tolist()
    r = max(len(target), len(shape))
    lead = r - len(shape)
    padded = (1,) * lead + shape
    target = [1] * (r - len(target)) + target
    out = tuple(d if t == 1 else t for d, t in zip(padded, target, strict=True))
    if lead:
        (x,) = b.op("getitem", [x], spec=[["none"]] * lead + [_ALL] * len(shape))
    return b.op("expand", [x], shape=out)


def _tile(b, node, a, opset):
    reps = tuple(int(r) for r in known_list(b, node, 1, "the Tile repeats"))
    return b.op("tile", [node.input[0]], reps=reps)


def _split(b, node, a, opset):
    x = node.input[0]
    axis = axis_of(int(a.get("axis", 0)), rank(b, x))
    n = b.get(x).shape[axis]
    sections = attr_or_input(b, node, a, "split", 1, 13, opset)
    if sections is None:
        if not isinstance(n, int):
            raise ConversionError(f"{b.where()}: Split of symbolic axis {axis} ({n}) needs explicit sizes")
        parts = int(a.get("num_outputs", len(node.output)))
        step = -(-n // parts)  # opset 18: the last part may be smaller
        sections = [min(step, n - i * step) for i in range(parts)]
    return b.op("split", [x], axis=axis, sections=tuple(int(s) for s in sections))


def _trilu(b, node, a, opset):
    k = known_list(b, node, 1, "the Trilu k")
    return b.op("triu" if a.get("upper", 1) else "tril", [node.input[0]], diagonal=int(k[0]) if k else 0)


_PAD_MODES = {"constant": "constant", "reflect": "reflect", "edge": "replicate", "wrap": "circular"}


def _pad(b, node, a, opset):
    x = node.input[0]
    r = rank(b, x)
    if opset < 11:
        pads, value, axes = list(a.get("pads", a.get("paddings", []))), float(a.get("value", 0.0)), None
    else:
        pads = known_list(b, node, 1, "the Pad pads")
        given = known_list(b, node, 2, "the Pad constant_value")
        value = given[0] if given else 0
        axes = known_list(b, node, 3, "the Pad axes")
    axes = list(range(r)) if axes is None else [axis_of(int(i), r) for i in axes]
    per_axis = [(0, 0)] * r
    for i, ax in enumerate(axes):
        per_axis[ax] = (int(pads[i]), int(pads[i + len(axes)]))
    return b.op("pad", [x], pads=tuple(per_axis), mode=_PAD_MODES[a.get("mode", "constant")], value=value)


def _gather(b, node, a, opset):
    x, index = node.input
    return b.op("gather", [x, index], axis=axis_of(int(a.get("axis", 0)), rank(b, x)))


def _gather_elements(b, node, a, opset):
    x, index = node.input
    return b.op("take_along_axis", [x, index], axis=axis_of(int(a.get("axis", 0)), rank(b, x)))


def _gather_nd(b, node, a, opset):
    if a.get("batch_dims", 0):
        raise ConversionError(f"{b.where()}: GatherND with batch_dims={a['batch_dims']} is not supported")
    return b.op("gather_nd", list(node.input))


_SCATTER_REDUCE = {"none": "assign", "add": "add", "mul": "mul", "max": "amax", "min": "amin"}


def _scatter_elements(b, node, a, opset):
    x, index, updates = node.input
    return b.op("put_along_axis", [x, index, updates], axis=axis_of(int(a.get("axis", 0)), rank(b, x)),
                reduce=_SCATTER_REDUCE[a.get("reduction", "none")], include_self=True)  # fmt: skip


def _scatter_nd(b, node, a, opset):
    """``add`` is scatter_nd_add; ``none`` clears the written positions first (scatter_nd_add of
    ones marks them), then adds."""
    x, index, updates = node.input
    reduction = a.get("reduction", "none")
    if reduction == "add":
        return b.op("scatter_nd_add", [x, index, updates])
    if reduction != "none":
        raise ConversionError(f"{b.where()}: ScatterND reduction={reduction!r} is not supported (none, add are)")
    (zeros,) = b.op("full_like", [x], value=0, dtype=dtype_of(b, x).name)
    (ones,) = b.op("full_like", [updates], value=1, dtype=dtype_of(b, x).name)
    (hit,) = b.op("scatter_nd_add", [zeros, index, ones])
    (written,) = b.op("greater_than", [hit, np.asarray(0, dtype_of(b, x))])
    (cleared,) = b.op("where", [written, zeros, x])
    return b.op("scatter_nd_add", [cleared, index, updates])


def _topk(b, node, a, opset):
    x = node.input[0]
    k = int(a["k"] if opset < 10 else known_list(b, node, 1, "the TopK k")[0])
    if not a.get("sorted", 1):
        raise ConversionError(f"{b.where()}: TopK sorted=0 is not supported (the order is unspecified there)")
    return b.op("topk", [x], k=k, axis=axis_of(int(a.get("axis", -1)), rank(b, x)), largest=bool(a.get("largest", 1)))


def _nonzero(b, node, a, opset):
    (idx,) = b.op("nonzero", [node.input[0]])
    return b.op("transpose", [idx], perm=[1, 0])  # ONNX: [rank, count]; ours: [count, rank]


def _one_hot(b, node, a, opset):
    """OneHot(indices, depth, values=[off, on]) at ``axis``; negative indices count from the end."""
    indices, depth_name, values_name = node.input
    depth = int(b.require_known(depth_name, "the OneHot depth").reshape(-1)[0])
    values = b.get(values_name)
    (idx,) = b.op("cast", [indices], dtype="int64")
    (neg,) = b.op("less_than", [idx, np.asarray(0, np.int64)])
    (wrapped,) = b.op("add", [idx, np.asarray(depth, np.int64)])
    (idx,) = b.op("where", [neg, wrapped, idx])
    (low,) = b.op("greater_equal", [idx, np.asarray(0, np.int64)])
    (high,) = b.op("less_than", [idx, np.asarray(depth, np.int64)])
    (valid,) = b.op("logical_and", [low, high])  # an index out of range gives an all-off row
    (idx,) = b.op("where", [valid, idx, np.asarray(0, np.int64)])
    (hot,) = b.op("one_hot", [idx], num_classes=depth)
    (mask,) = b.op("cast", [hot], dtype="bool")
    (valid,) = b.op("getitem", [valid], spec=[_ALL] * rank(b, indices) + [["none"]])
    (mask,) = b.op("logical_and", [mask, valid])
    spec = [["int", 0]]
    (off,) = b.op("getitem", [values], spec=spec)
    (on,) = b.op("getitem", [values], spec=[["int", 1]])
    (out,) = b.op("where", [mask, on, off])
    r = len(out.shape)
    axis = axis_of(int(a.get("axis", -1)), r)
    if axis != r - 1:
        (out,) = b.op("transpose", [out], perm=list(range(axis)) + [r - 1] + list(range(axis, r - 1)))
    return [out]


def _depth_space(to_space: bool):
    """DepthToSpace (DCR or CRD) / SpaceToDepth as reshape -> transpose -> reshape (fixed sizes)."""

    def convert(b, node, a, opset):
        x = node.input[0]
        n, c, h, w = static_shape(b, x, node.op_type)
        s = int(a["blocksize"])
        if to_space:
            if a.get("mode", "DCR") == "DCR":
                inner, perm = (n, s, s, c // (s * s), h, w), [0, 3, 4, 1, 5, 2]
            else:
                inner, perm = (n, c // (s * s), s, s, h, w), [0, 1, 4, 2, 5, 3]
            final = (n, c // (s * s), h * s, w * s)
        else:  # opset 28 gave SpaceToDepth DepthToSpace's modes
            crd = a.get("mode", "DCR") == "CRD"
            inner, perm = (n, c, h // s, s, w // s, s), [0, 1, 3, 5, 2, 4] if crd else [0, 3, 5, 1, 2, 4]
            final = (n, c * s * s, h // s, w // s)
        (y,) = b.op("reshape", [x], shape=inner)
        (y,) = b.op("transpose", [y], perm=perm)
        return b.op("reshape", [y], shape=final)

    return Rule(convert, frozenset({"blocksize", "mode"}), check=one_of("mode", ("DCR", "CRD"), "DCR"))


def _compress(b, node, a, opset):
    """The slices where ``condition`` holds (it must be known: the output's size depends on it)."""
    x = node.input[0]
    keep = np.flatnonzero(b.require_known(node.input[1], "the Compress condition").reshape(-1)).astype(np.int64)
    if "axis" not in a:
        (x,) = b.op("reshape", [x], shape=(-1,))
        return b.op("gather", [x, keep], axis=0)
    return b.op("gather", [x, keep], axis=axis_of(int(a["axis"]), rank(b, x)))


def _cast_like(b, node, a, opset):
    return b.op("cast", [node.input[0]], dtype=dtype_of(b, node.input[1]).name)


RULES: dict[str, Rule] = {
    "ConstantOfShape": Rule(_constant_of_shape, frozenset({"value"}), since=9),
    "Range": Rule(_range, since=11),
    "EyeLike": Rule(_eye_like, frozenset({"dtype", "k"})),
    "Size": Rule(_size),
    "Expand": Rule(_expand, since=8),
    "Tile": Rule(_tile, since=6),
    "Split": Rule(_split, frozenset({"axis", "split", "num_outputs"})),
    "Trilu": Rule(_trilu, frozenset({"upper"}), since=14),
    "Pad": Rule(_pad, frozenset({"mode", "pads", "value", "paddings"}), check=one_of("mode", _PAD_MODES, "constant")),
    "Gather": Rule(_gather, frozenset({"axis"})),
    "GatherElements": Rule(_gather_elements, frozenset({"axis"}), since=11),
    "GatherND": Rule(_gather_nd, frozenset({"batch_dims"}), since=11),
    "ScatterElements": Rule(
        _scatter_elements,
        frozenset({"axis", "reduction"}),
        since=11,
        check=one_of("reduction", _SCATTER_REDUCE, "none"),
    ),
    "Scatter": Rule(_scatter_elements, frozenset({"axis"}), since=9),  # ScatterElements' name before opset 11
    "ScatterND": Rule(_scatter_nd, frozenset({"reduction"}), since=11),
    "TopK": Rule(_topk, frozenset({"axis", "k", "largest", "sorted"})),
    "NonZero": Rule(_nonzero, since=9),
    "OneHot": Rule(_one_hot, frozenset({"axis"}), since=9),
    "DepthToSpace": _depth_space(True),
    "SpaceToDepth": _depth_space(False),
    "Compress": Rule(_compress, frozenset({"axis"}), since=9),
    "CastLike": Rule(_cast_like, frozenset({"saturate"}), since=15),
    "Einsum": Rule(
        lambda b, node, a, opset: b.op("einsum", list(node.input), equation=a["equation"].replace(" ", "")),
        frozenset({"equation"}),
        since=12,
    ),
    "Det": Rule(lambda b, node, a, opset: b.op("det", [node.input[0]])),
}
