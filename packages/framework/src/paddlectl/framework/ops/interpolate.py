"""Resizing (``interpolate`` / ``upsample``): nearest and bilinear with Paddle's coordinate rules.

Both modes are separable: output = A_h @ x @ A_w^T with a small interpolation matrix per axis,
so forward and backward are two GEMMs each and the gradient is exact by construction; backward
(``interpolate_grad``, A_h^T @ g @ A_w) is linear too, its own adjoint ``interpolate``. The
matrices are built with Paddle's float32 source-coordinate arithmetic (align_corners, align_mode).
"""

from __future__ import annotations

import functools
from fractions import Fraction

import numpy as np

from ..core import items as item_rules
from ..core import symbolic
from ..core.op import OPAQUE, OpDef, Sample, Spec
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


def _matrices(sizes, outs, scale, mode, align_corners, align_mode, dtype) -> list[np.ndarray]:
    scale = scale or (None, None)  # given sizes, not scales: the ratio is in / out
    return [_matrix(sizes[i], outs[i], scale[i], mode, align_corners, align_mode).astype(dtype) for i in range(2)]


@functools.lru_cache(maxsize=256)
def _nearest_sources(sizes, outs, scale, align_corners) -> tuple[np.ndarray, ...]:
    """Each output row's and column's source index for ``nearest`` (the matrices' one-hot columns),
    read-only and built once per shape: a model resizes the same shapes every run."""
    sources = tuple(m.argmax(1) for m in _matrices(sizes, outs, scale, "nearest", align_corners, 0, np.float32))
    for index in sources:
        index.flags.writeable = False
    return sources


def _to_nchw(x, data_format):
    return x.transpose(0, 3, 1, 2) if data_format == "NHWC" else x


def _from_nchw(x, data_format):
    return np.ascontiguousarray(x.transpose(0, 2, 3, 1)) if data_format == "NHWC" else x


def _forward(ctx, x, size, scale, mode, align_corners, align_mode, data_format):
    if x.dtype.kind != "f":
        raise DTypeError(f"interpolate: x must be float16/32/64, got {x.dtype}; cast it with .astype('float32')")
    xc = _to_nchw(x, data_format)
    size = _out_size(xc.shape[2:], size, scale)
    if mode == "nearest":  # one-hot rows: a gather gives the same values without two dense matmuls
        rows, cols = _nearest_sources(tuple(xc.shape[2:]), tuple(size), tuple(scale) if scale else None, align_corners)
        planes = np.ascontiguousarray(xc).reshape(-1, *xc.shape[2:])
        out = gather_grid(planes, rows, cols).reshape(*xc.shape[:2], *size)
    else:
        mh, mw = _matrices(xc.shape[2:], size, scale, mode, align_corners, align_mode, x.dtype)
        out = np.matmul(np.matmul(mh, xc), mw.T)
    return _from_nchw(out, data_format)


def _vjp(ctx, g):
    fmt = ctx.attrs["data_format"]
    x = ctx.input(0)
    return interpolate_grad_op(g, in_size=tuple(x.shape[1:3] if fmt == "NHWC" else x.shape[2:]), **ctx.attrs)


def _infer(x: Spec, size, scale, mode, align_corners, align_mode, data_format) -> Spec:
    size = _out_size(x.shape[1:3] if data_format == "NHWC" else x.shape[2:], size, scale)
    if data_format == "NHWC":
        return Spec((x.shape[0], *size, x.shape[3]), x.dtype)
    return Spec((x.shape[0], x.shape[1], *size), x.dtype)


def _samples(rng):
    x = rng.standard_normal((2, 3, 4, 5))
    plain = dict(align_corners=False, align_mode=0, data_format="NCHW")
    return [
        Sample((x,), dict(plain, size=(7, 3), scale=(0.0, 0.0), mode="bilinear")),
        Sample((x,), dict(plain, size=None, scale=(1.5, 2.0), mode="nearest")),
        Sample((x,), dict(plain, size=(6, 9), scale=(0.0, 0.0), mode="bilinear", align_corners=True)),
        Sample((x,), dict(plain, size=None, scale=(2.0, 0.5), mode="bilinear", align_mode=1)),
        Sample(
            (x.transpose(0, 2, 3, 1).copy(),),
            dict(plain, size=(5, 5), scale=(0.0, 0.0), mode="bilinear", data_format="NHWC"),
        ),
    ]


interpolate_op = OpDef("interpolate", _forward, _vjp, _infer, OPAQUE, samples=_samples, items=item_rules.leading)


# ----- interpolate_grad: the adjoint, A_h^T @ g @ A_w, whose own adjoint is interpolate -----------


def _grad_forward(ctx, g, in_size, size, scale, mode, align_corners, align_mode, data_format):
    gc = _to_nchw(g, data_format)
    mh, mw = _matrices(in_size, gc.shape[2:], scale, mode, align_corners, align_mode, g.dtype)
    return _from_nchw(np.matmul(np.matmul(mh.T, gc), mw), data_format)


def _grad_vjp(ctx, a):
    attrs = dict(ctx.attrs)
    del attrs["in_size"]
    return interpolate_op(a, **attrs)


def _grad_infer(g: Spec, in_size, size, scale, mode, align_corners, align_mode, data_format) -> Spec:
    if data_format == "NHWC":
        return Spec((g.shape[0], *in_size, g.shape[3]), g.dtype)
    return Spec((g.shape[0], g.shape[1], *in_size), g.dtype)


def _grad_samples(rng):
    samples = []
    for s in _samples(rng):
        x = s.inputs[0]
        out = _infer(Spec(x.shape, x.dtype), **s.attrs).shape
        in_size = x.shape[1:3] if s.attrs["data_format"] == "NHWC" else x.shape[2:]
        samples.append(Sample((rng.standard_normal(out),), dict(s.attrs, in_size=in_size)))
    return samples


interpolate_grad_op = OpDef("interpolate_grad", _grad_forward, _grad_vjp, _grad_infer, OPAQUE, samples=_grad_samples)


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
