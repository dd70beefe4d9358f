"""Resizing (``interpolate`` / ``upsample``): nearest and bilinear with Paddle's coordinate rules.

Both modes are separable: output = A_h @ x @ A_w^T with a small interpolation matrix per axis,
so forward and backward are two GEMMs each and the gradient is exact by construction. The
matrices are built with Paddle's float32 source-coordinate arithmetic (align_corners, align_mode).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..core import symbolic
from ..core.op import OPAQUE, OpDef, Spec
from ..core.tensor import Tensor
from ..errors import DTypeError, ShapeError
from ..kernels.pool import gather_grid

MODES = ("nearest", "bilinear")


def _ratio(size: int, out: int, scale, align_corners: bool) -> np.float32:
    if out <= 1:
        return np.float32(0.0)
    if align_corners:
        return np.float32(size - 1) / np.float32(out - 1)
    return np.float32(1.0 / scale) if scale else np.float32(size) / np.float32(out)


def _matrix(size: int, out: int, scale, mode: str, align_corners: bool, align_mode: int) -> np.ndarray:
    """[out, size] weights mapping one input axis to one output axis."""
    ratio = _ratio(size, out, scale, align_corners)
    k = np.arange(out, dtype=np.float32)
    m = np.zeros((out, size), dtype=np.float64)
    rows = np.arange(out)
    if mode == "nearest":
        src = ratio * k + np.float32(0.5) if align_corners else ratio * k
        m[rows, np.minimum(src.astype(np.int64), size - 1)] = 1.0
        return m
    half_pixel = align_mode == 0 and not align_corners
    src = ratio * (k + np.float32(0.5)) - np.float32(0.5) if half_pixel else ratio * k
    src = np.maximum(src, np.float32(0.0))
    lo = np.minimum(src.astype(np.int64), size - 1)
    hi = np.minimum(lo + 1, size - 1)
    frac = (src - lo.astype(np.float32)).astype(np.float64)
    np.add.at(m, (rows, lo), 1.0 - frac)
    np.add.at(m, (rows, hi), frac)
    return m


def _scaled(n, s: float):
    """``int(n * s)``, Paddle's output size for a scale factor; symbolic when ``n`` is."""
    if isinstance(n, int):
        return int(n * s)
    if float(s).is_integer():
        return symbolic.mul(n, int(s))
    num, den = Fraction(s).as_integer_ratio()
    return symbolic.simplify(f"({num}*({n}))//{den}")


def _out_size(spatial, size, scale) -> tuple:
    """``size`` when given, else computed from the input's spatial dims and ``scale``."""
    return tuple(size) if size is not None else tuple(_scaled(n, s) for n, s in zip(spatial, scale, strict=True))


def _forward(ctx, x, size, scale, mode, align_corners, align_mode, data_format):
    if x.dtype.kind != "f":
        raise DTypeError(f"interpolate: x must be float16/32/64, got {x.dtype}; cast it with .astype('float32')")
    xc = x.transpose(0, 3, 1, 2) if data_format == "NHWC" else x
    size = _out_size(xc.shape[2:], size, scale)
    mats = [
        _matrix(xc.shape[2 + i], size[i], scale[i], mode, align_corners, align_mode).astype(x.dtype) for i in range(2)
    ]
    ctx.save(*mats)
    if mode == "nearest":  # one-hot rows: a gather gives the same values without two dense matmuls
        planes = np.ascontiguousarray(xc).reshape(-1, *xc.shape[2:])
        out = gather_grid(planes, mats[0].argmax(1), mats[1].argmax(1)).reshape(*xc.shape[:2], *size)
    else:
        out = np.matmul(np.matmul(mats[0], xc), mats[1].T)
    return np.ascontiguousarray(out.transpose(0, 2, 3, 1)) if data_format == "NHWC" else out


def _vjp(ctx, g):
    mh, mw = ctx.saved
    nhwc = ctx.attrs["data_format"] == "NHWC"
    g = g.transpose(0, 3, 1, 2) if nhwc else g
    dx = np.matmul(np.matmul(mh.T, g), mw)
    return np.ascontiguousarray(dx.transpose(0, 2, 3, 1)) if nhwc else dx


def _infer(x: Spec, size, scale, mode, align_corners, align_mode, data_format) -> Spec:
    size = _out_size(x.shape[1:3] if data_format == "NHWC" else x.shape[2:], size, scale)
    if data_format == "NHWC":
        return Spec((x.shape[0], *size, x.shape[3]), x.dtype)
    return Spec((x.shape[0], x.shape[1], *size), x.dtype)


interpolate_op = OpDef("interpolate", _forward, _vjp, _infer, OPAQUE)


def _pair(value, what: str):
    if isinstance(value, Tensor):
        value = value.tolist()
    if isinstance(value, int | float):
        return (value, value)
    values = [v.item() if isinstance(v, Tensor) else v for v in value]
    if len(values) != 2:
        raise ShapeError(f"interpolate: {what} must have 2 entries for a 4-D input, got {values}")
    return tuple(values)


def interpolate(
    x,
    size=None,
    scale_factor=None,
    mode="nearest",
    align_corners=False,
    align_mode=0,
    data_format="NCHW",
    recompute_scale_factor=None,
    antialias=False,
    name=None,
):
    """Resize a 4-D image batch by ``size`` or ``scale_factor`` (Paddle's rules for both)."""
    mode = mode.lower()
    data_format = data_format or "NCHW"
    if mode not in MODES:
        raise ValueError(f"interpolate: mode {mode!r} is not supported; use one of {MODES}")
    if data_format not in ("NCHW", "NHWC"):
        raise ShapeError(f"interpolate: data_format must be 'NCHW' or 'NHWC' for 4-D input, got {data_format!r}")
    if x.ndim != 4:
        raise ShapeError(f"interpolate: expected a 4-D input ({data_format}), got shape {list(x.shape)}")
    if mode == "nearest" and align_corners:
        raise ValueError("interpolate: align_corners=True needs mode 'bilinear' (as in Paddle); drop it for 'nearest'")
    if antialias:
        raise ValueError("interpolate: antialias=True is not supported; resize without it")
    if align_mode not in (0, 1):
        raise ValueError(f"interpolate: align_mode must be 0 or 1, got {align_mode}")
    if (size is None) == (scale_factor is None):
        raise ShapeError("interpolate: give exactly one of size and scale_factor")
    spatial = x.shape[1:3] if data_format == "NHWC" else x.shape[2:]
    if size is not None:
        out = tuple(int(s) for s in _pair(size, "size"))
        scale = (0.0, 0.0)
    else:
        scale = tuple(float(s) for s in _pair(scale_factor, "scale_factor"))
        if min(scale) <= 0:
            raise ShapeError(f"interpolate: scale_factor must be positive, got {list(scale)}")
        out = _out_size(spatial, None, scale)
        if recompute_scale_factor:
            scale = (0.0, 0.0)
    if min(out) <= 0:
        raise ShapeError(f"interpolate: output size {list(out)} must be positive (input spatial {list(spatial)})")
    return interpolate_op(
        x,
        # with a scale factor the op computes the size from its input: traced programs stay shape-generic
        size=out if size is not None or recompute_scale_factor else None,
        scale=scale,
        mode=mode,
        align_corners=bool(align_corners),
        align_mode=int(align_mode),
        data_format=data_format,
    )


def upsample(
    x, size=None, scale_factor=None, mode="nearest", align_corners=False, align_mode=0, data_format="NCHW", name=None
):
    return interpolate(x, size, scale_factor, mode, align_corners, align_mode, data_format)


FUNCTIONAL = ["interpolate", "upsample"]
