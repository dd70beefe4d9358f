"""Integer bit operations and C-style remainder that ONNX models use (BitwiseXor/Not, BitShift,
Mod with ``fmod=1``) and Paddle names ``bitwise_xor``/``bitwise_not``/``bitwise_*_shift``. They
have no gradient: integer results, or (fmod) piecewise linear with an integer jump set."""

from __future__ import annotations

import numpy as np

from ..core.op import BROADCAST, ELEMENTWISE, OpDef, Sample
from ..core.shapes import elementwise, same_as_first
from ..errors import DTypeError


def _integers(rng):
    return [Sample((rng.integers(0, 16, (3, 4)), rng.integers(0, 8, (4,))))]


def _require_integer(op: str, *arrays) -> None:
    for a in arrays:
        if a.dtype.kind not in "iub":
            raise DTypeError(f"{op}: expected integer or bool tensors, got {a.dtype}; cast to an integer type first")


def _bit_binary(name: str, fn) -> OpDef:
    def forward(ctx, a, b):
        _require_integer(name, a, b)
        return fn(a, b)

    return OpDef(name, forward, None, elementwise(name), BROADCAST, samples=_integers)


bitwise_xor = _bit_binary("bitwise_xor", np.bitwise_xor)
bitwise_left_shift = _bit_binary("bitwise_left_shift", np.left_shift)
bitwise_right_shift = _bit_binary("bitwise_right_shift", np.right_shift)


def _not_forward(ctx, x):
    _require_integer("bitwise_not", x)
    return np.invert(x)


bitwise_not = OpDef(
    "bitwise_not", _not_forward, None, same_as_first, ELEMENTWISE,
    samples=lambda rng: [Sample((rng.integers(-9, 9, (3, 4)),)), Sample((rng.random((3, 4)) < 0.5,))],
)  # fmt: skip

fmod = OpDef(
    "fmod",
    lambda ctx, a, b: np.fmod(a, b),
    None,
    elementwise("fmod"),
    BROADCAST,
    samples=lambda rng: [
        Sample((rng.integers(-9, 10, (3, 4)), rng.integers(1, 4, (4,)))),
        Sample((rng.uniform(-5, 5, (3, 4)), rng.uniform(0.5, 2, (4,)))),
    ],  # fmt: skip
    exempt={"compile": "no integer fmod in the kernel grammar: Numba's math.fmod returns a float"},
)
"""C's remainder: the sign of the dividend (``remainder`` is Python's, the sign of the divisor)."""
