"""Softmax cross-entropy and negative log-likelihood under Paddle's names, signatures and defaults.

Softmax cross-entropy is one fused op (log-sum-exp, pick, weight, reduce; backward
``softmax - target``) because it sits in every classification step."""

from __future__ import annotations

import numpy as np

from ..core import symbolic
from ..core.autograd import is_grad_enabled
from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..core.shapes import normalize_axis
from ..core.tensor import Tensor
from ..errors import ShapeError
from ..kernels import loss as ce_kernels
from . import elementwise as ew
from .activation import log_softmax, softmax
from .loss_checks import check_float, check_int, check_labels, check_reduction
from .reduce import sum
from .shape import reshape, transpose, unsqueeze


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
        check_labels("cross_entropy", lab, classes, None if smoothing else ignore_index)
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
        check_float(op, "a soft label", label)
        return label, False
    check_int(op, "a hard label", label, "cast it with .astype('int64'), or pass soft_label=True for probabilities")
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
    check_reduction(op, reduction)
    check_float(op, "input", input)
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
    check_float(op, "logits", logits)
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
    check_labels("nll_loss", label, x.shape[1], ignore_index)
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
    check_reduction(op, reduction)
    check_float(op, "input", input)
    check_int(op, "label", label, "cast it with .astype('int64')")
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


FUNCTIONAL = ["cross_entropy", "softmax_with_cross_entropy", "nll_loss"]
