"""``paddle.nn.functional.affine_grid``: the sampling grid ``grid_sample`` reads for an affine map,
composed as Paddle computes it: the normalised base grid (``[x, y, 1]`` per output pixel, a
constant of the output shape) times ``theta`` transposed, so gradients reach ``theta`` by matmul."""

from __future__ import annotations

import numpy as np

from ..core.tensor import Tensor
from ..errors import ShapeError
from ._util import constant
from .loss_checks import check_float


def _axis(size: int, align_corners: bool) -> np.ndarray:
    """Normalised pixel centres; a dimension of 1 sits at 0 (Paddle 3.3.1 returns NaN there with
    ``align_corners=True``, a 0/0 in its kernel)."""
    if size <= 1:
        return np.zeros(max(size, 0))
    ramp = np.linspace(-1.0, 1.0, size)
    return ramp if align_corners else ramp * (size - 1) / size


def _base_grid(sizes: list[int], align_corners: bool) -> np.ndarray:
    """``[..., len(sizes) + 1]`` points ``(x, y[, z], 1)``: the last spatial dimension is x."""
    axes = [_axis(s, align_corners) for s in sizes]
    mesh = np.meshgrid(*axes, indexing="ij")
    return np.stack([*reversed(mesh), np.ones(tuple(sizes))], axis=-1)


def affine_grid(theta, out_shape, align_corners=True, name=None):
    """``theta`` [N, 2, 3] with ``out_shape`` [N, C, H, W] gives [N, H, W, 2]; [N, 3, 4] with
    [N, C, D, H, W] gives [N, D, H, W, 3]."""
    from .linalg import matmul
    from .shape import reshape

    check_float("affine_grid", "theta", theta)
    shape = [int(s) for s in (out_shape.numpy().tolist() if isinstance(out_shape, Tensor) else out_shape)]
    spatial = len(shape) - 2
    if spatial not in (2, 3) or theta.shape[1:] != [spatial, spatial + 1] or theta.shape[0] != shape[0]:
        raise ShapeError(
            f"affine_grid: theta must be [N, 2, 3] with out_shape [N, C, H, W], or [N, 3, 4] with [N, C, D, H, W]; "
            f"got theta{theta.shape} and out_shape {shape}"
        )
    base = constant(_base_grid(shape[2:], align_corners).reshape(1, -1, spatial + 1), theta.dtype)
    grid = matmul(base, theta, transpose_y=True)  # [N, points, spatial]
    return reshape(grid, [shape[0], *shape[2:], spatial])


FUNCTIONAL = ["affine_grid"]
