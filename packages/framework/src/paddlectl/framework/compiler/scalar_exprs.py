"""The per-op scalar expression table the fusion code generator builds kernels from.

Each entry turns one elementwise op into a Python/Numba scalar expression over its operands
``{x}`` (and ``{y}``, ``{z}``) and its attrs. ``T`` is the group's float type (``np.float32`` or
``np.float64``), so ``T(3.0)`` keeps float32 groups in float32 arithmetic as the eager kernels are.
NaN behaves as in the eager ops: Python's ``max(a, b)`` returns ``a`` when either is NaN, so
``max({x}, ...)`` keeps a NaN ``x`` and binary maximum/minimum check ``y`` explicitly.
An op without an entry (or whose attrs an entry refuses, by returning None) is not fused: it runs
its own kernel. Entries match the eager ops up to float rounding; ``tests/test_compiler.py``
checks every entry against its op's ``forward``.
"""

from __future__ import annotations

import math


def lit(value) -> str:
    """A float literal in the group's type."""
    return f"T({float(value)!r})"


def _scale(attrs):
    s, b = lit(attrs.get("scale", 1.0)), lit(attrs.get("bias", 0.0))
    if attrs.get("bias_after_scale", True):
        return f"{{x}} * {s} + {b}"
    return f"({{x}} + {b}) * {s}"


def _clip(attrs):
    lo, hi = attrs.get("min"), attrs.get("max")
    if not all(v is None or isinstance(v, int | float) for v in (lo, hi)):
        return None  # tensor bounds: run the op's own kernel
    expr = "{x}"
    if lo is not None:
        expr = f"max({expr}, {lit(lo)})"
    if hi is not None:
        expr = f"min({expr}, {lit(hi)})"
    return expr


def _gelu(attrs):
    if attrs.get("approximate", False):
        c = math.sqrt(2.0 / math.pi)
        return f"T(0.5) * {{x}} * (T(1.0) + math.tanh({lit(c)} * ({{x}} + T(0.044715) * {{x}} * {{x}} * {{x}})))"
    return f"T(0.5) * {{x}} * (T(1.0) + math.erf({{x}} * {lit(1.0 / math.sqrt(2.0))}))"


def _leaky(attrs):
    return f"{{x}} if {{x}} >= T(0.0) else {{x}} * {lit(attrs.get('negative_slope', 0.01))}"


def _elu(attrs):
    return f"{{x}} if {{x}} > T(0.0) else {lit(attrs.get('alpha', 1.0))} * math.expm1({{x}})"


def _hardsigmoid(attrs):
    return f"min(max({{x}} * {lit(attrs.get('slope', 0.1666667))} + {lit(attrs.get('offset', 0.5))}, T(0.0)), T(1.0))"


_SIGMOID = "(T(1.0) / (T(1.0) + math.exp(-{x})) if {x} >= T(0.0) else math.exp({x}) / (T(1.0) + math.exp({x})))"

EXPRS: dict = {
    # binary, broadcasting
    "add": "{x} + {y}",
    "subtract": "{x} - {y}",
    "multiply": "{x} * {y}",
    "divide": "{x} / {y}",
    "maximum": "max({x}, {y}) if {y} == {y} else {y}",  # NaN in either propagates, as np.maximum
    "minimum": "min({x}, {y}) if {y} == {y} else {y}",
    # unary math
    "neg": "-{x}",
    "exp": "math.exp({x})",
    "expm1": "math.expm1({x})",
    "log": "math.log({x})",
    "log1p": "math.log1p({x})",
    "sqrt": "math.sqrt({x})",
    "rsqrt": "T(1.0) / math.sqrt({x})",
    "square": "{x} * {x}",
    "reciprocal": "T(1.0) / {x}",
    "abs": "abs({x})",
    "sin": "math.sin({x})",
    "cos": "math.cos({x})",
    "tanh": "math.tanh({x})",
    "erf": "math.erf({x})",
    # activations
    "relu": "max({x}, T(0.0))",
    "relu6": "min(max({x}, T(0.0)), T(6.0))",
    "sigmoid": _SIGMOID,
    "silu": "{x} * " + _SIGMOID,
    "hardswish": "{x} * min(max({x} + T(3.0), T(0.0)), T(6.0)) / T(6.0)",
    "hardsigmoid": _hardsigmoid,
    "leaky_relu": _leaky,
    "elu": _elu,
    "gelu": _gelu,
    "scale": _scale,
    "clip": _clip,
}
"""op name -> template (or a function of the op's attrs giving one, None to refuse)."""

REDUCTIONS = {
    # name: (initial accumulator, combine(acc, v), finish(acc, count))
    "sum": ("0.0", "{acc} + {v}", "{acc}"),
    "mean": ("0.0", "{acc} + {v}", "{acc} / {n}"),
    "max": ("-math.inf", "{acc} if {acc} != {acc} or {acc} >= {v} else {v}", "{acc}"),
    "min": ("math.inf", "{acc} if {acc} != {acc} or {acc} <= {v} else {v}", "{acc}"),
}
"""Reductions a fused group may end with; sums accumulate in float64, a NaN wins max/min as in NumPy."""


def template(op_name: str, attrs: dict) -> str | None:
    """The expression template for one op, or None when it has no entry for these attrs."""
    entry = EXPRS.get(op_name)
    if entry is None or isinstance(entry, str):
        return entry
    return entry(attrs)


def expression(op_name: str, attrs: dict, operands: list[str]) -> str | None:
    """The op applied to operand expressions (names such as ``x0``, ``t3``), parenthesised."""
    text = template(op_name, attrs)
    if text is None:
        return None
    names = dict(zip(("x", "y", "z"), (f"({o})" if not o.isidentifier() else o for o in operands), strict=False))
    return text.format(**names)
