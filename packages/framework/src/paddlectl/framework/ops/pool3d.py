"""3-D pooling and Lp pooling as compositions of the 2-D pooling ops (ops/pool.py).

A max or mean over a D x H x W box is the max or mean over D of the max or mean over H x W, and
Paddle's windows, padding, ceil mode and divisors are per-axis, so ``max/avg_pool3d`` and their
adaptive forms are two 2-D pools: one over (H, W) on ``[N, C*D, H, W]``, one over (D, 1) on
``[N, C, D, H'*W']``; the max pools' masks compose into Paddle's flat index. The exclusive divisor is the product of the per-axis counts, as Paddle's.
Lp pooling is ``(sum over the window of x^p)^(1/p)``: an average pool with divisor 1.
Gradients are the 2-D ops'."""

from __future__ import annotations

from ..errors import ConfigError, ShapeError
from . import elementwise as ew
from ._window import as_tuple, normalize_padding
from .index import take_along_axis
from .pool import adaptive_avg_pool2d, adaptive_max_pool2d, avg_pool2d, max_pool1d, max_pool2d
from .shape import reshape, squeeze, transpose, unsqueeze

_FORMATS = ("NCDHW", "NDHWC")


def _layout(op: str, x, data_format: str):
    if data_format not in _FORMATS:
        raise ShapeError(f"{op}: data_format must be 'NCDHW' or 'NDHWC', got {data_format!r}")
    if x.ndim != 5:
        raise ShapeError(f"{op}: expected a 5-D input [N, C, D, H, W] ({data_format}), got shape {x.shape}")
    return transpose(x, [0, 4, 1, 2, 3]) if data_format == "NDHWC" else x


def _back(out, data_format: str):
    return transpose(out, [0, 2, 3, 4, 1]) if data_format == "NDHWC" else out


def _separable(x, pool_hw, pool_d):
    """``pool_hw`` over (H, W) of every depth slice, then ``pool_d`` over D of every (h, w)."""
    n, c, d, h, w = x.shape
    planes = pool_hw(reshape(x, [n, c * d, h, w]))
    h2, w2 = planes.shape[-2:]
    depth = pool_d(reshape(planes, [n, c, d, h2 * w2]))
    return reshape(depth, [n, c, depth.shape[2], h2, w2])


def _separable_max(x, pool_hw, pool_d, return_mask: bool):
    """``_separable`` for max pools, with Paddle's mask when asked: the flat ``d*H*W + h*W + w``
    index of each maximum, the depth from the second pool's mask and (h, w) from the first's."""
    if not return_mask:
        return _separable(x, lambda p: pool_hw(p)[0], lambda p: pool_d(p)[0])
    n, c, d, h, w = x.shape
    planes, plane_mask = pool_hw(reshape(x, [n, c * d, h, w]))
    h2, w2 = planes.shape[-2:]
    out, depth_mask = pool_d(reshape(planes, [n, c, d, h2 * w2]))
    depth = ew.BINARY["floor_divide"](depth_mask, h2 * w2)
    picked = take_along_axis(reshape(plane_mask, [n, c, d, h2 * w2]), depth, 2, broadcast=False)
    mask = depth * (h * w) + picked
    shape = [n, c, out.shape[2], h2, w2]
    return reshape(out, shape), reshape(mask, shape)


def _windows(op: str, kernel_size, stride, padding):
    kernel = as_tuple(op, "kernel_size", kernel_size, 3)
    stride = kernel if stride is None else as_tuple(op, "stride", stride, 3)
    pads = normalize_padding(op, padding, 3)
    if isinstance(pads, str):
        return kernel, stride, pads, pads
    return kernel, stride, list(pads[2:]), [pads[0], pads[1], 0, 0]


def max_pool3d(
    x, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False, data_format="NCDHW", name=None
):
    """``paddle.nn.functional.max_pool3d``; ``return_mask`` gives the flat D*H*W index of each maximum."""
    x = _layout("max_pool3d", x, data_format)
    k, s, hw_pad, d_pad = _windows("max_pool3d", kernel_size, stride, padding)
    out = _separable_max(
        x,
        lambda p: max_pool2d(p, k[1:], s[1:], hw_pad, True, ceil_mode),
        lambda p: max_pool2d(p, (k[0], 1), (s[0], 1), d_pad, True, ceil_mode),
        return_mask,
    )
    return tuple(_back(o, data_format) for o in out) if return_mask else _back(out, data_format)


def avg_pool3d(
    x, kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True, divisor_override=None,
    data_format="NCDHW", name=None,
):  # fmt: skip
    """``paddle.nn.functional.avg_pool3d``; ``divisor_override`` divides the window's sum."""
    x = _layout("avg_pool3d", x, data_format)
    k, s, hw_pad, d_pad = _windows("avg_pool3d", kernel_size, stride, padding)
    first = 1 if divisor_override else None  # a sum over (H, W), then over D divided by the override
    out = _separable(
        x,
        lambda p: avg_pool2d(p, k[1:], s[1:], hw_pad, ceil_mode, exclusive, first),
        lambda p: avg_pool2d(p, (k[0], 1), (s[0], 1), d_pad, ceil_mode, exclusive, divisor_override),
    )
    return _back(out, data_format)


def _output_sizes(op: str, output_size, x):
    sizes = (output_size,) * 3 if isinstance(output_size, int) else tuple(output_size)
    if len(sizes) != 3:
        raise ShapeError(f"{op}: output_size must be an int or 3 values, got {list(sizes)}")
    return [x.shape[2 + i] if s is None else int(s) for i, s in enumerate(sizes)]


def adaptive_avg_pool3d(x, output_size, data_format="NCDHW", name=None):
    """``paddle.nn.functional.adaptive_avg_pool3d``."""
    x = _layout("adaptive_avg_pool3d", x, data_format)
    d, h, w = _output_sizes("adaptive_avg_pool3d", output_size, x)
    out = _separable(x, lambda p: adaptive_avg_pool2d(p, (h, w)), lambda p: adaptive_avg_pool2d(p, (d, p.shape[-1])))
    return _back(out, data_format)


def adaptive_max_pool3d(x, output_size, return_mask=False, name=None):
    """``paddle.nn.functional.adaptive_max_pool3d``; ``return_mask`` as ``max_pool3d``'s."""
    x = _layout("adaptive_max_pool3d", x, "NCDHW")
    d, h, w = _output_sizes("adaptive_max_pool3d", output_size, x)
    return _separable_max(
        x,
        lambda p: adaptive_max_pool2d(p, (h, w), True),
        lambda p: adaptive_max_pool2d(p, (d, p.shape[-1]), True),
        return_mask,
    )


def _lp(op: str, x, norm_type, sum_pool, max_pool):
    p = float(norm_type)
    if p == float("inf"):
        return max_pool(x)
    if p <= 0:
        raise ConfigError(f"{op}: norm_type must be positive (or inf), got {norm_type}")
    return ew.pow(sum_pool(ew.pow(x, p)), 1.0 / p)


def lp_pool2d(x, norm_type, kernel_size, stride=None, padding=0, ceil_mode=False, data_format="NCHW", name=None):
    """``paddle.nn.functional.lp_pool2d``: ``(sum_window x^p)^(1/p)``."""
    return _lp(
        "lp_pool2d", x, norm_type,
        lambda t: avg_pool2d(t, kernel_size, stride, padding, ceil_mode, False, 1, data_format),
        lambda t: max_pool2d(t, kernel_size, stride, padding, ceil_mode=ceil_mode, data_format=data_format),
    )  # fmt: skip


def lp_pool1d(x, norm_type, kernel_size, stride=None, padding=0, ceil_mode=False, data_format="NCL", name=None):
    """``paddle.nn.functional.lp_pool1d``: ``(sum_window x^p)^(1/p)`` over the length."""
    if data_format not in ("NCL", "NLC"):
        raise ShapeError(f"lp_pool1d: data_format must be 'NCL' or 'NLC', got {data_format!r}")
    if x.ndim != 3:
        raise ShapeError(f"lp_pool1d: expected a 3-D input [N, C, L], got shape {x.shape}")
    x = transpose(x, [0, 2, 1]) if data_format == "NLC" else x
    kernel = as_tuple("lp_pool1d", "kernel_size", kernel_size, 1)
    stride = kernel if stride is None else as_tuple("lp_pool1d", "stride", stride, 1)
    pads = normalize_padding("lp_pool1d", padding, 1)
    pads2 = pads if isinstance(pads, str) else [0, 0, *pads]
    out = _lp(
        "lp_pool1d", x, norm_type,
        lambda t: squeeze(avg_pool2d(unsqueeze(t, 2), (1, *kernel), (1, *stride), pads2, ceil_mode, False, 1), 2),
        lambda t: max_pool1d(t, kernel, stride, padding, ceil_mode=ceil_mode),
    )  # fmt: skip
    return transpose(out, [0, 2, 1]) if data_format == "NLC" else out


FUNCTIONAL = ["max_pool3d", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d", "lp_pool1d", "lp_pool2d"]
