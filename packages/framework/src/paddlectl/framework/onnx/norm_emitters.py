"""Export rules of the reductions and normalisations ONNX composes: ``var`` (a centred mean of
squares over the op's own denominator), ``logsumexp``, ``p_norm`` by order, and ``group_norm`` (ONNX's
InstanceNormalization over the channels reshaped into groups; opset 18's GroupNormalization changed
meaning at 21, so it is not written)."""

from __future__ import annotations

import numpy as np

from .emitters import emits


def _axes(axis) -> list[int] | None:
    return None if axis is None else [int(a) for a in (axis if isinstance(axis, list | tuple) else [axis])]


@emits("var")
def _var(e, op, ins, out, axis=None, keepdim=False, unbiased=True):
    """The count comes from the shapes at run time (``Size(x) / Size(mean)``), so symbolic dims export."""
    x, dtype = ins[0], op.inputs[0].dtype
    axes = _axes(axis)
    (mean,) = e.reduce("ReduceMean", x, axes, keepdims=True)
    (centred,) = e.node("Sub", [x, mean])
    (total,) = e.reduce("ReduceSum", e.node("Mul", [centred, centred])[0], axes, keepdims=keepdim)
    (count,) = e.node("Div", [e.node("Size", [x])[0], e.node("Size", [mean])[0]])
    if unbiased:
        (count,) = e.node("Sub", [count, e.const(np.array(1, np.int64), "one")])
    (count,) = e.node("Max", [count, e.const(np.array(1, np.int64), "one")])
    e.node("Div", [total, e.node("Cast", [count], to=e.dtype_code(dtype))[0]], out)


@emits("logsumexp")
def _logsumexp(e, op, ins, out, axis=None, keepdim=False):
    e.reduce("ReduceLogSumExp", ins[0], _axes(axis), out, keepdim)


@emits("p_norm")
def _p_norm(e, op, ins, out, p=2.0, axis=None, keepdim=False):
    x, axes, dtype = ins[0], _axes(axis), op.inputs[0].dtype
    if p in (1.0, 2.0):
        e.reduce("ReduceL1" if p == 1.0 else "ReduceL2", x, axes, out, keepdim)
        return
    (magnitude,) = e.node("Abs", [x])
    if np.isinf(p):
        e.reduce("ReduceMax" if p > 0 else "ReduceMin", magnitude, axes, out, keepdim)
        return
    if p == 0:  # how many entries are nonzero
        (nonzero,) = e.node("Not", e.node("Equal", [x, e.const(np.array(0, dtype), "zero")]))
        e.reduce("ReduceSum", e.node("Cast", [nonzero], to=e.dtype_code(dtype))[0], axes, out, keepdim)
        return
    (powered,) = e.node("Pow", [magnitude, e.const(np.array(p, dtype), "p")])
    (total,) = e.reduce("ReduceSum", powered, axes, keepdims=keepdim)
    e.node("Pow", [total, e.const(np.array(1.0 / p, dtype), "inverse_p")], out)


@emits("group_norm")
def _group_norm(e, op, ins, out, num_groups=1, epsilon=1e-5, channels_last=False):
    """One group per channel is ONNX's InstanceNormalization itself; otherwise the channels are
    reshaped into ``num_groups`` "channels" of InstanceNormalization and the per-channel affine is
    applied after."""
    x, weight, bias = ins
    rank, dtype = len(op.inputs[0].shape), op.inputs[0].dtype
    if channels_last:
        (x,) = e.node("Transpose", [x], perm=[0, rank - 1, *range(1, rank - 1)])
    channels = op.inputs[0].shape[-1 if channels_last else 1]
    if channels == num_groups and weight and bias:
        (y,) = e.node("InstanceNormalization", [x, weight, bias], epsilon=float(epsilon))
    else:
        (grouped,) = e.node("Reshape", [x, e.const(np.array([0, num_groups, -1], np.int64), "shape")])
        ones, zeros = (e.const(np.full(num_groups, v, dtype), n) for v, n in ((1, "ones"), (0, "zeros")))
        (normed,) = e.node("InstanceNormalization", [grouped, ones, zeros], epsilon=float(epsilon))
        (y,) = e.node("Reshape", [normed, e.node("Shape", [x])[0]])
        per_channel = e.const(np.array([-1] + [1] * (rank - 2), np.int64), "per_channel")
        for param, onnx_op in ((weight, "Mul"), (bias, "Add")):
            if param:
                (y,) = e.node(onnx_op, [y, e.node("Reshape", [param, per_channel])[0]])
    if channels_last:
        e.node("Transpose", [y], out, perm=[0, *range(2, rank), 1])
    else:
        e.node("Identity", [y], out)
