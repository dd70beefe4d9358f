"""Affine, rotation and perspective warps of Tensor images, as Paddle's ``functional_tensor`` does them:
a sampling grid built in float32, then ``grid_sample`` (zeros padding, ``align_corners=False``),
with an all-ones channel sampled alongside so that the border can be filled with ``fill``."""

from __future__ import annotations

import math

import numpy as np

from ...core.tensor import Tensor

_F32 = np.float32


def _base_grid(ow: int, oh: int, start_x: float, start_y: float) -> np.ndarray:
    grid = np.ones((oh, ow, 3), dtype=_F32)
    grid[..., 0] = np.linspace(start_x, start_x + ow - 1, ow, dtype=_F32)
    grid[..., 1] = np.linspace(start_y, start_y + oh - 1, oh, dtype=_F32)[:, None]
    return grid.reshape(oh * ow, 3)


def _affine_grid(theta: np.ndarray, w: int, h: int, ow: int, oh: int) -> np.ndarray:
    base = _base_grid(ow, oh, -ow * 0.5 + 0.5, -oh * 0.5 + 0.5)
    scaled = theta.T / np.array([0.5 * w, 0.5 * h], dtype=_F32)
    return (base @ scaled).reshape(oh, ow, 2)


def _sample(image: np.ndarray, grid: np.ndarray, mode: str) -> np.ndarray:
    """``grid_sample`` of an NCHW float array at ``grid`` (oh, ow, 2) in [-1, 1] coordinates."""
    n, c, h, w = image.shape
    x = ((grid[..., 0] + _F32(1)) * _F32(w) - _F32(1)) / _F32(2)
    y = ((grid[..., 1] + _F32(1)) * _F32(h) - _F32(1)) / _F32(2)
    out = np.zeros((n, c) + grid.shape[:2], dtype=image.dtype)

    def gather(ix: np.ndarray, iy: np.ndarray, weight: np.ndarray) -> None:
        valid = (ix >= 0) & (ix < w) & (iy >= 0) & (iy < h)
        values = image[:, :, np.clip(iy, 0, h - 1), np.clip(ix, 0, w - 1)]
        out[...] += values * (weight * valid).astype(image.dtype)

    if mode == "nearest":
        gather(np.rint(x).astype(np.int64), np.rint(y).astype(np.int64), np.ones_like(x))
        return out
    x0, y0 = np.floor(x), np.floor(y)
    fx, fy = x - x0, y - y0
    x0, y0 = x0.astype(np.int64), y0.astype(np.int64)
    gather(x0, y0, (1 - fx) * (1 - fy))
    gather(x0 + 1, y0, fx * (1 - fy))
    gather(x0, y0 + 1, (1 - fx) * fy)
    gather(x0 + 1, y0 + 1, fx * fy)
    return out


def _transform(img: Tensor, grid: np.ndarray, mode: str, fill) -> Tensor:
    if mode not in ("nearest", "bilinear"):
        raise ValueError(f"interpolation must be 'nearest' or 'bilinear' for Tensor images, got {mode!r}")
    array = img.numpy()
    batched = array if array.ndim == 4 else array[None]
    work = batched.astype(batched.dtype if batched.dtype.kind == "f" else _F32)
    ones = np.ones(work.shape[:1] + (1,) + work.shape[2:], dtype=work.dtype)
    sampled = _sample(np.concatenate([work, ones], axis=1), grid, mode)
    out, mask = sampled[:, :-1], sampled[:, -1:]
    fill_image = np.asarray(fill, dtype=work.dtype).reshape(1, -1, 1, 1)
    if mode == "nearest":
        mask = (mask < 0.5).astype(work.dtype)
        out = out * (1.0 - mask) + mask * fill_image
    else:
        out = out * mask + (1.0 - mask) * fill_image
    out = out.astype(array.dtype)
    return Tensor._wrap(np.ascontiguousarray(out if array.ndim == 4 else out[0]))


def affine(img: Tensor, matrix, interpolation: str, fill) -> Tensor:
    h, w = img.shape[-2:]
    theta = np.asarray(matrix, dtype=_F32).reshape(2, 3)
    return _transform(img, _affine_grid(theta, w, h, w, h), interpolation, fill)


def rotate(img: Tensor, angle: float, interpolation: str, expand: bool, center, fill) -> Tensor:
    h, w = img.shape[-2:]
    rad = math.radians(-angle % 360)
    centre = [0.0, 0.0] if center is None else [p - s * 0.5 for p, s in zip(center, (w, h), strict=True)]
    m = np.array([math.cos(rad), math.sin(rad), 0.0, -math.sin(rad), math.cos(rad), 0.0], dtype=_F32)
    m[2] += m[0] * -centre[0] + m[1] * -centre[1] + centre[0]
    m[5] += m[3] * -centre[0] + m[4] * -centre[1] + centre[1]
    theta = m.reshape(2, 3)
    ow, oh = w, h
    if expand:
        corners = np.array(
            [[-0.5 * w, -0.5 * h, 1.0], [-0.5 * w, 0.5 * h, 1.0], [0.5 * w, 0.5 * h, 1.0], [0.5 * w, -0.5 * h, 1.0]],
            dtype=_F32,
        )
        pos = corners @ theta.T
        ow, oh = (int(v) for v in np.ceil(pos.max(axis=0)) - np.floor(pos.min(axis=0)))
    return _transform(img, _affine_grid(theta, w, h, ow, oh), interpolation, fill)


def perspective(img: Tensor, coeffs, interpolation: str, fill) -> Tensor:
    h, w = img.shape[-2:]
    coeffs = np.asarray(coeffs, dtype=_F32)
    theta1 = coeffs[:6].reshape(2, 3)
    theta2 = np.concatenate([np.tile(coeffs[6:].reshape(1, 2), (2, 1)), np.ones((2, 1), _F32)], axis=1)
    base = _base_grid(w, h, 0.5, 0.5)
    grid = (base @ (theta1.T / np.array([0.5 * w, 0.5 * h], dtype=_F32))) / (base @ theta2.T) - _F32(1)
    return _transform(img, grid.reshape(h, w, 2), interpolation, fill)
