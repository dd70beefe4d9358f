"""Convolution ops: ``conv2d``, ``conv2d_transpose`` and ``conv2d_weight_grad``, and ``conv1d``.

The ops check arguments, resolve geometry and lay out data; which algorithm computes a convolution
(direct kernels, shifted GEMMs, columns) is ``kernels.conv_select``'s choice. Convolution is
bilinear in (x, w), so its derivatives are convolutions again and the three ops are closed under
differentiation: the input gradient of ``conv2d`` is ``conv2d_transpose`` (with the input's size
as output size), its weight gradient ``conv2d_weight_grad``; the gradients of those two are
``conv2d``, ``conv2d_transpose`` and ``conv2d_weight_grad`` once more. Any order of derivative
runs on the same fast kernels. What runs only at inference (the fixed-shape lowering, the ops the
passes make) is in ``conv_inference``.
"""

from __future__ import annotations

import numpy as np

from ..core import items as item_rules
from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..core.state import STATE
from ..core.tensor import Tensor
from ..errors import DTypeError, ShapeError
from ..kernels.conv_select import forward, input_grad, weight_grad
from ._window import as_tuple, normalize_padding, out_size, resolve_padding

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


def _spatial(shape, data_format):
    return tuple(shape[1:3]) if data_format == "NHWC" else tuple(shape[2:4])


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
    out, cols = forward(_to_nchw(x, data_format), w, stride, pads, dil, groups, outs, ctx.needs_input_grad[1])
    if ctx.needs_input_grad[1] and cols.ndim == 2:  # columns built for the weight gradient: not again
        ctx.save(cols)
    return _add_bias(_from_nchw(out, data_format), bias, data_format)


def _bias_grad(ctx, g, index: int):
    """Per-channel sums of the output gradient, where the bias needs one."""
    return conv2d_bias_grad_op(g, data_format=ctx.attrs["data_format"]) if ctx.needs_input_grad[index] else None


def _bias_grad_forward(ctx, g, data_format):
    """einsum over [N, C, H*W] is 3x faster than ``sum(axis=(0, 2, 3))`` (45 vs 132 us for LeNet's
    conv1 gradient, [64, 6, 28, 28])."""
    if data_format == "NHWC":
        return np.einsum("npc->c", g.reshape(g.shape[0], -1, g.shape[3]))
    return np.einsum("ncp->c", g.reshape(*g.shape[:2], -1))


def _bias_grad_vjp(ctx, a):
    g = ctx.input(0)
    shape = [1, 1, 1, -1] if ctx.attrs["data_format"] == "NHWC" else [1, -1, 1, 1]
    return a.reshape(shape).expand(list(g.shape))


def _bias_grad_infer(g: Spec, data_format) -> Spec:
    return Spec((g.shape[3 if data_format == "NHWC" else 1],), g.dtype)


conv2d_bias_grad_op = OpDef(
    "conv2d_bias_grad",
    _bias_grad_forward,
    _bias_grad_vjp,
    _bias_grad_infer,
    OPAQUE,
    samples=lambda rng: [
        Sample((rng.standard_normal((2, 3, 4, 5)),), {"data_format": "NCHW"}),
        Sample((rng.standard_normal((2, 4, 5, 3)),), {"data_format": "NHWC"}),
    ],
)


def _conv2d_vjp(ctx, g):
    x, w = ctx.input(0), ctx.input(1)
    a = ctx.attrs
    fmt = a["data_format"]
    pads, dil, _ = _conv_geometry(x.shape, w.shape, a["stride"], a["padding"], a["dilation"], fmt)
    geometry = dict(stride=a["stride"], padding=pads, dilation=dil, groups=a["groups"], data_format=fmt)
    dx = dw = None
    if ctx.needs_input_grad[0]:
        dx = _input_grad(g, w, _spatial(x.shape, fmt), geometry)
    if ctx.needs_input_grad[1]:
        # The columns the forward built from x (a function of x: no gradient flows to them). Not while
        # tracing: the program would hold the example's columns as a constant, its weight gradient the
        # example's; it rebuilds them from x.
        cols = Tensor._wrap(ctx.saved[0]) if ctx.saved and STATE.tracer is None else None
        dw = conv2d_weight_grad_op(x, g, cols, w_shape=tuple(w.shape), **geometry)
    return dx, dw, _bias_grad(ctx, g, 2)


def _conv2d_infer(x: Spec, w: Spec, bias, stride, padding, dilation, groups, data_format) -> Spec:
    _check("conv2d", x, w, bias, groups, data_format, transposed=False)
    _, _, outs = _conv_geometry(x.shape, w.shape, stride, padding, dilation, data_format)
    return Spec(_layout((x.shape[0], w.shape[0], *outs), data_format), x.dtype)


def _geometry_samples(rng, transposed: bool):
    """Calls covering the paths: plain, stride 2 with padding, groups, depthwise, dilation, NHWC, 1x1."""
    cases = [  # x shape (NCHW), weight shape, attrs
        ((2, 3, 6, 6), (4, 3, 3, 3), dict(stride=(1, 1), padding=(1, 1, 1, 1))),
        ((1, 4, 7, 6), (6, 2, 3, 3), dict(stride=(2, 2), padding=(1, 1, 1, 1), groups=2)),
        ((2, 3, 5, 5), (3, 1, 3, 3), dict(stride=(1, 2), padding=(1, 0, 1, 0), groups=3)),
        ((1, 2, 7, 7), (3, 2, 2, 3), dict(stride=(1, 1), padding=(0, 0, 0, 0), dilation=(2, 1))),
        ((2, 4, 4, 4), (2, 4, 1, 1), dict(stride=(2, 2), padding=(0, 0, 0, 0))),
        ((1, 2, 5, 6), (2, 2, 3, 3), dict(stride=(1, 1), padding=(1, 1, 1, 1), data_format="NHWC")),
    ]
    samples = []
    for x_shape, w_shape, attrs in cases:
        attrs = dict(dict(dilation=(1, 1), groups=1, data_format="NCHW"), **attrs)
        fmt, groups = attrs["data_format"], attrs["groups"]
        if transposed:  # the transpose of conv2d(x, w): its input has conv2d's output shape
            _, _, outs = _conv_geometry(
                _layout(x_shape, fmt), w_shape, attrs["stride"], attrs["padding"], attrs["dilation"], fmt
            )
            x_shape = (x_shape[0], w_shape[0], *outs)  # and w [O, C/G, kh, kw] reads as [Cin, Cout/G, ...]
            attrs.update(output_padding=(0, 0), output_size=None)
        channels = w_shape[1] * groups if transposed else w_shape[0]
        x = rng.standard_normal(_layout(x_shape, fmt))
        samples.append(Sample((x, rng.standard_normal(w_shape), rng.standard_normal(channels)), attrs))
    return samples


conv2d_op = OpDef(
    "conv2d",
    _conv2d_forward,
    _conv2d_vjp,
    _conv2d_infer,
    OPAQUE,
    samples=lambda rng: _geometry_samples(rng, transposed=False),
    fresh_output=True,
    items=item_rules.leading,
)


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


# ----- conv2d_weight_grad: the weight gradient, bilinear in (x, output gradient) ---------------------


def _weight_grad_forward(ctx, x, g, cols, w_shape, stride, padding, dilation, groups, data_format):
    """``cols``: the columns conv2d's forward built from x, where it kept them (else None)."""
    source = cols if cols is not None else _to_nchw(x, data_format)
    return weight_grad(source, _to_nchw(g, data_format), w_shape, stride, padding, dilation, groups)


def _conv_cropped(x, w, sizes, geometry):
    """conv2d of ``x`` cropped to spatial ``sizes``: where ``x`` is a transposed convolution's output
    with output padding past the stride, the convolution has rows more than the adjoint needs
    (rows no window of the transposed convolution's input reached)."""
    out = conv2d_op(x, w, None, **geometry)
    h, wd = sizes
    if _spatial(out.shape, geometry["data_format"]) == (h, wd):
        return out
    return out[:, :h, :wd] if geometry["data_format"] == "NHWC" else out[:, :, :h, :wd]


def _weight_grad_vjp(ctx, a):
    """<a, dW(x, g)> = <conv2d(x, a), g> = <x, conv2d_transpose(g, a)>: both are convolutions with
    the weight cotangent ``a`` as filter."""
    x, g = ctx.input(0), ctx.input(1)
    geometry = {k: ctx.attrs[k] for k in ("stride", "padding", "dilation", "groups", "data_format")}
    fmt = geometry["data_format"]
    dx = _input_grad(g, a, _spatial(x.shape, fmt), geometry) if ctx.needs_input_grad[0] else None
    dg = _conv_cropped(x, a, _spatial(g.shape, fmt), geometry) if ctx.needs_input_grad[1] else None
    return dx, dg, None


def _weight_grad_infer(x: Spec, g: Spec, cols, w_shape, stride, padding, dilation, groups, data_format) -> Spec:
    return Spec(tuple(w_shape), x.dtype)


def _weight_grad_samples(rng):
    samples = []
    for s in _geometry_samples(rng, transposed=False):
        x, w, _ = s.inputs
        fmt = s.attrs["data_format"]
        _, _, outs = _conv_geometry(x.shape, w.shape, s.attrs["stride"], s.attrs["padding"], s.attrs["dilation"], fmt)
        g = rng.standard_normal(_layout((x.shape[0], w.shape[0], *outs), fmt))
        samples.append(Sample((x, g, None), dict(s.attrs, w_shape=w.shape)))
    return samples


conv2d_weight_grad_op = OpDef(
    "conv2d_weight_grad",
    _weight_grad_forward,
    _weight_grad_vjp,
    _weight_grad_infer,
    OPAQUE,
    samples=_weight_grad_samples,
)


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
    out = _from_nchw(input_grad(xc, w, out_shape, stride, pads, dil, groups), data_format)
    return _add_bias(out, bias, data_format)


def _input_grad(g, w, sizes, geometry):
    """conv2d's input gradient (of spatial ``sizes``) from its output gradient ``g``: the transposed
    convolution of ``g``, whose output size pins the rows a stride left unread."""
    return conv2d_transpose_op(g, w, None, output_padding=(0, 0), output_size=tuple(sizes), **geometry)


def _conv2d_transpose_vjp(ctx, g):
    """<g, T(x, w)> = <conv2d(g, w), x> = <w, dW(g, x)>: the transposed convolution's adjoints are a
    convolution and the weight gradient with the roles of input and output gradient swapped."""
    x, w = ctx.input(0), ctx.input(1)
    a = ctx.attrs
    fmt = a["data_format"]
    pads, dil, _ = _transpose_geometry(
        x.shape, w.shape, a["stride"], a["padding"], a["dilation"], a["output_padding"], a["output_size"], fmt
    )
    geometry = dict(stride=a["stride"], padding=pads, dilation=dil, groups=a["groups"], data_format=fmt)
    dx = dw = None
    if ctx.needs_input_grad[0]:
        dx = _conv_cropped(g, w, _spatial(x.shape, fmt), geometry)
    if ctx.needs_input_grad[1]:
        dw = conv2d_weight_grad_op(g, x, None, w_shape=tuple(w.shape), **geometry)
    return dx, dw, _bias_grad(ctx, g, 2)


def _conv2d_transpose_infer(
    x: Spec, w: Spec, bias, stride, padding, output_padding, output_size, dilation, groups, data_format
) -> Spec:
    _check("conv2d_transpose", x, w, bias, groups, data_format, transposed=True)
    _, _, outs = _transpose_geometry(
        x.shape, w.shape, stride, padding, dilation, output_padding, output_size, data_format
    )
    return Spec(_layout((x.shape[0], w.shape[1] * groups, *outs), data_format), x.dtype)


def _transpose_samples(rng):
    """conv2d's geometries transposed, and output padding (past the stride: dilation 3, stride 1)."""
    samples = _geometry_samples(rng, transposed=True)
    x, w = rng.standard_normal((1, 2, 4, 4)), rng.standard_normal((2, 3, 2, 2))
    attrs = dict(stride=(1, 2), padding=(0, 0, 1, 0), dilation=(3, 1), groups=1, data_format="NCHW")
    samples.append(Sample((x, w, None), dict(attrs, output_padding=(2, 1), output_size=None)))
    return samples


conv2d_transpose_op = OpDef(
    "conv2d_transpose",
    _conv2d_transpose_forward,
    _conv2d_transpose_vjp,
    _conv2d_transpose_infer,
    OPAQUE,
    samples=_transpose_samples,
    fresh_output=True,
    items=item_rules.leading,
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
