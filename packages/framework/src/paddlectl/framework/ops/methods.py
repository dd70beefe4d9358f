"""Attach operators and methods to Tensor (Paddle does the same with ``monkey_patch_tensor``).

Each op family lists the functions that are also Tensor methods in ``TENSOR_METHODS``;
this module is the only place that turns them into methods.
"""

from __future__ import annotations

import importlib
import pkgutil

import numpy as np

from ..core.dtype import convert_dtype
from ..core.op import OPAQUE, OpDef, Sample
from ..core.shapes import same_as_first
from ..core.tensor import Tensor
from . import elementwise as ew
from . import index
from ._util import tensor_args


def _reflected(fn):
    return lambda self, other: fn(*tensor_args(other, self))


def _binary(fn):
    return lambda self, other: fn(*tensor_args(self, other))


def astype(self, dtype):
    dtype = convert_dtype(dtype)
    return self if dtype == self.dtype else ew.cast(self, dtype)


detach_op = OpDef(
    "detach",
    lambda ctx, x: x,
    None,
    same_as_first,
    OPAQUE,
    samples=lambda rng: [Sample((rng.standard_normal((3, 4)),))],
)
"""The same array with no gradient: an op (not a bare re-wrap) so a traced program keeps computing
the detached value instead of freezing the example's."""


def detach(self):
    """A tensor sharing ``self``'s data, outside the gradient graph (Paddle: ``Tensor.detach``)."""
    return detach_op(self)


def clone(self):
    """A differentiable copy (Paddle: ``Tensor.clone``); ``scale`` by 1 copies any dtype as a recorded op."""
    return ew.scale(self, 1.0)


def _install() -> None:
    ops = ew.BINARY
    operators = {
        "__add__": _binary(ops["add"]), "__radd__": _reflected(ops["add"]),
        "__sub__": _binary(ops["subtract"]), "__rsub__": _reflected(ops["subtract"]),
        "__mul__": _binary(ops["multiply"]), "__rmul__": _reflected(ops["multiply"]),
        "__truediv__": _binary(ops["divide"]), "__rtruediv__": _reflected(ops["divide"]),
        "__floordiv__": _binary(ops["floor_divide"]), "__mod__": _binary(ops["remainder"]),
        "__pow__": _binary(ew.pow), "__rpow__": _reflected(ew.pow),
        "__eq__": _binary(ops["equal"]), "__ne__": _binary(ops["not_equal"]),
        "__lt__": _binary(ops["less_than"]), "__le__": _binary(ops["less_equal"]),
        "__gt__": _binary(ops["greater_than"]), "__ge__": _binary(ops["greater_equal"]),
        "__and__": _binary(ops["logical_and"]), "__or__": _binary(ops["logical_or"]),
        "__xor__": _binary(ops["logical_xor"]),
        "__neg__": lambda self: ew.neg(self), "__abs__": lambda self: ew.abs(self),
        "__invert__": lambda self: ew.logical_not(self) if self.dtype == np.bool_ else ew.neg(self) - 1,
        "__matmul__": lambda self, other: importlib.import_module(f"{__package__}.linalg").matmul(self, other),
    }  # fmt: skip
    for name, fn in operators.items():
        setattr(Tensor, name, fn)
    Tensor.__hash__ = object.__hash__
    for name, fn in {**ew.BINARY, **ew.UNARY}.items():
        setattr(Tensor, name, fn)
    for name in ("pow", "scale", "cast", "clip"):
        setattr(Tensor, name, getattr(ew, name))
    Tensor.where = index.where
    Tensor.astype = astype
    Tensor.clone = clone
    Tensor.detach = detach
    for info in pkgutil.iter_modules(importlib.import_module(__package__).__path__):
        module = importlib.import_module(f"{__package__}.{info.name}")
        for name in getattr(module, "TENSOR_METHODS", ()):
            setattr(Tensor, name, getattr(module, name))


_install()
