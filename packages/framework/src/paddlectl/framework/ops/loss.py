"""Loss functions under Paddle's names, signatures, defaults and reduction rules.

Softmax cross-entropy is one fused op (log-sum-exp, pick, weight, reduce; backward
``softmax - target``) because it sits in every classification step; CTC runs warp-ctc's
forward-backward as a Numba kernel. Pointwise losses share one op factory with closed-form
gradients, then reduce with the ordinary reduction ops.
"""

from __future__ import annotations

import numpy as np

from ..core import symbolic
from ..core.autograd import is_grad_enabled
from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..core.shapes import broadcast_shapes, normalize_axis
from ..core.tensor import Tensor
from ..errors import DTypeError, ShapeError
from ..kernels import ctc as ctc_kernels
from ..kernels import loss as ce_kernels
from . import elementwise as ew
from ._util import constant, tensor_args, to_tensor_like
from .activation import log_softmax, softmax
from .broadcast import sum_to
from .elementwise import isinf, where
from .reduce import mean, sum
from .shape import reshape, transpose, unsqueeze

_REDUCTIONS = ("none", "mean", "sum")


def _check_reduction(op: str, reduction: str, allowed=_REDUCTIONS) -> None:
    if reduction not in allowed:
        raise ValueError(f"{op}: reduction must be one of {', '.join(map(repr, allowed))}, got {reduction!r}")


def _check_float(op: str, what: str, t: Tensor) -> None:
    if t.dtype.kind != "f":
        raise DTypeError(f"{op}: {what} must be a float tensor, got {t.dtype}; cast it with .astype('float32')")


def _check_int(op: str, what: str, t: Tensor, fix: str) -> None:
    if t.dtype.kind not in "iu":
        raise DTypeError(f"{op}: {what} must be an integer tensor, got {t.dtype}; {fix}")


def _check_labels(op: str, labels: np.ndarray, classes: int, ignore_index: int | None) -> None:
    """Paddle raises IndexError for a class id outside [0, classes) that is not ``ignore_index``."""
    bad = (labels < 0) | (labels >= classes)
    if ignore_index is not None:
        bad &= labels != ignore_index
    if bad.any():
        value = int(labels[bad][0])
        raise IndexError(
            f"{op}: label value {value} is outside [0, {classes}) for {classes} classes "
            f"(ignore_index={ignore_index}); fix the labels or the number of classes"
        )


def _reduce(out: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return mean(out)
    if reduction == "sum":
        return sum(out)
    return out


# ----- fused softmax cross-entropy -----------------------------------------------------------


def _rows(x: np.ndarray, axis: int) -> np.ndarray:
    """``x`` with ``axis`` moved last and the rest flattened: [rows, classes] (a view when axis is last)."""
    moved = x if axis == x.ndim - 1 else np.moveaxis(x, axis, -1)
    return np.ascontiguousarray(moved).reshape(-1, x.shape[axis])


def _ce_targets(x, label, axis, soft_label, ignore_index, smoothing, weight, check=True):
    """Labels as rows, each row's class weight (None without ``weight``) and the mask's count for 'mean';
    ``check``: refuse a class id out of range (forward does; backward's labels are the same)."""
    classes, dtype = x.shape[axis], x.dtype
    if soft_label:
        lab = _rows(label, axis).astype(dtype, copy=False)
        if smoothing:
            lab = (1 - smoothing) * lab + dtype.type(smoothing / classes)
        row_w = None if weight is None else lab @ weight.astype(dtype)
        counted = lab != ignore_index
        return lab, row_w, counted
    lab = label.reshape(-1) if axis == label.ndim - 1 else np.moveaxis(label, axis, -1).reshape(-1)
    lab = lab.astype(np.int64, copy=False)
    if check:
        _check_labels("cross_entropy", lab, classes, None if smoothing else ignore_index)
    keep = lab != ignore_index
    row_w = None
    if weight is not None:
        w = weight.astype(dtype, copy=False)
        if smoothing:
            row_w = (1 - smoothing) * w[lab] + w.sum() * (smoothing / classes)
        else:
            row_w = np.where(keep, w[np.where(keep, lab, 0)], 0).astype(dtype)
    if smoothing:
        # Paddle smooths into a soft label and counts its entries that differ from ignore_index.
        low, high = dtype.type(smoothing / classes), dtype.type(1 - smoothing + smoothing / classes)
        equal = (classes - 1) * (low == ignore_index) + (high == ignore_index)
        counted = np.full(lab.shape, classes - equal)
    else:
        counted = keep
    return lab, row_w, counted


def _ce_scale(x, counted, row_w, ignore_index, reduction) -> float:
    """The factor 'mean' divides the summed loss by (1 for 'sum' and 'none')."""
    return _ce_mean_scale(x, counted, row_w, ignore_index) if reduction == "mean" else 1.0


def _ce_forward(ctx, x, label, weight, *, axis, soft_label, use_softmax, ignore_index, smoothing, reduction, squeeze):
    x2 = _rows(x, axis)
    lab, row_w, counted = _ce_targets(x, label, axis, soft_label, ignore_index, smoothing, weight)
    rows = x2.shape[0]
    if use_softmax:
        loss = np.empty(rows, x.dtype)
        if soft_label:
            ce_kernels.soft_forward(x2, lab, loss)
        else:
            ce_kernels.hard_forward(x2, lab, ignore_index, float(smoothing), loss)
    else:
        with np.errstate(divide="ignore"):
            if soft_label:
                loss = -np.sum(lab * np.log(x2), axis=1)
            else:
                picked = np.take_along_axis(x2, np.where(lab == ignore_index, 0, lab)[:, None], 1)[:, 0]
                loss = np.where(lab == ignore_index, 0, -np.log(picked)).astype(x.dtype)
    if row_w is not None:
        loss = loss * row_w
    if reduction == "none":
        out = loss.reshape(tuple(d for i, d in enumerate(x.shape) if i != axis))
        return out if squeeze else np.expand_dims(out, axis)
    scale = _ce_scale(x, counted, row_w, ignore_index, reduction)
    return np.asarray(loss.sum(dtype=x.dtype) * x.dtype.type(scale), dtype=x.dtype)


def _ce_mean_scale(x, counted, row_w, ignore_index) -> float:
    """Paddle's 'mean': over all rows, or over kept rows / kept weight once ignore_index >= 0 or a weight is given."""
    if 0 in x.shape:
        return np.nan
    if ignore_index >= 0:
        if row_w is None:
            den = float(np.sum(counted))
        else:
            den = float(np.sum(counted * (row_w if counted.ndim == 1 else row_w[:, None])))
    elif row_w is not None:
        den = float(np.sum(row_w))
    else:
        return 1.0 / max(counted.shape[0], 1)
    return 1.0 / (den if den != 0 else 1.0)


def _ce_grad_forward(ctx, x, g, label, weight, *, axis, soft_label, use_softmax, ignore_index, smoothing, reduction,
                     squeeze):  # fmt: skip
    """The targets recomputed from the labels, then the fused backward kernel (which recomputes
    each row's log-sum-exp)."""
    x2 = _rows(x, axis)
    lab, row_w, counted = _ce_targets(x, label, axis, soft_label, ignore_index, smoothing, weight, check=False)
    rows = x2.shape[0]
    g_rows = (
        g.reshape(rows)
        if reduction == "none"
        else np.full(rows, g * _ce_scale(x, counted, row_w, ignore_index, reduction))
    )
    g_rows = (g_rows if row_w is None else g_rows * row_w).astype(np.float64)
    if use_softmax:
        grad = np.empty_like(x2)
        if soft_label:
            ce_kernels.soft_backward(x2, lab, g_rows, grad)
        else:
            ce_kernels.hard_backward(x2, lab, ignore_index, float(smoothing), g_rows, grad)
    elif soft_label:
        grad = -(g_rows[:, None] * lab) / x2
    else:
        grad = np.zeros_like(x2)
        idx = np.nonzero(lab != ignore_index)[0]
        grad[idx, lab[idx]] = -g_rows[idx] / x2[idx, lab[idx]]
    if axis == x.ndim - 1:
        return grad.reshape(x.shape)
    moved = tuple(d for i, d in enumerate(x.shape) if i != axis) + (x.shape[axis],)
    return np.moveaxis(grad.reshape(moved), -1, axis)


def _ce_targets_forward(ctx, x, label, weight, *, axis, soft_label, use_softmax, ignore_index, smoothing, reduction,
                        squeeze):  # fmt: skip
    """[rows, classes] targets (the soft label, or the smoothed one-hot of each kept hard label) and
    [rows, 1] factors (class weight, kept or not, 'mean' scale): what the gradient subtracts and
    scales by, from the labels alone."""
    lab, row_w, counted = _ce_targets(x, label, axis, soft_label, ignore_index, smoothing, weight)
    rows, classes = lab.shape[0], x.shape[axis]
    coef = np.ones(rows) if row_w is None else row_w.astype(np.float64)
    if soft_label:
        target = lab
    else:
        keep = lab != ignore_index
        coef = coef * keep
        smooth = smoothing if use_softmax else 0.0
        target = np.zeros((rows, classes), x.dtype)
        target[keep] = smooth / classes
        idx = np.nonzero(keep)[0]
        target[idx, lab[idx]] += 1.0 - smooth
    coef = coef * _ce_scale(x, counted, row_w, ignore_index, reduction)
    return target, coef[:, None].astype(x.dtype)


def _ce_targets_infer(x: Spec, label: Spec, weight=None, *, axis, **attrs):
    rows = symbolic.product([d for i, d in enumerate(x.shape) if i != axis])
    return Spec((rows, x.shape[axis]), x.dtype), Spec((rows, 1), x.dtype)


def _ce_samples(rng, grad: bool = False):
    """Hard-label calls (soft labels get no gradient, as in Paddle, which finite differences would find)."""
    x = rng.standard_normal((4, 3))
    hard = np.array([[0], [2], [1], [2]])
    attrs = {"axis": 1, "soft_label": False, "use_softmax": True, "ignore_index": -100, "smoothing": 0.0,
             "reduction": "mean", "squeeze": True}  # fmt: skip
    calls = [
        ((x, hard, None), attrs),
        ((x, hard, rng.uniform(0.5, 2.0, 3)), {**attrs, "ignore_index": 2, "reduction": "sum"}),
        ((x, hard, None), {**attrs, "smoothing": 0.1, "reduction": "none", "squeeze": False}),
        ((rng.standard_normal((2, 3, 2)), np.array([[[1, 0]], [[2, 2]]]), None), {**attrs, "axis": 1}),
        ((rng.uniform(0.2, 1.0, (4, 3)), hard, None), {**attrs, "use_softmax": False}),
    ]
    if not grad:
        return [Sample(inputs, a) for inputs, a in calls]
    g = {"mean": (), "sum": (), "none": (4, 1)}
    return [Sample((ins[0], rng.standard_normal(g[a["reduction"]]), *ins[1:]), a) for ins, a in calls[:3]]


softmax_cross_entropy_grad_op = OpDef(
    "softmax_cross_entropy_grad",
    _ce_grad_forward,
    None,
    lambda x, *rest, **attrs: x,
    OPAQUE,
    samples=lambda rng: _ce_samples(rng, grad=True),
)
"""The logits' gradient of softmax_cross_entropy by its fused kernels (``softmax - target`` per row);
no gradient of its own: under ``create_graph`` softmax_cross_entropy's vjp composes ops instead."""

cross_entropy_targets_op = OpDef(
    "cross_entropy_targets", _ce_targets_forward, None, _ce_targets_infer, OPAQUE, samples=_ce_samples
)


def _ce_grad_composed(ctx, g):
    """The logits' gradient in ops (softmax of the logits; targets and factors from the labels)."""
    a = ctx.attrs
    x = ctx.input(0)
    axis = a["axis"]
    last = axis == x.ndim - 1
    moved = x if last else transpose(x, [i for i in range(x.ndim) if i != axis] + [axis])
    x2 = reshape(moved, [-1, x.shape[axis]])
    target, coef = cross_entropy_targets_op(x, ctx.input(1), ctx.input(2), **a)
    local = softmax(x2, -1) - target if a["use_softmax"] else -target / x2
    g_rows = reshape(g, [-1, 1] if a["reduction"] == "none" else [1, 1])
    grad = reshape(g_rows * coef * local, moved.shape)
    return grad if last else transpose(grad, _axis_back(x.ndim, axis))


def _ce_label_grad(ctx, g):
    """A soft label's gradient through the class weight (Paddle's one path for it): each row's
    unweighted loss times ``(1 - smoothing) * weight``; 'mean' also divides by the summed row
    weights and takes the share of the divisor, which depends on the label too."""
    a = ctx.attrs
    x, label = ctx.input(0), ctx.input(1)
    axis, classes, smoothing = a["axis"], x.shape[a["axis"]], a["smoothing"]
    weight = reshape(ctx.input(2), [classes if i == axis else 1 for i in range(x.ndim)])
    logp = log_softmax(x, axis) if a["use_softmax"] else ew.log(x)
    smoothed = label * (1.0 - smoothing) + smoothing / classes if smoothing else label
    raw = -sum(smoothed * logp, axis=axis, keepdim=True)
    if a["reduction"] == "mean":
        row_w = sum(smoothed * weight, axis=axis, keepdim=True)
        counted = 1.0
        if a["ignore_index"] >= 0:
            counted = sum((smoothed != float(a["ignore_index"])).astype(x.dtype), axis=axis, keepdim=True)
        raw = (raw - ctx.output(0) * counted) / sum(row_w * counted)
    g_full = unsqueeze(g, axis) if a["reduction"] == "none" and a["squeeze"] else g
    return g_full * raw * (weight * (1.0 - smoothing))


def _ce_vjp(ctx, g):
    """The fused kernel (``softmax_cross_entropy_grad``), or with ``create_graph`` the same math in ops."""
    needs = ctx.needs_input_grad
    g_label = _ce_label_grad(ctx, g) if needs[1] and ctx.attrs["soft_label"] and ctx.input(2) is not None else None
    if not needs[0]:
        return None, g_label, None
    if is_grad_enabled():
        return _ce_grad_composed(ctx, g), g_label, None
    return softmax_cross_entropy_grad_op(ctx.input(0), g, ctx.input(1), ctx.input(2), **ctx.attrs), g_label, None


def _axis_back(ndim: int, axis: int) -> list:
    """The permutation that moves the last axis back to ``axis``."""
    return [*range(axis), ndim - 1, *range(axis, ndim - 1)]


def _ce_infer(x: Spec, label: Spec, weight=None, *, axis, reduction, squeeze, **attrs) -> Spec:
    if reduction != "none":
        return Spec((), x.dtype)
    shape = tuple(1 if i == axis else d for i, d in enumerate(x.shape))
    return Spec(tuple(d for i, d in enumerate(shape) if i != axis) if squeeze else shape, x.dtype)


softmax_cross_entropy_op = OpDef("softmax_cross_entropy", _ce_forward, _ce_vjp, _ce_infer, OPAQUE, samples=_ce_samples)


def _ce_label(op: str, input: Tensor, label: Tensor, axis: int, soft_label: bool) -> tuple[Tensor, bool]:
    """Check shapes and give a hard label its class axis back; True when it had none (Paddle squeezes then)."""
    if input.ndim == 0:
        raise ShapeError(f"{op}: input must have at least one dim (the classes), got a 0-D tensor")
    lost = label.ndim == input.ndim - 1
    if not lost and label.ndim != input.ndim:
        raise ShapeError(
            f"{op}: label must have rank {input.ndim - 1} or {input.ndim} for input {input.shape}, "
            f"got label {label.shape}"
        )
    if soft_label:
        if label.shape != input.shape:
            raise ShapeError(f"{op}: soft labels must have the input's shape {input.shape}, got {label.shape}")
        _check_float(op, "a soft label", label)
        return label, False
    _check_int(op, "a hard label", label, "cast it with .astype('int64'), or pass soft_label=True for probabilities")
    data = unsqueeze(label, axis) if lost else label
    expected = [1 if i == axis else d for i, d in enumerate(input.shape)]
    if data.shape != expected:
        raise ShapeError(
            f"{op}: hard label must have shape {expected} (or that without axis {axis}) "
            f"for input {input.shape}, got {label.shape}"
        )
    return data, lost


def cross_entropy(
    input,
    label,
    weight=None,
    ignore_index=-100,
    reduction="mean",
    soft_label=False,
    axis=-1,
    use_softmax=True,
    label_smoothing=0.0,
    name=None,
):
    """Paddle's ``cross_entropy``: hard or soft labels, class weights, ignore_index and label smoothing."""
    op = "cross_entropy"
    _check_reduction(op, reduction)
    _check_float(op, "input", input)
    if ignore_index > 0 and soft_label:
        raise ValueError(f"{op}: ignore_index must stay -100 with soft_label=True, got {ignore_index}")
    axis = normalize_axis(op, axis, input.ndim)
    label_t, lost = _ce_label(op, input, label, axis, soft_label)
    if weight is not None:
        if weight.ndim != 1 or weight.shape[0] != input.shape[axis]:
            raise ShapeError(f"{op}: weight must have shape [{input.shape[axis]}] (one per class), got {weight.shape}")
    return softmax_cross_entropy_op(
        input,
        label_t,
        weight.detach() if weight is not None else None,
        axis=axis,
        soft_label=bool(soft_label),
        use_softmax=bool(use_softmax),
        ignore_index=int(ignore_index),
        smoothing=float(label_smoothing),
        reduction=reduction,
        squeeze=lost and not label_smoothing,
    )


def softmax_with_cross_entropy(
    logits, label, soft_label=False, ignore_index=-100, numeric_stable_mode=True, return_softmax=False, axis=-1
):
    """Unreduced loss with the class axis kept (size 1); ``return_softmax`` adds the softmax as a constant."""
    op = "softmax_with_cross_entropy"
    _check_float(op, "logits", logits)
    axis = normalize_axis(op, axis, logits.ndim)
    label_t, _ = _ce_label(op, logits, label, axis, soft_label)
    loss = softmax_cross_entropy_op(
        logits,
        label_t,
        None,
        axis=axis,
        soft_label=bool(soft_label),
        use_softmax=True,
        ignore_index=int(ignore_index),
        smoothing=0.0,
        reduction="none",
        squeeze=False,
    )
    if not return_softmax:
        return loss
    return loss, softmax(logits, axis)


# ----- negative log-likelihood ---------------------------------------------------------------


def _nll_rows(x, label, weight, ignore_index, reduction):
    """Each row's label (0 where ignored), its weight (0 where ignored) and 'mean''s scale."""
    _check_labels("nll_loss", label, x.shape[1], ignore_index)
    keep = label != ignore_index
    safe = np.where(keep, label, 0).astype(np.int64)
    w = np.ones(1, x.dtype) if weight is None else weight.astype(x.dtype, copy=False)
    row_w = np.where(keep, w[safe] if weight is not None else w[0], 0).astype(x.dtype)
    scale = 1.0
    if reduction == "mean":
        total = float(row_w.sum())
        scale = 1.0 / total if total != 0 else 0.0
    return safe, row_w, scale


def _nll_forward(ctx, x, label, weight, *, ignore_index, reduction):
    safe, row_w, scale = _nll_rows(x, label, weight, ignore_index, reduction)
    loss = -np.take_along_axis(x, safe[:, None], 1)[:, 0] * row_w
    if reduction == "none":
        return loss
    return np.asarray(loss.sum(dtype=x.dtype) * x.dtype.type(scale), dtype=x.dtype)


def _nll_picks_forward(ctx, x, label, weight, *, ignore_index, reduction):
    """d loss / d x for a unit output gradient: ``-weight * scale`` at each row's label, from the labels alone."""
    safe, row_w, scale = _nll_rows(x, label, weight, ignore_index, reduction)
    picks = np.zeros(x.shape, x.dtype)
    np.put_along_axis(picks, safe[:, None], (-row_w * x.dtype.type(scale))[:, None], 1)
    return picks


def _nll_vjp(ctx, g):
    """Linear in the input: ``g`` times the labels' constant pick matrix."""
    picks = nll_picks_op(ctx.input(0), ctx.input(1), ctx.input(2), **ctx.attrs)
    return reshape(g, [-1, 1] if ctx.attrs["reduction"] == "none" else [1, 1]) * picks, None, None


def _nll_infer(x: Spec, label: Spec, weight=None, *, reduction, **attrs) -> Spec:
    return Spec(label.shape if reduction == "none" else (), x.dtype)


def _nll_samples(rng):
    x, label = rng.standard_normal((4, 3)), np.array([0, 2, 1, 2])
    return [
        Sample((x, label, None), {"ignore_index": -100, "reduction": "mean"}),
        Sample((x, label, rng.uniform(0.5, 2.0, 3)), {"ignore_index": 1, "reduction": "none"}),
    ]


nll_loss_op = OpDef("nll_loss", _nll_forward, _nll_vjp, _nll_infer, OPAQUE, samples=_nll_samples)
nll_picks_op = OpDef(
    "nll_loss_picks", _nll_picks_forward, None, lambda x, *rest, **attrs: x, OPAQUE, samples=_nll_samples
)


def nll_loss(input, label, weight=None, ignore_index=-100, reduction="mean", name=None):
    """``-weight[y] * input[y]`` over class axis 1; 'mean' divides by the kept weight, as in Paddle."""
    op = "nll_loss"
    _check_reduction(op, reduction)
    _check_float(op, "input", input)
    _check_int(op, "label", label, "cast it with .astype('int64')")
    if input.ndim < 2:
        raise ShapeError(f"{op}: input must be [N, C] or [N, C, d1, ...], got {input.shape}")
    n, c = input.shape[0], input.shape[1]
    expected = [n, *input.shape[2:]]
    if label.shape != expected:
        raise ShapeError(f"{op}: label must have shape {expected} for input {input.shape}, got {label.shape}")
    if weight is not None and weight.shape != [c]:
        raise ShapeError(f"{op}: weight must have shape [{c}] (one per class), got {weight.shape}")
    # Classes last, everything else as rows: the op then works on [rows, C] like cross_entropy.
    x2 = reshape(transpose(input, [0, *range(2, input.ndim), 1]), [-1, c]) if input.ndim > 2 else input
    lab = reshape(label, [-1])
    w = weight.detach() if weight is not None else None
    out = nll_loss_op(x2, lab, w, ignore_index=int(ignore_index), reduction=reduction)
    return reshape(out, expected) if reduction == "none" and input.ndim > 2 else out


# ----- pointwise losses ----------------------------------------------------------------------


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
        gx = sum_to(g * dx, x.shape) if ctx.needs_input_grad[0] else None
        gy = sum_to(g * dy, y.shape) if dy is not None and ctx.needs_input_grad[1] else None
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
    _check_float(op, "input", input)
    _check_float(op, "label", label)
    return input, label


def mse_loss(input, label, reduction="mean", name=None):
    _check_reduction("mse_loss", reduction)
    return _reduce(mse_op(*_float_pair("mse_loss", input, label)), reduction)


def l1_loss(input, label, reduction="mean", name=None):
    _check_reduction("l1_loss", reduction)
    return _reduce(l1_op(*_float_pair("l1_loss", input, label)), reduction)


def smooth_l1_loss(input, label, reduction="mean", delta=1.0, is_huber=True, name=None):
    """Huber loss with threshold ``delta`` (``is_huber=False``: the smooth-L1 form divided by delta)."""
    _check_reduction("smooth_l1_loss", reduction)
    if delta <= 0:
        raise ValueError(f"smooth_l1_loss: delta must be positive, got {delta}")
    x, y = _float_pair("smooth_l1_loss", input, label)
    return _reduce(smooth_l1_op(x, y, delta=float(delta), is_huber=bool(is_huber)), reduction)


def _weighted(out: Tensor, weight) -> Tensor:
    return out if weight is None else out * to_tensor_like(weight, out)


def binary_cross_entropy(input, label, weight=None, reduction="mean", name=None):
    """``-w (y log x + (1-y) log(1-x))`` with each log clamped at -100, as Paddle's kernel does."""
    _check_reduction("binary_cross_entropy", reduction)
    x, y = _float_pair("binary_cross_entropy", input, label)
    return _reduce(_weighted(bce_op(x, y), weight), reduction)


def binary_cross_entropy_with_logits(logit, label, weight=None, reduction="mean", pos_weight=None, name=None):
    """Sigmoid and binary cross-entropy in one stable formula; ``pos_weight`` scales the positive term."""
    _check_reduction("binary_cross_entropy_with_logits", reduction)
    x, y = _float_pair("binary_cross_entropy_with_logits", logit, label)
    pw = None if pos_weight is None else to_tensor_like(pos_weight, x).detach()
    return _reduce(_weighted(bce_logits_op(x, y, pw), weight), reduction)


def kl_div(input, label, reduction="mean", log_target=False, name=None):
    """``label (log label - input)`` (0 where label <= 0); 'batchmean' divides the sum by the batch size."""
    _check_reduction("kl_div", reduction, (*_REDUCTIONS, "batchmean"))
    x, y = _float_pair("kl_div", input, label)
    out = kl_op(x, y, log_target=bool(log_target))
    if reduction == "batchmean":
        return sum(out) / float(x.shape[0]) if x.ndim > 0 else out
    return _reduce(out, reduction)


# ----- CTC -----------------------------------------------------------------------------------


def _check_ctc_values(op, steps, labels, input_lengths, label_lengths, blank, classes) -> None:
    """The lengths and labels are data: checked each time the op runs (eager or a traced program)."""
    if input_lengths.size and (input_lengths.min() < 0 or input_lengths.max() > steps):
        raise ValueError(f"{op}: input_lengths must lie in [0, {steps}], got {input_lengths.tolist()}")
    if label_lengths.size and (label_lengths.min() < 0 or label_lengths.max() > labels.shape[1]):
        raise ValueError(f"{op}: label_lengths must lie in [0, {labels.shape[1]}], got {label_lengths.tolist()}")
    values = labels[np.arange(labels.shape[1])[None, :] < label_lengths[:, None]]
    if values.size and (values.min() < 0 or values.max() >= classes or (values == blank).any()):
        raise ValueError(f"{op}: labels must be class ids in [0, {classes}) other than blank={blank}")


def _ctc_run(logits, labels, input_lengths, label_lengths, blank, norm_by_times, want_grad: bool):
    """warp-ctc's forward-backward: each sequence's loss and, if wanted, the logits' gradient."""
    _check_ctc_values("ctc_loss", logits.shape[0], labels, input_lengths, label_lengths, blank, logits.shape[2])
    data = np.ascontiguousarray(logits, dtype=np.float64)
    steps = input_lengths.astype(np.int64)
    scale = 1.0 / np.maximum(steps, 1) if norm_by_times else np.ones(steps.shape[0])
    loss = np.empty(data.shape[1])
    grad = np.zeros(data.shape if want_grad else (0, 0, 0))
    ctc_kernels.ctc(
        data, labels.astype(np.int64), steps, label_lengths.astype(np.int64), blank, want_grad, scale, loss, grad
    )
    return loss.astype(logits.dtype), grad.astype(logits.dtype, copy=False)


def _ctc_forward(ctx, logits, labels, input_lengths, label_lengths, *, blank, norm_by_times):
    return _ctc_run(logits, labels, input_lengths, label_lengths, blank, norm_by_times, False)[0]


def _ctc_grad_forward(ctx, logits, labels, input_lengths, label_lengths, *, blank, norm_by_times):
    return _ctc_run(logits, labels, input_lengths, label_lengths, blank, norm_by_times, True)[1]


def _ctc_vjp(ctx, g):
    """warp-ctc's gradient (``warpctc_grad``, recomputed from the inputs) scaled by ``g``; it has no
    derivative of its own."""
    if is_grad_enabled():
        raise RuntimeError(
            "paddle.grad(create_graph=True): ctc_loss's gradient comes from warp-ctc's forward-backward "
            "kernel and cannot be differentiated again; differentiate it once"
        )
    grad = ctc_grad_op(*(ctx.input(i) for i in range(4)), **ctx.attrs)
    return grad * reshape(g, [1, -1, 1]), None, None, None


def _ctc_infer(logits: Spec, labels: Spec, input_lengths: Spec, label_lengths: Spec, **attrs) -> Spec:
    return Spec((logits.shape[1],), logits.dtype)


def _ctc_samples(rng):
    # norm_by_times scales only the gradient (as in Paddle), which finite differences cannot see: not sampled.
    labels, lengths = np.array([[1, 2], [3, 0]]), (np.array([5, 4]), np.array([2, 1]))
    return [Sample((rng.standard_normal((5, 2, 4)), labels, *lengths), {"blank": 0, "norm_by_times": False})]


ctc_grad_op = OpDef(
    "warpctc_grad", _ctc_grad_forward, None, lambda logits, *rest, **attrs: logits, OPAQUE, samples=_ctc_samples
)
ctc_op = OpDef(
    "warpctc",
    _ctc_forward,
    _ctc_vjp,
    _ctc_infer,
    OPAQUE,
    samples=_ctc_samples,
    exempt={"vjp2": "warp-ctc's gradient kernel (warpctc_grad) has no derivative of its own"},
)


def _check_ctc(log_probs, labels, input_lengths, label_lengths, blank) -> None:
    op = "ctc_loss"
    _check_float(op, "log_probs", log_probs)
    for what, t in (("labels", labels), ("input_lengths", input_lengths), ("label_lengths", label_lengths)):
        _check_int(op, what, t, "cast it with .astype('int64')")
    if log_probs.ndim != 3:
        raise ShapeError(
            f"{op}: log_probs must be [max_logit_length, batch_size, num_classes + 1], got {log_probs.shape}"
        )
    _, batch, classes = log_probs.shape
    if labels.ndim != 2 or labels.shape[0] != batch:
        raise ShapeError(f"{op}: labels must be [batch_size={batch}, max_label_length], got {labels.shape}")
    for what, t in (("input_lengths", input_lengths), ("label_lengths", label_lengths)):
        if t.shape != [batch]:
            raise ShapeError(f"{op}: {what} must have shape [{batch}], got {t.shape}")
    if not 0 <= blank < classes:
        raise ValueError(f"{op}: blank must be in [0, {classes}), got {blank}")


def ctc_loss(
    log_probs,
    labels,
    input_lengths,
    label_lengths,
    blank=0,
    reduction="mean",
    norm_by_times=False,
    zero_infinity=False,
):
    """Paddle's CTC: ``log_probs`` are logits [T, B, C] (softmax is applied inside, as warp-ctc does);
    'mean' averages each loss divided by its label length; ``norm_by_times`` scales only the gradient."""
    _check_reduction("ctc_loss", reduction)
    _check_ctc(log_probs, labels, input_lengths, label_lengths, blank)
    loss = ctc_op(log_probs, labels, input_lengths, label_lengths, blank=int(blank), norm_by_times=bool(norm_by_times))
    if zero_infinity:
        loss = where(isinf(loss), constant(0, loss.dtype), loss)
    if reduction == "mean":
        return mean(loss / label_lengths.astype(loss.dtype))
    return _reduce(loss, reduction)


FUNCTIONAL = [
    "cross_entropy", "softmax_with_cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "ctc_loss",
]  # fmt: skip
