"""Elementwise math beyond ops/elementwise.py: atan2, NaN-ignoring fmax/fmin and integer division
as ops; lerp, logit, inverse hyperbolics, logaddexp, hypot, nan_to_num, heaviside, copysign and
Paddle's other spellings of arithmetic (clamp, mul, sub, div, ...) as compositions of ops."""

from __future__ import annotations

import numpy as np

from ..core.op import BROADCAST, OpDef, Sample, Spec
from ..core.shapes import broadcast_shapes
from ..core.tensor import Tensor
from . import elementwise as ew
from ._util import constant, tensor_args
from .elementwise import _binary, _needed
from .predicates import signbit

B, U = ew.BINARY, ew.UNARY

# ----- ops ------------------------------------------------------------------------------------


def _atan2_grads(g, a, b, ctx):
    denom = a * a + b * b
    denom = ew.where_op(denom == 0, constant(1, denom.dtype), denom)
    return _needed(ctx, lambda: g * b / denom, lambda: -g * a / denom)


atan2_op = _binary("atan2", np.arctan2, _atan2_grads)
atan2_op.exempt["compile"] = "kernels/codegen's fused bodies allow no math.atan2, so it has no scalar expression"


def _fext_grads(pick_a):
    def grads(g, a, b, ctx):
        mask = pick_a(a, b) | ew.isnan(b)
        return _needed(ctx, lambda: g * mask, lambda: g * ~mask)

    return grads


fmax_op = _binary(
    "fmax", np.fmax, _fext_grads(lambda a, b: a >= b), "(max({x}, {y}) if {x} == {x} else {y}) if {y} == {y} else {x}"
)


fmin_op = _binary(
    "fmin", np.fmin, _fext_grads(lambda a, b: a <= b), "(min({x}, {y}) if {x} == {x} else {y}) if {y} == {y} else {x}"
)


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


def _int_divide_forward(ctx, a, b, *, rounding_mode):
    out = np.floor_divide(a, b) if rounding_mode == "floor" else np.trunc(a / b)
    return out.astype(a.dtype)


int_divide_op = OpDef(
    "int_divide",
    _int_divide_forward,
    None,
    lambda a, b, rounding_mode: Spec(broadcast_shapes("div", a.shape, b.shape), a.dtype),
    BROADCAST,
    samples=lambda rng: [
        Sample((rng.integers(-9, 10, (3, 4)), rng.integers(1, 4, (4,))), {"rounding_mode": mode})
        for mode in ("floor", "trunc")
    ],
)


def div(x, y, name=None, *, rounding_mode=None, out=None):
    """True division; ``rounding_mode`` 'trunc' or 'floor' rounds the quotient."""
    if rounding_mode is None:
        return B["divide"](x, y)
    if rounding_mode not in ("trunc", "floor"):
        raise ValueError(f"div: rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}")
    if isinstance(x, Tensor) and x.dtype.kind in "iu" and (not isinstance(y, Tensor) or y.dtype.kind in "iu"):
        return int_divide_op(*tensor_args(x, y), rounding_mode=rounding_mode)
    q = B["divide"](x, y)
    return U["floor"](q) if rounding_mode == "floor" else U["trunc"](q)


# ----- compositions ---------------------------------------------------------------------------


def mul(x, y, name=None, *, out=None):
    return B["multiply"](x, y)


def clamp(x, min=None, max=None, name=None, *, out=None):  # noqa: A002 - Paddle's names
    return ew.clip(x, min, max)


def sub(x, y, name=None, *, alpha=1, out=None):
    return B["subtract"](x, y if alpha == 1 else y * alpha)


def true_divide(input, other, *, out=None):  # noqa: A002
    return B["divide"](input, other)


def negative(x, name=None):
    return U["neg"](x)


def positive(x, name=None):
    return x


def deg2rad(x, name=None):
    return x * (np.pi / 180.0) if x.dtype.kind == "f" else x.astype("float32") * (np.pi / 180.0)


def rad2deg(x, name=None):
    return x * (180.0 / np.pi) if x.dtype.kind == "f" else x.astype("float32") * (180.0 / np.pi)


def acosh(x, name=None, *, out=None):
    return U["log"](x + U["sqrt"](x * x - 1.0))


def asinh(x, name=None, *, out=None):
    """``sign(x) * log(|x| + sqrt(x^2 + 1))`` (stable for negative x)."""
    a = U["abs"](x)
    return U["sign"](x) * U["log"](a + U["sqrt"](a * a + 1.0))


def atanh(x, name=None, *, out=None):
    return (U["log1p"](x) - U["log1p"](-x)) * 0.5


def logaddexp(x, y, name=None):
    """``log(exp(x) + exp(y))`` computed as ``max + log1p(exp(-|x - y|))``."""
    return B["maximum"](x, y) + U["log1p"](U["exp"](-U["abs"](x - y)))


def hypot(x, y, name=None):
    return U["sqrt"](x * x + y * y)


def nan_to_num(x, nan=0.0, posinf=None, neginf=None, name=None):
    """NaN -> ``nan``, +inf -> ``posinf`` (default the dtype's max), -inf -> ``neginf`` (its min)."""
    info = np.finfo(x.dtype)
    hi = info.max if posinf is None else posinf
    lo = info.min if neginf is None else neginf
    out = ew.where(U["isnan"](x), constant(nan, x.dtype), x)
    out = ew.where(out == np.inf, constant(hi, x.dtype), out)
    return ew.where(out == -np.inf, constant(lo, x.dtype), out)


def sgn(x, name=None):
    return U["sign"](x)


def heaviside(x, y, name=None):
    """0 where x < 0, ``y`` where x == 0, 1 where x > 0 (no gradient into x, as in Paddle)."""
    x, y = (x, y) if isinstance(y, Tensor) else (x, constant(y, x.dtype))
    zero, one = constant(0, x.dtype), constant(1, x.dtype)
    return ew.where(x.detach() == 0, y, ew.where(x.detach() > 0, one, zero))


def copysign(x, y, name=None):
    """``|x|`` with the sign bit of ``y`` (so -0.0 counts as negative); the gradient flows to x."""
    y = y if isinstance(y, Tensor) else constant(y)
    return U["abs"](x) * ew.where(signbit(y), constant(-1, x.dtype), constant(1, x.dtype))


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


TENSOR_METHODS = [
    "atan2", "fmax", "fmin", "div", "mul", "clamp", "sub", "true_divide", "negative", "deg2rad", "rad2deg", "acosh",
    "asinh", "atanh", "logaddexp", "hypot", "nan_to_num", "sgn", "heaviside", "copysign", "lerp", "frac", "mod",
    "floor_mod", "logit",
]  # fmt: skip
TOP_LEVEL = TENSOR_METHODS + ["positive"]
