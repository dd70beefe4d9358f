"""Convolution: ``conv2d`` and ``conv2d_transpose`` as im2col + one (batched, per group) BLAS GEMM.

The transposed convolution is the input-gradient of a convolution and vice versa, so both ops are
built from the same three computations: ``_forward`` (conv), ``_input_grad`` (its adjoint on x)
and ``_weight_grad``. ``conv1d`` is ``conv2d`` on a height-1 image.
"""

from __future__ import annotations

import numpy as np

from ..core.op import OPAQUE, OpDef, Spec
from ..errors import DTypeError, ShapeError
from ..kernels.conv import col2im, im2col
from ._window import as_tuple, normalize_padding, out_size, resolve_padding

# ----- the three GEMMs (x in NCHW, columns [N, G, C/G*kh*kw, OH*OW]) ------------------------------


def _weights(w: np.ndarray, groups: int) -> np.ndarray:
    """[O, Cg, kh, kw] as [G, O/G, Cg*kh*kw]."""
    return w.reshape(groups, w.shape[0] // groups, -1)


def _columns(x, kernel, stride, pads, dil, outs):
    return im2col(np.ascontiguousarray(x), *kernel, *stride, pads[0], pads[2], *dil, *outs)


def _by_group(a: np.ndarray, groups: int) -> np.ndarray:
    """[N, G*X, P] as [N, G, X, P] (a view)."""
    return a.reshape(a.shape[0], groups, -1, a.shape[-1])


def _forward(x, w, stride, pads, dil, groups, outs):
    """Convolution of NCHW ``x`` with [O, C/G, kh, kw] ``w``: the NCHW output, and the columns."""
    cols = _columns(x, w.shape[2:], stride, pads, dil, outs)
    if groups == 1:
        out = np.matmul(w.reshape(w.shape[0], -1), cols)
    else:
        out = np.matmul(_weights(w, groups), _by_group(cols, groups))
    return out.reshape(x.shape[0], w.shape[0], *outs), cols


_KEEP_COLUMNS_BYTES = 32 << 20
"""Columns up to this size are kept for the weight gradient; larger ones are rebuilt from x (memory)."""


def _for_weight_grad(cols: np.ndarray, x: np.ndarray) -> np.ndarray:
    return cols if cols.nbytes <= _KEEP_COLUMNS_BYTES else x


def _input_grad(g, w, x_shape, stride, pads, dil, groups):
    """The adjoint of ``_forward`` in x, from the NCHW output gradient: GEMM to columns, then col2im."""
    n, c, h, wd = x_shape
    oh, ow = g.shape[2:]
    g3 = np.ascontiguousarray(g).reshape(n, groups, -1, oh * ow)
    cols = np.matmul(_weights(w, groups).transpose(0, 2, 1), g3).reshape(n, -1, oh * ow)
    return col2im(cols, n, c, h, wd, *w.shape[2:], *stride, pads[0], pads[2], *dil, oh, ow)


def _weight_grad(saved, g, w_shape, stride, pads, dil, groups):
    """``saved`` is the forward's columns (2-D) or its NCHW input, whose columns are rebuilt."""
    cols = saved if saved.ndim == 3 else _columns(saved, w_shape[2:], stride, pads, dil, g.shape[2:])
    n, p = cols.shape[0], cols.shape[2]
    g4 = np.ascontiguousarray(g).reshape(n, groups, -1, p)
    return np.matmul(g4, _by_group(cols, groups).transpose(0, 1, 3, 2)).sum(axis=0).reshape(w_shape)


# ----- argument checks and layout ---------------------------------------------------------------


def _check(op: str, x, w, bias, groups: int, data_format: str, transposed: bool) -> None:
    if data_format not in ("NCHW", "NHWC"):
        raise ShapeError(f"{op}: data_format must be 'NCHW' or 'NHWC', got {data_format!r}")
    if len(x.shape) != 4 or len(w.shape) != 4:
        raise ShapeError(f"{op}: expected a 4-D input and a 4-D weight, got x{list(x.shape)} and weight{list(w.shape)}")
    for name, t in (("x", x), ("weight", w), ("bias", bias)):
        if t is not None and np.dtype(t.dtype).kind != "f":
            raise DTypeError(f"{op}: {name} must be float16/32/64, got {t.dtype}; cast it with .astype('float32')")
    if groups < 1:
        raise ShapeError(f"{op}: groups must be >= 1, got {groups}")
    channels = x.shape[3 if data_format == "NHWC" else 1]
    if transposed:
        expected, out_channels = w.shape[0], w.shape[1] * groups
        rule = "weight.shape[0] (in_channels)"
    else:
        expected, out_channels = w.shape[1] * groups, w.shape[0]
        rule = "weight.shape[1] * groups"
        if w.shape[0] % groups:
            raise ShapeError(f"{op}: out_channels {w.shape[0]} (weight{list(w.shape)}) is not divisible by {groups=}")
    if isinstance(channels, int) and channels != expected:
        raise ShapeError(
            f"{op}: x{list(x.shape)} ({data_format}) has {channels} channels but weight{list(w.shape)} expects "
            f"{expected} = {rule}; check in_channels, groups and data_format"
        )
    if transposed and expected % groups:
        raise ShapeError(f"{op}: in_channels {expected} is not divisible by {groups=}")
    if bias is not None and tuple(bias.shape) != (out_channels,):
        raise ShapeError(f"{op}: bias must have shape [{out_channels}], got {list(bias.shape)}")


def _to_nchw(x: np.ndarray, data_format: str) -> np.ndarray:
    return x.transpose(0, 3, 1, 2) if data_format == "NHWC" else x


def _from_nchw(x: np.ndarray, data_format: str) -> np.ndarray:
    return np.ascontiguousarray(x.transpose(0, 2, 3, 1)) if data_format == "NHWC" else x


def _add_bias(out: np.ndarray, bias, data_format: str) -> np.ndarray:
    if bias is not None:
        shape = (1, 1, 1, -1) if data_format == "NHWC" else (1, -1, 1, 1)
        out += bias.reshape(shape).astype(out.dtype, copy=False)
    return out


def _bias_grad(g: np.ndarray, needed: bool):
    return g.sum(axis=(0, 2, 3)) if needed else None


def _spatial(shape, data_format):
    return tuple(shape[1:3]) if data_format == "NHWC" else tuple(shape[2:4])


def _nchw_shape(shape, data_format):
    return (shape[0], shape[3], shape[1], shape[2]) if data_format == "NHWC" else tuple(shape)


def _layout(shape, data_format):
    n, c, h, w = shape
    return (n, h, w, c) if data_format == "NHWC" else (n, c, h, w)


# ----- conv2d ------------------------------------------------------------------------------------


def _conv_geometry(x_shape, w_shape, stride, padding, dilation, data_format):
    sizes = _spatial(x_shape, data_format)
    pads, dil = resolve_padding(padding, sizes, w_shape[2:], stride, dilation)
    outs = tuple(out_size(sizes[i], w_shape[2 + i], stride[i], pads[2 * i], pads[2 * i + 1], dil[i]) for i in range(2))
    return pads, dil, outs


def _conv2d_forward(ctx, x, w, bias, stride, padding, dilation, groups, data_format):
    _check("conv2d", x, w, bias, groups, data_format, transposed=False)
    pads, dil, outs = _conv_geometry(x.shape, w.shape, stride, padding, dilation, data_format)
    if min(outs) <= 0:
        raise ShapeError(
            f"conv2d: the {w.shape[2]}x{w.shape[3]} kernel (dilation {list(dil)}) does not fit input "
            f"x{list(x.shape)} padded by {list(pads)}: output would be {list(outs)}; pad more or use a smaller kernel"
        )
    if w.dtype != x.dtype:
        raise DTypeError(f"conv2d: x is {x.dtype} but weight is {w.dtype}; cast one so they match")
    xc = _to_nchw(x, data_format)
    out, cols = _forward(xc, w, stride, pads, dil, groups, outs)
    ctx.save(_for_weight_grad(cols, xc) if ctx.needs_input_grad[1] else None, w, xc.shape, pads, dil)
    out = _from_nchw(out, data_format)
    return _add_bias(out, bias, data_format)


def _conv2d_vjp(ctx, g):
    xc, w, x_shape, pads, dil = ctx.saved
    stride, groups, fmt = ctx.attrs["stride"], ctx.attrs["groups"], ctx.attrs["data_format"]
    g = _to_nchw(g, fmt)
    dx = dw = None
    if ctx.needs_input_grad[0]:
        dx = _from_nchw(_input_grad(g, w, x_shape, stride, pads, dil, groups), fmt)
    if ctx.needs_input_grad[1]:
        dw = _weight_grad(xc, g, w.shape, stride, pads, dil, groups)
    return dx, dw, _bias_grad(g, ctx.needs_input_grad[2])


def _conv2d_infer(x: Spec, w: Spec, bias, stride, padding, dilation, groups, data_format) -> Spec:
    _check("conv2d", x, w, bias, groups, data_format, transposed=False)
    _, _, outs = _conv_geometry(x.shape, w.shape, stride, padding, dilation, data_format)
    return Spec(_layout((x.shape[0], w.shape[0], *outs), data_format), x.dtype)


conv2d_op = OpDef("conv2d", _conv2d_forward, _conv2d_vjp, _conv2d_infer, OPAQUE)


def _attrs(op, stride, padding, dilation, groups, data_format):
    return dict(
        stride=as_tuple(op, "stride", stride, 2),
        padding=normalize_padding(op, padding, 2, channel_last=data_format == "NHWC"),
        dilation=as_tuple(op, "dilation", dilation, 2),
        groups=int(groups),
        data_format=data_format,
    )


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, data_format="NCHW", name=None):
    """2-D convolution with Paddle's padding forms (int, pairs, 2n ints, 'SAME', 'VALID')."""
    return conv2d_op(x, weight, bias, **_attrs("conv2d", stride, padding, dilation, groups, data_format))


# ----- conv2d_transpose ----------------------------------------------------------------------------


def _transpose_geometry(x_shape, w_shape, stride, padding, dilation, output_padding, output_size, data_format):
    sizes = _spatial(x_shape, data_format)
    pads, dil = resolve_padding(padding, sizes, w_shape[2:], stride, dilation)
    outs = []
    for i in range(2):
        k, s, d = w_shape[2 + i], stride[i], dil[i]
        if not isinstance(sizes[i], int):
            outs.append(f"({sizes[i]}-1)*{s}+{d * (k - 1) + 1 - pads[2 * i] - pads[2 * i + 1] + output_padding[i]}")
            continue
        base = (sizes[i] - 1) * s - pads[2 * i] - pads[2 * i + 1] + d * (k - 1) + 1
        if output_size is not None:
            if not base <= output_size[i] < base + max(s, d):
                raise ShapeError(
                    f"conv2d_transpose: output_size {list(output_size)} is impossible for x{list(x_shape)}; "
                    f"dim {i} must be in [{base}, {base + max(s, d) - 1}]"
                )
            outs.append(output_size[i])
        else:
            if output_padding[i] >= max(s, d):
                raise ShapeError(
                    f"conv2d_transpose: output_padding {list(output_padding)} must be smaller than stride "
                    f"{list(stride)} or dilation {list(dilation)}"
                )
            outs.append(base + output_padding[i])
    return pads, dil, tuple(outs)


def _conv2d_transpose_forward(
    ctx, x, w, bias, stride, padding, output_padding, output_size, dilation, groups, data_format
):
    _check("conv2d_transpose", x, w, bias, groups, data_format, transposed=True)
    if w.dtype != x.dtype:
        raise DTypeError(f"conv2d_transpose: x is {x.dtype} but weight is {w.dtype}; cast one so they match")
    pads, dil, outs = _transpose_geometry(
        x.shape, w.shape, stride, padding, dilation, output_padding, output_size, data_format
    )
    if min(outs) <= 0:
        raise ShapeError(f"conv2d_transpose: x{list(x.shape)} with padding {list(pads)} gives output {list(outs)}")
    xc = np.ascontiguousarray(_to_nchw(x, data_format))
    out_shape = (x.shape[0], w.shape[1] * groups, *outs)
    ctx.save(xc if ctx.needs_input_grad[1] else None, w, xc.shape[2:], pads, dil)
    out = _from_nchw(_input_grad(xc, w, out_shape, stride, pads, dil, groups), data_format)
    return _add_bias(out, bias, data_format)


def _conv2d_transpose_vjp(ctx, g):
    xc, w, x_spatial, pads, dil = ctx.saved
    stride, groups, fmt = ctx.attrs["stride"], ctx.attrs["groups"], ctx.attrs["data_format"]
    g = _to_nchw(g, fmt)
    dx = dw = None
    if ctx.needs_input_grad[0]:
        dx = _from_nchw(_forward(g, w, stride, pads, dil, groups, x_spatial)[0], fmt)
    if ctx.needs_input_grad[1]:
        dw = _weight_grad(g, xc, w.shape, stride, pads, dil, groups)
    return dx, dw, _bias_grad(g, ctx.needs_input_grad[2])


def _conv2d_transpose_infer(
    x: Spec, w: Spec, bias, stride, padding, output_padding, output_size, dilation, groups, data_format
) -> Spec:
    _check("conv2d_transpose", x, w, bias, groups, data_format, transposed=True)
    _, _, outs = _transpose_geometry(
        x.shape, w.shape, stride, padding, dilation, output_padding, output_size, data_format
    )
    return Spec(_layout((x.shape[0], w.shape[1] * groups, *outs), data_format), x.dtype)


conv2d_transpose_op = OpDef(
    "conv2d_transpose", _conv2d_transpose_forward, _conv2d_transpose_vjp, _conv2d_transpose_infer, OPAQUE
)


def conv2d_transpose(
    x,
    weight,
    bias=None,
    stride=1,
    padding=0,
    output_padding=0,
    groups=1,
    dilation=1,
    output_size=None,
    data_format="NCHW",
    name=None,
):
    """Transposed 2-D convolution; weight is [in_channels, out_channels / groups, kh, kw] as in Paddle."""
    attrs = _attrs("conv2d_transpose", stride, padding, dilation, groups, data_format)
    attrs["output_padding"] = as_tuple("conv2d_transpose", "output_padding", output_padding, 2)
    if output_size is not None:
        output_size = as_tuple("conv2d_transpose", "output_size", output_size, 2)
    attrs["output_size"] = output_size
    return conv2d_transpose_op(x, weight, bias, **attrs)


# ----- conv1d ------------------------------------------------------------------------------------


def conv1d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, data_format="NCL", name=None):
    """``conv2d`` on a height-1 image: x [N, C, L] ('NCL') or [N, L, C] ('NLC'), weight [O, C/G, k]."""
    from .shape import squeeze, unsqueeze

    if data_format not in ("NCL", "NLC"):
        raise ShapeError(f"conv1d: data_format must be 'NCL' or 'NLC', got {data_format!r}")
    if x.ndim != 3 or weight.ndim != 3:
        raise ShapeError(
            f"conv1d: expected a 3-D input and weight, got x{list(x.shape)} and weight{list(weight.shape)}"
        )
    pads = normalize_padding("conv1d", padding, 1, channel_last=data_format == "NLC")
    attrs = dict(
        stride=(1, *as_tuple("conv1d", "stride", stride, 1)),
        padding=pads if isinstance(pads, str) else (0, 0, *pads),
        dilation=(1, *as_tuple("conv1d", "dilation", dilation, 1)),
        groups=int(groups),
        data_format="NHWC" if data_format == "NLC" else "NCHW",
    )
    out = conv2d_op(unsqueeze(x, 1 if data_format == "NLC" else 2), unsqueeze(weight, 2), bias, **attrs)
    return squeeze(out, 1 if data_format == "NLC" else 2)


FUNCTIONAL = ["conv1d", "conv2d", "conv2d_transpose"]
