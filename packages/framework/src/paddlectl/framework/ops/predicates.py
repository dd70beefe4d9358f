"""Questions asked of tensors: closeness and equality, Paddle's short comparison names, sign-bit
and infinity predicates, membership, and a tensor's dtype, emptiness and gradient status. The
elementwise predicates are ops, so a traced program computes them instead of capturing them."""

from __future__ import annotations

import numpy as np

from ..core.dtype import is_floating
from ..core.op import BROADCAST, ELEMENTWISE, OPAQUE, OpDef, Sample, Spec
from ..core.shapes import broadcast_shapes, compare
from ..core.tensor import Tensor
from . import elementwise as ew
from . import reduce
from ._util import constant

B = ew.BINARY


def _isclose_samples(rng):
    x = rng.standard_normal((3, 4))
    y = np.where(rng.random((3, 4)) < 0.5, x + 1e-9, x + 1.0)
    y[0, 0] = x[0, 0] = np.nan
    attrs = {"rtol": 1e-5, "atol": 1e-8}
    return [Sample((x, y), {**attrs, "equal_nan": False}), Sample((x, y[0]), {**attrs, "equal_nan": True})]


isclose_op = OpDef(
    "isclose",
    lambda ctx, x, y, rtol, atol, equal_nan: np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan),
    None,
    lambda x, y, **attrs: Spec(broadcast_shapes("isclose", x.shape, y.shape), np.dtype(bool)),
    BROADCAST,
    samples=_isclose_samples,
)


def isclose(x, y, rtol=1e-05, atol=1e-08, equal_nan=False, name=None):
    return isclose_op(x, y, rtol=float(rtol), atol=float(atol), equal_nan=bool(equal_nan))


def allclose(x, y, rtol=1e-05, atol=1e-08, equal_nan=False, name=None):
    """A 0-D bool tensor: every element close (Paddle returns a tensor, not a Python bool)."""
    return reduce.all(isclose(x, y, rtol, atol, equal_nan))


def equal_all(x, y, name=None):
    """A 0-D bool tensor: same shape and every element equal (NaN never equals itself)."""
    if x.shape != y.shape:
        return constant(False)
    return reduce.all(ew.BINARY["equal"](x, y))


def _op(fn):
    def alias(x, y, name=None, *, out=None):
        return fn(x, y)

    return alias


ge, gt, le, lt = _op(B["greater_equal"]), _op(B["greater_than"]), _op(B["less_equal"]), _op(B["less_than"])


eq, ne = _op(B["equal"]), _op(B["not_equal"])


greater, less = gt, lt


def _predicate(name: str, fn):
    """An elementwise bool op: declared, so a traced program computes it instead of capturing it."""
    op = OpDef(name, lambda ctx, x: fn(x), None, compare(name), ELEMENTWISE)

    def pred(x, name=None):
        return op(x)

    return pred


signbit = _predicate("signbit", np.signbit)


isneginf = _predicate("isneginf", np.isneginf)


isposinf = _predicate("isposinf", np.isposinf)


isreal = _predicate("isreal", np.isreal)


isin_op = OpDef(
    "isin",
    lambda ctx, x, test_x, assume_unique, invert: np.isin(x, test_x, assume_unique=assume_unique, invert=invert),
    None,
    lambda x, test_x, **attrs: Spec(x.shape, np.dtype(bool)),
    OPAQUE,
    samples=lambda rng: [
        Sample((rng.integers(0, 6, (3, 4)), np.array([1, 3, 5])), {"assume_unique": False, "invert": invert})
        for invert in (False, True)
    ],
)


def isin(x, test_x, assume_unique=False, invert=False, name=None):
    return isin_op(x, test_x, assume_unique=bool(assume_unique), invert=bool(invert))


def is_floating_point(x) -> bool:
    return is_floating(x.dtype)


def is_integer(x) -> bool:
    return x.dtype.kind in "iu"


def is_complex(x) -> bool:
    return x.dtype.kind == "c"


def is_empty(x, name=None):
    return constant(x.size == 0)


def _install() -> None:
    """Tensor-only conveniences: ``requires_grad`` (the inverse of stop_gradient), ``ndimension``."""

    def requires_grad_(self, requires_grad=True):
        self.stop_gradient = not requires_grad
        return self

    Tensor.requires_grad = property(
        lambda self: not self.stop_gradient, lambda self, value: setattr(self, "stop_gradient", not value)
    )
    Tensor.requires_grad_ = requires_grad_
    Tensor.ndimension = lambda self: self.ndim


_install()

TENSOR_METHODS = [
    "isclose", "allclose", "equal_all", "ge", "gt", "le", "lt", "eq", "ne", "greater", "less", "signbit", "isneginf",
    "isposinf", "isreal", "isin", "is_floating_point", "is_integer", "is_complex", "is_empty",
]  # fmt: skip
TOP_LEVEL = TENSOR_METHODS
