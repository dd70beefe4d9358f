"""A traced program run as one op, so the outputs of a ``to_static`` function take part in autograd.

Paddle trains through ``@paddle.jit.to_static`` (its ``run_program`` op does this): the forward
runs the traced program on the executor, and the backward runs a second program, traced once per
input shapes, that calls the function again and then ``paddle.grad`` of its outputs, returning the
gradients of the inputs and of the layer's trainable parameters. That program recomputes the
forward instead of keeping its intermediates; dropout draws the same masks in both because the
backward replays the generator state the forward started from. The ``fn`` attr is the
``StaticFunction``; ``jit/to_static.py`` gives ``program_op`` its sweep samples, which need one.
"""

from __future__ import annotations

import numpy as np

from ..core.autograd import enable_grad, grad
from ..core.op import OPAQUE, OpDef
from ..ops.creation import zeros_like
from ..ops.random import get_rng_state, set_rng_state
from ..static.input_spec import InputSpec, signatures
from ..static.trace import trace


def _float(array) -> bool:
    return np.asarray(array).dtype.kind in "fc"


def _forward(ctx, *arrays, fn, n_args):
    ctx.save(get_rng_state())
    outs = fn.run_arrays(list(arrays[:n_args]))
    return tuple(outs) if len(outs) > 1 else outs[0]


def _infer(*specs, fn, n_args):
    return fn.output_specs(specs[:n_args])


def _vjp(ctx, *grads):
    n_inputs = len(ctx.needs_input_grad)
    inputs = [ctx.input(i) for i in range(n_inputs)]
    cotangents = [g for g, out in zip(grads, ctx.outputs, strict=True) if _float(out)]
    needs = ctx.needs_input_grad
    results = program_grad_op(
        *inputs, *cotangents, fn=ctx.attrs["fn"], n_args=ctx.attrs["n_args"], needs=needs, rng_state=ctx.saved[0]
    )
    results = list(results) if isinstance(results, tuple) else [results]
    return tuple(results.pop(0) if need else None for need in needs)


def backward_function(fn, n_args: int, n_params: int, needs: tuple):
    """The function the backward program traces: ``fn`` on the inputs, then the gradients of its float
    outputs (given cotangents) for every input that needs one; zeros where an input is unused."""
    params = fn.trainable_parameters()[:n_params]

    def backward(*tensors):
        args, cotangents = list(tensors[:n_args]), tensors[n_args:]
        for i, a in enumerate(args):
            a.stop_gradient = not needs[i]
        outs = fn.call_python(*args)
        outs = [o for o in (outs if isinstance(outs, tuple | list) else [outs]) if _float(o._data)]
        wanted = [t for t, need in zip([*args, *params], needs, strict=True) if need]
        grads = grad(outs, wanted, grad_outputs=list(cotangents), allow_unused=True)
        return [zeros_like(t) if g is None else g for g, t in zip(grads, wanted, strict=True)]

    return backward


def _grad_forward(ctx, *arrays, fn, n_args, needs, rng_state):
    inputs, cotangents = arrays[: len(needs)], arrays[len(needs) :]
    feeds = [*inputs[:n_args], *cotangents]
    key = (tuple((a.shape, a.dtype.str) for a in feeds), needs)
    current = get_rng_state()
    program = fn.backward_programs.get(key)
    if program is None:
        traced = backward_function(fn, n_args, len(needs) - n_args, needs)
        specs = signatures([InputSpec(list(a.shape), a.dtype.name) for a in feeds])
        with enable_grad():  # a vjp runs with the tape off; tracing paddle.grad needs it on
            program = fn.backward_programs[key] = trace(traced, specs, layer=fn.layer)[0]
    set_rng_state(rng_state)
    try:
        outs = fn.run_program(program, feeds)
    finally:
        set_rng_state(current)
    return tuple(outs) if len(outs) > 1 else outs[0]


def _grad_infer(*specs, fn, n_args, needs, rng_state):
    wanted = [s for s, need in zip(specs[: len(needs)], needs, strict=True) if need]
    return tuple(wanted) if len(wanted) > 1 else wanted[0]


_TRACE_EXEMPT = (
    "a to_static function called while another function is traced is inlined (its Python runs under the "
    "outer tracer), so no program ever holds this op"
)

program_op = OpDef(
    "run_program",
    _forward,
    _vjp,
    _infer,
    OPAQUE,
    deterministic=False,
    exempt={
        "vjp2": "the backward is a traced program run as one op; differentiate the Python function eagerly "
        "(without to_static) for higher-order gradients",
    },
)
program_grad_op = OpDef(
    "run_program_grad",
    _grad_forward,
    None,
    _grad_infer,
    OPAQUE,
    deterministic=False,
    exempt={
        "infer": "run only as run_program's backward, checked there",
        "trace": _TRACE_EXEMPT,
    },
)
