"""CTC loss: warp-ctc's forward-backward as a Numba kernel, under Paddle's ``ctc_loss``."""

from __future__ import annotations

import numpy as np

from ..core.autograd import is_grad_enabled
from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..errors import ShapeError
from ..kernels import ctc as ctc_kernels
from ._util import constant
from .elementwise import isinf, where
from .loss_checks import check_float, check_int, check_reduction, reduce_loss
from .reduce import mean
from .shape import reshape


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
    check_float(op, "log_probs", log_probs)
    for what, t in (("labels", labels), ("input_lengths", input_lengths), ("label_lengths", label_lengths)):
        check_int(op, what, t, "cast it with .astype('int64')")
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
    check_reduction("ctc_loss", reduction)
    _check_ctc(log_probs, labels, input_lengths, label_lengths, blank)
    loss = ctc_op(log_probs, labels, input_lengths, label_lengths, blank=int(blank), norm_by_times=bool(norm_by_times))
    if zero_infinity:
        loss = where(isinf(loss), constant(0, loss.dtype), loss)
    if reduction == "mean":
        return mean(loss / label_lengths.astype(loss.dtype))
    return reduce_loss(loss, reduction)


FUNCTIONAL = ["ctc_loss"]
