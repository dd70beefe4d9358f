"""Local response normalisation (AlexNet): ``x / (k + alpha * mean of x^2 over size channels)^beta``,
the mean an average pool over the channel axis with zero padding counted, as Paddle computes it."""

from __future__ import annotations

from ..errors import ShapeError
from . import elementwise as ew
from .pool import avg_pool2d
from .shape import reshape, transpose


def local_response_norm(x, size, alpha=1e-4, beta=0.75, k=1.0, data_format="NCHW", name=None):
    """``paddle.nn.functional.local_response_norm`` for 3-D, 4-D and 5-D inputs."""
    if x.ndim not in (3, 4, 5):
        raise ShapeError(f"local_response_norm: x must be 3-D, 4-D or 5-D, got x{x.shape}")
    if data_format not in ("NCL", "NLC", "NCHW", "NHWC", "NCDHW", "NDHWC"):
        raise ShapeError(f"local_response_norm: unknown data_format {data_format!r}")
    if not isinstance(size, int) or size < 1:
        raise ShapeError(f"local_response_norm: size must be a positive int, got {size!r}")
    last = data_format[-1] == "C"
    y = transpose(x, [0, x.ndim - 1, *range(1, x.ndim - 1)]) if last else x
    n, c = y.shape[:2]
    planes = reshape(y * y, [n, 1, c, -1])
    mean = avg_pool2d(planes, (size, 1), 1, [size // 2, (size - 1) // 2, 0, 0], exclusive=False)
    div = ew.pow(reshape(mean, y.shape) * alpha + k, beta)
    out = y / div
    return transpose(out, [0, *range(2, x.ndim), 1]) if last else out


FUNCTIONAL = ["local_response_norm"]
