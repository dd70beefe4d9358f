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
        out = x
        if before:
            (out,) = b.op(before, [out])
        (out,) = b.op(op, [out], axis=axis, keepdim=bool(a.get("keepdims", 1)))
        if after:
            (out,) = b.op(after, [out])
        return [keep_dtype(b, out, x)]

    return Rule(convert, frozenset({"axes", "keepdims", "noop_with_empty_axes"}))


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
