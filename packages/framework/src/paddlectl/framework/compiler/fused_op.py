"""The ``fused_elementwise`` op: one generated kernel for a whole group of elementwise ops.

Attrs (all printed in the IR text and parsed back): ``body`` (the group's SSA statements over
inputs ``x0..xk``, see ``codegen``), ``ops`` (the fused ops' names, for people and reports),
``dtype`` (the result's), ``reduce``/``axis``/``keepdim`` for a trailing reduction over the
last axes, and ``inplace``: the index of an input the result may overwrite (a matmul/conv output
read by nothing else; the group is then that op's epilogue and needs no buffer of its own).

A group runs through ``kernels.launch`` (the layout and the kernel worked out once per input
shapes and dtypes); the executor makes its ``Launch`` before a feed shape's first run
(``core.lowering``), so a run only calls the kernel. The op has no vjp: fusion rewrites programs
after they are traced (backward included), so nothing differentiates a fused group.
"""

from __future__ import annotations

import functools

import numpy as np

from ..core import items as item_rules
from ..core import symbolic
from ..core.lowering import lowering
from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..core.shapes import broadcast_shapes
from ..kernels.background import Warming, prepared, with_reference
from ..kernels.codegen import accumulator, check_body
from ..kernels.launch import Launch, check_trailing, launch, reduced
from ..kernels.numpy_body import evaluate


def _reference(ctx, *arrays, body, ops, dtype, reduce=None, axis=None, keepdim=False, inplace=None):
    """The group evaluated by NumPy, while its kernel compiles in the background (``kernels.background``)."""
    return evaluate(body, arrays, dtype, reduce, _hashable(axis), keepdim)


@with_reference(_reference)
def _forward(ctx, *arrays, body, ops, dtype, reduce=None, axis=None, keepdim=False, inplace=None):
    return launch(
        body, tuple(ops), tuple(a.dtype for a in arrays), tuple(a.shape for a in arrays), np.dtype(dtype), reduce,
        _hashable(axis), keepdim, inplace,
    )(*arrays)  # fmt: skip


def _hashable(axis):
    return tuple(axis) if isinstance(axis, list | tuple) else axis


def _infer(*specs, body, ops, dtype, reduce=None, axis=None, keepdim=False, inplace=None):
    if not specs:
        raise ValueError("fused_elementwise takes at least one input")
    check_body(body, len(specs))  # a model file's body is refused at load, before any source is generated
    if reduce is not None and accumulator(reduce) is None:
        raise ValueError(f"fused_elementwise: reduce={reduce!r} is not a reduce op with an accumulator rule")
    shape = broadcast_shapes("fused_elementwise", *(s.shape for s in specs))
    if reduce is not None:
        check_trailing(axis, len(shape))
        shape = reduced(shape, axis, keepdim)
    if inplace is not None and not (isinstance(inplace, int) and 0 <= inplace < len(specs)):
        raise ValueError(f"fused_elementwise: inplace={inplace!r} is not an input index")
    return Spec(tuple(symbolic.simplify(d) if isinstance(d, str) else d for d in shape), np.dtype(dtype))


def _samples(rng):
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4,))
    body = "t0 = x0 * x1; t1 = max(t0, T(0.0))"
    return [
        Sample((a, b), {"body": body, "ops": ["multiply", "relu"], "dtype": np.dtype("float64")}),
        Sample((a,), {"body": "t0 = math.exp(x0)", "ops": ["exp", "sum"], "dtype": np.dtype("float64"),
                      "reduce": "sum", "axis": [1]}),
    ]  # fmt: skip


# No vjp: fusion rewrites programs after tracing (backward included), so nothing differentiates a fused group.
fused_elementwise_op = OpDef(
    "fused_elementwise", _forward, None, _infer, OPAQUE, samples=_samples, fresh_output=True, items=item_rules.fused
)


@lowering("fused_elementwise")
def _lower(attrs, in_types, out_types) -> Launch | Warming:
    """The executor's per-shape form: the Launch itself, made before the first run of a feed shape
    (or, while its kernel compiles in the background, a stand-in running the NumPy reference)."""
    make = functools.partial(
        launch, attrs["body"], tuple(attrs["ops"]), tuple(t[1] for t in in_types), tuple(t[0] for t in in_types),
        np.dtype(attrs["dtype"]), attrs.get("reduce"), _hashable(attrs.get("axis")), attrs.get("keepdim", False),
        attrs.get("inplace"),
    )  # fmt: skip
    return prepared(make, functools.partial(_reference, None, **attrs))
