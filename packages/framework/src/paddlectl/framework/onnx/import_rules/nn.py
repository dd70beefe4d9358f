"""Import rules for ONNX's neural-network ops beyond conv/pool: the softmax family per opset,
normalisations (layer, RMS, instance, LRN, mean-variance, Lp), global pooling of any rank, the
losses (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss) and inference-mode Dropout.

Where ONNX's parameter shapes are more general than the fused kernel's (LayerNormalization's scale
broadcasts against the normalised dims), the kernel normalises and the affine part is applied with
broadcasting ops.
"""

from __future__ import annotations

import numpy as np

from ...errors import ConversionError
from .base import Rule, arg, axis_of, dtype_of, item, one_of, rank, static_shape

_ALL = ["slice", None, None, None]


def _softmax_family(op: str) -> Rule:
    """Softmax/LogSoftmax/Hardmax: before opset 13 over all dims from ``axis`` on (default 1),
    flattened together; from 13 over ``axis`` alone (default -1)."""

    def convert(b, node, a, opset):
        x = node.input[0]
        r = rank(b, x)
        axis = axis_of(a.get("axis", 1 if opset < 13 else -1), r)
        if opset >= 13 or axis == r - 1:
            return _along(b, op, x, axis)
        shape = b.get(x).shape
        tail = shape[axis:]
        if not all(isinstance(d, int) for d in tail):
            raise ConversionError(
                f"{b.where()}: opset-{opset} {node.op_type} over axes {axis}.. needs fixed sizes there, got {list(shape)}"
            )
        (flat,) = b.op("reshape", [x], shape=tuple([0] * axis + [-1]))
        (out,) = _along(b, op, flat, axis)
        return b.op("reshape", [out], shape=tuple([0] * axis + list(tail)))

    return Rule(convert, frozenset({"axis"}))


def _along(b, op: str, x, axis: int) -> list:
    if op != "hardmax":
        return b.op(op, [x], axis=axis)
    n = item(b, x).shape[axis]
    if not isinstance(n, int):
        raise ConversionError(f"{b.where()}: Hardmax needs a fixed size on axis {axis}, got {n}")
    (idx,) = b.op("argmax", [x], axis=axis, keepdim=False, dtype="int64")
    (hot,) = b.op("one_hot", [idx], num_classes=n)
    r = len(hot.shape)
    if axis != r - 1:
        (hot,) = b.op("transpose", [hot], perm=list(range(axis)) + [r - 1] + list(range(axis, r - 1)))
    return b.op("cast", [hot], dtype=dtype_of(b, x).name)


def _norm_axes(b, x: str, axis: int) -> list:
    r = rank(b, x)
    return list(range(axis_of(axis, r), r))


def _layer_norm(b, node, a, opset):
    x, scale, bias = node.input[0], node.input[1], arg(node, 2)
    eps = float(a.get("epsilon", 1e-5))
    axes = _norm_axes(b, x, int(a.get("axis", -1)))
    norm_shape = tuple(b.get(x).shape[axes[0] :])
    fused = tuple(b.get(scale).shape) == norm_shape and (not bias or tuple(b.get(bias).shape) == norm_shape)
    if fused:
        (y,) = b.op("layer_norm", [x, scale, bias or None], begin_axis=axes[0], epsilon=eps)
    else:
        (y,) = b.op("layer_norm", [x, None, None], begin_axis=axes[0], epsilon=eps)
        (y,) = b.op("multiply", [y, scale])
        if bias:
            (y,) = b.op("add", [y, bias])
    outs = [y]
    if len(node.output) > 1 and any(node.output[1:]):
        (mean,) = b.op("mean", [x], axis=axes, keepdim=True)
        (var,) = b.op("var", [x], axis=axes, keepdim=True, unbiased=False)
        (var,) = b.op("add", [var, np.asarray(eps, dtype_of(b, x))])
        (inv,) = b.op("rsqrt", [var])
        outs += [mean, inv]
    return outs


def _rms_norm(b, node, a, opset):
    x, scale = node.input[:2]
    axes = _norm_axes(b, x, int(a.get("axis", -1)))
    (sq,) = b.op("square", [x])
    (ms,) = b.op("mean", [sq], axis=axes, keepdim=True)
    (ms,) = b.op("add", [ms, np.asarray(float(a.get("epsilon", 1e-5)), dtype_of(b, x))])
    (inv,) = b.op("rsqrt", [ms])
    (y,) = b.op("multiply", [x, inv])
    return b.op("multiply", [y, scale])


def _instance_norm(b, node, a, opset):
    x, scale, bias = node.input
    channels = b.get(x).shape[1]
    if not isinstance(channels, int):
        raise ConversionError(f"{b.where()}: InstanceNormalization needs a fixed channel count, got {channels}")
    return b.op("group_norm", [x, scale, bias], num_groups=channels, epsilon=float(a.get("epsilon", 1e-5)))


def _mvn(b, node, a, opset):
    """ONNX's function body: (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9) over ``axes``."""
    x = node.input[0]
    r = rank(b, x)
    axes = sorted(axis_of(int(i), r) for i in a.get("axes", [0, 2, 3]))
    (mean,) = b.op("mean", [x], axis=axes, keepdim=True)
    (sq,) = b.op("square", [x])
    (mean_sq,) = b.op("mean", [sq], axis=axes, keepdim=True)
    (sq_mean,) = b.op("square", [mean])
    (var,) = b.op("subtract", [mean_sq, sq_mean])
    (std,) = b.op("sqrt", [var])
    (std,) = b.op("add", [std, np.asarray(1e-9, dtype_of(b, x))])
    (centred,) = b.op("subtract", [x, mean])
    return b.op("divide", [centred, std])


def _lp_norm(b, node, a, opset):
    x = node.input[0]
    p = int(a.get("p", 2))
    axis = axis_of(int(a.get("axis", -1)), rank(b, x))
    (norm,) = b.op("p_norm", [x], p=float(p), axis=[axis], keepdim=True)
    zero = np.asarray(0, dtype_of(b, x))
    (is_zero,) = b.op("equal", [norm, zero])
    (safe,) = b.op("where", [is_zero, np.asarray(1, dtype_of(b, x)), norm])
    (y,) = b.op("divide", [x, safe])
    return b.op("where", [is_zero, zero, y])


def _lrn(b, node, a, opset):
    """y = x / (bias + alpha / size * sum of x^2 over a window of ``size`` channels) ** beta."""
    x = node.input[0]
    size = int(a["size"])
    shape = static_shape(b, x, "LRN")
    lo, hi = (size - 1) // 2, size - 1 - (size - 1) // 2
    (sq,) = b.op("square", [x])
    pads = tuple((0, 0) if i != 1 else (lo, hi) for i in range(len(shape)))
    (padded,) = b.op("pad", [sq], pads=pads, mode="constant", value=0.0)
    total = None
    for i in range(size):
        spec = [_ALL, ["slice", i, i + shape[1], None]] + [_ALL] * (len(shape) - 2)
        (window,) = b.op("getitem", [padded], spec=spec)
        total = window if total is None else b.op("add", [total, window])[0]
    dt = dtype_of(b, x)
    (scaled,) = b.op("multiply", [total, np.asarray(float(a.get("alpha", 1e-4)) / size, dt)])
    (base,) = b.op("add", [scaled, np.asarray(float(a.get("bias", 1.0)), dt)])
    (den,) = b.op("elementwise_pow", [base, np.asarray(float(a.get("beta", 0.75)), dt)])
    return b.op("divide", [x, den])


def _global_pool(op: str) -> Rule:
    def convert(b, node, a, opset):
        x = node.input[0]
        r = rank(b, x)
        if op == "mean" and r == 4:  # the pooling kernel
            return b.op("avg_pool2d", [x], kernel_size=None, stride=None, padding=None, ceil_mode=False,
                        exclusive=True, divisor_override=None, output_size=[1, 1], data_format="NCHW")  # fmt: skip
        return b.op(op, [x], axis=list(range(2, r)), keepdim=True)

    return Rule(convert)


def _dropout(b, node, a, opset):
    """Inference: the identity, and an all-true mask where asked. A ``training_mode`` input that is
    true is refused (a random mask would make the imported program non-deterministic)."""
    training, ratio = arg(node, 2), arg(node, 1)
    if training and bool(b.require_known(training, "Dropout training_mode").reshape(-1)[0]):
        if not ratio or float(b.require_known(ratio, "Dropout ratio").reshape(-1)[0]) != 0.0:
            raise ConversionError(f"{b.where()}: training_mode=True with a ratio > 0: only inference Dropout "
                                  "(or ratio 0) is imported")  # fmt: skip
    x = node.input[0]
    outs = [b.get(x)]
    if len(node.output) > 1 and node.output[1]:
        outs += b.op("full_like", [x], value=True, dtype="bool")
    return outs


def _nll(b, x, target, weight, a) -> list:
    """ONNX's [N, C, d1..] scores and [N, d1..] targets as the framework's [M, C] and [M]."""
    r = rank(b, x)
    if r > 2:
        (x,) = b.op("transpose", [x], perm=[0] + list(range(2, r)) + [1])
        channels = item(b, x).shape[-1]
        (x,) = b.op("reshape", [x], shape=(-1, channels))
        (flat_t,) = b.op("reshape", [target], shape=(-1,))
    else:
        flat_t = target
    reduction = a.get("reduction", "mean")
    (loss,) = b.op("nll_loss", [x, flat_t, weight or None], ignore_index=int(a.get("ignore_index", -100)),
                   reduction=reduction)  # fmt: skip
    if reduction == "none" and r > 2:
        (loss,) = b.op("reshape", [loss], shape=static_shape(b, target, "an unreduced per-pixel loss"))
    return [loss]


def _nll_loss(b, node, a, opset):
    return _nll(b, node.input[0], node.input[1], arg(node, 2), a)


def _softmax_ce(b, node, a, opset):
    (log_prob,) = b.op("log_softmax", [node.input[0]], axis=1)
    outs = _nll(b, log_prob, node.input[1], arg(node, 2), a)
    return outs + [log_prob] if len(node.output) > 1 else outs


_LOSS_ATTRS = frozenset({"reduction", "ignore_index"})
_REDUCTION = one_of("reduction", ("none", "sum", "mean"), "mean")
RULES: dict[str, Rule] = {
    "Softmax": _softmax_family("softmax"),
    "LogSoftmax": _softmax_family("log_softmax"),
    "Hardmax": _softmax_family("hardmax"),
    "LayerNormalization": Rule(_layer_norm, frozenset({"axis", "epsilon", "stash_type"}), since=17),
    "RMSNormalization": Rule(_rms_norm, frozenset({"axis", "epsilon", "stash_type"}), since=23),
    "InstanceNormalization": Rule(_instance_norm, frozenset({"epsilon"})),
    "MeanVarianceNormalization": Rule(_mvn, frozenset({"axes"})),
    "LpNormalization": Rule(_lp_norm, frozenset({"axis", "p"})),
    "LRN": Rule(_lrn, frozenset({"alpha", "beta", "bias", "size"})),
    "GlobalAveragePool": _global_pool("mean"),
    "GlobalMaxPool": _global_pool("max"),
    "Dropout": Rule(_dropout, frozenset({"ratio", "seed", "is_test"})),
    "NegativeLogLikelihoodLoss": Rule(_nll_loss, _LOSS_ATTRS, since=12, check=_REDUCTION),
    "SoftmaxCrossEntropyLoss": Rule(_softmax_ce, _LOSS_ATTRS, since=12, check=_REDUCTION),
}
