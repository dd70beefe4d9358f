"""Paddle's integer functions: ``bitwise_xor/not/invert``, the shifts (arithmetic or logical), ``gcd``
and ``lcm``. The xor/not/shift kernels are ops/bitwise.py's records (ONNX import uses them); this
module adds the logical right shift and gcd/lcm as records and the Paddle signatures. None has a
gradient: the results are integers."""

from __future__ import annotations

import numpy as np

from ..core.op import OPAQUE, OpDef
from ..core.shapes import elementwise
from . import bitwise
from ._util import tensor_args


def _integer_binary(name: str, fn) -> OpDef:
    def forward(ctx, a, b):
        bitwise._require_integer(name, a, b)
        return fn(a, b)

    return OpDef(name, forward, None, elementwise(name), OPAQUE, samples=bitwise._integers)


def _logical_right_shift(a, b):
    """Shift the bits of ``a`` read as unsigned, so zeros come in at the top (C's ``>>`` on unsigned)."""
    if a.dtype.kind != "i":
        return np.right_shift(a, b)
    unsigned = np.dtype(f"u{a.dtype.itemsize}")
    out = np.right_shift(a.astype(unsigned), b.astype(unsigned))
    return out.astype(a.dtype)


logical_right_shift_op = _integer_binary("logical_right_shift", _logical_right_shift)
gcd_op = _integer_binary("gcd", np.gcd)
lcm_op = _integer_binary("lcm", np.lcm)


def bitwise_xor(x, y, out=None, name=None):
    """``paddle.bitwise_xor``: elementwise ``x ^ y`` of integer or bool tensors."""
    return bitwise.bitwise_xor(*tensor_args(x, y))


def bitwise_not(x, out=None, name=None):
    """``paddle.bitwise_not``: elementwise ``~x`` (two's complement for integers, ``not`` for bool)."""
    return bitwise.bitwise_not(x)


bitwise_invert = bitwise_not


def bitwise_left_shift(x, y, is_arithmetic=True, out=None, name=None):
    """``paddle.bitwise_left_shift``: ``x << y``; arithmetic and logical left shifts are the same bits."""
    return bitwise.bitwise_left_shift(*tensor_args(x, y))


def bitwise_right_shift(x, y, is_arithmetic=True, out=None, name=None):
    """``paddle.bitwise_right_shift``: ``x >> y``, keeping the sign (arithmetic) or shifting in zeros."""
    x, y = tensor_args(x, y)
    return bitwise.bitwise_right_shift(x, y) if is_arithmetic else logical_right_shift_op(x, y)


def gcd(x, y, name=None):
    """``paddle.gcd``: the greatest common divisor, elementwise (non-negative; gcd(0, 0) = 0)."""
    return gcd_op(*tensor_args(x, y))


def lcm(x, y, name=None):
    """``paddle.lcm``: the least common multiple, elementwise (non-negative; 0 where either is 0)."""
    return lcm_op(*tensor_args(x, y))


TENSOR_METHODS = [
    "bitwise_xor", "bitwise_not", "bitwise_invert", "bitwise_left_shift", "bitwise_right_shift", "gcd", "lcm",
]  # fmt: skip
TOP_LEVEL = TENSOR_METHODS
