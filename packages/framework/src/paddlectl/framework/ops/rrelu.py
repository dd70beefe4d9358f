"""Randomized leaky ReLU: each negative element scaled by its own slope drawn uniformly from
[lower, upper] in training (Paddle's CPU kernel draws one float per negative element, in order, from
the engine ``paddle.seed`` resets), by the fixed mean slope at inference."""

from __future__ import annotations

import numpy as np

from ..core.op import OPAQUE, OpDef, Sample, Spec
from . import elementwise as ew
from .activation import require_float
from .random import uniform


def _rrelu_forward(ctx, x, lower, upper):
    """(x * noise, noise): the slopes are an output, as Paddle's Noise is, so backward reads the very
    slopes a traced program drew."""
    require_float("rrelu", x)
    negative = x < 0
    noise = np.ones_like(x)
    noise[negative] = uniform((int(negative.sum()),), lower, upper).astype(x.dtype)
    return x * noise, noise


def _rrelu_vjp(ctx, g, g_noise):
    """The slopes are piecewise constant in x: their own gradient contributes nothing."""
    return g * ctx.output(1)


def _rrelu_samples(rng):
    """lower == upper: every draw is the same slope, so finite differences and traced draws agree."""
    return [Sample((rng.standard_normal((3, 4)),), {"lower": 0.2, "upper": 0.2})]


rrelu_op = OpDef(
    "rrelu",
    _rrelu_forward,
    _rrelu_vjp,
    lambda x, lower, upper: (x, Spec(x.shape, x.dtype)),
    OPAQUE,
    samples=_rrelu_samples,
    deterministic=False,
)


def rrelu(x, lower=1.0 / 8.0, upper=1.0 / 3.0, training=True, name=None):
    for what, value in (("lower", lower), ("upper", upper)):
        if not isinstance(value, float) or not 0 <= value <= 1:
            raise ValueError(f"rrelu: {what} must be a float in [0, 1], got {value!r}")
    if upper < lower:
        raise ValueError(f"rrelu: upper ({upper}) must be >= lower ({lower})")
    if not training:
        require_float("rrelu", x)
        return ew.where(x < 0, ew.scale(x, (lower + upper) / 2.0), x)
    return rrelu_op(x, lower=float(lower), upper=float(upper))[0]


FUNCTIONAL = ["rrelu"]
