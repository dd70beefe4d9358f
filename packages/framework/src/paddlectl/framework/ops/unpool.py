"""``max_unpool1d/2d/3d``: the inverse of a max pool with ``return_mask``: each pooled value goes back
to the flat spatial position its mask names, zeros elsewhere. A ``put_along_axis`` on the flattened
planes, so the gradient of the values is the output's gradient gathered at those positions."""

from __future__ import annotations

from ..errors import ShapeError
from ._window import as_tuple, normalize_padding
from .creation import zeros
from .index import put_along_axis
from .shape import reshape

_LAYOUTS = {1: "NCL", 2: "NCHW", 3: "NCDHW"}


def _unpool(op: str, n: int, x, indices, kernel_size, stride, padding, data_format, output_size):
    if data_format != _LAYOUTS[n]:
        raise ShapeError(f"{op}: data_format must be {_LAYOUTS[n]!r}, got {data_format!r}")
    if x.ndim != n + 2 or tuple(indices.shape) != tuple(x.shape):
        raise ShapeError(f"{op}: x must be {n + 2}-D and indices of its shape, got x{x.shape}, indices{indices.shape}")
    kernel = as_tuple(op, "kernel_size", kernel_size, n)
    stride = kernel if stride is None else as_tuple(op, "stride", stride, n)
    pads = normalize_padding(op, padding, n)
    if isinstance(pads, str):
        raise ShapeError(f"{op}: padding must be numbers, got {padding!r}")
    if output_size is None:
        spatial = [(x.shape[2 + i] - 1) * stride[i] - pads[2 * i] - pads[2 * i + 1] + kernel[i] for i in range(n)]
    else:
        spatial = [int(s) for s in list(output_size)[-n:]]
    batch, channels = x.shape[:2]
    size = 1
    for s in spatial:
        size *= s
    flat = put_along_axis(
        zeros([batch, channels, size], x.dtype),
        reshape(indices, [batch, channels, -1]).astype("int64"),
        reshape(x, [batch, channels, -1]),
        2,
        broadcast=False,
    )
    return reshape(flat, [batch, channels, *spatial])


def max_unpool1d(x, indices, kernel_size, stride=None, padding=0, data_format="NCL", output_size=None, name=None):
    """``paddle.nn.functional.max_unpool1d``."""
    return _unpool("max_unpool1d", 1, x, indices, kernel_size, stride, padding, data_format, output_size)


def max_unpool2d(x, indices, kernel_size, stride=None, padding=0, data_format="NCHW", output_size=None, name=None):
    """``paddle.nn.functional.max_unpool2d``."""
    return _unpool("max_unpool2d", 2, x, indices, kernel_size, stride, padding, data_format, output_size)


def max_unpool3d(x, indices, kernel_size, stride=None, padding=0, data_format="NCDHW", output_size=None, name=None):
    """``paddle.nn.functional.max_unpool3d``."""
    return _unpool("max_unpool3d", 3, x, indices, kernel_size, stride, padding, data_format, output_size)


FUNCTIONAL = ["max_unpool1d", "max_unpool2d", "max_unpool3d"]
