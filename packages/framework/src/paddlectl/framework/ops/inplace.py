"""In-place Tensor methods (``x.add_(y)``, ``x.exp_()``, ``w.uniform_()``, ...).

An in-place call runs the out-of-place op on an alias that keeps the tensor's old graph position,
then rebinds the tensor's data and node to the result, exactly as ``__setitem__`` does: earlier
consumers still see the value they read, and gradients flow through the new node. A leaf that
requires a gradient refuses (Paddle's rule) unless gradients are off (``paddle.no_grad()``).
"""

from __future__ import annotations

import numpy as np

from ..core.state import STATE
from ..core.tensor import Tensor
from ..errors import ConfigError
from . import activation, creation, elementwise, shape
from . import random as _random
from ._util import constant, tensor_args


def _check_leaf(x: Tensor, op: str) -> None:
    if STATE.grad_enabled and x._node is None and not x.stop_gradient:
        raise ValueError(
            f"(InvalidArgument) Leaf Tensor ({x.name}) that doesn't stop gradient can't use inplace strategy "
            f"({op}); call it under paddle.no_grad(), or on a copy (x = x.clone())"
        )


def rebind(x: Tensor, op: str, compute) -> Tensor:
    """Run ``compute(alias_of_x)`` and make ``x`` the result, keeping the graph consistent."""
    _check_leaf(x, op)
    before = Tensor._wrap(x._data)
    before._node, before._out_index, before.stop_gradient = x._node, x._out_index, x.stop_gradient
    if STATE.tracer is not None:
        STATE.tracer.on_alias(before, x)
    return overwrite(x, compute(before))


def overwrite(x: Tensor, out: Tensor) -> Tensor:
    """Make ``x`` stand for ``out`` (cast to x's dtype): its data, its graph position and, while
    tracing, its value in the program; writing into captured state is refused there."""
    out = out if out.dtype == x.dtype else elementwise.cast(out, x.dtype)
    if STATE.tracer is not None:
        STATE.tracer.on_alias(x, x)
        STATE.tracer.value_of(out)  # a constant result becomes a program constant first
        STATE.tracer.on_rebind(x, out)
    x._data = out._data
    x._node, x._out_index = out._node, out._out_index
    x.stop_gradient = x.stop_gradient and out._node is None
    x._version = getattr(x, "_version", 0) + 1
    return x


def _method(name: str, fn):
    def method(x, *args, **kwargs):
        return rebind(x, name, lambda before: fn(before, *args, **kwargs))

    method.__name__ = name
    method.__doc__ = f"In-place ``{name[:-1]}``: ``x`` becomes the result (gradients stay correct)."
    return method


def _binary(op_name: str):
    fn = elementwise.BINARY[op_name]

    def compute(x, y, name=None, *, alpha=1):
        if alpha != 1:
            y = elementwise.scale(*tensor_args(y), scale=float(alpha)) if isinstance(y, Tensor) else y * alpha
        return fn(x, y)

    return compute


def _fill(x, value):
    """Constant ``value`` everywhere; stays in the graph as ``0*x + value`` so earlier gradients are zero."""
    if isinstance(value, Tensor):
        value = value.item()
    if x._node is None:
        return creation.full_like(x, value)
    return elementwise.scale(x, 0.0, bias=float(value))


def _sample(x, values):
    """Random values in x's shape: drawn in Python like ``paddle.rand`` (samplers are not ops)."""
    values = constant(values, x.dtype)
    return _fill(x, 0.0) + values if x._node is not None else values


def _uniform(x, min=-1.0, max=1.0, seed=0, name=None):  # noqa: A002 - Paddle's names
    return _sample(x, _random.uniform(x.shape, min, max, x.dtype))


def _normal(x, mean=0.0, std=1.0, name=None):
    return _sample(x, _random.normal(x.shape, mean, std, x.dtype))


def _exponential(x, lam=1.0, name=None):
    return _sample(x, _random.generator().exponential(1.0 / lam, tuple(x.shape)))


def _random_ints(x, from_=0, to=None, *, generator=None):
    """Integers in [from_, to); without ``to``, in [0, the dtype's largest exact integer), drawn as
    Paddle draws them (``random.remainders``)."""
    if to is None:
        span = np.iinfo(x.dtype).max if x.dtype.kind in "iu" else 2 ** (np.finfo(x.dtype).nmant + 1)
        return _sample(x, _random.remainders(x.shape, 0, span, True, x.dtype))
    if to <= from_:
        raise ConfigError(f"random_: from ({from_}) must be less than to ({to})")
    span = int(to) - int(from_)
    return _sample(x, _random.remainders(x.shape, int(from_), span, span >= 2**32, x.dtype))


def _bernoulli(x, p=0.5, name=None):
    """1 with probability ``p`` (a number or a tensor broadcast to x), else 0."""
    probability = p.numpy() if isinstance(p, Tensor) else p
    return _sample(x, (_random.uniform(x.shape, 0.0, 1.0, np.float64) < probability).astype(x.dtype))


def _log_normal(x, mean=1.0, std=2.0, name=None):
    return _sample(x, np.exp(_random.normal(x.shape, mean, std, np.float64)).astype(x.dtype))


_COMPUTE = {
    "add_": _binary("add"), "subtract_": _binary("subtract"), "sub_": _binary("subtract"),
    "multiply_": _binary("multiply"), "mul_": _binary("multiply"), "divide_": _binary("divide"),
    "div_": _binary("divide"), "remainder_": _binary("remainder"), "mod_": _binary("remainder"),
    "floor_divide_": _binary("floor_divide"), "pow_": elementwise.pow,
    "scale_": elementwise.scale, "clip_": elementwise.clip, "clamp_": elementwise.clip,
    "reshape_": shape.reshape, "squeeze_": shape.squeeze, "unsqueeze_": shape.unsqueeze,
    "flatten_": shape.flatten, "transpose_": shape.transpose, "tril_": shape.tril, "triu_": shape.triu,
    "fill_": _fill, "zero_": lambda x: _fill(x, 0.0), "uniform_": _uniform, "normal_": _normal,
    "exponential_": _exponential, "random_": _random_ints, "bernoulli_": _bernoulli, "log_normal_": _log_normal,
    "sigmoid_": activation.sigmoid, "cast_": elementwise.cast,
    "masked_fill_": lambda x, mask, value, name=None: x.masked_fill(mask, value),
}  # fmt: skip
_UNARY_INPLACE = (
    "exp", "sqrt", "rsqrt", "abs", "ceil", "floor", "round", "reciprocal", "tanh", "sin", "cos", "tan", "sinh",
    "cosh", "asin", "acos", "atan", "log", "log2", "log10", "log1p", "square", "neg", "trunc", "expm1", "erf",
)  # fmt: skip
for _name in _UNARY_INPLACE:
    _COMPUTE[f"{_name}_"] = elementwise.UNARY[_name]

for _name, _fn in _COMPUTE.items():
    globals()[_name] = _method(_name, _fn)

TENSOR_METHODS = list(_COMPUTE)
# The in-place functions Paddle also exposes as ``paddle.xxx_`` (checked against paddle 3.3.1).
TOP_LEVEL = [
    "subtract_", "sub_", "multiply_", "divide_", "div_", "remainder_", "mod_", "floor_divide_", "pow_", "reshape_",
    "squeeze_", "unsqueeze_", "flatten_", "transpose_", "tril_", "triu_", "normal_", "cast_", "masked_fill_",
    "abs_", "tanh_", "sin_", "cos_", "tan_", "sinh_", "cosh_", "asin_", "acos_", "atan_", "log_", "log2_",
    "log10_", "log1p_", "square_", "neg_", "trunc_", "expm1_", "erf_",
]  # fmt: skip


def _functional_inplace(op: str, fn):
    def inplace_fn(x, *args, name=None, **kwargs):
        return rebind(x, op, lambda before: fn(before, *args, **kwargs))

    inplace_fn.__name__ = op
    inplace_fn.__doc__ = f"In-place ``paddle.nn.functional.{op[:-1]}``: ``x`` becomes the result."
    return inplace_fn


_FUNCTIONAL = {
    "relu_": activation.relu, "tanh_": activation.tanh, "elu_": activation.elu,
    "leaky_relu_": activation.leaky_relu, "softmax_": activation.softmax,
    "hardtanh_": activation.hardtanh, "thresholded_relu_": activation.thresholded_relu,
}  # fmt: skip
for _name, _fn in _FUNCTIONAL.items():
    globals()[_name] = _functional_inplace(_name, _fn)
FUNCTIONAL = list(_FUNCTIONAL)
