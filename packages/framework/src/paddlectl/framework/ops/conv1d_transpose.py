"""``conv1d_transpose``: ``conv2d_transpose`` on a height-1 image, as ``conv1d`` is ``conv2d``'s."""

from __future__ import annotations

from ..errors import ShapeError
from ._window import as_tuple, normalize_padding
from .conv import conv2d_transpose
from .shape import squeeze, unsqueeze


def conv1d_transpose(
    x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1, output_size=None,
    data_format="NCL", name=None,
):  # fmt: skip
    """``paddle.nn.functional.conv1d_transpose``: x [N, C, L] ('NCL') or [N, L, C] ('NLC'), weight
    [C, out_channels / groups, k]."""
    if data_format not in ("NCL", "NLC"):
        raise ShapeError(f"conv1d_transpose: data_format must be 'NCL' or 'NLC', got {data_format!r}")
    if x.ndim != 3 or weight.ndim != 3:
        raise ShapeError(f"conv1d_transpose: expected 3-D x and weight, got x{x.shape}, weight{weight.shape}")
    pads = normalize_padding("conv1d_transpose", padding, 1, channel_last=data_format == "NLC")
    height = 2 if data_format == "NCL" else 1  # the unit height: NCHW's H or NHWC's H
    out = conv2d_transpose(
        unsqueeze(x, height),
        unsqueeze(weight, 2),
        bias,
        (1, *as_tuple("conv1d_transpose", "stride", stride, 1)),
        pads if isinstance(pads, str) else (0, 0, *pads),
        (0, *as_tuple("conv1d_transpose", "output_padding", output_padding, 1)),
        groups,
        (1, *as_tuple("conv1d_transpose", "dilation", dilation, 1)),
        None if output_size is None else (1, *as_tuple("conv1d_transpose", "output_size", output_size, 1)),
        "NCHW" if data_format == "NCL" else "NHWC",
    )
    return squeeze(out, height)


FUNCTIONAL = ["conv1d_transpose"]
