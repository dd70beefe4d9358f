"""Dropout: a random keep-mask drawn from Paddle's engine (so ``paddle.seed`` repeats Paddle's mask),
optionally shared along axes (``axis``, ``dropout2d``), with Paddle's two scaling modes."""

from __future__ import annotations

import numpy as np

from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..core.shapes import normalize_axes
from ..errors import ShapeError
from . import elementwise as ew
from .activation import require_float
from .random import dropped, uniform

MODES = ("upscale_in_train", "downscale_in_infer")


def _mask_shape(shape: tuple, axis) -> tuple:
    axes = normalize_axes("dropout", axis, len(shape))
    return tuple(shape) if axes is None else tuple(d if i in axes else 1 for i, d in enumerate(shape))


def _dropout_forward(ctx, x, p=0.5, axis=None, upscale=True):
    """(x * mask, mask): the mask (kept values' scale, 0 where dropped) is an output, as Paddle's
    Mask is, so backward reads the very mask a traced program drew."""
    require_float("dropout", x)
    factor = x.dtype.type(1.0 / (1.0 - p)) if upscale and p < 1 else x.dtype.type(1)
    shape = _mask_shape(x.shape, axis)
    if shape == x.shape and x.dtype in (np.float32, np.float64):
        return dropped(x, p, factor)
    keep = uniform(shape, 0.0, 1.0) >= np.float32(p)  # Paddle's CPU kernel's draw
    mask = keep.astype(x.dtype) * factor
    return x * mask, mask


def _dropout_vjp(ctx, g, g_mask):
    """The mask is piecewise constant in x: its own gradient contributes nothing."""
    return g * ctx.output(1)


def _dropout_infer(x: Spec, p=0.5, axis=None, upscale=True):
    return x, Spec(_mask_shape(x.shape, axis), x.dtype)


def _dropout_samples(rng):
    """p = 0 and p = 1: masks are drawn, yet every draw is the same, so finite differences and a
    traced program's own draws agree with eager."""
    x = rng.standard_normal((3, 4))
    return [
        Sample((x,), {"p": 0.0, "axis": None, "upscale": True}),
        Sample((x,), {"p": 1.0, "axis": (0,), "upscale": True}),
        Sample((x,), {"p": 0.0, "axis": (1,), "upscale": False}),
    ]


dropout_op = OpDef(
    "dropout", _dropout_forward, _dropout_vjp, _dropout_infer, OPAQUE, samples=_dropout_samples, deterministic=False
)


def dropout(x, p=0.5, axis=None, training=True, inplace=False, mode="upscale_in_train", name=None):
    """Zero each element (or each slice along ``axis``) with probability ``p``.

    ``upscale_in_train`` scales kept values by 1/(1-p) in training and is the identity at
    inference; ``downscale_in_infer`` leaves training values unscaled and multiplies by (1-p)
    at inference."""
    if not isinstance(p, int | float) or not 0 <= p <= 1:
        raise ValueError(f"dropout: p must be a number in [0, 1], got {p!r}")
    if mode not in MODES:
        raise ValueError(f"dropout: mode must be one of {MODES}, got {mode!r}")
    if not training:
        return x if mode == "upscale_in_train" else ew.scale(x, 1.0 - float(p))
    if axis is not None:
        axis = (int(axis),) if isinstance(axis, int | np.integer) else tuple(int(a) for a in axis)
    return dropout_op(x, p=float(p), axis=axis, upscale=mode == "upscale_in_train")[0]


def dropout2d(x, p=0.5, training=True, data_format="NCHW", name=None):
    """Drop whole channels of a 4-D input (one draw per sample and channel)."""
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError(f"dropout2d: data_format must be 'NCHW' or 'NHWC', got {data_format!r}")
    if x.ndim != 4:
        raise ShapeError(f"dropout2d: expected a 4-D input [N, C, H, W], got shape {x.shape}")
    return dropout(x, p=p, axis=[0, 1] if data_format == "NCHW" else [0, 3], training=training)


FUNCTIONAL = ["dropout", "dropout2d"]
