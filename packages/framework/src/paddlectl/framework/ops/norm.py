"""Normalisation: batch, layer, group and instance norm, each one op over fused Numba kernels
(forward and backward), following Paddle's conventions (momentum 0.9, biased running variance)."""

from __future__ import annotations

import math

import numpy as np

from ..core.lowering import lowering
from ..core.op import OPAQUE, OpDef
from ..core.shapes import same_as_first
from ..errors import ShapeError
from ..kernels import norm as K
from .activation import require_float

CHANNELS_FIRST = ("NC", "NCL", "NCHW", "NCDHW")
CHANNELS_LAST = ("NLC", "NHWC", "NDHWC")


def _compute_dtype(x: np.ndarray) -> np.dtype:
    return x.dtype if x.dtype in (np.float32, np.float64) else np.dtype(np.float32)


def _affine(weight, bias, n: int, dtype) -> tuple[np.ndarray, np.ndarray]:
    w = np.ones(n, dtype) if weight is None else np.ascontiguousarray(weight, dtype=dtype).reshape(-1)
    b = np.zeros(n, dtype) if bias is None else np.ascontiguousarray(bias, dtype=dtype).reshape(-1)
    return w, b


def _param_grads(ctx, dw, db, weight, bias, index: int):
    """Gradients for the optional (weight, bias) inputs at positions ``index``, ``index + 1``."""
    gw = dw.astype(weight.dtype).reshape(weight.shape) if weight is not None and ctx.needs_input_grad[index] else None
    gb = db.astype(bias.dtype).reshape(bias.shape) if bias is not None and ctx.needs_input_grad[index + 1] else None
    return gw, gb


def _check_params(op: str, n: int, **params) -> None:
    for name, p in params.items():
        if p is not None and p.size != n:
            raise ShapeError(
                f"{op}: {name} has shape {list(p.shape)} ({p.size} values) but the input needs {n}; "
                f"size it to the normalised features"
            )


# ----- batch norm ------------------------------------------------------------------------------


def _bn_view(x: np.ndarray, channels_last: bool) -> np.ndarray:
    """[outer, C, inner]: per-channel statistics reduce over outer and inner."""
    dtype = _compute_dtype(x)
    if channels_last:
        return np.ascontiguousarray(x, dtype=dtype).reshape(-1, x.shape[-1], 1)
    return np.ascontiguousarray(x, dtype=dtype).reshape(x.shape[0], x.shape[1], math.prod(x.shape[2:]))


def _running(stat: np.ndarray) -> np.ndarray:
    return stat.astype(np.float64).reshape(-1)


def _bn_forward(
    ctx, x, running_mean, running_var, weight, bias, use_batch_stats=False, momentum=0.9, epsilon=1e-5,
    channels_last=False, training=True,
):  # fmt: skip
    require_float("batch_norm", x)
    if x.ndim < 2:
        raise ShapeError(f"batch_norm: expected an input of rank 2 to 5 ([N, C, ...]), got shape {list(x.shape)}")
    c = x.shape[-1] if channels_last else x.shape[1]
    _check_params("batch_norm", c, running_mean=running_mean, running_var=running_var, weight=weight, bias=bias)
    view = _bn_view(x, channels_last)
    w, b = _affine(weight, bias, c, view.dtype)
    count = view.shape[0] * view.shape[2]
    if use_batch_stats and count == 0:
        raise ShapeError(f"batch_norm: training needs at least one value per channel, got shape {list(x.shape)}")
    if use_batch_stats and count == 1 and training:
        # Paddle's kernel passes a single value per channel through unchanged (no statistics update).
        ctx.save(None, None, None, None, weight, bias, False)
        return x.copy()
    if use_batch_stats and count == 1:
        # ... and outside training, its backward then uses the running statistics.
        mean, rstd = _running(running_mean), 1.0 / np.sqrt(_running(running_var) + epsilon)
        ctx.save(view, mean, rstd, w, weight, bias, False)
        return x.copy()
    if use_batch_stats:
        mean, var = K.batch_stats(view)
        keep = view.dtype.type(momentum)
        running_mean[...] = running_mean * keep + mean.astype(running_mean.dtype) * (1 - keep)
        running_var[...] = running_var * keep + var.astype(running_var.dtype) * (1 - keep)
    else:
        mean, var = _running(running_mean), _running(running_var)
    rstd = 1.0 / np.sqrt(var + epsilon)
    out = K.batch_norm_apply(view, mean, rstd, w, b)
    if use_batch_stats and not training:
        # Paddle's quirk: outside training its backward treats the (just updated) running
        # statistics as constants, even when the forward used batch statistics.
        mean, rstd = _running(running_mean), 1.0 / np.sqrt(_running(running_var) + epsilon)
    ctx.save(view, mean, rstd, w, weight, bias, use_batch_stats and training)
    return out.reshape(x.shape).astype(x.dtype, copy=False)


def _bn_vjp(ctx, g):
    view, mean, rstd, w, weight, bias, through_stats = ctx.saved
    if view is None:  # the single-value pass-through
        c = weight.size if weight is not None else bias.size if bias is not None else 0
        zeros = np.zeros(c, dtype=np.float64)
        return (g, None, None, *_param_grads(ctx, zeros, zeros, weight, bias, 3))
    gview = _bn_view(g, ctx.attrs.get("channels_last", False))
    dx, dw, db = K.batch_norm_bwd(view, gview, mean, rstd, w, through_stats)
    gx = dx.reshape(g.shape).astype(g.dtype, copy=False) if ctx.needs_input_grad[0] else None
    return (gx, None, None, *_param_grads(ctx, dw, db, weight, bias, 3))


batch_norm_op = OpDef("batch_norm", _bn_forward, _bn_vjp, same_as_first, OPAQUE)


def batch_norm(
    x, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.9, epsilon=1e-05,
    data_format="NCHW", use_global_stats=None, name=None,
):  # fmt: skip
    """Batch statistics (and an in-place update of the running ones, ``running = momentum * running
    + (1 - momentum) * batch`` with the biased batch variance) unless ``use_global_stats``, which
    defaults to ``not training``: as in Paddle, ``training=False, use_global_stats=False`` still
    normalises with, and accumulates, batch statistics."""
    if data_format not in CHANNELS_FIRST + CHANNELS_LAST:
        raise ValueError(
            f"batch_norm: data_format must be one of {CHANNELS_FIRST + CHANNELS_LAST}, got {data_format!r}"
        )
    if use_global_stats is None:
        use_global_stats = not training
    return batch_norm_op(
        x, running_mean, running_var, weight, bias,
        use_batch_stats=not use_global_stats, momentum=float(momentum), epsilon=float(epsilon),
        channels_last=data_format in CHANNELS_LAST, training=bool(training),
    )  # fmt: skip


# ----- layer norm ------------------------------------------------------------------------------


def _ln_forward(ctx, x, weight, bias, begin_axis=-1, epsilon=1e-5):
    require_float("layer_norm", x)
    n = math.prod(x.shape[begin_axis:])
    _check_params("layer_norm", n, weight=weight, bias=bias)
    rows = np.ascontiguousarray(x, dtype=_compute_dtype(x)).reshape(-1, n)
    affine = weight is not None or bias is not None
    w, b = _affine(weight, bias, n, rows.dtype)
    out, mean, rstd = K.layer_norm_fwd(rows, w, b, epsilon, affine)
    ctx.save(rows, mean, rstd, w, affine, weight, bias)
    return out.reshape(x.shape).astype(x.dtype, copy=False)


def _ln_vjp(ctx, g):
    rows, mean, rstd, w, affine, weight, bias = ctx.saved
    grows = np.ascontiguousarray(g, dtype=rows.dtype).reshape(rows.shape)
    dx, dw, db = K.layer_norm_bwd(rows, grows, mean, rstd, w, affine)
    gx = dx.reshape(g.shape).astype(g.dtype, copy=False) if ctx.needs_input_grad[0] else None
    return (gx, *_param_grads(ctx, dw, db, weight, bias, 1))


layer_norm_op = OpDef("layer_norm", _ln_forward, _ln_vjp, same_as_first, OPAQUE)


@lowering("layer_norm")
def _ln_lowering(attrs, in_types, out_types):
    """At known shapes, for float32/64 inputs with both affine parameters: the kernel alone, its row
    view and parameter checks worked out once (~5 us of a transformer layer norm's ~11)."""
    (shape, dtype), weight, bias = in_types
    n = math.prod(shape[attrs.get("begin_axis", -1) :])
    if dtype not in (np.float32, np.float64) or weight is None or bias is None:
        return None
    if math.prod(weight[0]) != n or math.prod(bias[0]) != n or weight[1] != dtype or bias[1] != dtype:
        return None
    epsilon = attrs.get("epsilon", 1e-5)

    def run(x, w, b):
        rows = np.ascontiguousarray(x).reshape(-1, n)
        return K.layer_norm_fwd(rows, w.reshape(-1), b.reshape(-1), epsilon, True)[0].reshape(shape)

    return run


def layer_norm(x, normalized_shape, weight=None, bias=None, epsilon=1e-05, name=None):
    """Normalise over the trailing ``normalized_shape`` dims; weight and bias hold prod(normalized_shape) values."""
    shape = [int(normalized_shape)] if isinstance(normalized_shape, int | np.integer) else list(normalized_shape)
    if not shape or len(shape) > x.ndim or list(x.shape[x.ndim - len(shape) :]) != shape:
        raise ShapeError(
            f"layer_norm: normalized_shape {shape} must equal the input's trailing dims, "
            f"but the input has shape {x.shape}"
        )
    return layer_norm_op(x, weight, bias, begin_axis=x.ndim - len(shape), epsilon=float(epsilon))


# ----- group / instance norm -------------------------------------------------------------------


def _gn_forward(ctx, x, weight, bias, num_groups=1, epsilon=1e-5, channels_last=False):
    require_float("group_norm", x)
    if x.ndim < 2:
        raise ShapeError(f"group_norm: expected an input of rank >= 2 ([N, C, ...]), got shape {list(x.shape)}")
    first = np.moveaxis(x, -1, 1) if channels_last else x
    n, c = first.shape[:2]
    if num_groups <= 0 or c % num_groups:
        raise ShapeError(f"group_norm: {c} channels cannot be split into {num_groups} groups; use a divisor of {c}")
    _check_params("group_norm", c, weight=weight, bias=bias)
    dtype = _compute_dtype(x)
    rows = np.ascontiguousarray(first, dtype=dtype).reshape(n * num_groups, -1)
    empty = np.empty(0, dtype)
    xhat, mean, rstd = K.layer_norm_fwd(rows, empty, empty, epsilon, False)
    w, b = _affine(weight, bias, c, dtype)
    xhat = xhat.reshape(n, c, -1)
    out = (xhat * w[:, None] + b[:, None]).reshape(first.shape)
    ctx.save(rows, xhat, mean, rstd, w, weight, bias, first.shape)
    out = np.moveaxis(out, 1, -1) if channels_last else out
    return out.astype(x.dtype, copy=False)


def _gn_vjp(ctx, g):
    rows, xhat, mean, rstd, w, weight, bias, first_shape = ctx.saved
    channels_last = ctx.attrs.get("channels_last", False)
    gfirst = np.moveaxis(g, -1, 1) if channels_last else g
    g3 = np.asarray(gfirst, dtype=rows.dtype).reshape(xhat.shape)
    dw = np.einsum("ncs,ncs->c", g3, xhat)
    db = g3.sum(axis=(0, 2))
    gx = None
    if ctx.needs_input_grad[0]:
        ghat = np.ascontiguousarray(g3 * w[:, None]).reshape(rows.shape)
        dx, _, _ = K.layer_norm_bwd(rows, ghat, mean, rstd, np.empty(0, rows.dtype), False)
        dx = dx.reshape(first_shape)
        gx = (np.moveaxis(dx, 1, -1) if channels_last else dx).astype(g.dtype, copy=False)
    return (gx, *_param_grads(ctx, dw, db, weight, bias, 1))


group_norm_op = OpDef("group_norm", _gn_forward, _gn_vjp, same_as_first, OPAQUE)


def group_norm(x, num_groups, epsilon=1e-05, weight=None, bias=None, data_format="NCHW", name=None):
    if data_format not in CHANNELS_FIRST + CHANNELS_LAST:
        raise ValueError(
            f"group_norm: data_format must be one of {CHANNELS_FIRST + CHANNELS_LAST}, got {data_format!r}"
        )
    return group_norm_op(
        x, weight, bias, num_groups=int(num_groups), epsilon=float(epsilon), channels_last=data_format in CHANNELS_LAST
    )


def instance_norm(
    x, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True, momentum=0.9, eps=1e-05,
    data_format="NCHW", name=None,
):  # fmt: skip
    """Each (sample, channel) normalised over its spatial dims: group norm with one channel per group.
    As in Paddle, the running statistics are accepted but neither used nor updated."""
    if data_format not in CHANNELS_FIRST:
        raise ValueError(f"instance_norm: data_format must be one of {CHANNELS_FIRST}, got {data_format!r}")
    if x.ndim < 3:
        raise ShapeError(f"instance_norm: expected an input of rank >= 3 ([N, C, ...]), got shape {x.shape}")
    return group_norm_op(x, weight, bias, num_groups=int(x.shape[1]), epsilon=float(eps), channels_last=False)


FUNCTIONAL = ["batch_norm", "layer_norm", "group_norm", "instance_norm"]
