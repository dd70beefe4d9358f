"""``sum_to``: a gradient summed back down to the shape of the input that was broadcast.

The transpose of ``expand``; every broadcasting op's vjp ends in it, so it is an op of its own
(differentiable, traceable) rather than a NumPy helper. Given the input itself rather than its
shape, it reads the target shape from that input as it runs (``sum_like``, whose transpose is
``broadcast_like``), so a traced backward stays as shape-generic as its forward: ``x[N, 1] * y[N, 4]``
sums ``x``'s gradient to ``[N, 1]``, not to the ``[3, 1]`` the trace happened to see."""

from __future__ import annotations

import numpy as np

from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..core.tensor import Tensor
from ._util import unbroadcast


def _sum_to_infer(x: Spec, shape) -> Spec:
    return Spec(tuple(shape), x.dtype)


def _sum_to_samples(rng):
    return [
        Sample((rng.standard_normal((2, 3, 4)),), {"shape": (3, 1)}),
        Sample((rng.standard_normal((3, 4)),), {"shape": (4,)}),
    ]


sum_to_op = OpDef(
    "sum_to",
    lambda ctx, x, shape: unbroadcast(x, tuple(shape)),
    lambda ctx, g: broadcast_like_op(g, ctx.input(0)),
    _sum_to_infer,
    OPAQUE,
    samples=_sum_to_samples,
)


def _like_samples(big_first: bool):
    def samples(rng):
        pairs = [((2, 3, 4), (3, 1)), ((3, 4), (4,))]
        return [
            Sample(
                (rng.standard_normal(a), rng.standard_normal(b))
                if big_first
                else (rng.standard_normal(b), rng.standard_normal(a))
            )
            for a, b in pairs
        ]

    return samples


sum_like_op = OpDef(
    "sum_like",
    lambda ctx, x, like: unbroadcast(x, like.shape),
    lambda ctx, g: (broadcast_like_op(g, ctx.input(0)), None),
    lambda x, like: Spec(tuple(like.shape), x.dtype),
    OPAQUE,
    samples=_like_samples(big_first=True),
)
"""``x`` summed down to the shape of ``like`` (read for its shape only)."""

broadcast_like_op = OpDef(
    "broadcast_like",
    lambda ctx, x, like: np.array(np.broadcast_to(x, like.shape)),
    lambda ctx, g: (sum_to(g, ctx.input(0)), None),
    lambda x, like: Spec(tuple(like.shape), x.dtype),
    OPAQUE,
    samples=_like_samples(big_first=False),
)
"""``x`` broadcast to the shape of ``like`` (read for its shape only)."""


def sum_to(grad: Tensor, target) -> Tensor:
    """``grad`` summed over the dims broadcasting added or stretched, to the shape of ``target``: the
    input itself where the vjp has it (the traced backward then follows its size), or a fixed shape."""
    like = target if isinstance(target, Tensor) else None
    shape = tuple(target.shape) if like is not None else tuple(target)
    if tuple(grad.shape) == shape:
        return grad
    return sum_like_op(grad, like) if like is not None else sum_to_op(grad, shape=shape)
