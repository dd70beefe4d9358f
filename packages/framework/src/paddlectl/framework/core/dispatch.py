"""The one place an op call goes through: tracing hook, gradient recording, output wrapping."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .autograd import Context, Node
from .dtype import LOW_PRECISION, bfloat16, forward_in_float32, has_low_precision
from .state import STATE
from .tensor import Tensor

if TYPE_CHECKING:  # op.py imports this module for OpDef.__call__
    from .op import OpDef

POLICY = None
"""What ``paddle.amp`` puts around every op call while it is on (amp/policy.py sets it): ``POLICY(op,
inputs, attrs)`` casts the inputs as auto_cast's lists say (cast ops, which a tracer records too)
and checks the outputs for NaN/Inf when the tensor checker is on, running the op through ``run``
or the active tracer."""


def apply(op: OpDef, inputs: tuple, attrs: dict):
    """Run ``op`` on Tensors (None allowed for optional inputs) and record it on the tape if needed."""
    if POLICY is not None:
        return POLICY(op, inputs, attrs)
    if STATE.tracer is not None:
        return STATE.tracer.record(op, inputs, attrs)
    return run(op, inputs, attrs)


def run(op: OpDef, inputs: tuple, attrs: dict):
    """The op call itself: its kernel (in float32 for 16-bit inputs), its outputs and its tape node."""
    if not STATE.grad_enabled:  # inference, and backward without create_graph: nothing to record
        ctx = Context((False,) * len(inputs), attrs)
        arrays = [None if t is None else t._data for t in inputs]
        if has_low_precision(arrays):
            out = forward_in_float32(op.forward, ctx, arrays, attrs)
        else:
            out = op.forward(ctx, *arrays, **attrs)
        return tuple(map(Tensor._wrap, out)) if isinstance(out, tuple) else Tensor._wrap(out)
    arrays = []
    needs = []
    any_need = False
    low = False
    for t in inputs:
        if t is None:
            arrays.append(None)
            needs.append(False)
            continue
        arrays.append(t._data)
        low = low or t._data.dtype in LOW_PRECISION
        need = not t.stop_gradient
        needs.append(need)
        any_need = any_need or need
    ctx = Context(tuple(needs), attrs)
    out = forward_in_float32(op.forward, ctx, arrays, attrs) if low else op.forward(ctx, *arrays, **attrs)
    if isinstance(out, tuple):
        results = tuple(Tensor._wrap(o) for o in out)
    else:
        results = Tensor._wrap(out)
    if not any_need or op.vjp is None:
        return results
    node = Node(op, ctx, tuple(t if need else None for t, need in zip(inputs, needs, strict=True)), 1)
    outs = results if isinstance(results, tuple) else (results,)
    # the wrapped arrays (a 0-d result may come back from NumPy as a scalar), so ctx.output(i) finds its Tensor
    ctx.link(node, tuple(arrays), tuple(r._data for r in outs), outs)
    if isinstance(results, tuple):
        node.n_outputs = len(results)
        for i, r in enumerate(results):
            if r._data.dtype.kind in "fc" or r._data.dtype == bfloat16:
                r.stop_gradient = False
                r._node = node
                r._out_index = i
    elif results._data.dtype.kind in "fc" or results._data.dtype == bfloat16:
        results.stop_gradient = False
        results._node = node
    return results
