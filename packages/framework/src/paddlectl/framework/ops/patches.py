"""Patch rearrangements for ``paddle.nn.functional``: pixel_shuffle/pixel_unshuffle (reshape and
transpose compositions), and unfold/fold (im2col/col2im), each other's adjoint and so each other's vjp."""

from __future__ import annotations

import numpy as np

from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..errors import ShapeError
from .shape import pad, reshape, transpose


def _pair(op: str, what: str, value) -> tuple[int, int]:
    v = [value, value] if isinstance(value, int) else [int(d) for d in value]
    if len(v) != 2:
        raise ValueError(f"{op}: {what} must be an int or a pair, got {value!r}")
    return v[0], v[1]


def _pads(op: str, value) -> tuple[int, int, int, int]:
    """Paddle's unfold/fold paddings as (top, left, bottom, right)."""
    if isinstance(value, int):
        return (value,) * 4
    v = [int(d) for d in value]
    if len(v) == 2:
        return v[0], v[1], v[0], v[1]
    if len(v) == 4:
        return v[0], v[1], v[2], v[3]
    raise ValueError(f"{op}: paddings must be an int, [ph, pw] or [top, left, bottom, right], got {value!r}")


def _out_size(size, k, s, p0, p1, d):
    return (size + p0 + p1 - (d * (k - 1) + 1)) // s + 1


def _windows(kernel, stride, pads, dil, oh, ow):
    """For each kernel offset (i, j): the strided slices of the padded image it reads."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dil
    for i in range(kh):
        for j in range(kw):
            yield i, j, np.s_[..., i * dh : i * dh + sh * (oh - 1) + 1 : sh, j * dw : j * dw + sw * (ow - 1) + 1 : sw]


def _im2col(x, kernel, stride, pads, dil):
    n, c, h, w = x.shape
    pt, pl, pb, pr = pads
    oh = _out_size(h, kernel[0], stride[0], pt, pb, dil[0])
    ow = _out_size(w, kernel[1], stride[1], pl, pr, dil[1])
    if oh <= 0 or ow <= 0:
        raise ShapeError(
            f"unfold: kernel {list(kernel)} with dilation {list(dil)} does not fit x{list(x.shape)} + padding"
        )
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    cols = np.empty((n, c, kernel[0], kernel[1], oh, ow), dtype=x.dtype)
    for i, j, window in _windows(kernel, stride, pads, dil, oh, ow):
        cols[:, :, i, j] = xp[window]
    return cols.reshape(n, c * kernel[0] * kernel[1], oh * ow)


def _col2im(cols, out_hw, kernel, stride, pads, dil):
    n, ckk, length = cols.shape
    kh, kw = kernel
    c = ckk // (kh * kw)
    pt, pl, pb, pr = pads
    h, w = out_hw
    oh = _out_size(h, kh, stride[0], pt, pb, dil[0])
    ow = _out_size(w, kw, stride[1], pl, pr, dil[1])
    if ckk != c * kh * kw or oh * ow != length:
        raise ShapeError(
            f"fold: x[N, {ckk}, {length}] does not match kernel {list(kernel)} and output {list(out_hw)} "
            f"(needs C*{kh * kw} rows and {oh}*{ow}={oh * ow} blocks)"
        )
    blocks = cols.reshape(n, c, kh, kw, oh, ow)
    out = np.zeros((n, c, h + pt + pb, w + pl + pr), dtype=cols.dtype)
    for i, j, window in _windows(kernel, stride, pads, dil, oh, ow):
        out[window] += blocks[:, :, i, j]
    return out[:, :, pt : pt + h, pl : pl + w]


def _unfold_forward(ctx, x, kernel, stride, pads, dil):
    if x.ndim != 4:
        raise ShapeError(f"unfold: x must be 4-D [N, C, H, W], got shape {list(x.shape)}")
    return _im2col(x, kernel, stride, pads, dil)


def _unfold_vjp(ctx, g):
    return fold_op(g, out_hw=tuple(ctx.input(0).shape[2:]), **ctx.attrs)


def _unfold_infer(x: Spec, kernel, stride, pads, dil) -> Spec:
    n, c, h, w = x.shape
    dims = []
    for size, k, s, p0, p1, d in ((h, kernel[0], stride[0], pads[0], pads[2], dil[0]),
                                  (w, kernel[1], stride[1], pads[1], pads[3], dil[1])):  # fmt: skip
        dims.append(
            _out_size(size, k, s, p0, p1, d)
            if isinstance(size, int)
            else f"(({size}+{p0 + p1 - (d * (k - 1) + 1)})//{s}+1)"
        )
    blocks = dims[0] * dims[1] if all(isinstance(d, int) for d in dims) else f"{dims[0]}*{dims[1]}"
    channels = c * kernel[0] * kernel[1] if isinstance(c, int) else f"{c}*{kernel[0] * kernel[1]}"
    return Spec((n, channels, blocks), x.dtype)


# A 3x3 kernel over a 5x6 image, and a strided, dilated, unevenly padded 2x2 one.
_GEOMETRIES = (
    ((2, 2, 5, 6), {"kernel": (3, 3), "stride": (1, 1), "pads": (1, 1, 1, 1), "dil": (1, 1)}),
    ((1, 3, 6, 5), {"kernel": (2, 2), "stride": (2, 1), "pads": (0, 1, 1, 0), "dil": (1, 2)}),
)


def _unfold_samples(rng):
    return [Sample((rng.standard_normal(shape),), attrs) for shape, attrs in _GEOMETRIES]


def _fold_samples(rng):
    samples = []
    for shape, attrs in _GEOMETRIES:
        cols = _im2col(np.zeros(shape), **attrs)
        samples.append(Sample((rng.standard_normal(cols.shape),), {"out_hw": shape[2:], **attrs}))
    return samples


unfold_op = OpDef("unfold", _unfold_forward, _unfold_vjp, _unfold_infer, OPAQUE, samples=_unfold_samples)


def _fold_forward(ctx, x, out_hw, kernel, stride, pads, dil):
    if x.ndim != 3:
        raise ShapeError(f"fold: x must be 3-D [N, C*kh*kw, L], got shape {list(x.shape)}")
    return _col2im(x, out_hw, kernel, stride, pads, dil)


def _fold_vjp(ctx, g):
    return unfold_op(g, **{k: v for k, v in ctx.attrs.items() if k != "out_hw"})


def _fold_infer(x: Spec, out_hw, kernel, stride, pads, dil) -> Spec:
    c = (
        x.shape[1] // (kernel[0] * kernel[1])
        if isinstance(x.shape[1], int)
        else f"{x.shape[1]}//{kernel[0] * kernel[1]}"
    )
    return Spec((x.shape[0], c) + tuple(out_hw), x.dtype)


fold_op = OpDef("fold", _fold_forward, _fold_vjp, _fold_infer, OPAQUE, samples=_fold_samples)


def unfold(x, kernel_sizes, strides=1, paddings=0, dilations=1, name=None):
    """Sliding ``kernel_sizes`` blocks of an NCHW image as columns: ``[N, C*kh*kw, L]``."""
    return unfold_op(
        x, kernel=_pair("unfold", "kernel_sizes", kernel_sizes), stride=_pair("unfold", "strides", strides),
        pads=_pads("unfold", paddings), dil=_pair("unfold", "dilations", dilations),
    )  # fmt: skip


def fold(x, output_sizes, kernel_sizes, strides=1, paddings=0, dilations=1, name=None):
    """Sum ``[N, C*kh*kw, L]`` blocks back into an ``[N, C, H, W]`` image (overlaps add)."""
    return fold_op(
        x, out_hw=_pair("fold", "output_sizes", output_sizes), kernel=_pair("fold", "kernel_sizes", kernel_sizes),
        stride=_pair("fold", "strides", strides), pads=_pads("fold", paddings),
        dil=_pair("fold", "dilations", dilations),
    )  # fmt: skip


def _check_layout(op: str, x, data_format: str) -> None:
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError(f"{op}: data_format must be 'NCHW' or 'NHWC', got {data_format!r}")
    if x.ndim != 4:
        raise ShapeError(f"{op}: x must be 4-D, got shape {x.shape}")


def pixel_shuffle(x, upscale_factor, data_format="NCHW", name=None):
    """``[N, C*r*r, H, W] -> [N, C, H*r, W*r]`` (or the NHWC equivalent)."""
    _check_layout("pixel_shuffle", x, data_format)
    r = int(upscale_factor)
    if data_format == "NCHW":
        n, c, h, w = x.shape
        if c % (r * r):
            raise ShapeError(f"pixel_shuffle: channels {c} of x{x.shape} must be divisible by {r}*{r}")
        y = transpose(reshape(x, [n, c // (r * r), r, r, h, w]), [0, 1, 4, 2, 5, 3])
        return reshape(y, [n, c // (r * r), h * r, w * r])
    n, h, w, c = x.shape
    if c % (r * r):
        raise ShapeError(f"pixel_shuffle: channels {c} of x{x.shape} must be divisible by {r}*{r}")
    y = transpose(reshape(x, [n, h, w, c // (r * r), r, r]), [0, 1, 4, 2, 5, 3])
    return reshape(y, [n, h * r, w * r, c // (r * r)])


def pixel_unshuffle(x, downscale_factor, data_format="NCHW", name=None):
    """The inverse of pixel_shuffle: ``[N, C, H*r, W*r] -> [N, C*r*r, H, W]``."""
    _check_layout("pixel_unshuffle", x, data_format)
    r = int(downscale_factor)
    if data_format == "NCHW":
        n, c, h, w = x.shape
        if h % r or w % r:
            raise ShapeError(f"pixel_unshuffle: H and W of x{x.shape} must be divisible by {r}")
        y = transpose(reshape(x, [n, c, h // r, r, w // r, r]), [0, 1, 3, 5, 2, 4])
        return reshape(y, [n, c * r * r, h // r, w // r])
    n, h, w, c = x.shape
    if h % r or w % r:
        raise ShapeError(f"pixel_unshuffle: H and W of x{x.shape} must be divisible by {r}")
    y = transpose(reshape(x, [n, h // r, r, w // r, r, c]), [0, 1, 3, 5, 2, 4])
    return reshape(y, [n, h // r, w // r, c * r * r])


def zeropad2d(x, padding, data_format="NCHW", name=None):
    """Zero padding ``[left, right, top, bottom]`` of the spatial dims."""
    padding = [padding] * 4 if isinstance(padding, int) else list(padding)
    return pad(x, padding, mode="constant", value=0.0, data_format=data_format)


FUNCTIONAL = ["unfold", "fold", "pixel_shuffle", "pixel_unshuffle", "zeropad2d"]
