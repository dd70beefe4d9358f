"""Give 3x3 stride-1 convolutions their Winograd-transformed filters, computed once at load time.

``conv2d(x, w, b)`` (NCHW, 3x3, stride 1, undilated, one group, explicit padding, a known weight
with at least ``MIN_CHANNELS`` outputs) becomes ``conv2d_winograd(x, w, u, b)`` with ``u = G w G^T``
(``kernels.winograd.weights``). The op picks Winograd F(2x2, 3x3) or the plain convolution per input
size when a size is first seen (``ops.conv_inference._winograd_pays``), so symbolic sizes are fine;
layers with fewer than 32 outputs (PP-OCR det's 24-channel convs) and large images use it on one
thread only, in tile-row chunks. Layers with fewer than ``MIN_CHANNELS`` outputs stay plain.
"""

from __future__ import annotations

from ...kernels.winograd import weights
from ...ops.conv import conv2d_op
from ...ops.conv_inference import conv2d_winograd_op
from ..ir import Program
from .base import add_param, known_array, producer, unit_stride_padding

MIN_CHANNELS = 16


def _eligible(op, program: Program, ctx):
    """The conv's weight array where the rewrite applies, else None."""
    if unit_stride_padding(op) is None:
        return None
    w = known_array(op.inputs[1], program, ctx)
    if w is None or w.shape[2:] != (3, 3) or w.shape[0] < MIN_CHANNELS or w.dtype.kind != "f":
        return None
    return w


def winograd(program: Program, ctx) -> int:
    changed = 0
    for conv in [op for op in program.walk() if op.name == conv2d_op.name]:
        w = _eligible(conv, program, ctx)
        if w is None:
            continue
        block = conv.parent
        base = producer(conv.inputs[1]).attrs.get("name", "constant")
        u = add_param(program, block, block.ops.index(conv), f"{base}.winograd", weights(w))
        x, w_value, bias = (*conv.inputs, None)[:3]
        conv.name, conv.attrs = conv2d_winograd_op.name, {"padding": tuple(conv.attrs["padding"])}
        conv.inputs = [x, w_value, u.outputs[0], bias]
        changed += 1
    return changed
