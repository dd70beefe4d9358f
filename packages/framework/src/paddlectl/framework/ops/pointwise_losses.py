"""Elementwise losses (MSE, L1, smooth L1, BCE, BCE with logits, KL): one op factory with
closed-form gradients, then the ordinary reduction ops."""

from __future__ import annotations

import numpy as np

from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..core.shapes import broadcast_shapes
from ..core.tensor import Tensor
from ..errors import ShapeError
from . import elementwise as ew
from ._util import constant, tensor_args, to_tensor_like
from .broadcast import sum_to
from .loss_checks import REDUCTIONS, check_float, check_reduction, reduce_loss
from .reduce import sum


def _pointwise(name: str, loss_fn, grad_fn, check=None, *, samples, exempt=None):
    """A broadcasting loss of (input, label[, extra]); ``grad_fn(x, y, extra, **attrs)`` gives the
    local derivatives (dx, dy or None) as Tensors, through ops. ``extra`` (a weight-like constant)
    gets no gradient; ``check(x)`` validates the input's values each time the op runs."""

    def forward(ctx, x, y, extra=None, **attrs):
        if check is not None:
            check(x)
        try:
            out = loss_fn(x, y, extra, **attrs)
        except ValueError:
            raise ShapeError(
                f"{name}: input {list(x.shape)} and label {list(y.shape)} cannot be broadcast together"
            ) from None
        return out.astype(np.result_type(x.dtype, y.dtype), copy=False)

    def vjp(ctx, g):
        x, y = ctx.input(0), ctx.input(1)
        extra = ctx.input(2) if len(ctx.needs_input_grad) > 2 else None
        dx, dy = grad_fn(x, y, extra, **ctx.attrs)
        gx = sum_to(g * dx, x) if ctx.needs_input_grad[0] else None
        gy = sum_to(g * dy, y) if dy is not None and ctx.needs_input_grad[1] else None
        return gx, gy, None

    def infer(x: Spec, y: Spec, extra=None, **attrs) -> Spec:
        return Spec(broadcast_shapes(name, x.shape, y.shape), np.result_type(x.dtype, y.dtype))

    return OpDef(name, forward, vjp, infer, OPAQUE, samples=samples, exempt=exempt or {})


def _pair_samples(low: float = -2.0, high: float = 2.0, **attrs):
    """Samples of a (3, 4) input against a (3, 4) and a broadcast (4,) label."""

    def samples(rng):
        x = rng.uniform(low, high, (3, 4))
        return [
            Sample((x, rng.uniform(low, high, (3, 4)), None), attrs),
            Sample((x, rng.uniform(low, high, 4), None), attrs),
        ]

    return samples


def _mask(t: Tensor, dtype) -> Tensor:
    """A comparison's result as 0/1 values: a constant factor for differentiation (piecewise)."""
    return t.astype(dtype)


mse_op = _pointwise(
    "mse_loss",
    lambda x, y, e: np.square(x - y),
    lambda x, y, e: (2.0 * (x - y), -2.0 * (x - y)),
    samples=_pair_samples(),
)
l1_op = _pointwise(
    "l1_loss",
    lambda x, y, e: np.abs(x - y),
    lambda x, y, e: (ew.sign(x - y), -ew.sign(x - y)),
    samples=_pair_samples(),
)


def _smooth_l1(x, y, e, delta, is_huber):
    d = np.abs(x - y)
    if is_huber:
        return np.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    return np.where(d < delta, 0.5 * d * d / delta, d - 0.5 * delta)


def _smooth_l1_grad(x, y, e, delta, is_huber):
    d = x - y
    inside = _mask(ew.abs(d) < delta, d.dtype)
    outside = 1.0 - inside
    dx = inside * d + outside * (delta * ew.sign(d)) if is_huber else inside * d / delta + outside * ew.sign(d)
    return dx, -dx


smooth_l1_op = _pointwise(
    "smooth_l1_loss", _smooth_l1, _smooth_l1_grad, samples=_pair_samples(delta=1.0, is_huber=True)
)


def _bce(x, y, e):
    with np.errstate(divide="ignore"):
        return -(y * np.maximum(np.log(x), -100) + (1 - y) * np.maximum(np.log(1 - x), -100))


def _bce_grad(x, y, e):
    return (x - y) / ew.maximum(x * (1.0 - x), constant(1e-12, x.dtype)), None


def _check_probabilities(x):
    if x.size and (np.nanmin(x) < 0 or np.nanmax(x) > 1):
        raise ValueError("binary_cross_entropy: input must be probabilities in [0, 1]; apply sigmoid first")


bce_op = _pointwise(
    "binary_cross_entropy",
    _bce,
    _bce_grad,
    _check_probabilities,
    samples=_pair_samples(0.1, 0.9),
)


def _bce_logits(x, y, pos_weight, ignore_index=-100):
    """Stable ``(1-y) x + (1 + (pw-1) y) softplus(-x)``; labels equal to ``ignore_index`` give 0, as in Paddle."""
    log_w = 1 if pos_weight is None else 1 + (pos_weight - 1) * y
    out = (1 - y) * x + log_w * (np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0))
    return np.where(y == ignore_index, 0, out)


def _bce_logits_grad(x, y, pos_weight, ignore_index=-100):
    log_w = 1.0 if pos_weight is None else 1.0 + (pos_weight - 1.0) * y
    sig_neg = 0.5 * (1.0 - ew.tanh(0.5 * x))  # sigmoid(-x), stable for large |x|
    return _mask(y != float(ignore_index), x.dtype) * ((1.0 - y) - log_w * sig_neg), None


bce_logits_op = _pointwise(
    "binary_cross_entropy_with_logits",
    _bce_logits,
    _bce_logits_grad,
    samples=_pair_samples(0.0, 1.0),
)


def _kl(x, y, e, log_target):
    if log_target:
        return np.exp(y) * (y - x)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(y > 0, y * (np.log(np.where(y > 0, y, 1)) - x), 0)


def _kl_grad(x, y, e, log_target):
    return (-ew.exp(y) if log_target else -(y * _mask(y > 0.0, y.dtype))), None


kl_op = _pointwise("kl_div", _kl, _kl_grad, samples=_pair_samples(0.1, 1.0, log_target=False))


def _float_pair(op: str, input, label) -> tuple[Tensor, Tensor]:
    input, label = tensor_args(input, label)
    check_float(op, "input", input)
    check_float(op, "label", label)
    return input, label


def mse_loss(input, label, reduction="mean", name=None):
    check_reduction("mse_loss", reduction)
    return reduce_loss(mse_op(*_float_pair("mse_loss", input, label)), reduction)


def l1_loss(input, label, reduction="mean", name=None):
    check_reduction("l1_loss", reduction)
    return reduce_loss(l1_op(*_float_pair("l1_loss", input, label)), reduction)


def smooth_l1_loss(input, label, reduction="mean", delta=1.0, is_huber=True, name=None):
    """Huber loss with threshold ``delta`` (``is_huber=False``: the smooth-L1 form divided by delta)."""
    check_reduction("smooth_l1_loss", reduction)
    if delta <= 0:
        raise ValueError(f"smooth_l1_loss: delta must be positive, got {delta}")
    x, y = _float_pair("smooth_l1_loss", input, label)
    return reduce_loss(smooth_l1_op(x, y, delta=float(delta), is_huber=bool(is_huber)), reduction)


def _weighted(out: Tensor, weight) -> Tensor:
    return out if weight is None else out * to_tensor_like(weight, out)


def binary_cross_entropy(input, label, weight=None, reduction="mean", name=None):
    """``-w (y log x + (1-y) log(1-x))`` with each log clamped at -100, as Paddle's kernel does."""
    check_reduction("binary_cross_entropy", reduction)
    x, y = _float_pair("binary_cross_entropy", input, label)
    return reduce_loss(_weighted(bce_op(x, y), weight), reduction)


def binary_cross_entropy_with_logits(logit, label, weight=None, reduction="mean", pos_weight=None, name=None):
    """Sigmoid and binary cross-entropy in one stable formula; ``pos_weight`` scales the positive term."""
    check_reduction("binary_cross_entropy_with_logits", reduction)
    x, y = _float_pair("binary_cross_entropy_with_logits", logit, label)
    pw = None if pos_weight is None else to_tensor_like(pos_weight, x).detach()
    return reduce_loss(_weighted(bce_logits_op(x, y, pw), weight), reduction)


def kl_div(input, label, reduction="mean", log_target=False, name=None):
    """``label (log label - input)`` (0 where label <= 0); 'batchmean' divides the sum by the batch size."""
    check_reduction("kl_div", reduction, (*REDUCTIONS, "batchmean"))
    x, y = _float_pair("kl_div", input, label)
    out = kl_op(x, y, log_target=bool(log_target))
    if reduction == "batchmean":
        return sum(out) / float(x.shape[0]) if x.ndim > 0 else out
    return reduce_loss(out, reduction)


FUNCTIONAL = [
    "mse_loss", "l1_loss", "smooth_l1_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
]  # fmt: skip
