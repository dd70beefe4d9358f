"""Import rules for ONNX's linear (de)quantisation to integer types, integer and quantised matmul
(MatMulInteger, QLinearMatMul: the int32 product, then requantised) and BitCast.

QuantizeLinear is ``clip(round_half_even(x / scale) + zero_point)`` into the target integer range,
DequantizeLinear ``(x - zero_point) * scale``, per tensor or per ``axis`` (a 1-D scale), written
with framework ops; blocked scales and float8/4-bit targets are refused (their element types are
refused anyway).
"""

from __future__ import annotations

import numpy as np

from ...errors import ConversionError
from ..dependency import onnx
from .base import Rule, arg, axis_of, dtype_of, item, rank


def _per_axis(b, node, name: str, axis: int, x: str):
    """``name`` (a scale or zero point) shaped to broadcast against ``x`` along ``axis``."""
    if rank(b, name) == 0 or int(np.prod(item(b, name).shape)) == 1 and rank(b, name) <= 1:
        return name
    if rank(b, name) != 1:
        raise ConversionError(f"{b.where()}: blocked (N-D) scales are not supported; give a scalar or 1-D scale")
    r = rank(b, x)
    shape = [1] * r
    shape[axis] = item(b, name).shape[0]
    (out,) = b.op("reshape", [name], shape=tuple(shape))
    return out


def _quantize(b, node, a, opset):
    x, scale, zp = node.input[0], node.input[1], arg(node, 2)
    axis = axis_of(int(a.get("axis", 1)), rank(b, x))
    if zp:
        target = dtype_of(b, zp)
    elif "output_dtype" in a and a["output_dtype"]:
        target = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(a["output_dtype"]))
    else:
        target = np.dtype(np.uint8)
    if target.kind not in "iu":
        raise ConversionError(f"{b.where()}: QuantizeLinear to {target} is not supported (integer targets are)")
    dt = dtype_of(b, x)
    (q,) = b.op("divide", [x, _per_axis(b, node, scale, axis, x)])
    (q,) = b.op("round", [q])
    if zp:
        (zero,) = b.op("cast", [_per_axis(b, node, zp, axis, x)], dtype=dt.name)
        (q,) = b.op("add", [q, zero])
    info = np.iinfo(target)
    (q,) = b.op("maximum", [q, np.asarray(info.min, dt)])
    (q,) = b.op("minimum", [q, np.asarray(info.max, dt)])
    return b.op("cast", [q], dtype=target.name)


def _dequantize(b, node, a, opset):
    x, scale, zp = node.input[0], node.input[1], arg(node, 2)
    axis = axis_of(int(a.get("axis", 1)), rank(b, x))
    (dx,) = b.op("cast", [x], dtype="float32")
    if zp:
        (zero,) = b.op("cast", [_per_axis(b, node, zp, axis, x)], dtype="float32")
        (dx,) = b.op("subtract", [dx, zero])
    out = dtype_of(b, scale)
    if a.get("output_dtype"):
        out = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(a["output_dtype"]))
    (dx,) = b.op("cast", [dx], dtype=dtype_of(b, scale).name)
    (y,) = b.op("multiply", [dx, _per_axis(b, node, scale, axis, x)])
    return b.op("cast", [y], dtype=out.name) if out != dtype_of(b, scale) else [y]


def _centred(b, x: str, zp: str, row_wise: bool):
    """``x - zero_point`` in int32; a 1-D zero point of A is per row (shape [M, 1])."""
    (x32,) = b.op("cast", [x], dtype="int32")
    if not zp:
        return x32
    (zero,) = b.op("cast", [zp], dtype="int32")
    if row_wise and rank(b, zp) == 1:
        (zero,) = b.op("reshape", [zero], shape=(-1, 1))
    (out,) = b.op("subtract", [x32, zero])
    return out


def _matmul_integer(b, node, a, opset):
    """(A - a_zero_point) @ (B - b_zero_point) in int32."""
    return b.op(
        "matmul", [_centred(b, node.input[0], arg(node, 2), True), _centred(b, node.input[1], arg(node, 3), False)]
    )


def _qlinear_matmul(b, node, a, opset):
    """The int32 product requantised: ``clip(rint(C * (a_scale * b_scale / y_scale) + y_zero_point))``,
    C and the multiply in float64 as onnx's reference (int32 times float32 in NumPy) computes them."""
    qa, sa, za, qb, sb, zb, sy, zy = (list(node.input) + [""] * 8)[:8]
    (c,) = b.op("matmul", [_centred(b, qa, za, True), _centred(b, qb, zb, False)])
    (ratio,) = b.op("multiply", [sa, sb])
    (ratio,) = b.op("divide", [ratio, sy])
    (ratio,) = b.op("cast", [ratio], dtype="float64")
    (d,) = b.op("cast", [c], dtype="float64")
    (d,) = b.op("multiply", [d, ratio])
    target = dtype_of(b, zy) if zy else dtype_of(b, qa)
    if zy:
        (zero,) = b.op("cast", [zy], dtype="float64")
        (d,) = b.op("add", [d, zero])
    (d,) = b.op("round", [d])
    info = np.iinfo(target)
    (d,) = b.op("maximum", [d, np.asarray(info.min, np.float64)])
    (d,) = b.op("minimum", [d, np.asarray(info.max, np.float64)])
    return b.op("cast", [d], dtype=target.name)


def _no_blocks(a, opset):
    return [f"block_size={a['block_size']}: blocked quantisation is not supported"] if a.get("block_size", 0) else []


def _bitcast(b, node, a, opset):
    """view_dtype; a 0-d input goes through shape [1] (view_dtype's kernel returns 1-D for it)."""
    dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(a["to"])).name
    if rank(b, node.input[0]):
        return b.op("view_dtype", [node.input[0]], dtype=dtype)
    (flat,) = b.op("reshape", [node.input[0]], shape=(1,))
    (viewed,) = b.op("view_dtype", [flat], dtype=dtype)
    return b.op("reshape", [viewed], shape=())


RULES: dict[str, Rule] = {
    "QuantizeLinear": Rule(
        _quantize, frozenset({"axis", "saturate", "block_size", "output_dtype"}), since=10, check=_no_blocks
    ),  # fmt: skip
    "DequantizeLinear": Rule(
        _dequantize, frozenset({"axis", "block_size", "output_dtype"}), since=10, check=_no_blocks
    ),
    "BitCast": Rule(_bitcast, frozenset({"to"}), since=26),
    "MatMulInteger": Rule(_matmul_integer, since=10),
    "QLinearMatMul": Rule(_qlinear_matmul, since=10),
}
