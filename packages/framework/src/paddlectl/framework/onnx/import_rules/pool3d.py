"""3-D pooling (N, C, D, H, W) as two 2-D pools, as ``ops/pool3d.py`` composes Paddle's 3-D pools.

A max, mean or p-power sum over a D x H x W box is the same reduction over D of the one over H x W:
windows, strides, padding, ceil mode and the exclusive divisor (a product of per-axis counts) are
per axis. So a 2-D pool over (H, W) runs on ``[N, C*D, H, W]`` and a (kD, 1) pool over D on
``[N, C, D, H'*W']``. LpPool composes too: the second pass raises the first's ``p``-th roots back
to their sums."""

from __future__ import annotations

from ...errors import ConversionError
from ..dependency import onnx
from .base import item, rank

_PER_AXIS = ("kernel_shape", "strides", "dilations")


def _split_attrs(a: dict) -> tuple[dict, dict]:
    """The node's attrs as those of the (H, W) pool and of the (D, 1) pool."""
    hw, depth = dict(a), dict(a)
    for key in _PER_AXIS:
        if key in a:
            v = list(a[key])
            hw[key], depth[key] = v[1:], [v[0], 1]
    if "pads" in a:
        p = list(a["pads"])  # (d, h, w begins, d, h, w ends)
        hw["pads"], depth["pads"] = [p[1], p[2], p[4], p[5]], [p[0], 0, p[3], 0]
    return hw, depth


def _static_dims(b, x, where: str) -> list[int]:
    dims = list(item(b, x).shape)
    if not all(isinstance(d, int) for d in dims[1:]):
        raise ConversionError(
            f"{where}: a 3-D pool needs fixed channel, depth, height and width sizes, got {dims}; "
            "give the input fixed sizes (only the batch may stay symbolic)"
        )
    return dims


def lift_3d(convert):
    """``convert`` (a 2-D pool rule) applied to 5-D inputs as two separable pools."""

    def wrapped(b, node, a, opset):
        if rank(b, node.input[0]) != 5:
            return convert(b, node, a, opset)
        _, c, d, h, w = _static_dims(b, node.input[0], b.where())
        hw_attrs, d_attrs = _split_attrs(a)
        (planes,) = b.op("reshape", [node.input[0]], shape=(0, c * d, h, w))
        (planes,) = _run(b, node, convert, planes, hw_attrs, opset, "hw")
        h2, w2 = planes.shape[-2:]
        (columns,) = b.op("reshape", [planes], shape=(0, c, d, h2 * w2))
        (depth,) = _run(b, node, convert, columns, d_attrs, opset, "d")
        (out,) = b.op("reshape", [depth], shape=(0, c, depth.shape[2], h2, w2))
        return [out]

    return wrapped


def _run(b, node, convert, x, attrs: dict, opset: int, tag: str) -> list:
    name = f"{node.input[0]}::{tag}"
    b.set(name, x)
    node2 = onnx.helper.make_node(node.op_type, [name], [f"{o}::{tag}" for o in node.output], name=node.name, **attrs)
    return convert(b, node2, attrs, opset)[:1]
