"""Fold a per-channel scale of a 1x1 convolution's input into its weights.

``conv2d(multiply(x, s), w, b)``, with ``s`` [N or 1, C, 1, 1] against ``x`` [N, C, H, W] (a
squeeze-excite block's gate) and a 1x1, stride-1, unpadded, single-group NCHW ``w``, becomes
``conv2d_scaled(x, s, w, b)``, which scales the weight per image instead of the activations
(``ops.conv_inference._scaled``). Only where the product has no other reader: the multiply then goes.
"""

from __future__ import annotations

from ...ops.conv import conv2d_op
from ...ops.conv_inference import conv2d_scaled_op
from ...ops.elementwise import multiply as multiply_op
from ..ir import Program
from .base import producer, sole_reader, unit_stride_padding, users


def _pointwise(conv) -> bool:
    padding = unit_stride_padding(conv)
    return padding is not None and not any(padding) and tuple(conv.inputs[1].shape[2:]) == (1, 1)


def _split_scale(multiply):
    """(x, s) where one input is the full product and the other a [N or 1, C, 1, 1] scale, else None."""
    out = multiply.outputs[0].shape
    for x, s in (multiply.inputs, multiply.inputs[::-1]):
        if len(out) == 4 and len(s.shape) == 4 and tuple(x.shape) == tuple(out) and x.dtype == s.dtype:
            if s.shape[0] in (1, out[0]) and tuple(s.shape[1:]) == (out[1], 1, 1):
                return x, s
    return None


def fold_channel_scale(program: Program, ctx) -> int:
    readers = users(program)
    changed = 0
    for conv in [op for op in program.walk() if op.name == conv2d_op.name]:
        multiply = producer(conv.inputs[0])
        if multiply is None or multiply.name != multiply_op.name or not _pointwise(conv):
            continue
        if sole_reader(multiply.outputs[0], readers) is not conv or multiply.parent is not conv.parent:
            continue
        pair = _split_scale(multiply)
        if pair is None:
            continue
        conv.name, conv.attrs = conv2d_scaled_op.name, {}
        conv.inputs = [*pair, conv.inputs[1], (*conv.inputs, None)[2]]
        multiply.parent.remove(multiply)
        changed += 1
    return changed
