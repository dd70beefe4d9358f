"""Export rules of the integer and bit-level ops: bitwise logic, bit shifts, integer division and
reinterpreting bytes (``view_dtype``).

ONNX's bitwise ops exist from opset 18 (on bool tensors the logical ops of opset 1 do), its
BitShift shifts unsigned integers only (so a signed shift goes through the unsigned type of its
width: the same bits for a left shift, and ``~(~x >> k)`` for the arithmetic right shift of a
negative ``x``), its integer Div truncates (a floored quotient is moved down by one where the
remainder is nonzero and the signs differ), and BitCast (opset 26) keeps the element size.
"""

from __future__ import annotations

import numpy as np

from ..errors import ConversionError
from .emitters import emits

_LOGICAL = {"bitwise_and": "And", "bitwise_or": "Or", "bitwise_xor": "Xor", "bitwise_not": "Not"}


def _operands(e, op, ins) -> list[str]:
    """The inputs in the output's dtype: NumPy promotes mixed integer types, ONNX takes one."""
    return [e.as_type(n, v, op.outputs[0].dtype) for n, v in zip(ins, op.inputs, strict=True)]


@emits("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not")
def _bitwise(e, op, ins, out):
    if op.outputs[0].dtype == np.bool_:
        e.node(_LOGICAL[op.name], _operands(e, op, ins), out)
        return
    e.require(18)
    e.node("Bitwise" + _LOGICAL[op.name], _operands(e, op, ins), out)


@emits("bitwise_left_shift", "bitwise_right_shift")
def _shift(e, op, ins, out):
    dtype = np.dtype(op.outputs[0].dtype)
    if dtype.kind not in "iu":
        raise ConversionError(f"{op.name}: shifting {dtype} has no ONNX form; shift integer tensors")
    direction = "LEFT" if op.name == "bitwise_left_shift" else "RIGHT"
    unsigned = np.dtype(f"uint{8 * dtype.itemsize}")
    x, k = _operands(e, op, ins)
    if dtype.kind == "u":
        e.node("BitShift", [x, k], out, direction=direction)
        return
    k = e.node("Cast", [k], to=e.dtype_code(unsigned))[0]
    if direction == "LEFT":  # two's complement: the unsigned shift's bits
        shifted = e.node("BitShift", [e.node("Cast", [x], to=e.dtype_code(unsigned))[0], k], direction="LEFT")
        e.node("Cast", shifted, out, to=e.dtype_code(dtype))
        return
    minus_one = e.const(np.array(-1, dtype), "minus_one")
    (negative,) = e.node("Less", [x, e.const(np.array(0, dtype), "zero")])
    (flipped,) = e.node("Where", [negative, e.node("Sub", [minus_one, x])[0], x])  # ~x = -1 - x, never negative
    (logical,) = e.node("BitShift", [e.node("Cast", [flipped], to=e.dtype_code(unsigned))[0], k], direction="RIGHT")
    (shifted,) = e.node("Cast", [logical], to=e.dtype_code(dtype))
    e.node("Where", [negative, e.node("Sub", [minus_one, shifted])[0], shifted], out)


@emits("int_divide")
def _int_divide(e, op, ins, out, rounding_mode):
    a, b = ins[0], e.as_type(ins[1], op.inputs[1], op.inputs[0].dtype)
    if rounding_mode == "trunc" or np.dtype(op.inputs[0].dtype).kind == "u":
        e.node("Div", [a, b], out)
        return
    dtype = op.inputs[0].dtype
    zero = e.const(np.array(0, dtype), "zero")
    (q,) = e.node("Div", [a, b])
    (exact,) = e.node("Equal", [e.node("Sub", [a, e.node("Mul", [q, b])[0]])[0], zero])
    (signs_differ,) = e.node("Xor", [e.node("Less", [a, zero])[0], e.node("Less", [b, zero])[0]])
    (down,) = e.node("And", [e.node("Not", [exact])[0], signs_differ])
    e.node("Sub", [q, e.node("Cast", [down], to=e.dtype_code(dtype))[0]], out)


@emits("view_dtype")
def _view_dtype(e, op, ins, out, dtype):
    old, new = np.dtype(op.inputs[0].dtype), np.dtype(dtype)
    if old.itemsize != new.itemsize:
        raise ConversionError(
            f"view_dtype: viewing {old.name} as {new.name} changes the element size, which ONNX's BitCast "
            "cannot (the target must have the same bit width); view as a type of the same size"
        )
    e.require(26)
    e.node("BitCast", ins, out, to=e.dtype_code(new))
