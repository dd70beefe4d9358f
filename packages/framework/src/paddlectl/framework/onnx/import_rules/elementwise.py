"""Import rules for ONNX's elementwise ops: math, comparisons, logic, bits, activations.

Each maps onto one framework op where one exists with ONNX's semantics, else onto a few (Softsign
is ``x / (1 + |x|)``, inverse hyperbolics are their logarithms). Variadic ops (Max, Min, Sum, Mean)
fold their inputs pairwise with broadcasting, as ONNX specifies.
"""

from __future__ import annotations

import numpy as np

from ..builder import Builder
from .base import Rule, binary, dtype_of, item, one_of, rank, unary


def _scalar(b: Builder, like: str, value) -> np.ndarray:
    """``value`` as a known 0-d array of ``like``'s dtype (folded, or a constant where needed)."""
    return np.asarray(value, dtype=dtype_of(b, like))


def _variadic(op_name: str, mean: bool = False) -> Rule:
    def convert(b, node, a, opset):
        (out,) = [node.input[0]] if len(node.input) == 1 else b.op(op_name, list(node.input[:2]))
        for name in node.input[2:]:
            (out,) = b.op(op_name, [out, name])
        if mean:
            (out,) = b.op("divide", [out, _scalar(b, node.input[0], len(node.input))])
        if isinstance(out, str):
            return [b.get(out)]
        return [out]

    return Rule(convert)


def _mod(b, node, a, opset):
    return b.op("fmod" if a.get("fmod", 0) else "remainder", list(node.input))


def _bitshift(b, node, a, opset):
    op = "bitwise_left_shift" if a["direction"] == "LEFT" else "bitwise_right_shift"
    return b.op(op, list(node.input))


def _isinf(b, node, a, opset):
    pos, neg = a.get("detect_positive", 1), a.get("detect_negative", 1)
    if pos and neg:
        return b.op("isinf", [node.input[0]])
    if pos or neg:
        return b.op("isposinf" if pos else "isneginf", [node.input[0]])
    (inf,) = b.op("isinf", [node.input[0]])
    return b.op("logical_and", [inf, np.asarray(False)])


def _softsign(b, node, a, opset):
    x = node.input[0]
    (absx,) = b.op("abs", [x])
    (den,) = b.op("add", [absx, _scalar(b, x, 1)])
    return b.op("divide", [x, den])


def _inverse_hyperbolic(kind: str) -> Rule:
    """asinh = log(x + sqrt(x^2 + 1)), acosh = log(x + sqrt(x^2 - 1)), atanh = log((1 + x) / (1 - x)) / 2."""

    def convert(b, node, a, opset):
        x = node.input[0]
        one = _scalar(b, x, 1)
        if kind == "atanh":
            (num,) = b.op("add", [one, x])
            (den,) = b.op("subtract", [one, x])
            (ratio,) = b.op("divide", [num, den])
            (log,) = b.op("log", [ratio])
            return b.op("multiply", [log, _scalar(b, x, 0.5)])
        (sq,) = b.op("square", [x])
        (inner,) = b.op("add" if kind == "asinh" else "subtract", [sq, one])
        (root,) = b.op("sqrt", [inner])
        (total,) = b.op("add", [x, root])
        return b.op("log", [total])

    return Rule(convert)


def _clip(b, node, a, opset):
    """Clip by opset: bounds are attributes before 11, optional inputs after (any dtype)."""
    if opset < 11:
        bounds = [a.get("min"), a.get("max")]
    else:
        bounds = [b.require_known(n, "a Clip bound").reshape(-1)[0] if n else None
                  for n in (list(node.input[1:3]) + ["", ""])[:2]]  # fmt: skip
    out = node.input[0]
    for op, bound in zip(("maximum", "minimum"), bounds, strict=True):
        if bound is not None:
            (out,) = b.op(op, [out, _scalar(b, node.input[0], bound)])
    return [b.get(out) if isinstance(out, str) else out]


def _activation(op_name: str, **attr_map) -> Rule:
    """``op_name`` with each of its attrs read from ONNX attribute ``onnx_name`` (default given)."""

    def convert(b, node, a, opset):
        attrs = {ours: float(a.get(theirs, default)) for ours, (theirs, default) in attr_map.items()}
        return b.op(op_name, [node.input[0]], **attrs)

    return Rule(convert, frozenset(theirs for theirs, _ in attr_map.values()))


def _gelu(b, node, a, opset):
    return b.op("gelu", [node.input[0]], approximate=a.get("approximate", "none") == "tanh")


def _prelu(b, node, a, opset):
    """ONNX's slope broadcasts against X (one per channel as [C, 1, 1], or a scalar; before opset 7
    a 1-D slope is one per channel)."""
    x, slope = node.input
    if opset < 7 and rank(b, slope) == 1 and item(b, slope).shape[0] != 1:  # opset 6: one slope per channel
        (slope,) = b.op("reshape", [slope], shape=(-1,) + (1,) * (rank(b, x) - 2))
    (neg,) = b.op("multiply", [x, slope])
    (positive,) = b.op("greater_than", [x, _scalar(b, x, 0)])
    return b.op("where", [positive, x, neg])


def _shrink(b, node, a, opset):
    x = node.input[0]
    lambd, bias = float(a.get("lambd", 0.5)), float(a.get("bias", 0.0))
    (low,) = b.op("less_than", [x, _scalar(b, x, -lambd)])
    (high,) = b.op("greater_than", [x, _scalar(b, x, lambd)])
    (up,) = b.op("add", [x, _scalar(b, x, bias)])
    (down,) = b.op("subtract", [x, _scalar(b, x, bias)])
    (out,) = b.op("where", [high, down, _scalar(b, x, 0)])
    return b.op("where", [low, up, out])


def _swish(b, node, a, opset):
    x = node.input[0]
    (scaled,) = b.op("multiply", [x, _scalar(b, x, a.get("alpha", 1.0))])
    (gate,) = b.op("sigmoid", [scaled])
    return b.op("multiply", [x, gate])


RULES: dict[str, Rule] = {
    "Abs": unary("abs"), "Floor": unary("floor"), "Ceil": unary("ceil"), "Round": unary("round"),
    "Reciprocal": unary("reciprocal"), "Sign": unary("sign"), "Log": unary("log"), "Erf": unary("erf"),
    "Sin": unary("sin"), "Cos": unary("cos"), "Tan": unary("tan"), "Asin": unary("asin"), "Acos": unary("acos"),
    "Atan": unary("atan"), "Sinh": unary("sinh"), "Cosh": unary("cosh"),
    "Asinh": _inverse_hyperbolic("asinh"), "Acosh": _inverse_hyperbolic("acosh"), "Atanh": _inverse_hyperbolic("atanh"),
    "IsNaN": unary("isnan"), "IsInf": Rule(_isinf, frozenset({"detect_positive", "detect_negative"})),
    "Not": unary("logical_not"), "And": binary("logical_and"), "Or": binary("logical_or"), "Xor": binary("logical_xor"),
    "BitwiseAnd": binary("bitwise_and"), "BitwiseOr": binary("bitwise_or"), "BitwiseXor": binary("bitwise_xor"),
    "BitwiseNot": unary("bitwise_not"), "BitShift": Rule(_bitshift, frozenset({"direction"}), check=one_of("direction", ("LEFT", "RIGHT"), None)),
    "Mod": Rule(_mod, frozenset({"fmod"})),
    "Equal": binary("equal"), "Greater": binary("greater_than"), "Less": binary("less_than"),
    "GreaterOrEqual": binary("greater_equal"), "LessOrEqual": binary("less_equal"),
    "Max": _variadic("maximum"), "Min": _variadic("minimum"), "Sum": _variadic("add"), "Mean": _variadic("add", True),
    "Where": Rule(lambda b, node, a, opset: b.op("where", list(node.input))),
    "Clip": Rule(_clip, frozenset({"min", "max"})),
    "Softsign": Rule(_softsign),
    "Elu": _activation("elu", alpha=("alpha", 1.0)),
    "Celu": _activation("celu", alpha=("alpha", 1.0)),
    "Selu": _activation("selu", alpha=("alpha", 1.67326319217681884765625), scale=("gamma", 1.05070102214813232421875)),
    "LeakyRelu": _activation("leaky_relu", negative_slope=("alpha", 0.01)),
    "ThresholdedRelu": _activation("thresholded_relu", threshold=("alpha", 1.0)),
    "Softplus": unary("softplus"), "Mish": unary("mish"), "HardSwish": unary("hardswish"),
    "Gelu": Rule(_gelu, frozenset({"approximate"}), check=one_of("approximate", ("none", "tanh"), "none")),
    "PRelu": Rule(_prelu),
    "Shrink": Rule(_shrink, frozenset({"bias", "lambd"})),
    "Swish": Rule(_swish, frozenset({"alpha"})),
}  # fmt: skip
