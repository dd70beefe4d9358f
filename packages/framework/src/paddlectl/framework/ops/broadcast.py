"""``sum_to``: a gradient summed back down to the shape of the input that was broadcast.

The transpose of ``expand``; every broadcasting op's vjp ends in it, so it is an op of its own
(differentiable, traceable) rather than a NumPy helper."""

from __future__ import annotations

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
    lambda ctx, g: g.expand(list(ctx.input(0).shape)),
    _sum_to_infer,
    OPAQUE,
    samples=_sum_to_samples,
)


def sum_to(grad: Tensor, shape) -> Tensor:
    """``grad`` summed over the dims broadcasting added or stretched, so it has ``shape``."""
    shape = tuple(shape)
    return grad if tuple(grad.shape) == shape else sum_to_op(grad, shape=shape)
