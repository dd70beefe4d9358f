"""The gradients of ops/norm.py's normalisations, in two forms.

``<name>_grad`` ops run the fused Numba backward kernels, which recompute the statistics from the
input (while each row or channel is in cache) rather than read what forward computed, so a traced
backward computes them from its own input: one op where a chain of small ones would cost passes over big arrays, used by ordinary
backward. The
``*_composed`` functions are the same math in differentiable ops, statistics recomputed from the
input, used while ``paddle.grad(create_graph=True)`` records the backward so it can be
differentiated again (second, third... derivatives).
"""

from __future__ import annotations

import math

import numpy as np

from ..core import symbolic
from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..kernels import norm as K
from ._util import constant
from .elementwise import rsqrt
from .reduce import mean as reduce_mean
from .reduce import sum as reduce_sum
from .shape import reshape, transpose


def compute_dtype(x: np.ndarray) -> np.dtype:
    """The kernels' float type: float16 and bfloat16 inputs compute in float32."""
    return x.dtype if x.dtype in (np.float32, np.float64) else np.dtype(np.float32)


def bn_view(x: np.ndarray, channels_last: bool) -> np.ndarray:
    """[outer, C, inner]: per-channel statistics reduce over outer and inner."""
    dtype = compute_dtype(x)
    if channels_last:
        return np.ascontiguousarray(x, dtype=dtype).reshape(-1, x.shape[-1], 1)
    return np.ascontiguousarray(x, dtype=dtype).reshape(x.shape[0], x.shape[1], math.prod(x.shape[2:]))


def _ones_or(weight, n: int, dtype) -> np.ndarray:
    return np.ones(n, dtype) if weight is None else np.ascontiguousarray(weight, dtype=dtype).reshape(-1)


def _grad_infer(params: int):
    """(dx like g, dweight and dbias of ``params(x spec, attrs)`` values)."""

    def infer(x: Spec, g: Spec, weight, *stats, **attrs):
        dtype = x.dtype if np.dtype(x.dtype) in (np.float32, np.float64) else np.dtype(np.float32)
        n = params(x, attrs)
        return Spec(x.shape, g.dtype), Spec((n,), dtype), Spec((n,), dtype)

    return infer


def _channel_count(x: Spec, attrs: dict):
    return x.shape[-1] if attrs["channels_last"] else x.shape[1]


# ----- fused backward ops ---------------------------------------------------------------------------


def _ln_grad_forward(ctx, x, g, weight, begin_axis, epsilon, affine):
    n = math.prod(x.shape[begin_axis:])
    rows = np.ascontiguousarray(x, dtype=compute_dtype(x)).reshape(-1, n)
    grows = np.ascontiguousarray(g, dtype=rows.dtype).reshape(rows.shape)
    dx, dw, db = K.layer_norm_bwd(rows, grows, epsilon, _ones_or(weight, n, rows.dtype), affine)
    return dx.reshape(x.shape).astype(g.dtype, copy=False), dw.astype(rows.dtype), db.astype(rows.dtype)


def _ln_grad_samples(rng):
    x, g = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    attrs = {"begin_axis": 1, "epsilon": 1e-5, "affine": True}
    return [
        Sample((x, g, rng.uniform(0.5, 2.0, 4)), attrs),
        Sample((x, g, None), {**attrs, "affine": False}),
    ]


layer_norm_grad_op = OpDef(
    "layer_norm_grad",
    _ln_grad_forward,
    None,
    _grad_infer(lambda x, a: symbolic.product(x.shape[a["begin_axis"] :])),
    OPAQUE,
    samples=_ln_grad_samples,
)
"""(dx, dweight, dbias) of layer_norm over the dims from ``begin_axis``; no gradient of its own
(layer_norm's vjp composes ops instead when the backward is to be differentiated)."""


def _bn_grad_forward(ctx, x, g, weight, running_mean, running_var, channels_last, through_stats, epsilon):
    view = bn_view(x, channels_last)
    mean, var = (s.astype(np.float64).reshape(-1) for s in (running_mean, running_var))
    rstd = 1.0 / np.sqrt(var + epsilon)
    w = _ones_or(weight, view.shape[1], view.dtype)
    dx, dw, db = K.batch_norm_bwd(view, bn_view(g, channels_last), mean, rstd, w, through_stats, epsilon)
    return dx.reshape(x.shape).astype(g.dtype, copy=False), dw.astype(view.dtype), db.astype(view.dtype)


def _bn_grad_samples(rng):
    x = rng.standard_normal((2, 3, 4))
    stats = (rng.standard_normal(3), rng.uniform(0.5, 2.0, 3))
    w = rng.uniform(0.5, 2.0, 3)
    attrs = {"channels_last": False, "through_stats": True, "epsilon": 1e-5}
    return [
        Sample((x, rng.standard_normal(x.shape), w, *stats), attrs),
        Sample((x.transpose(0, 2, 1), rng.standard_normal((2, 4, 3)), None, *stats), {**attrs, "channels_last": True, "through_stats": False}),
    ]  # fmt: skip


batch_norm_grad_op = OpDef(
    "batch_norm_grad",
    _bn_grad_forward,
    None,
    _grad_infer(_channel_count),
    OPAQUE,
    samples=_bn_grad_samples,
)
"""(dx, dweight, dbias) of batch_norm; ``through_stats``: the statistics were the batch's (recomputed
here), so dx also flows through them; else the running ones were used, as constants."""


def _gn_grad_forward(ctx, x, g, weight, num_groups, channels_last, epsilon):
    first, gfirst = (np.moveaxis(a, -1, 1) for a in (x, g)) if channels_last else (x, g)
    n, c = first.shape[:2]
    dtype = compute_dtype(x)
    rows = np.ascontiguousarray(first, dtype=dtype).reshape(n * num_groups, -1)
    empty = np.empty(0, dtype)
    xhat = K.layer_norm_fwd(rows, empty, empty, epsilon, False)[0].reshape(n, c, -1)
    g3 = np.asarray(gfirst, dtype=dtype).reshape(n, c, -1)
    w = _ones_or(weight, c, dtype)
    ghat = np.ascontiguousarray(g3 * w[:, None]).reshape(rows.shape)
    dx, _, _ = K.layer_norm_bwd(rows, ghat, epsilon, empty, False)
    dx = dx.reshape(first.shape)
    dx = np.moveaxis(dx, 1, -1) if channels_last else dx
    return dx.astype(g.dtype, copy=False), np.einsum("ncs,ncs->c", g3, xhat), g3.sum(axis=(0, 2))


def _gn_grad_samples(rng):
    x = rng.standard_normal((2, 4, 3))
    attrs = {"num_groups": 2, "channels_last": False, "epsilon": 1e-5}
    return [Sample((x, rng.standard_normal(x.shape), rng.uniform(0.5, 2.0, 4)), attrs)]


group_norm_grad_op = OpDef(
    "group_norm_grad",
    _gn_grad_forward,
    None,
    _grad_infer(_channel_count),
    OPAQUE,
    samples=_gn_grad_samples,
)
"""(dx, dweight, dbias) of group_norm over its per-(sample, group) statistics."""


# ----- the same math in ops (differentiable again) --------------------------------------------------


def _standardize(v, axes: list, epsilon: float):
    """(xhat, rstd) of ``v`` over ``axes``, rstd kept broadcastable."""
    centred = v - reduce_mean(v, axis=axes, keepdim=True)
    rstd = rsqrt(reduce_mean(centred * centred, axis=axes, keepdim=True) + float(epsilon))
    return centred * rstd, rstd


def _normalized_grad(gh, xhat, rstd, axes: list):
    """dx of ``xhat = (x - mean) * rstd`` (statistics over ``axes``) given d/dxhat = ``gh``."""
    mean_gh = reduce_mean(gh, axis=axes, keepdim=True)
    return rstd * (gh - mean_gh - xhat * reduce_mean(gh * xhat, axis=axes, keepdim=True))


def _sum_over(t, axes: list):
    return reduce_sum(t, axis=axes) if axes else t


def layer_norm_grad_composed(x, g, weight, begin_axis: int, epsilon: float):
    axes = list(range(begin_axis, x.ndim))
    xhat, rstd = _standardize(x, axes, epsilon)
    gh = g if weight is None else g * reshape(weight, x.shape[begin_axis:])
    lead = list(range(begin_axis))
    return _normalized_grad(gh, xhat, rstd, axes), _sum_over(g * xhat, lead), _sum_over(g, lead)


def batch_norm_grad_composed(x, g, weight, running_mean, running_var, channels_last, through_stats, epsilon):
    """The running statistics (tensors) are the constants used unless ``through_stats``."""
    c = x.shape[-1] if channels_last else x.shape[1]
    view = [-1, c, 1] if channels_last else [x.shape[0], c, -1]
    v, gv = reshape(x, view), reshape(g, view)
    axes = [0, 2]
    if through_stats:
        xhat, r = _standardize(v, axes, epsilon)
    else:
        stat = [1, c, 1]
        mean, var = (reshape(s.detach().astype(x.dtype), stat) for s in (running_mean, running_var))
        r = rsqrt(var + float(epsilon))
        xhat = (v - mean) * r
    gh = gv if weight is None else gv * reshape(weight, [1, c, 1])
    dx = _normalized_grad(gh, xhat, r, axes) if through_stats else gh * r
    return reshape(dx, x.shape), reduce_sum(gv * xhat, axis=axes), reduce_sum(gv, axis=axes)


def group_norm_grad_composed(x, g, weight, num_groups: int, channels_last: bool, epsilon: float):
    to_first = [0, x.ndim - 1, *range(1, x.ndim - 1)]
    first, gfirst = (transpose(t, to_first) for t in (x, g)) if channels_last else (x, g)
    n, c = first.shape[:2]
    groups = [n, num_groups, -1]
    xhat, rstd = _standardize(reshape(first, groups), [2], epsilon)
    g3 = reshape(gfirst, [n, c, -1])
    gh = g3 if weight is None else g3 * reshape(weight, [1, c, 1])
    dx = reshape(_normalized_grad(reshape(gh, groups), xhat, rstd, [2]), first.shape)
    if channels_last:
        dx = transpose(dx, [0, *range(2, x.ndim), 1])
    xhat3 = reshape(xhat, [n, c, -1])
    return dx, reduce_sum(g3 * xhat3, axis=[0, 2]), reduce_sum(g3, axis=[0, 2])


def param_grads(needs: tuple, dw, db, weight, bias, index: int):
    """Gradients for the optional (weight, bias) inputs at positions ``index``, ``index + 1``, in their shapes."""
    gw = _shaped(dw, weight) if weight is not None and needs[index] else None
    gb = _shaped(db, bias) if bias is not None and needs[index + 1] else None
    return gw, gb


def _shaped(grad, param):
    return grad if grad.shape == param.shape else reshape(grad, param.shape)


def zero_param_grads(needs: tuple, weight, bias, index: int):
    """Zero gradients for (weight, bias): the single-value batch-norm pass-through does not use them."""
    gw = constant(np.zeros(weight.shape), weight.dtype) if weight is not None and needs[index] else None
    gb = constant(np.zeros(bias.shape), bias.dtype) if bias is not None and needs[index + 1] else None
    return gw, gb
