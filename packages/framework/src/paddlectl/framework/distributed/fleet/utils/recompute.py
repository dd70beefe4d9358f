"""``paddle.distributed.fleet.utils.recompute``: activation checkpointing on the tape.

``recompute(fn, *args)`` runs ``fn`` without recording it, so none of its intermediate
activations stay alive until backward; the tape holds one ``py_layer`` node with ``fn``'s inputs.
Its backward runs ``fn`` again with recording on (the random state and the auto_cast block
restored as they were, so dropout draws the same mask) and back-propagates through that: the
gradients equal a plain run's, for one extra forward of ``fn``. Parameters ``fn`` reads get their
gradients from that inner backward; a ``Layer``'s own are also inputs of the node, so the block is
recomputed even when no input needs a gradient (a model's first block, fed data).
"""

from __future__ import annotations

import warnings

from ....amp.policy import AMP
from ....autograd.backward_mode import backward
from ....autograd.py_layer import PyLayer
from ....core.autograd import enable_grad, grad
from ....core.tensor import Tensor
from ....errors import ConfigError
from ....nn.layer.base import Layer
from ....ops.creation import zeros_like
from ....ops.random import get_rng_state, set_rng_state

__all__ = ["recompute"]


def recompute(function, *args, preserve_rng_state=True, use_reentrant=True, **kwargs):
    """``function(*args, **kwargs)`` whose activations are recomputed in backward instead of kept.

    ``use_reentrant`` is accepted for Paddle's signature: both of Paddle's modes compute the same
    gradients, and this one implementation serves both."""
    if not callable(function):
        raise ConfigError(
            f"recompute: function must be callable (a Layer or a function), got {type(function).__name__}"
        )
    if not isinstance(use_reentrant, bool) or not isinstance(preserve_rng_state, bool):
        raise ConfigError("recompute: preserve_rng_state and use_reentrant must be True or False")
    params = [p for p in function.parameters() if not p.stop_gradient] if isinstance(function, Layer) else []
    if not params and not any(isinstance(a, Tensor) and not a.stop_gradient for a in (*args, *kwargs.values())):
        warnings.warn(
            "recompute: no input of this block needs a gradient, so it is not recomputed in backward", stacklevel=2
        )
    n_args = len(args)
    return _Recompute.apply(function, bool(preserve_rng_state), n_args, kwargs, *args, *params)


class _Recompute(PyLayer):
    @staticmethod
    def forward(ctx, function, preserve_rng_state, n_args, kwargs, *inputs):
        ctx.function, ctx.kwargs, ctx.n_args = function, kwargs, n_args
        ctx.rng = get_rng_state() if preserve_rng_state else None
        ctx.amp = AMP.frames[-1] if AMP.frames else None
        ctx.save_for_backward(*inputs)
        return function(*inputs[:n_args], **kwargs)

    @staticmethod
    def backward(ctx, *grads):
        inputs = ctx.saved_tensor()
        args = [_leaf(a) for a in inputs[: ctx.n_args]]
        current = get_rng_state()
        if ctx.rng is not None:
            set_rng_state(ctx.rng)
        AMP.frames.append(ctx.amp)
        AMP.refresh()
        try:
            with enable_grad():
                out = ctx.function(*args, **ctx.kwargs)
        finally:
            AMP.frames.pop()
            AMP.refresh()
            set_rng_state(current)
        outs = out if isinstance(out, tuple | list) else (out,)
        pairs = [(o, g) for o, g in zip(outs, grads, strict=True) if isinstance(o, Tensor) and not o.stop_gradient]
        wanted = [a for a in args if isinstance(a, Tensor) and not a.stop_gradient] + list(inputs[ctx.n_args :])
        if not pairs:
            found = [None] * len(wanted)
        elif ctx.n_args < len(inputs):  # a Layer: its parameters' gradients are returned, like the inputs'
            found = grad([o for o, _ in pairs], wanted, [g for _, g in pairs], allow_unused=True)
        else:  # a function: the parameters it closes over accumulate their .grad here
            backward([o for o, _ in pairs], [g for _, g in pairs])
            found = [a.grad for a in wanted]
        found = iter(f if f is not None else zeros_like(w) for f, w in zip(found, wanted, strict=True))
        arg_grads = tuple(next(found) if isinstance(a, Tensor) and not a.stop_gradient else None for a in args)
        return arg_grads + tuple(found)


def _leaf(value):
    """A forward input as a fresh leaf of the recomputation, needing a gradient where it did."""
    if not isinstance(value, Tensor):
        return value
    leaf = value.detach()
    leaf.stop_gradient = value.stop_gradient
    return leaf
