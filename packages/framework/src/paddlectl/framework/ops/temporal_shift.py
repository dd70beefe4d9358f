"""``paddle.nn.functional.temporal_shift`` (TSM): a batch of ``N * seg_num`` frames viewed as
``[N, seg_num, ...]``; the first ``shift_ratio`` of the channels take the previous frame's values,
the next ``shift_ratio`` the following frame's, zero past either end, the rest stay. Composed of
slices and concatenations, so its gradient is the opposite shift."""

from __future__ import annotations

from ..errors import ShapeError
from .creation import zeros


def _shifted(x, by: int):
    """``x`` [N, T, ...] moved ``by`` (+1 or -1) steps along T, the vacated step zero."""
    from .shape import concat

    gap = zeros([x.shape[0], 1, *x.shape[2:]], x.dtype)
    return concat([gap, x[:, :-1]], 1) if by > 0 else concat([x[:, 1:], gap], 1)


def temporal_shift(x, seg_num, shift_ratio=0.25, name=None, data_format="NCHW"):
    from .shape import concat, reshape

    if data_format not in ("NCHW", "NHWC"):
        raise ValueError(f"temporal_shift: data_format must be 'NCHW' or 'NHWC', got {data_format!r}")
    if x.ndim != 4 or seg_num <= 0 or x.shape[0] % seg_num:
        raise ShapeError(
            f"temporal_shift: x must be 4-D with a batch that is a multiple of seg_num={seg_num}, got x{x.shape}"
        )
    if not 0 <= shift_ratio < 0.5:
        raise ValueError(f"temporal_shift: shift_ratio must lie in [0, 0.5), got {shift_ratio}")
    n = x.shape[0] // seg_num
    frames = reshape(x, [n, seg_num, *x.shape[1:]])
    axis = 2 if data_format == "NCHW" else 4
    channels = x.shape[1] if data_format == "NCHW" else x.shape[3]
    c1, c2 = int(channels * shift_ratio), int(channels * 2 * shift_ratio)
    index = [slice(None)] * 5

    def part(start, stop):
        index[axis] = slice(start, stop)
        return frames[tuple(index)]

    out = concat([_shifted(part(0, c1), 1), _shifted(part(c1, c2), -1), part(c2, channels)], axis)
    return reshape(out, x.shape)


FUNCTIONAL = ["temporal_shift"]
