"""Normalisation: batch, layer, group and instance norm, each one op over fused Numba kernels,
following Paddle's conventions (momentum 0.9, biased running variance).

Each vjp runs its fused backward kernel as an op of its own (``<name>_grad``, ops/norm_grad.py),
except while ``paddle.grad(create_graph=True)`` records the
backward: then it is composed of ops from the inputs (statistics recomputed), so it can be
differentiated again to any order."""

from __future__ import annotations

import math

import numpy as np

from ..core import items as item_rules
from ..core.autograd import is_grad_enabled
from ..core.lowering import lowering
from ..core.op import OPAQUE, OpDef, Sample
from ..core.shapes import same_as_first
from ..errors import ShapeError
from ..kernels import norm as K
from . import norm_grad as G
from .activation import require_float

CHANNELS_FIRST = ("NC", "NCL", "NCHW", "NCDHW")
CHANNELS_LAST = ("NLC", "NHWC", "NDHWC")


def _affine(weight, bias, n: int, dtype) -> tuple[np.ndarray, np.ndarray]:
    w = np.ones(n, dtype) if weight is None else np.ascontiguousarray(weight, dtype=dtype).reshape(-1)
    b = np.zeros(n, dtype) if bias is None else np.ascontiguousarray(bias, dtype=dtype).reshape(-1)
    return w, b


def _check_params(op: str, n: int, **params) -> None:
    for name, p in params.items():
        if p is not None and p.size != n:
            raise ShapeError(
                f"{op}: {name} has shape {list(p.shape)} ({p.size} values) but the input needs {n}; "
                f"size it to the normalised features"
            )


# ----- batch norm ------------------------------------------------------------------------------


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
    view = G.bn_view(x, channels_last)
    w, b = _affine(weight, bias, c, view.dtype)
    count = view.shape[0] * view.shape[2]
    if use_batch_stats and count == 0:
        raise ShapeError(f"batch_norm: training needs at least one value per channel, got shape {list(x.shape)}")
    if use_batch_stats and count == 1:
        # Paddle's kernel passes a single value per channel through unchanged (no statistics
        # update); outside training its backward then uses the running statistics.
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
    return out.reshape(x.shape).astype(x.dtype, copy=False)


def _bn_vjp(ctx, g):
    """The fused kernel (``batch_norm_grad``), or with ``create_graph`` the same math in ops.

    Paddle's quirk: outside training its backward treats the (just updated) running statistics as
    constants, even when the forward used batch statistics."""
    a = ctx.attrs
    x, weight, bias = ctx.input(0), ctx.input(3), ctx.input(4)
    needs = ctx.needs_input_grad
    channels_last, training = a.get("channels_last", False), a.get("training", True)
    batch = a.get("use_batch_stats", False)
    if batch and training and x.size // (x.shape[-1] if channels_last else x.shape[1]) == 1:
        return (g, None, None, *G.zero_param_grads(needs, weight, bias, 3))  # the single-value pass-through
    stats = (ctx.input(1), ctx.input(2), channels_last, batch and training, a.get("epsilon", 1e-5))
    if is_grad_enabled():
        dx, dw, db = G.batch_norm_grad_composed(x, g, weight, *stats)
    else:
        dx, dw, db = G.batch_norm_grad_op(x, g, weight, *stats[:2], **dict(zip(_BN_GRAD_ATTRS, stats[2:], strict=True)))
    return (dx if needs[0] else None, None, None, *G.param_grads(needs, dw, db, weight, bias, 3))


_BN_GRAD_ATTRS = ("channels_last", "through_stats", "epsilon")


def _bn_samples(rng):
    x4 = rng.standard_normal((2, 3, 2, 2))
    stats = (rng.standard_normal(3), rng.uniform(0.5, 2.0, 3), rng.uniform(0.5, 2.0, 3), rng.standard_normal(3))
    return [
        Sample((x4, *stats), {"use_batch_stats": True, "training": True}),
        Sample((x4, *stats), {"use_batch_stats": False, "training": False}),
        Sample(
            (rng.standard_normal((4, 2, 3)), *(s[:3] for s in stats)), {"use_batch_stats": True, "channels_last": True}
        ),
        Sample((rng.standard_normal((5, 3)), stats[0], stats[1], None, None), {"use_batch_stats": True}),
    ]


batch_norm_op = OpDef(
    "batch_norm", _bn_forward, _bn_vjp, same_as_first, OPAQUE,
    samples=_bn_samples, fresh_output=True,
    items=item_rules.running_stats,
)  # fmt: skip


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
    rows = np.ascontiguousarray(x, dtype=G.compute_dtype(x)).reshape(-1, n)
    w, b = _affine(weight, bias, n, rows.dtype)
    out, _, _ = K.layer_norm_fwd(rows, w, b, epsilon, weight is not None or bias is not None)
    return out.reshape(x.shape).astype(x.dtype, copy=False)


def _ln_vjp(ctx, g):
    """The fused kernel (``layer_norm_grad``), or with ``create_graph`` the same math in ops,
    differentiable again to any order."""
    x, weight, bias = ctx.input(0), ctx.input(1), ctx.input(2)
    begin_axis = ctx.attrs.get("begin_axis", -1) % max(x.ndim, 1)
    epsilon = ctx.attrs.get("epsilon", 1e-5)
    if is_grad_enabled():
        dx, dw, db = G.layer_norm_grad_composed(x, g, weight, begin_axis, epsilon)
    else:
        affine = weight is not None or bias is not None
        dx, dw, db = G.layer_norm_grad_op(x, g, weight, begin_axis=begin_axis, epsilon=epsilon, affine=affine)
    needs = ctx.needs_input_grad
    return (dx if needs[0] else None, *G.param_grads(needs, dw, db, weight, bias, 1))


def _ln_samples(rng):
    x = rng.standard_normal((3, 2, 4))
    return [
        Sample((x, rng.uniform(0.5, 2.0, 4), rng.standard_normal(4)), {"begin_axis": 2}),
        Sample((x, rng.uniform(0.5, 2.0, (2, 4)), None), {"begin_axis": 1, "epsilon": 1e-3}),
        Sample((x, None, None), {"begin_axis": 2}),
    ]


layer_norm_op = OpDef(
    "layer_norm",
    _ln_forward,
    _ln_vjp,
    same_as_first,
    OPAQUE,
    samples=_ln_samples,
    fresh_output=True,
    items=item_rules.normalised_after,
)


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
    dtype = G.compute_dtype(x)
    rows = np.ascontiguousarray(first, dtype=dtype).reshape(n * num_groups, -1)
    empty = np.empty(0, dtype)
    xhat, _, _ = K.layer_norm_fwd(rows, empty, empty, epsilon, False)
    w, b = _affine(weight, bias, c, dtype)
    out = (xhat.reshape(n, c, -1) * w[:, None] + b[:, None]).reshape(first.shape)
    out = np.moveaxis(out, 1, -1) if channels_last else out
    return out.astype(x.dtype, copy=False)


def _gn_vjp(ctx, g):
    """The fused kernel (``group_norm_grad``), or with ``create_graph`` the same math in ops."""
    x, weight, bias = ctx.input(0), ctx.input(1), ctx.input(2)
    a = ctx.attrs
    groups, channels_last = a.get("num_groups", 1), a.get("channels_last", False)
    epsilon = a.get("epsilon", 1e-5)
    if is_grad_enabled():
        dx, dw, db = G.group_norm_grad_composed(x, g, weight, groups, channels_last, epsilon)
    else:
        dx, dw, db = G.group_norm_grad_op(x, g, weight, num_groups=groups, channels_last=channels_last, epsilon=epsilon)
    needs = ctx.needs_input_grad
    return (dx if needs[0] else None, *G.param_grads(needs, dw, db, weight, bias, 1))


def _gn_samples(rng):
    return [
        Sample((rng.standard_normal((2, 4, 3)), rng.uniform(0.5, 2.0, 4), rng.standard_normal(4)), {"num_groups": 2}),
        Sample(
            (rng.standard_normal((2, 3, 2, 4)), None, rng.standard_normal(4)), {"num_groups": 4, "channels_last": True}
        ),
    ]


group_norm_op = OpDef("group_norm", _gn_forward, _gn_vjp, same_as_first, OPAQUE, samples=_gn_samples)


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
