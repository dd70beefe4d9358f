"""The one place an op call goes through: tracing hook, gradient recording, output wrapping."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .autograd import Context, Node
from .state import STATE
from .tensor import Tensor

if TYPE_CHECKING:  # op.py imports this module for OpDef.__call__
    from .op import OpDef


def apply(op: OpDef, inputs: tuple, attrs: dict):
    """Run ``op`` on Tensors (None allowed for optional inputs) and record it on the tape if needed."""
    if STATE.tracer is not None:
        return STATE.tracer.record(op, inputs, attrs)
    if not STATE.grad_enabled:  # inference, and backward without create_graph: nothing to record
        out = op.forward(
            Context((False,) * len(inputs), attrs), *[None if t is None else t._data for t in inputs], **attrs
        )
        return tuple(map(Tensor._wrap, out)) if isinstance(out, tuple) else Tensor._wrap(out)
    arrays = []
    needs = []
    any_need = False
    for t in inputs:
        if t is None:
            arrays.append(None)
            needs.append(False)
            continue
        arrays.append(t._data)
        need = not t.stop_gradient
        needs.append(need)
        any_need = any_need or need
    ctx = Context(tuple(needs), attrs)
    out = op.forward(ctx, *arrays, **attrs)
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
            if r._data.dtype.kind in "fc":
                r.stop_gradient = False
                r._node = node
                r._out_index = i
    elif results._data.dtype.kind in "fc":
        results.stop_gradient = False
        results._node = node
    return results
