"""Export rules of the ops that write or select by index: ``put_along_axis`` (ScatterElements with
its reductions; ``mean`` and ``include_self=False`` composed), ``scatter_nd_add`` (ScatterND's
``add``), ``nonzero`` and ``non_max_suppression`` (whose row counts depend on the data: ONNX
gives them as its own dynamic dims) and ``nll_loss`` (NegativeLogLikelihoodLoss)."""

from __future__ import annotations

import numpy as np

from ..errors import ConversionError
from .emitters import emits

_SCATTER = {"assign": "none", "add": "add", "mul": "mul", "multiply": "mul", "amax": "max", "amin": "min"}
_INDEX = ("int64", "int32")
"""The index types ONNX's scatters, gathers and losses take."""
_NEUTRAL = {"add": 0, "mul": 1, "multiply": 1}
"""What ``include_self=False`` clears the written entries to before a sum or product."""


def _full(e, like: str, value, dtype) -> str:
    """A tensor of ``like``'s shape filled with ``value``."""
    return e.node("ConstantOfShape", e.node("Shape", [like]), value=e.tensor(np.array([value], dtype)))[0]


@emits("put_along_axis")
def _put_along_axis(e, op, ins, out, axis, reduce, include_self):
    dtype, axis = op.inputs[0].dtype, int(axis)
    arr, index, values = ins[0], e.as_type(ins[1], op.inputs[1], *_INDEX), e.as_type(ins[2], op.inputs[2], dtype)
    if reduce in ("amax", "amin"):
        e.require(18)  # ScatterElements' max/min reductions
    if reduce == "mean":
        _scatter_mean(e, op, [arr, index, values], out, axis, include_self)
        return
    if not include_self and reduce != "assign":  # the written entries start from the neutral value or a value
        cleared = _full(e, values, _NEUTRAL[reduce], dtype) if reduce in _NEUTRAL else values
        (arr,) = e.node("ScatterElements", [arr, index, cleared], axis=axis)
    e.node("ScatterElements", [arr, index, values], out, axis=axis, reduction=_SCATTER[reduce])


def _scatter_mean(e, op, ins, out, axis: int, include_self: bool):
    """(the entry, where kept, plus the values written to it) / how many there were; unwritten
    entries stay."""
    arr, index, values = ins
    dtype = op.inputs[0].dtype
    zeros = _full(e, arr, 0, dtype)
    (total,) = e.node("ScatterElements", [zeros, index, values], axis=axis, reduction="add")
    (count,) = e.node("ScatterElements", [zeros, index, _full(e, values, 1, dtype)], axis=axis, reduction="add")
    (written,) = e.node("Greater", [count, e.const(np.array(0, dtype), "zero")])
    if include_self:
        (total,) = e.node("Add", [total, arr])
        (count,) = e.node("Add", [count, e.const(np.array(1, dtype), "one")])
    (count,) = e.node("Max", [count, e.const(np.array(1, dtype), "one")])
    e.node("Where", [written, e.node("Div", [total, count])[0], arr], out)


@emits("scatter_nd_add")
def _scatter_nd_add(e, op, ins, out):
    x, index, updates = ins
    dtype = op.inputs[0].dtype
    index, updates = e.as_type(index, op.inputs[1], "int64"), e.as_type(updates, op.inputs[2], dtype)
    e.node("ScatterND", [x, index, updates], out, reduction="add")


@emits("nonzero")
def _nonzero(e, op, ins, out):
    """ONNX's NonZero is [rank, count], ours [count, rank]."""
    e.node("Transpose", e.node("NonZero", ins), out, perm=[1, 0])


@emits("non_max_suppression")
def _nms(e, op, ins, out, max_per_class, iou_threshold, score_threshold, center_point_box):
    boxes, scores = ins
    if op.inputs[0].dtype != np.float32 or op.inputs[1].dtype != np.float32:
        raise ConversionError("non_max_suppression: ONNX's NonMaxSuppression takes float32 boxes and scores only; "
                              "cast them to float32 first")  # fmt: skip
    limits = [e.const(np.array([max_per_class], np.int64), "max_per_class"),
              e.const(np.array([iou_threshold], np.float32), "iou_threshold")]  # fmt: skip
    if score_threshold is not None:
        limits.append(e.const(np.array([score_threshold], np.float32), "score_threshold"))
    e.node("NonMaxSuppression", [boxes, scores, *limits], out, center_point_box=int(center_point_box))


@emits("nll_loss")
def _nll_loss(e, op, ins, out, ignore_index, reduction):
    x, label, weight = ins
    label = e.as_type(label, op.inputs[1], *_INDEX)
    weight = [e.as_type(weight, op.inputs[2], op.inputs[0].dtype)] if weight else []
    e.node("NegativeLogLikelihoodLoss", [x, label, *weight], out, reduction=reduction,
           ignore_index=int(ignore_index))  # fmt: skip
