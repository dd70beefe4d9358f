"""Channel-mixing functions as compositions of reshape, transpose, max and silu: ``maxout`` (the max
of each group of channels), ``channel_shuffle`` (ShuffleNet's interleaving) and ``swiglu``."""

from __future__ import annotations

from ..errors import ShapeError
from . import reduce
from .activation import silu
from .shape import chunk, reshape, transpose


def maxout(x, groups, axis=1, name=None):
    """``paddle.nn.functional.maxout``: channel ``i`` of the output is the max of input channels
    ``i * groups .. (i + 1) * groups - 1`` along ``axis`` (1, or -1 for channel-last)."""
    axis = axis % x.ndim
    if axis not in (1, x.ndim - 1) or x.ndim != 4:
        raise ShapeError(f"maxout: x must be 4-D with axis 1 or 3, got x{x.shape}, axis {axis}")
    channels = x.shape[axis]
    if groups < 1 or channels % groups:
        raise ShapeError(f"maxout: groups ({groups}) must divide the {channels} channels")
    shape = [*x.shape[:axis], channels // groups, groups, *x.shape[axis + 1 :]]
    return reduce.max(reshape(x, shape), axis + 1)


def channel_shuffle(x, groups, data_format="NCHW", name=None):
    """``paddle.nn.functional.channel_shuffle``: channels in ``groups`` groups, interleaved."""
    if data_format not in ("NCHW", "NHWC") or x.ndim != 4:
        raise ShapeError(f"channel_shuffle: x must be 4-D NCHW or NHWC, got x{x.shape}, {data_format!r}")
    n, c, h, w = x.shape if data_format == "NCHW" else (x.shape[0], x.shape[3], x.shape[1], x.shape[2])
    if groups < 1 or c % groups:
        raise ShapeError(f"channel_shuffle: groups ({groups}) must divide the {c} channels")
    if data_format == "NCHW":
        return reshape(transpose(reshape(x, [n, groups, c // groups, h, w]), [0, 2, 1, 3, 4]), [n, c, h, w])
    return reshape(transpose(reshape(x, [n, h, w, groups, c // groups]), [0, 1, 2, 4, 3]), [n, h, w, c])


def swiglu(x, y=None, name=None):
    """``paddle.nn.functional.swiglu``: ``silu(x) * y``; without y, the halves of x's last dim."""
    if y is None:
        if x.shape[-1] % 2:
            raise ShapeError(f"swiglu: without y, x's last dim must be even, got x{x.shape}")
        x, y = chunk(x, 2, axis=-1)
    return silu(x) * y


FUNCTIONAL = ["maxout", "channel_shuffle", "swiglu"]
