"""``paddle.nn.functional.gumbel_softmax``: softmax of ``(x + g) / temperature`` with Gumbel noise
``g = -log(-log(u))``, ``u`` uniform in [1e-5, 1) drawn over the whole tensor in memory order from the
engine ``paddle.seed`` resets (as Paddle's CPU kernel draws, in the input's precision); ``hard`` gives
the one-hot of each row's first maximum.

One record, not a composition, because Paddle's gradient is ``softmax_grad(out, dout)``: no
``1 / temperature`` factor, and zero when ``hard`` (the output is then one-hot), where composed ops
would differentiate the soft sample."""

from __future__ import annotations

import numpy as np

from ..core.op import OPAQUE, OpDef, Sample
from ..core.shapes import normalize_axis, same_as_first
from ..kernels import activation as K
from .activation import _row_kernel, require_float, softmax_grad_op
from .random import uniform


def _gumbel_softmax_forward(ctx, x, temperature, hard, axis):
    require_float("gumbel_softmax", x)
    work = x.dtype if x.dtype in (np.float32, np.float64) else np.dtype(np.float32)
    u = uniform(x.shape, 1e-5, 1.0, work)
    noisy = (x.astype(work) - np.log(-np.log(u))) / work.type(np.float32(temperature))  # a float attribute in Paddle
    soft = _row_kernel("gumbel_softmax", K.softmax_fwd, noisy, axis=axis)
    if not hard:
        return soft.astype(x.dtype)
    ax = normalize_axis("gumbel_softmax", axis, x.ndim)
    out = np.zeros(x.shape, x.dtype)
    np.put_along_axis(out, np.expand_dims(np.argmax(soft, axis=ax), ax), 1, ax)
    return out


def _gumbel_softmax_vjp(ctx, g):
    return softmax_grad_op(ctx.output(0), g, axis=ctx.attrs["axis"])


def _samples(rng):
    """hard, with one logit per row ahead by more than any noise (which lies in [-2.5, 37)): every
    draw gives the same one-hot output, so finite differences and traced draws agree with eager."""
    x = rng.standard_normal((3, 4)) + 100.0 * (np.arange(4) == 1)
    return [Sample((x,), {"temperature": 1.0, "hard": True, "axis": -1})]


gumbel_softmax_op = OpDef(
    "gumbel_softmax",
    _gumbel_softmax_forward,
    _gumbel_softmax_vjp,
    lambda x, temperature, hard, axis: same_as_first(x),
    OPAQUE,
    samples=_samples,
    deterministic=False,
)


def gumbel_softmax(x, temperature=1.0, hard=False, axis=-1, name=None):
    if not temperature > 0:
        raise ValueError(f"gumbel_softmax: temperature must be > 0, got {temperature}")
    return gumbel_softmax_op(x, temperature=float(temperature), hard=bool(hard), axis=int(axis))


FUNCTIONAL = ["gumbel_softmax"]
