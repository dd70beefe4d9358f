"""Pooling: max/avg with Paddle's padding, ceil mode and ``exclusive`` rules, and adaptive pooling.

Every variant is one of two ops over NCHW images (``max_pool2d`` returning values and the int32
mask, ``avg_pool2d``); a window plan (clipped start/end per output row and column, and the avg
divisor) tells them which pixels each output sees. 1-D pooling is 2-D pooling on height-1 images.
"""

from __future__ import annotations

import functools

import numpy as np

from ..core import items as item_rules
from ..core.lowering import lowering
from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..errors import DTypeError, ShapeError
from ..kernels.pool import (
    avg_pool,
    avg_pool_grad,
    gather_planes,
    max_pool,
    max_pool_2x2,
    max_pool_grad,
    max_pool_values,
    max_pool_values_2x2_same,
)
from ._window import as_tuple, normalize_padding, out_size, resolve_padding
from .shape import squeeze, unsqueeze

# ----- window plans ---------------------------------------------------------------------------------


def _fixed_axis(size, k, s, before, after, ceil_mode, exclusive):
    """Paddle's windows along one dim: start = i*s - before, end = min(start + k, size + after),
    then clipped to the image; a non-exclusive divisor counts padding but not the ceil overhang."""
    n = out_size(size, k, s, before, after, 1, ceil_mode)
    start = np.arange(n) * s - before
    end = np.minimum(start + k, size + after)
    lo, hi = np.clip(start, 0, size), np.clip(end, 0, size)
    count = hi - lo if exclusive else end - start
    return lo, hi, count


def _adaptive_axis(size, n):
    i = np.arange(n)
    lo = (i * size) // n
    hi = -((-(i + 1) * size) // n)
    return lo, hi, hi - lo


def _frozen(value):
    return tuple(_frozen(v) for v in value) if isinstance(value, list | tuple) else value


def _key(sizes, attrs) -> tuple:
    return tuple(sizes), tuple(sorted((k, _frozen(v)) for k, v in attrs.items()))


def _plan(sizes, attrs):
    """(hs, he, ws, we, divisor) for an image of spatial ``sizes``: read-only arrays, made once per
    (sizes, window) and reused, since at small sizes planning costs more than pooling."""
    return _cached_plan(*_key(sizes, attrs))


@functools.lru_cache(maxsize=256)
def _cached_plan(sizes, frozen_attrs):
    attrs = dict(frozen_attrs)
    if attrs["output_size"] is not None:
        axes = [_adaptive_axis(sizes[i], attrs["output_size"][i] or sizes[i]) for i in range(2)]
    else:
        kernel, stride = attrs["kernel_size"], attrs["stride"]
        pads, _ = resolve_padding(attrs["padding"], sizes, kernel, stride, (1, 1))
        axes = [
            _fixed_axis(
                sizes[i],
                kernel[i],
                stride[i],
                pads[2 * i],
                pads[2 * i + 1],
                attrs["ceil_mode"],
                attrs["exclusive"],
            )
            for i in range(2)
        ]
    (hs, he, hc), (ws, we, wc) = axes
    if min(hs.size, ws.size) <= 0 or np.any(he <= hs) or np.any(we <= ws):
        raise ShapeError(
            f"pool2d: input of spatial size {list(sizes)} gives empty windows with kernel_size "
            f"{attrs['kernel_size']}, stride {attrs['stride']}, padding {attrs['padding']}; reduce padding or kernel"
        )
    divisor = np.outer(hc, wc).astype(np.float64)
    if attrs.get("divisor_override"):
        divisor[:] = attrs["divisor_override"]
    plan = tuple(np.ascontiguousarray(a, np.int64) for a in (hs, he, ws, we)) + (divisor,)
    for a in plan:
        a.flags.writeable = False
    return plan


def _out_spatial(sizes, attrs):
    if attrs["output_size"] is not None:
        return tuple(o or s for o, s in zip(attrs["output_size"], sizes, strict=True))
    pads, _ = resolve_padding(attrs["padding"], sizes, attrs["kernel_size"], attrs["stride"], (1, 1))
    return tuple(
        out_size(
            sizes[i], attrs["kernel_size"][i], attrs["stride"][i], pads[2 * i], pads[2 * i + 1], 1, attrs["ceil_mode"]
        )
        for i in range(2)
    )


# ----- layout -------------------------------------------------------------------------------------------


def _check(op, x, data_format):
    if data_format not in ("NCHW", "NHWC"):
        raise ShapeError(f"{op}: data_format must be 'NCHW' or 'NHWC', got {data_format!r}")
    if len(x.shape) != 4:
        raise ShapeError(f"{op}: expected a 4-D input [N, C, H, W] ({data_format}), got shape {list(x.shape)}")
    if np.dtype(x.dtype).kind != "f":
        raise DTypeError(f"{op}: x must be float16/32/64, got {x.dtype}; cast it with .astype('float32')")


def _planes(x, data_format):
    """x as contiguous [N*C, H, W] planes, and the NCHW shape."""
    xc = x.transpose(0, 3, 1, 2) if data_format == "NHWC" else x
    return np.ascontiguousarray(xc).reshape(-1, *xc.shape[2:]), xc.shape


def _unplanes(p, nchw, data_format):
    out = p.reshape(nchw[0], nchw[1], *p.shape[1:])
    return np.ascontiguousarray(out.transpose(0, 2, 3, 1)) if data_format == "NHWC" else out


def _spatial(shape, data_format):
    return tuple(shape[1:3]) if data_format == "NHWC" else tuple(shape[2:])


def _nchw(shape, size, data_format) -> tuple:
    """The NCHW shape of an image of spatial ``size`` with ``shape``'s batch and channels."""
    return (shape[0], shape[3] if data_format == "NHWC" else shape[1], *size)


def _infer(op, x: Spec, attrs) -> tuple:
    _check(op, x, attrs["data_format"])
    fmt = attrs["data_format"]
    outs = _out_spatial(_spatial(x.shape, fmt), attrs)
    if fmt == "NHWC":
        return (x.shape[0], *outs, x.shape[3])
    return (x.shape[0], x.shape[1], *outs)


# ----- ops ----------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def _tiles_2x2(sizes, frozen_attrs) -> bool:
    """Whether the planned windows are the 2x2 tiles ``[2i, 2i+2)`` in both dims (the specialised
    kernel); decided once per plan."""
    hs, he, ws, we, _ = _cached_plan(sizes, frozen_attrs)
    return all(np.array_equal(s, 2 * np.arange(s.size)) and np.all(e - s == 2) for s, e in ((hs, he), (ws, we)))


def _max_pooling(sizes, frozen_attrs):
    """``pool(planes) -> (out, mask)`` for one window plan: 2x2 tiles or per-window bounds."""
    hs, he, ws, we, _ = _cached_plan(sizes, frozen_attrs)
    if _tiles_2x2(sizes, frozen_attrs):
        return lambda planes: max_pool_2x2(planes, hs.size, ws.size)
    return lambda planes: max_pool(planes, hs, he, ws, we)


def _max_values(sizes, frozen_attrs):
    """``pool(planes) -> (out, None)`` where nothing reads the mask, for fixed windows (not adaptive)
    other than 2x2 tiles; else None."""
    attrs = dict(frozen_attrs)
    if attrs["output_size"] is not None or _tiles_2x2(sizes, frozen_attrs):
        return None
    hs, _, ws, _, _ = _cached_plan(sizes, frozen_attrs)
    kernel, stride = attrs["kernel_size"], attrs["stride"]
    pads, _ = resolve_padding(attrs["padding"], sizes, kernel, stride, (1, 1))
    if tuple(kernel) == (2, 2) and tuple(stride) == (1, 1) and tuple(pads) == (0, 1, 0, 1):
        return lambda planes: (max_pool_values_2x2_same(planes), None)
    return lambda planes: (max_pool_values(planes, hs.size, ws.size, *kernel, *stride, pads[0], pads[2]), None)


def _max_forward(ctx, x, **attrs):
    _check("max_pool2d", x, attrs["data_format"])
    planes, nchw = _planes(x, attrs["data_format"])
    out, mask = _max_pooling(*_key(nchw[2:], attrs))(planes)
    fmt = attrs["data_format"]
    return _unplanes(out, nchw, fmt), _unplanes(mask, nchw, fmt)


def _max_vjp(ctx, g, _g_mask):
    fmt = ctx.attrs["data_format"]
    return max_pool2d_grad_op(g, ctx.output(1), size=_spatial(ctx.input(0).shape, fmt), data_format=fmt)


def _max_infer(x: Spec, **attrs):
    shape = _infer("max_pool2d", x, attrs)
    return Spec(shape, x.dtype), Spec(shape, np.dtype(np.int32))


def _avg_forward(ctx, x, **attrs):
    _check("avg_pool2d", x, attrs["data_format"])
    planes, nchw = _planes(x, attrs["data_format"])
    return _unplanes(avg_pool(planes, *_plan(nchw[2:], attrs)), nchw, attrs["data_format"])


def _avg_vjp(ctx, g):
    size = _spatial(ctx.input(0).shape, ctx.attrs["data_format"])
    return avg_pool2d_grad_op(g, size=size, **ctx.attrs)


def _avg_infer(x: Spec, **attrs):
    return Spec(_infer("avg_pool2d", x, attrs), x.dtype)


def _pool_samples(rng):
    """Fixed windows (padding, ceil mode, overlapping, NHWC), 2x2 tiles, and adaptive windows."""
    x = rng.standard_normal((2, 3, 7, 7))
    fixed = dict(kernel_size=(3, 2), stride=(2, 2), padding=(1, 1, 0, 0), ceil_mode=True, data_format="NCHW")
    return [
        Sample((x,), _fixed("pool2d", **fixed)),
        Sample((x,), _fixed("pool2d", 3, 1, 1, False, "NCHW", exclusive=False)),
        Sample((x[:, :, :6, :6],), _fixed("pool2d", 2, 2, 0, False, "NCHW")),
        Sample((x.transpose(0, 2, 3, 1).copy(),), _fixed("pool2d", 2, 1, 0, False, "NHWC")),
        Sample((x,), _adaptive("adaptive_pool2d", (3, 4), 2)),
    ]


max_pool2d_op = OpDef(
    "max_pool2d", _max_forward, _max_vjp, _max_infer, OPAQUE, samples=_pool_samples, items=item_rules.leading
)
avg_pool2d_op = OpDef(
    "avg_pool2d", _avg_forward, _avg_vjp, _avg_infer, OPAQUE, samples=_pool_samples, items=item_rules.leading
)


# ----- backward ops: linear in the output gradient ------------------------------------------------


def _max_grad_forward(ctx, g, mask, size, data_format):
    """Each output gradient added at its window's first maximum (``mask``): a scatter."""
    nchw = _nchw(g.shape, size, data_format)
    planes = max_pool_grad(_planes(g, data_format)[0], _planes(mask, data_format)[0], *size)
    return _unplanes(planes, nchw, data_format)


def _max_grad_vjp(ctx, a):
    """The scatter's adjoint: the cotangent gathered at the maxima."""
    return max_pool2d_gather_op(a, ctx.input(1), data_format=ctx.attrs["data_format"]), None


def _max_grad_infer(g: Spec, mask: Spec, size, data_format) -> Spec:
    n, c = g.shape[0], g.shape[3 if data_format == "NHWC" else 1]
    return Spec((n, *size, c) if data_format == "NHWC" else (n, c, *size), g.dtype)


def _gather_forward(ctx, x, mask, data_format):
    """``out[n, c, i, j] = x[n, c].flat[mask[n, c, i, j]]``: an image's values at the pooling maxima."""
    planes, nchw = _planes(x, data_format)
    mask_planes, mask_nchw = _planes(mask, data_format)
    return _unplanes(gather_planes(planes, mask_planes), mask_nchw, data_format)


def _gather_vjp(ctx, a):
    fmt = ctx.attrs["data_format"]
    return max_pool2d_grad_op(a, ctx.input(1), size=_spatial(ctx.input(0).shape, fmt), data_format=fmt), None


def _gather_infer(x: Spec, mask: Spec, data_format) -> Spec:
    return Spec(mask.shape, x.dtype)


def _max_masks(rng):
    """(image, mask) pairs: a random image's max pooling and the mask it gives."""
    pairs = []
    for s in _pool_samples(rng):
        x = s.inputs[0]
        out, mask = _max_forward(None, x, **s.attrs)
        pairs.append((x, out, mask, s.attrs["data_format"]))
    return pairs


def _max_grad_samples(rng):
    return [
        Sample((rng.standard_normal(out.shape), mask), dict(size=_spatial(x.shape, fmt), data_format=fmt))
        for x, out, mask, fmt in _max_masks(rng)
    ]


def _gather_samples(rng):
    return [Sample((x, mask), dict(data_format=fmt)) for x, _, mask, fmt in _max_masks(rng)]


max_pool2d_grad_op = OpDef(
    "max_pool2d_grad",
    _max_grad_forward,
    _max_grad_vjp,
    _max_grad_infer,
    OPAQUE,
    samples=_max_grad_samples,
)
max_pool2d_gather_op = OpDef(
    "max_pool2d_gather",
    _gather_forward,
    _gather_vjp,
    _gather_infer,
    OPAQUE,
    samples=_gather_samples,
)


def _avg_grad_forward(ctx, g, size, **attrs):
    """Each output gradient spread evenly over its window (over the divisor)."""
    nchw = _nchw(g.shape, size, attrs["data_format"])
    plan = _plan(tuple(size), attrs)
    return _unplanes(avg_pool_grad(_planes(g, attrs["data_format"])[0], *plan, *size), nchw, attrs["data_format"])


def _avg_grad_vjp(ctx, a):
    """The spread's adjoint is the pooling itself."""
    attrs = dict(ctx.attrs)
    del attrs["size"]
    return avg_pool2d_op(a, **attrs)


def _avg_grad_infer(g: Spec, size, **attrs) -> Spec:
    return _max_grad_infer(g, None, size, attrs["data_format"])


def _avg_grad_samples(rng):
    samples = []
    for s in _pool_samples(rng):
        x, fmt = s.inputs[0], s.attrs["data_format"]
        out_shape = _infer("avg_pool2d", Spec(x.shape, x.dtype), s.attrs)
        samples.append(Sample((rng.standard_normal(out_shape),), dict(s.attrs, size=_spatial(x.shape, fmt))))
    return samples


avg_pool2d_grad_op = OpDef(
    "avg_pool2d_grad",
    _avg_grad_forward,
    _avg_grad_vjp,
    _avg_grad_infer,
    OPAQUE,
    samples=_avg_grad_samples,
)


def _lowered_planes(attrs, in_types, out_types):
    """(planes shape, window key, result shape) of an NCHW pool at known shapes, else None (NHWC
    keeps ``forward``, which transposes)."""
    if attrs["data_format"] != "NCHW" or out_types[0] is None:
        return None
    shape = in_types[0][0]
    return (shape[0] * shape[1], *shape[2:]), _key(shape[2:], attrs), out_types[0][0]


@lowering("max_pool2d")
def _max_lowering(attrs, in_types, out_types):
    """The window plan and kernel chosen once: a run is one kernel call and two reshapes; where
    nothing reads the mask (``out_types[1]`` None) it is not computed."""
    prepared = _lowered_planes(attrs, in_types, out_types)
    if prepared is None:
        return None
    planes, key, out_shape = prepared
    pool = (out_types[1] is None and _max_values(*key)) or _max_pooling(*key)

    def run(x):
        out, mask = pool(x.reshape(planes))
        return out.reshape(out_shape), None if mask is None else mask.reshape(out_shape)

    return run


@lowering("avg_pool2d")
def _avg_lowering(attrs, in_types, out_types):
    prepared = _lowered_planes(attrs, in_types, out_types)
    if prepared is None:
        return None
    planes, key, out_shape = prepared
    plan = _cached_plan(*key)
    return lambda x: avg_pool(x.reshape(planes), *plan).reshape(out_shape)


# ----- public API -------------------------------------------------------------------------------------


def _fixed(op, kernel_size, stride, padding, ceil_mode, data_format, n=2, exclusive=True, divisor_override=None):
    kernel = as_tuple(op, "kernel_size", kernel_size, n)
    stride = kernel if stride is None else as_tuple(op, "stride", stride, n)
    pads = normalize_padding(op, padding, n, channel_last=data_format in ("NHWC", "NLC"))
    if n == 1:  # lift to 2-D on a height-1 image
        kernel, stride = (1, *kernel), (1, *stride)
        pads = pads if isinstance(pads, str) else (0, 0, *pads)
    return dict(
        kernel_size=kernel,
        stride=stride,
        padding=pads,
        ceil_mode=bool(ceil_mode),
        exclusive=bool(exclusive),
        divisor_override=divisor_override,
        output_size=None,
        data_format=data_format,
    )


def _adaptive(op, output_size, n, data_format="NCHW"):
    if n == 1:
        sizes = (1, *as_tuple(op, "output_size", output_size, 1))
    elif isinstance(output_size, int):
        sizes = (output_size, output_size)
    else:
        sizes = tuple(None if s is None else int(s) for s in output_size)
        if len(sizes) != 2:
            raise ShapeError(f"{op}: output_size must be an int or 2 values, got {list(output_size)}")
    if any(s is not None and s <= 0 for s in sizes):
        raise ShapeError(f"{op}: output_size must be positive, got {list(sizes)}")
    return dict(
        kernel_size=None,
        stride=None,
        padding=None,
        ceil_mode=False,
        exclusive=True,
        divisor_override=None,
        output_size=sizes,
        data_format=data_format,
    )


def _check_rank(op, x, rank):
    if x.ndim != rank:
        raise ShapeError(f"{op}: expected a {rank}-D input, got shape {list(x.shape)}")


def _max(x, attrs, return_mask):
    out, mask = max_pool2d_op(x, **attrs)
    return (out, mask) if return_mask else out


def _as_1d(op, x, run):
    """Run a 2-D pool on ``x`` [N, C, L] as [N, C, 1, L] and drop the height again."""
    _check_rank(op, x, 3)
    result = run(unsqueeze(x, 2))
    if isinstance(result, tuple):
        return tuple(squeeze(r, 2) for r in result)
    return squeeze(result, 2)


def max_pool2d(
    x, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False, data_format="NCHW", name=None
):
    _check_rank("max_pool2d", x, 4)
    attrs = _fixed("max_pool2d", kernel_size, stride, padding, ceil_mode, data_format)
    return _max(x, attrs, return_mask)


def max_pool1d(x, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False, name=None):
    attrs = _fixed("max_pool1d", kernel_size, stride, padding, ceil_mode, "NCHW", n=1)
    return _as_1d("max_pool1d", x, lambda x4: _max(x4, attrs, return_mask))


def avg_pool2d(
    x,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    exclusive=True,
    divisor_override=None,
    data_format="NCHW",
    name=None,
):
    _check_rank("avg_pool2d", x, 4)
    attrs = _fixed("avg_pool2d", kernel_size, stride, padding, ceil_mode, data_format, 2, exclusive, divisor_override)
    return avg_pool2d_op(x, **attrs)


def avg_pool1d(x, kernel_size, stride=None, padding=0, exclusive=True, ceil_mode=False, name=None):
    attrs = _fixed("avg_pool1d", kernel_size, stride, padding, ceil_mode, "NCHW", 1, exclusive)
    return _as_1d("avg_pool1d", x, lambda x4: avg_pool2d_op(x4, **attrs))


def adaptive_avg_pool2d(x, output_size, data_format="NCHW", name=None):
    _check_rank("adaptive_avg_pool2d", x, 4)
    return avg_pool2d_op(x, **_adaptive("adaptive_avg_pool2d", output_size, 2, data_format))


def adaptive_avg_pool1d(x, output_size, name=None):
    attrs = _adaptive("adaptive_avg_pool1d", output_size, 1)
    return _as_1d("adaptive_avg_pool1d", x, lambda x4: avg_pool2d_op(x4, **attrs))


def adaptive_max_pool2d(x, output_size, return_mask=False, name=None):
    _check_rank("adaptive_max_pool2d", x, 4)
    return _max(x, _adaptive("adaptive_max_pool2d", output_size, 2), return_mask)


def adaptive_max_pool1d(x, output_size, return_mask=False, name=None):
    attrs = _adaptive("adaptive_max_pool1d", output_size, 1)
    return _as_1d("adaptive_max_pool1d", x, lambda x4: _max(x4, attrs, return_mask))


FUNCTIONAL = [
    "max_pool1d",
    "max_pool2d",
    "avg_pool1d",
    "avg_pool2d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
]
