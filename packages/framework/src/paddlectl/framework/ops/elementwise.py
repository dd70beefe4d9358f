"""Elementwise and broadcasting math: arithmetic, comparisons, unary functions, where and clip."""

from __future__ import annotations

import numpy as np

from ..core.dtype import real_of
from ..core.op import BROADCAST, ELEMENTWISE, OPAQUE, OpDef, Sample, Spec
from ..core.shapes import broadcast_shapes, compare, elementwise, same_as_first
from ..core.tensor import Tensor
from ..errors import ShapeError
from ..kernels.codegen import lit
from ._util import constant, real_only, refuse_complex, tensor_args
from .broadcast import sum_to

# ----- binary arithmetic ---------------------------------------------------------------------


def _binary(name: str, fn, grads, expr: str | None = None):
    """A broadcasting binary op; ``grads(g, a, b, ctx)`` returns the unreduced (ga, gb), None where
    ``ctx.needs_input_grad`` says no; ``expr`` its scalar expression (see ``kernels.codegen``)."""

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
            sum_to(ga, a) if ga is not None else None,
            sum_to(gb, b) if gb is not None else None,
        )

    return OpDef(name, forward, vjp, elementwise(name), BROADCAST, expr=expr)


def _needed(ctx, ga, gb):
    """The pair of gradient thunks, each called only where its input needs a gradient."""
    n = ctx.needs_input_grad
    return (ga() if n[0] else None, gb() if n[1] else None)


def _complex_sample(rng):
    return Sample((rng.uniform(-2, 2, (3, 4)) + 1j * rng.uniform(-2, 2, (3, 4)),))


conj_op = OpDef(
    "conj",
    lambda ctx, x: np.conj(x),
    lambda ctx, g: conj_op(g),
    same_as_first,
    OPAQUE,  # complex values: the fused kernels compute in one float type
    samples=lambda rng: [_complex_sample(rng)],
)


def conj_if_complex(t: Tensor) -> Tensor:
    """``t`` conjugated where complex: a holomorphic op's vjp multiplies ``g`` by the conjugate of its
    derivative, so that a real loss's gradient comes back as ``dL/dRe + i dL/dIm`` (Paddle's convention)."""
    return conj_op(t) if t.dtype.kind == "c" else t


add = _binary("add", np.add, lambda g, a, b, ctx: (g, g), "{x} + {y}")
subtract = _binary("subtract", np.subtract, lambda g, a, b, ctx: _needed(ctx, lambda: g, lambda: -g), "{x} - {y}")
multiply = _binary(
    "multiply",
    np.multiply,
    lambda g, a, b, ctx: _needed(ctx, lambda: g * conj_if_complex(b), lambda: g * conj_if_complex(a)),
    "{x} * {y}",
)
divide = _binary(
    "divide",
    np.divide,
    lambda g, a, b, ctx: _needed(ctx, lambda: g / conj_if_complex(b), lambda: -g * conj_if_complex(ctx.output(0) / b)),
    "{x} / {y}",
)


def _pow_grads(g, a, b, ctx):
    return _needed(
        ctx,
        lambda: g * conj_if_complex(b * a ** (b - 1)),
        lambda: g * ctx.output(0) * log(where_op(a > 0, a, constant(1, a.dtype))),
    )


elementwise_pow = _binary("elementwise_pow", np.power, _pow_grads, "{x} ** {y}")
maximum = _binary(
    "maximum",
    real_only("maximum", np.maximum),
    lambda g, a, b, ctx: _needed(ctx, lambda: g * (a >= b), lambda: g * (a < b)),
    "max({x}, {y}) if {y} == {y} else {y}",  # NaN in either propagates, as np.maximum
)
minimum = _binary(
    "minimum",
    real_only("minimum", np.minimum),
    lambda g, a, b, ctx: _needed(ctx, lambda: g * (a <= b), lambda: g * (a > b)),
    "min({x}, {y}) if {y} == {y} else {y}",
)


def _nondiff_binary(name: str, fn, rule=elementwise, **record):
    return OpDef(name, lambda ctx, a, b: fn(a, b), None, rule(name), BROADCAST, **record)


def _integers(rng):
    return [Sample((rng.integers(0, 16, (3, 4)), rng.integers(0, 16, (4,))))]


_FLOORED = {"compile": "no NaN-safe floor in the kernel grammar: Numba's math.floor returns an integer"}
floor_divide = _nondiff_binary("floor_divide", real_only("floor_divide", np.floor_divide), exempt=_FLOORED)
remainder = _nondiff_binary("remainder", real_only("remainder", np.mod), exempt=_FLOORED)
equal = _nondiff_binary("equal", np.equal, compare)
not_equal = _nondiff_binary("not_equal", np.not_equal, compare)
less_than = _nondiff_binary("less_than", np.less, compare)
less_equal = _nondiff_binary("less_equal", np.less_equal, compare)
greater_than = _nondiff_binary("greater_than", np.greater, compare)
greater_equal = _nondiff_binary("greater_equal", np.greater_equal, compare)
logical_and = _nondiff_binary("logical_and", np.logical_and, compare)
logical_or = _nondiff_binary("logical_or", np.logical_or, compare)
logical_xor = _nondiff_binary("logical_xor", np.logical_xor, compare)
bitwise_and = _nondiff_binary("bitwise_and", np.bitwise_and, samples=_integers)
bitwise_or = _nondiff_binary("bitwise_or", np.bitwise_or, samples=_integers)

# ----- unary ---------------------------------------------------------------------------------


def unary(name: str, fn, derivative=None, kind: str = ELEMENTWISE, infer=same_as_first, **record) -> OpDef:
    """An elementwise op; ``derivative(x, out)`` (Tensors; ``out()`` gives the output) is the local
    derivative, None for a piecewise-constant op; ``record`` its optional OpDef fields (``expr``...)."""

    def vjp(ctx, g):
        x = ctx.input(0)
        if derivative is None:
            return constant(np.zeros(x._data.shape, dtype=g.dtype))
        local = derivative(x, lambda: ctx.output(0))
        # holomorphic on a complex input (a complex output): the conjugate derivative; a real-valued
        # function of z (abs) already gives dL/dRe + i dL/dIm
        return g * (conj_if_complex(local) if g.dtype.kind == "c" else local)

    return OpDef(name, lambda ctx, x: fn(x), vjp, infer, kind, **record)


def _unit_interval(rng):
    """Inputs inside (-1, 1), away from its ends, for ops defined only there."""
    return [Sample((rng.uniform(-0.9, 0.9, (3, 4)),))]


neg = unary("neg", np.negative, lambda x, o: constant(-1, x.dtype), expr="-{x}")
exp = unary("exp", np.exp, lambda x, o: o(), expr="math.exp({x})")
expm1 = unary("expm1", np.expm1, lambda x, o: o() + 1, expr="math.expm1({x})")
log = unary("log", np.log, lambda x, o: 1 / x, expr="math.log({x})")
log2 = unary("log2", np.log2, lambda x, o: 1 / (x * float(np.log(2))), expr="math.log2({x})")
log10 = unary("log10", np.log10, lambda x, o: 1 / (x * float(np.log(10))), expr="math.log10({x})")
log1p = unary("log1p", np.log1p, lambda x, o: 1 / (1 + x), expr="math.log1p({x})")
sqrt = unary("sqrt", np.sqrt, lambda x, o: 0.5 / o(), expr="math.sqrt({x})")
rsqrt = unary("rsqrt", lambda x: 1 / np.sqrt(x), lambda x, o: -0.5 * o() / x, expr="T(1.0) / math.sqrt({x})")
square = unary("square", np.square, lambda x, o: 2 * x, expr="{x} * {x}")
reciprocal = unary("reciprocal", np.reciprocal, lambda x, o: -o() * o(), expr="T(1.0) / {x}")
abs = unary(  # noqa: A001 - Paddle's name
    "abs", np.abs, lambda x, o: sign(x), infer=lambda x: Spec(x.shape, real_of(np.dtype(x.dtype))), expr="abs({x})"
)  # a complex input's magnitudes are real
sin = unary("sin", np.sin, lambda x, o: cos(x), expr="math.sin({x})")
cos = unary("cos", np.cos, lambda x, o: -sin(x), expr="math.cos({x})")
tan = unary("tan", np.tan, lambda x, o: 1 + o() * o(), expr="math.tan({x})")
asin = unary("asin", np.arcsin, lambda x, o: rsqrt(1 - x * x), expr="math.asin({x})", samples=_unit_interval)
acos = unary("acos", np.arccos, lambda x, o: -rsqrt(1 - x * x), expr="math.acos({x})", samples=_unit_interval)
atan = unary("atan", np.arctan, lambda x, o: 1 / (1 + x * x), expr="math.atan({x})")
sinh = unary("sinh", np.sinh, lambda x, o: cosh(x), expr="math.sinh({x})")
cosh = unary("cosh", np.cosh, lambda x, o: sinh(x), expr="math.cosh({x})")
tanh = unary("tanh", np.tanh, lambda x, o: 1 - o() * o(), expr="math.tanh({x})")
_INTEGRAL = {"compile": "no NaN-safe scalar form: Numba's math.floor/ceil/trunc return integers"}
floor = unary("floor", real_only("floor", np.floor), exempt=_INTEGRAL)
ceil = unary("ceil", real_only("ceil", np.ceil), exempt=_INTEGRAL)
round = unary("round", np.round, exempt={"compile": "NumPy rounds halves to even; no such scalar function"})  # noqa: A001
trunc = unary("trunc", real_only("trunc", np.trunc), exempt=_INTEGRAL)
sign = unary("sign", np.sign, expr="T(1.0) if {x} > T(0.0) else (T(-1.0) if {x} < T(0.0) else {x})")


def _erf(x):
    from ..kernels.special import erf as kernel

    return kernel(x) if x.dtype.kind == "f" and x.dtype.itemsize >= 4 else kernel(x.astype("float32")).astype(x.dtype)


erf = unary("erf", _erf, lambda x, o: float(2 / np.sqrt(np.pi)) * exp(-x * x), expr="math.erf({x})")

isnan = OpDef("isnan", lambda ctx, x: np.isnan(x), None, compare("isnan"), ELEMENTWISE)
isinf = OpDef("isinf", lambda ctx, x: np.isinf(x), None, compare("isinf"), ELEMENTWISE)
isfinite = OpDef("isfinite", lambda ctx, x: np.isfinite(x), None, compare("isfinite"), ELEMENTWISE)
logical_not = OpDef("logical_not", lambda ctx, x: np.logical_not(x), None, compare("logical_not"), ELEMENTWISE)


def _scale_forward(ctx, x, scale=1.0, bias=0.0, bias_after_scale=True):
    if bias_after_scale:
        return (x * x.dtype.type(scale) + x.dtype.type(bias)).astype(x.dtype, copy=False)
    return ((x + x.dtype.type(bias)) * x.dtype.type(scale)).astype(x.dtype, copy=False)


def _scale_expr(attrs):
    s, b = lit(attrs.get("scale", 1.0)), lit(attrs.get("bias", 0.0))
    if attrs.get("bias_after_scale", True):
        return f"{{x}} * {s} + {b}"
    return f"({{x}} + {b}) * {s}"


def _scale_samples(rng):
    x = rng.uniform(-2, 2, (3, 4))
    return [
        Sample((x,), {"scale": 1.5, "bias": -0.25, "bias_after_scale": True}),
        Sample((x,), {"scale": -0.5, "bias": 2.0, "bias_after_scale": False}),
    ]


scale_op = OpDef(
    "scale",
    _scale_forward,
    lambda ctx, g: scale_op(g, scale=ctx.attrs.get("scale", 1.0)),
    same_as_first,
    ELEMENTWISE,
    expr=_scale_expr,
    samples=_scale_samples,
)


def _cast_infer(x, dtype):
    return Spec(x.shape, np.dtype(dtype))


def _cast_forward(ctx, x, dtype):
    if x.dtype.kind == "c" and np.dtype(dtype).kind != "c":
        x = x.real  # Paddle keeps the real part (and so does a real input's gradient from a complex one)
    return x.astype(dtype, copy=False)


cast_op = OpDef(
    "cast",
    _cast_forward,
    lambda ctx, g: cast_op(g, dtype=ctx.input(0).dtype.name),
    _cast_infer,
    ELEMENTWISE,
    exempt={"compile": "it changes the dtype, and a fused group computes in one float type"},
    samples=lambda rng: [Sample((rng.uniform(-2, 2, (3, 4)),), {"dtype": "float64"})],
)

# ----- selection -----------------------------------------------------------------------------


def _where_vjp(ctx, g):
    cond, needs = ctx.input(0), ctx.needs_input_grad
    zero = constant(0, g.dtype)
    gx = sum_to(where_op(cond, g, zero), ctx.input(1)) if needs[1] else None
    gy = sum_to(where_op(cond, zero, g), ctx.input(2)) if needs[2] else None
    return None, gx, gy


def _where_infer(cond, x, y):
    return Spec(broadcast_shapes("where", cond.shape, x.shape, y.shape), np.result_type(x.dtype, y.dtype))


def _where_samples(rng):
    cond = rng.uniform(size=(3, 4)) > 0.5
    return [Sample((cond, rng.uniform(-2, 2, (3, 4)), rng.uniform(-2, 2, (4,))))]


where_op = OpDef(
    "where",
    lambda ctx, cond, x, y: np.where(cond, x, y),
    _where_vjp,
    _where_infer,
    BROADCAST,
    samples=_where_samples,
)


def _clip_forward(ctx, x, min=None, max=None):  # noqa: A002 - Paddle's names
    refuse_complex("clip", x)
    return np.clip(x, min, max).astype(x.dtype, copy=False)


def _clip_vjp(ctx, g):
    """``g`` where ``min <= x <= max`` (Paddle's convention at the bounds), else 0."""
    x = ctx.input(0)
    lo, hi = ctx.attrs.get("min"), ctx.attrs.get("max")
    inside = None if lo is None else x >= lo
    if hi is not None:
        inside = x <= hi if inside is None else inside & (x <= hi)
    return g if inside is None else g * inside


def _clip_expr(attrs):
    lo, hi = attrs.get("min"), attrs.get("max")
    expr = "{x}"
    if lo is not None:
        expr = f"max({expr}, {lit(lo)})"
    if hi is not None:
        expr = f"min({expr}, {lit(hi)})"
    return expr


def _clip_samples(rng):
    x = rng.uniform(-2, 2, (3, 4))
    x[np.abs(x - 0.5) < 0.05] += 0.1  # away from the bounds, where the gradient jumps
    x[np.abs(x + 1.0) < 0.05] += 0.1
    return [Sample((x,), {"min": -1.0, "max": 0.5}), Sample((x,), {"min": None, "max": 0.5})]


clip_op = OpDef(
    "clip",
    _clip_forward,
    _clip_vjp,
    same_as_first,
    ELEMENTWISE,
    expr=_clip_expr,
    samples=_clip_samples,
)

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
