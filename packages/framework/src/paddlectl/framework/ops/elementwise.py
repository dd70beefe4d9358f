"""Elementwise and broadcasting math: arithmetic, comparisons, unary functions, where and clip."""

from __future__ import annotations

import numpy as np

from ..core.op import BROADCAST, ELEMENTWISE, OpDef
from ..core.shapes import compare, elementwise, same_as_first
from ..core.tensor import Tensor
from ..errors import ShapeError
from ._util import constant, tensor_args, unbroadcast
from .broadcast import sum_to

# ----- binary arithmetic ---------------------------------------------------------------------


def _binary(name: str, fn, grads):
    """A broadcasting binary op; ``grads(g, a, b, ctx)`` returns the unreduced (ga, gb), None where
    ``ctx.needs_input_grad`` says no."""

    def forward(ctx, a, b):
        try:
            return fn(a, b)
        except ValueError:
            raise ShapeError(
                f"{name}: shapes {list(a.shape)} and {list(b.shape)} cannot be broadcast together"
            ) from None

    def vjp(ctx, g):
        a, b = ctx.input(0), ctx.input(1)
        ga, gb = grads(g, a, b, ctx)
        return (
            sum_to(ga, a.shape) if ga is not None else None,
            sum_to(gb, b.shape) if gb is not None else None,
        )

    return OpDef(name, forward, vjp, elementwise(name), BROADCAST, tensor_vjp=True)


def _needed(ctx, ga, gb):
    """The pair of gradient thunks, each called only where its input needs a gradient."""
    n = ctx.needs_input_grad
    return (ga() if n[0] else None, gb() if n[1] else None)


add = _binary("add", np.add, lambda g, a, b, ctx: (g, g))
subtract = _binary("subtract", np.subtract, lambda g, a, b, ctx: _needed(ctx, lambda: g, lambda: -g))
multiply = _binary("multiply", np.multiply, lambda g, a, b, ctx: _needed(ctx, lambda: g * b, lambda: g * a))
divide = _binary(
    "divide",
    np.divide,
    lambda g, a, b, ctx: _needed(ctx, lambda: g / b, lambda: -g * ctx.output(0) / b),
)


def _pow_grads(g, a, b, ctx):
    return _needed(
        ctx,
        lambda: g * b * a ** (b - 1),
        lambda: g * ctx.output(0) * log(where_op(a > 0, a, constant(1, a.dtype))),
    )


elementwise_pow = _binary("elementwise_pow", np.power, _pow_grads)
maximum = _binary(
    "maximum",
    np.maximum,
    lambda g, a, b, ctx: _needed(ctx, lambda: g * (a >= b), lambda: g * (a < b)),
)
minimum = _binary(
    "minimum",
    np.minimum,
    lambda g, a, b, ctx: _needed(ctx, lambda: g * (a <= b), lambda: g * (a > b)),
)


def _nondiff_binary(name: str, fn, rule=elementwise):
    return OpDef(name, lambda ctx, a, b: fn(a, b), None, rule(name), BROADCAST)


floor_divide = _nondiff_binary("floor_divide", np.floor_divide)
remainder = _nondiff_binary("remainder", np.mod)
equal = _nondiff_binary("equal", np.equal, compare)
not_equal = _nondiff_binary("not_equal", np.not_equal, compare)
less_than = _nondiff_binary("less_than", np.less, compare)
less_equal = _nondiff_binary("less_equal", np.less_equal, compare)
greater_than = _nondiff_binary("greater_than", np.greater, compare)
greater_equal = _nondiff_binary("greater_equal", np.greater_equal, compare)
logical_and = _nondiff_binary("logical_and", np.logical_and, compare)
logical_or = _nondiff_binary("logical_or", np.logical_or, compare)
logical_xor = _nondiff_binary("logical_xor", np.logical_xor, compare)
bitwise_and = _nondiff_binary("bitwise_and", np.bitwise_and)
bitwise_or = _nondiff_binary("bitwise_or", np.bitwise_or)

# ----- unary ---------------------------------------------------------------------------------


def unary(name: str, fn, derivative=None, kind: str = ELEMENTWISE) -> OpDef:
    """An elementwise op; ``derivative(x, out)`` (Tensors; ``out()`` gives the output) is the local
    derivative, None for a piecewise-constant op."""

    def vjp(ctx, g):
        x = ctx.input(0)
        if derivative is None:
            return constant(np.zeros(x._data.shape, dtype=g.dtype))
        return g * derivative(x, lambda: ctx.output(0))

    return OpDef(name, lambda ctx, x: fn(x), vjp, same_as_first, kind, tensor_vjp=True)


neg = unary("neg", np.negative, lambda x, o: constant(-1, x.dtype))
exp = unary("exp", np.exp, lambda x, o: o())
expm1 = unary("expm1", np.expm1, lambda x, o: o() + 1)
log = unary("log", np.log, lambda x, o: 1 / x)
log2 = unary("log2", np.log2, lambda x, o: 1 / (x * float(np.log(2))))
log10 = unary("log10", np.log10, lambda x, o: 1 / (x * float(np.log(10))))
log1p = unary("log1p", np.log1p, lambda x, o: 1 / (1 + x))
sqrt = unary("sqrt", np.sqrt, lambda x, o: 0.5 / o())
rsqrt = unary("rsqrt", lambda x: 1 / np.sqrt(x), lambda x, o: -0.5 * o() / x)
square = unary("square", np.square, lambda x, o: 2 * x)
reciprocal = unary("reciprocal", np.reciprocal, lambda x, o: -o() * o())
abs = unary("abs", np.abs, lambda x, o: sign(x))  # noqa: A001 - Paddle's name
sin = unary("sin", np.sin, lambda x, o: cos(x))
cos = unary("cos", np.cos, lambda x, o: -sin(x))
tan = unary("tan", np.tan, lambda x, o: 1 + o() * o())
asin = unary("asin", np.arcsin, lambda x, o: rsqrt(1 - x * x))
acos = unary("acos", np.arccos, lambda x, o: -rsqrt(1 - x * x))
atan = unary("atan", np.arctan, lambda x, o: 1 / (1 + x * x))
sinh = unary("sinh", np.sinh, lambda x, o: cosh(x))
cosh = unary("cosh", np.cosh, lambda x, o: sinh(x))
tanh = unary("tanh", np.tanh, lambda x, o: 1 - o() * o())
floor = unary("floor", np.floor)
ceil = unary("ceil", np.ceil)
round = unary("round", np.round)  # noqa: A001
trunc = unary("trunc", np.trunc)
sign = unary("sign", np.sign)


def _erf(x):
    from ..kernels.special import erf as kernel

    return kernel(x) if x.dtype.kind == "f" and x.dtype.itemsize >= 4 else kernel(x.astype("float32")).astype(x.dtype)


erf = unary("erf", _erf, lambda x, o: float(2 / np.sqrt(np.pi)) * exp(-x * x))

isnan = OpDef("isnan", lambda ctx, x: np.isnan(x), None, compare("isnan"), ELEMENTWISE)
isinf = OpDef("isinf", lambda ctx, x: np.isinf(x), None, compare("isinf"), ELEMENTWISE)
isfinite = OpDef("isfinite", lambda ctx, x: np.isfinite(x), None, compare("isfinite"), ELEMENTWISE)
logical_not = OpDef("logical_not", lambda ctx, x: np.logical_not(x), None, compare("logical_not"), ELEMENTWISE)


def _scale_forward(ctx, x, scale=1.0, bias=0.0, bias_after_scale=True):
    if bias_after_scale:
        return (x * x.dtype.type(scale) + x.dtype.type(bias)).astype(x.dtype, copy=False)
    return ((x + x.dtype.type(bias)) * x.dtype.type(scale)).astype(x.dtype, copy=False)


scale_op = OpDef(
    "scale", _scale_forward, lambda ctx, g: g * g.dtype.type(ctx.attrs.get("scale", 1.0)), same_as_first, ELEMENTWISE
)


def _cast_forward(ctx, x, dtype):
    ctx.source = x.dtype
    return x.astype(dtype, copy=False)


def _cast_vjp(ctx, g):
    return g.astype(ctx.source)


def _cast_infer(x, dtype):
    from ..core.op import Spec

    return Spec(x.shape, np.dtype(dtype))


cast_op = OpDef("cast", _cast_forward, _cast_vjp, _cast_infer, ELEMENTWISE)

# ----- selection -----------------------------------------------------------------------------


def _where_forward(ctx, cond, x, y):
    ctx.save(cond, x.shape, y.shape)
    return np.where(cond, x, y)


def _where_vjp(ctx, g):
    cond, xs, ys = ctx.saved
    zero = np.zeros((), dtype=g.dtype)
    gx = unbroadcast(np.where(cond, g, zero), xs) if ctx.needs_input_grad[1] else None
    gy = unbroadcast(np.where(cond, zero, g), ys) if ctx.needs_input_grad[2] else None
    return None, gx, gy


def _where_infer(cond, x, y):
    from ..core.op import Spec
    from ..core.shapes import broadcast_shapes

    return Spec(broadcast_shapes("where", cond.shape, x.shape, y.shape), np.result_type(x.dtype, y.dtype))


where_op = OpDef("where", _where_forward, _where_vjp, _where_infer, BROADCAST)


def _clip_forward(ctx, x, min=None, max=None):  # noqa: A002 - Paddle's names
    ctx.save(x)
    return np.clip(x, min, max).astype(x.dtype, copy=False)


def _clip_vjp(ctx, g):
    (x,) = ctx.saved
    lo, hi = ctx.attrs.get("min"), ctx.attrs.get("max")
    mask = np.ones(x.shape, dtype=bool)
    if lo is not None:
        mask &= x >= lo
    if hi is not None:
        mask &= x <= hi
    return g * mask


clip_op = OpDef("clip", _clip_forward, _clip_vjp, same_as_first, ELEMENTWISE)

# ----- public functions ----------------------------------------------------------------------


def _binary_fn(op: OpDef):
    def fn(x, y, name=None):
        return op(*tensor_args(x, y))

    fn.__name__ = op.name
    fn.__doc__ = f"Elementwise ``{op.name}`` with NumPy broadcasting (Paddle: ``paddle.{op.name}``)."
    return fn


def pow(x, y, name=None):  # noqa: A001
    """``x ** y``; ``y`` may be a Python number or a tensor."""
    return elementwise_pow(*tensor_args(x, y))


def scale(x, scale=1.0, bias=0.0, bias_after_scale=True, act=None, name=None):
    return scale_op(x, scale=float(scale), bias=float(bias), bias_after_scale=bool(bias_after_scale))


def cast(x, dtype):
    from ..core.dtype import convert_dtype

    return cast_op(x, dtype=convert_dtype(dtype).name)


def where(condition, x, y, name=None):
    """``x`` where ``condition`` holds, else ``y`` (the one-argument form is ``index.where``)."""
    if not isinstance(condition, Tensor):
        condition = constant(condition, bool)
    return where_op(condition, *tensor_args(x, y))


def clip(x, min=None, max=None, name=None):  # noqa: A002
    lo = float(min.item()) if isinstance(min, Tensor) else min
    hi = float(max.item()) if isinstance(max, Tensor) else max
    return clip_op(x, min=lo, max=hi)


BINARY = {
    op.name: _binary_fn(op)
    for op in (
        add, subtract, multiply, divide, maximum, minimum, floor_divide, remainder, equal, not_equal,
        less_than, less_equal, greater_than, greater_equal, logical_and, logical_or, logical_xor,
        bitwise_and, bitwise_or,
    )
}  # fmt: skip


def _unary_fn(op: OpDef):
    def fn(x, name=None):
        return op(x)

    fn.__name__ = op.name
    fn.__doc__ = f"Elementwise ``{op.name}`` (Paddle: ``paddle.{op.name}``)."
    return fn


UNARY = {
    op.name: _unary_fn(op)
    for op in (
        neg, exp, expm1, log, log2, log10, log1p, sqrt, rsqrt, square, reciprocal, abs, sin, cos, tan, asin,
        acos, atan, sinh, cosh, tanh, floor, ceil, round, trunc, sign, erf, isnan, isinf, isfinite, logical_not,
    )
}  # fmt: skip
