"""Import rules for ONNX's reductions along axes: Reduce*, ArgMax/ArgMin, CumSum/CumProd.

Reduce ops take ``axes`` as an attribute up to opset 12 (ReduceSum) or 17 (the others) and as an
optional input after; ``noop_with_empty_axes`` (opset 13/18 on) keeps the input as it is when no
axes are given. ONNX keeps the input's element type, which NumPy's integer sums and products do
not, so the result is cast back where they differ.
"""

from __future__ import annotations

import numpy as np

from ...errors import ConversionError
from .base import Rule, attr_or_input, axis_of, dtype_of, keep_dtype, known_list, rank

# ONNX op -> (elementwise op before, framework reduction, elementwise op after)
_REDUCTIONS = {
    "ReduceSum": (None, "sum", None), "ReduceMean": (None, "mean", None), "ReduceMax": (None, "max", None),
    "ReduceMin": (None, "min", None), "ReduceProd": (None, "prod", None), "ReduceL1": ("abs", "sum", None),
    "ReduceL2": ("square", "sum", "sqrt"), "ReduceSumSquare": ("square", "sum", None),
    "ReduceLogSum": (None, "sum", "log"), "ReduceLogSumExp": (None, "logsumexp", None),
}  # fmt: skip


def _reduce(onnx_op: str) -> Rule:
    before, op, after = _REDUCTIONS[onnx_op]
    axes_input_from = 13 if onnx_op == "ReduceSum" else 18

    def convert(b, node, a, opset):
        x = node.input[0]
        axes = attr_or_input(b, node, a, "axes", 1, axes_input_from, opset)
        if not axes and a.get("noop_with_empty_axes", 0):
            return [b.get(x)]
        r = rank(b, x)
        axis = None if not axes else sorted(axis_of(int(i), r) for i in axes)
        shape = b.get(x).shape
        if any(shape[i] == 0 for i in (axis if axis is not None else range(r))):
            return [_empty_reduction(onnx_op, shape, axis, bool(a.get("keepdims", 1)), dtype_of(b, x))]
        out = x
        if before:
            (out,) = b.op(before, [out])
        (out,) = b.op(op, [out], axis=axis, keepdim=bool(a.get("keepdims", 1)))
        if after:
            (out,) = b.op(after, [out])
        return [keep_dtype(b, out, x)]

    return Rule(convert, frozenset({"axes", "keepdims", "noop_with_empty_axes"}))


_EMPTY = {"ReduceMax": -np.inf, "ReduceMin": np.inf, "ReduceLogSumExp": -np.inf, "ReduceLogSum": -np.inf,
          "ReduceProd": 1, "ReduceMean": np.nan}  # fmt: skip


def _empty_reduction(onnx_op: str, shape: tuple, axis, keep: bool, dtype: np.dtype) -> np.ndarray:
    """A reduction over an empty axis is its identity (ONNX: -inf for max, +inf for min, 0 for sums)."""
    reduced = set(range(len(shape)) if axis is None else axis)
    out = [1 if i in reduced else d for i, d in enumerate(shape) if keep or i not in reduced]
    if not all(isinstance(d, int) for d in out):
        raise ConversionError(f"reduction over an empty axis with symbolic other sizes {list(shape)}")
    fill = _EMPTY.get(onnx_op, 0)
    if dtype.kind in "iu" and np.isinf(fill):
        fill = np.iinfo(dtype).min if fill < 0 else np.iinfo(dtype).max
    elif dtype.kind == "b" and np.isinf(fill):
        fill = fill > 0
    return np.full(out, fill, dtype=dtype)


def _arg(op: str) -> Rule:
    """ArgMax/ArgMin; ``select_last_index`` searches the flipped axis and maps the index back."""

    def convert(b, node, a, opset):
        x = node.input[0]
        axis = axis_of(int(a.get("axis", 0)), rank(b, x))
        keep = bool(a.get("keepdims", 1))
        if not a.get("select_last_index", 0):
            return b.op(op, [x], axis=axis, keepdim=keep, dtype="int64")
        n = b.get(x).shape[axis]
        if not isinstance(n, int):
            raise ConversionError(f"{b.where()}: select_last_index=1 needs a fixed size on axis {axis}, got {n}")
        (flipped,) = b.op("flip", [x], axis=[axis])
        (idx,) = b.op(op, [flipped], axis=axis, keepdim=keep, dtype="int64")
        return b.op("subtract", [np.asarray(n - 1, np.int64), idx])

    return Rule(convert, frozenset({"axis", "keepdims", "select_last_index"}))


def _cumulative(op: str, identity: int) -> Rule:
    """CumSum/CumProd: ``reverse`` runs from the end, ``exclusive`` shifts by one (the identity first)."""

    def convert(b, node, a, opset):
        x = node.input[0]
        r = rank(b, x)
        axis = axis_of(int(known_list(b, node, 1, f"the {node.op_type} axis")[0]), r)
        reverse = bool(a.get("reverse", 0))
        out = x
        if dtype_of(b, x).kind in "iub":  # accumulate in 64 bits, as NumPy does, then cast back
            (out,) = b.op("cast", [out], dtype="uint64" if dtype_of(b, x).kind == "u" else "int64")
        if reverse:
            (out,) = b.op("flip", [out], axis=[axis])
        (out,) = b.op(op, [out], axis=axis)
        out = keep_dtype(b, out, x)
        if a.get("exclusive", 0):
            spec = [["slice", None, None, None]] * r
            (head,) = b.op("getitem", [out], spec=spec[:axis] + [["slice", 0, 1, None]] + spec[axis + 1 :])
            (head,) = b.op("full_like", [head], value=identity, dtype=dtype_of(b, x).name)
            (tail,) = b.op("getitem", [out], spec=spec[:axis] + [["slice", None, -1, None]] + spec[axis + 1 :])
            (out,) = b.op("concat", [head, tail], axis=axis)
        if reverse:
            (out,) = b.op("flip", [out], axis=[axis])
        return [keep_dtype(b, out, x)]

    return Rule(convert, frozenset({"exclusive", "reverse"}))


RULES: dict[str, Rule] = {
    **{name: _reduce(name) for name in _REDUCTIONS},
    "ArgMax": _arg("argmax"),
    "ArgMin": _arg("argmin"),
    "CumSum": _cumulative("cumsum", 0),
    "CumProd": _cumulative("cumprod", 1),
}
